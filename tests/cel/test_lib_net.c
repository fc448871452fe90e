/* test_lib_net.c — Kubernetes IP/CIDR libraries: netip parsing (Go's error texts),
 * the Kubernetes rejections (zones, IPv4-mapped IPv6), canonical printing, the
 * predicates, and the CIDR operations including Kubernetes' containsCIDR rule. */
#include "lib_test.h"

Test(lib_net, ip_parse) {
    EXPECT("isIP('127.0.0.1')", "true");
    EXPECT("isIP('::1')", "true");
    EXPECT("isIP('127.0.0.256')", "false");
    EXPECT("isIP(':::1')", "false");
    EXPECT("isIP('01.2.3.4')", "false");
    EXPECT("isIP('fe80::1%eth0')", "false");
    EXPECT("isIP('::ffff:1.2.3.4')", "false");
    EXPECT("isIP('::1.2.3.4')", "true");
    EXPECT("isIP('')", "false");
    EXPECT("ip('127.0.0.256')",
           "error: IP Address \"127.0.0.256\" parse error during conversion from string: "
           "ParseAddr(\"127.0.0.256\"): IPv4 field has value >255");
    EXPECT("ip('1.2.3')",
           "error: IP Address \"1.2.3\" parse error during conversion from string: ParseAddr(\"1.2.3\"): IPv4 address "
           "too short");
    EXPECT("ip('1..2.3')",
           "error: IP Address \"1..2.3\" parse error during conversion from string: ParseAddr(\"1..2.3\"): IPv4 field "
           "must have at least one digit (at \".2.3\")");
    EXPECT("ip(':::1')",
           "error: IP Address \":::1\" parse error during conversion from string: ParseAddr(\":::1\"): each "
           "colon-separated field must have at least one digit (at \":1\")");
    EXPECT("ip('fe80::1%eth0')", "error: IP address \"fe80::1%eth0\" with zone value is not allowed");
    EXPECT("ip('::ffff:1.2.3.4')", "error: IPv4-mapped IPv6 address \"::ffff:1.2.3.4\" is not allowed");
    EXPECT("ip('abc')", "error: IP Address \"abc\" parse error during conversion from string: ParseAddr(\"abc\"): "
                        "unable to parse IP");
}

Test(lib_net, ip_string_and_canonical) {
    EXPECT("string(ip('2001:DB8:0:0:0::ABCD'))", "\"2001:db8::abcd\"");
    EXPECT("string(ip('1:0:0:1:0:0:0:1'))", "\"1:0:0:1::1\"");
    EXPECT("string(ip('1:0:0:2:0:0:3:4'))", "\"1::2:0:0:3:4\"");   /* first of equal runs */
    EXPECT("string(ip('1:2:3:4:5:6:0:8'))", "\"1:2:3:4:5:6:0:8\""); /* a single 0 is not compressed */
    EXPECT("string(ip('::'))", "\"::\"");
    EXPECT("string(ip('::1.2.3.4'))", "\"::102:304\"");
    EXPECT("ip.isCanonical('127.0.0.1')", "true");
    EXPECT("ip.isCanonical('2001:db8::abcd')", "true");
    EXPECT("ip.isCanonical('2001:DB8::ABCD')", "false");
    EXPECT("ip.isCanonical('2001:db8::0:0:0:abcd')", "false");
    EXPECT("ip('10.0.0.1') == ip('10.0.0.1')", "true");
    EXPECT("ip('::1') == ip('0:0::1')", "true");
    EXPECT("ip('10.0.0.1') == ip('10.0.0.2')", "false");
}

Test(lib_net, ip_predicates) {
    EXPECT("ip('127.0.0.1').family()", "4");
    EXPECT("ip('::1').family()", "6");
    EXPECT("ip('0.0.0.0').isUnspecified()", "true");
    EXPECT("ip('::').isUnspecified()", "true");
    EXPECT("ip('::1').isUnspecified()", "false");
    EXPECT("ip('127.1.2.3').isLoopback()", "true");
    EXPECT("ip('::1').isLoopback()", "true");
    EXPECT("ip('2001:db8::abcd').isLoopback()", "false");
    EXPECT("ip('224.0.0.1').isLinkLocalMulticast()", "true");
    EXPECT("ip('224.0.1.1').isLinkLocalMulticast()", "false");
    EXPECT("ip('ff02::1').isLinkLocalMulticast()", "true");
    EXPECT("ip('ff05::1').isLinkLocalMulticast()", "false");
    EXPECT("ip('fd00::1').isLinkLocalMulticast()", "false");
    EXPECT("ip('169.254.169.254').isLinkLocalUnicast()", "true");
    EXPECT("ip('fe80::1').isLinkLocalUnicast()", "true");
    EXPECT("ip('febf::1').isLinkLocalUnicast()", "true");
    EXPECT("ip('fec0::1').isLinkLocalUnicast()", "false");
    EXPECT("ip('192.168.0.1').isGlobalUnicast()", "true");
    EXPECT("ip('255.255.255.255').isGlobalUnicast()", "false");
    EXPECT("ip('224.0.0.1').isGlobalUnicast()", "false");
    EXPECT("ip('2001:db8::abcd').isGlobalUnicast()", "true");
    EXPECT("ip('ff00::1').isGlobalUnicast()", "false");
}

Test(lib_net, cidr) {
    EXPECT("isCIDR('192.168.0.0/16')", "true");
    EXPECT("isCIDR('::1/128')", "true");
    EXPECT("isCIDR('192.168.0.0/33')", "false");
    EXPECT("isCIDR('::1/129')", "false");
    EXPECT("isCIDR('10.0.0.0/08')", "false");
    EXPECT("isCIDR('::ffff:1.2.3.4/120')", "false");
    EXPECT("cidr('192.168.0.1/16').prefixLength()", "16");   /* host bits are kept */
    EXPECT("string(cidr('192.168.0.1/16'))", "\"192.168.0.1/16\"");
    EXPECT("string(cidr('192.168.0.1/16').masked())", "\"192.168.0.0/16\"");
    EXPECT("string(cidr('2001:db8:1::/32').masked())", "\"2001:db8::/32\"");
    EXPECT("string(cidr('192.168.0.1/24').ip())", "\"192.168.0.1\"");
    EXPECT("cidr('::1/128').ip().family()", "6");
    EXPECT("cidr('192.168.0.0/24') == cidr('192.168.0.0/24').masked()", "true");
    EXPECT("cidr('192.168.0.1/24') == cidr('192.168.0.1/24').masked()", "false");
    EXPECT("cidr('192.168.0.0/')",
           "error: network address parse error during conversion from string: network address parse error during "
           "conversion from string: netip.ParsePrefix(\"192.168.0.0/\"): bad bits after slash: \"\"");
    EXPECT("cidr('10.0.0.0')",
           "error: network address parse error during conversion from string: network address parse error during "
           "conversion from string: netip.ParsePrefix(\"10.0.0.0\"): no '/'");
    EXPECT("cidr('10.0.0.0/33')",
           "error: network address parse error during conversion from string: network address parse error during "
           "conversion from string: netip.ParsePrefix(\"10.0.0.0/33\"): prefix length out of range");
    EXPECT("cidr('x/8')",
           "error: network address parse error during conversion from string: network address parse error during "
           "conversion from string: netip.ParsePrefix(\"x/8\"): ParseAddr(\"x\"): unable to parse IP");
}

Test(lib_net, cidr_contains) {
    EXPECT("cidr('192.168.0.0/24').containsIP(ip('192.168.0.1'))", "true");
    EXPECT("cidr('192.168.0.0/24').containsIP(ip('192.168.1.1'))", "false");
    EXPECT("cidr('192.168.0.0/24').containsIP('192.168.0.1')", "true");
    EXPECT("cidr('192.168.0.1/24').containsIP('192.168.0.200')", "true");
    EXPECT("cidr('2001:db8::/32').containsIP('2001:db8::1')", "true");
    EXPECT("cidr('2001:db8::/32').containsIP('2001:dc8::1')", "false");
    EXPECT("cidr('0.0.0.0/0').containsIP('::1')", "false");
    EXPECT("cidr('10.0.0.0/8').containsIP('bogus')", "error: no such overload");
    EXPECT("cidr('192.168.0.0/24').containsCIDR(cidr('192.168.0.0/25'))", "true");
    EXPECT("cidr('192.168.0.0/24').containsCIDR(cidr('192.168.0.0/23'))", "false");
    EXPECT("cidr('192.168.0.0/24').containsCIDR('192.168.0.0/25')", "true");
    EXPECT("cidr('2001:db8::/32').containsCIDR('2001:db8::/33')", "true");
    /* Kubernetes compares the other prefix's unmasked address with the masked one */
    EXPECT("cidr('192.168.0.0/16').containsCIDR('192.168.10.0/24')", "false");
    EXPECT("cidr('192.168.0.5/16').containsCIDR('192.168.0.0/24')", "true");
    EXPECT("cidr('10.0.0.0/8').containsCIDR('bogus')",
           "error: network address parse error during conversion from string: network address parse error during "
           "conversion from string: netip.ParsePrefix(\"bogus\"): no '/'");
}
