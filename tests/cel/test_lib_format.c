/* test_lib_format.c — Kubernetes format library: lookup by name, the constant
 * constructors, and validate() with apimachinery's messages for each format. */
#include "lib_test.h"

Test(lib_format, named) {
    EXPECT("format.named('dns1123Label').hasValue()", "true");
    EXPECT("format.named('nope').hasValue()", "false");
    EXPECT("format.named('uuid').value() == format.uuid()", "true");
    EXPECT("format.uuid() == format.byte()", "false");
}

Test(lib_format, dns_names) {
    EXPECT("format.dns1123Label().validate('my-label-name').hasValue()", "false");
    EXPECT("format.dns1123Label().validate('My_Label').value()",
           "[\"a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
           "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
           "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')\"]");
    EXPECT("format.dns1123Label().validate('a.b').value()", "[\"must not contain dots\"]");
    EXPECT("format.dns1123Label().validate('aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa').value()", "[\"must be no more than 63 characters\"]");
    EXPECT("format.dns1123Subdomain().validate('apiextensions.k8s.io').hasValue()", "false");
    EXPECT("format.dns1123Subdomain().validate('-a.b').value()",
           "[\"a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
           "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
           "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')\"]");
    EXPECT("format.dns1035Label().validate('1abc').value()",
           "[\"a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
           "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
           "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')\"]");
    EXPECT("format.dns1035Label().validate('abc').hasValue()", "false");
}

Test(lib_format, prefixes) {
    EXPECT("format.dns1123LabelPrefix().validate('my-label-prefix-').hasValue()", "false");
    EXPECT("format.dns1123Label().validate('my-label-prefix-').hasValue()", "true");
    EXPECT("format.dns1123SubdomainPrefix().validate('mysubdomain.prefix.-').hasValue()", "false");
    EXPECT("format.dns1035LabelPrefix().validate('my-label-prefix-').hasValue()", "false");
}

Test(lib_format, qualified_name_and_label_value) {
    EXPECT("format.qualifiedName().validate('apiextensions.k8s.io/v1beta1').hasValue()", "false");
    EXPECT("format.qualifiedName().validate('MyName').hasValue()", "false");
    EXPECT("format.qualifiedName().validate('/name').value()", "[\"prefix part must be non-empty\"]");
    EXPECT("format.qualifiedName().validate('example.com/').value()",
           "[\"name part must be non-empty\", \"name part must consist of alphanumeric characters, '-', '_' or '.', "
           "and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
           "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')\"]");
    EXPECT("format.qualifiedName().validate('a/b/c').value().size()", "1");
    EXPECT("format.labelValue().validate('').hasValue()", "false");
    EXPECT("format.labelValue().validate('my_value').hasValue()", "false");
    EXPECT("format.labelValue().validate('-x').value().size()", "1");
}

Test(lib_format, strfmt_formats) {
    EXPECT("format.uri().validate('http://example.com').hasValue()", "false");
    EXPECT("format.uri().validate('example').value()", "[\"parse \\\"example\\\": invalid URI for request\"]");
    EXPECT("format.uuid().validate('123e4567-e89b-12d3-a456-426614174000').hasValue()", "false");
    EXPECT("format.uuid().validate('123E4567E89B12D3A456426614174000').hasValue()", "false");
    EXPECT("format.uuid().validate('123e4567-e89b-12d3-a456').value()", "[\"does not match the UUID format\"]");
    EXPECT("format.byte().validate('aGVsbG8=').hasValue()", "false");
    EXPECT("format.byte().validate('').hasValue()", "false");
    EXPECT("format.byte().validate('aGVsbG8').value()", "[\"invalid base64\"]");
    EXPECT("format.byte().validate('aG=sbG8=').value()", "[\"invalid base64\"]");
    EXPECT("format.date().validate('2021-01-01').hasValue()", "false");
    EXPECT("format.date().validate('2024-02-29').hasValue()", "false");
    EXPECT("format.date().validate('2023-02-29').value()", "[\"invalid date\"]");
    EXPECT("format.date().validate('2021-1-01').value()", "[\"invalid date\"]");
    EXPECT("format.datetime().validate('2021-01-01T00:00:00Z').hasValue()", "false");
    EXPECT("format.datetime().validate('2021-01-01T23:59:59.123+02:00').hasValue()", "false");
    EXPECT("format.datetime().validate('2021-01-01T24:00:00Z').value()", "[\"invalid datetime\"]");
    EXPECT("format.datetime().validate('2021-01-01 00:00:00Z').value()", "[\"invalid datetime\"]");
}
