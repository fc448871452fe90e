/* test_lib_url.c — Kubernetes URL library: what ParseRequestURI accepts, Go's
 * error texts, and the accessors on url.Parse's result (fragment split, host and
 * port, escaped path, query map). */
#include "lib_test.h"

Test(lib_url, is_url) {
    EXPECT("isURL('https://user:pass@example.com:80/path?query=val#fragment')", "true");
    EXPECT("isURL('/absolute-path')", "true");
    EXPECT("isURL('https://a:b:c/')", "false");
    EXPECT("isURL('../relative-path')", "false");
    EXPECT("isURL('')", "false");
    EXPECT("isURL('mailto:someone@example.com')", "true");   /* opaque */
    EXPECT("isURL('http://[::1]:8080/')", "true");
    EXPECT("isURL('http://[::1/')", "false");
    EXPECT("isURL('http://ex ample.com/')", "false");
    EXPECT("isURL('http://example.com/a%zzb')", "false");
}

Test(lib_url, errors) {
    EXPECT("url('https://a:b:c/')",
           "error: URL parse error during conversion from string: parse \"https://a:b:c/\": invalid port \":c\" after host");
    EXPECT("url('../relative-path')",
           "error: URL parse error during conversion from string: parse \"../relative-path\": invalid URI for request");
    EXPECT("url('')", "error: URL parse error during conversion from string: parse \"\": empty url");
    EXPECT("url(':x')", "error: URL parse error during conversion from string: parse \":x\": missing protocol scheme");
    EXPECT("url('http://example.com/%zz')",
           "error: URL parse error during conversion from string: parse \"http://example.com/%zz\": invalid URL escape \"%zz\"");
    EXPECT("url('http://ex ample.com/')",
           "error: URL parse error during conversion from string: parse \"http://ex ample.com/\": invalid character \" \" "
           "in host name");
    EXPECT("url('http://a b@example.com/')",
           "error: URL parse error during conversion from string: parse \"http://a b@example.com/\": net/url: invalid "
           "userinfo");
}

Test(lib_url, accessors) {
    EXPECT("url('/path').getScheme()", "\"\"");
    EXPECT("url('HTTPS://example.com/').getScheme()", "\"https\"");
    EXPECT("url('https://example.com:80/').getHost()", "\"example.com:80\"");
    EXPECT("url('https://[::1]:80/').getHost()", "\"[::1]:80\"");
    EXPECT("url('https://[::1]/').getHostname()", "\"::1\"");
    EXPECT("url('https://[::1]:80/').getHostname()", "\"::1\"");
    EXPECT("url('https://127.0.0.1:80/').getHostname()", "\"127.0.0.1\"");
    EXPECT("url('/path').getHost()", "\"\"");
    EXPECT("url('https://example.com:80/').getPort()", "\"80\"");
    EXPECT("url('https://example.com/').getPort()", "\"\"");
    EXPECT("url('https://example.com/path').getEscapedPath()", "\"/path\"");
    EXPECT("url('https://example.com/path with spaces/').getEscapedPath()", "\"/path%20with%20spaces/\"");
    EXPECT("url('https://example.com/a%2Fb').getEscapedPath()", "\"/a%2Fb\"");
    EXPECT("url('https://example.com').getEscapedPath()", "\"\"");
    EXPECT("url('https://example.com/p#frag').getEscapedPath()", "\"/p\"");
}

Test(lib_url, query) {
    EXPECT("url('https://example.com/path?k1=a&k2=b&k2=c').getQuery()", "{\"k1\": [\"a\"], \"k2\": [\"b\", \"c\"]}");
    EXPECT("url('https://example.com/path?key with spaces=value with spaces').getQuery()",
           "{\"key with spaces\": [\"value with spaces\"]}");
    EXPECT("url('https://example.com/path?a=1+2&b=%41&c&d=x;y&=e').getQuery()",
           "{\"a\": [\"1 2\"], \"b\": [\"A\"], \"c\": [\"\"], \"\": [\"e\"]}");
    EXPECT("url('https://example.com/path?').getQuery()", "{}");
    EXPECT("url('https://example.com/path').getQuery()", "{}");
    EXPECT("url('https://example.com/path?q=1#frag').getQuery()", "{\"q\": [\"1\"]}");
    EXPECT("url('https://example.com/a') == url('https://example.com/a')", "true");
    EXPECT("url('https://example.com/a') == url('https://example.com/b')", "false");
}
