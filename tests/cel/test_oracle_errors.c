/* test_oracle_errors.c — compile and runtime errors the differential campaign against
 * Kubernetes' CEL found (tests/upstream, issue #38), each a shrunk fixture with
 * cel-go's text: the whole list of a long expression's errors (no 1 KiB cut),
 * full-width dots and carets under multi-byte characters, ANTLR's recovery where
 * the input ends (lexer errors skipped, "missing ')' at '<EOF>'", the expected-token
 * sets after '(', '[', '{', '.'), the failed resolution of Kubernetes' object types,
 * field selection on values without fields, and negate_double's precedence; and
 * what cel-go's visitor finds in the tree ANTLR leaves at a syntax error (has() of
 * a partial index, a '.?' without a name), macro errors that do not stop the
 * parser, ANTLR's recovery over '-' and '!' before a non-operand, its single-token
 * deletion, and the empty source. */
#include <criterion/criterion.h>

#include "base/strbuf.h"
#include "tests/cel/cel_helpers.h"

#include <stdlib.h>

#define EXPECT(expr, want) cr_expect_str_eq(fx_eval(&f, expr), want, "%s", expr)

/* Shrunk from the 200,000-question campaign (seed 2000) and the probes around them. */
Test(oracle_errors, recovery) {
    fixture f;
    fx_init(&f);
    EXPECT("has(device.attributes[\"",
           "compile: ERROR: <input>:1:22: invalid argument to has() macro\n"
           " | has(device.attributes[\"\n"
           " | .....................^\n"
           "ERROR: <input>:1:23: Syntax error: token recognition error at: '\"'\n"
           " | has(device.attributes[\"\n"
           " | ......................^\n"
           "ERROR: <input>:1:24: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', '?', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n"
           " | has(device.attributes[\"\n"
           " | .......................^");
    EXPECT("!has(device.attributes[\"",
           "compile: ERROR: <input>:1:23: invalid argument to has() macro\n"
           " | !has(device.attributes[\"\n"
           " | ......................^\n"
           "ERROR: <input>:1:24: Syntax error: token recognition error at: '\"'\n"
           " | !has(device.attributes[\"\n"
           " | .......................^\n"
           "ERROR: <input>:1:25: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', '?', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n"
           " | !has(device.attributes[\"\n"
           " | ........................^");
    EXPECT("has(device.attributes[\"dra.example.com\"]",
           "compile: ERROR: <input>:1:22: invalid argument to has() macro\n"
           " | has(device.attributes[\"dra.example.com\"]\n"
           " | .....................^\n"
           "ERROR: <input>:1:41: Syntax error: missing ')' at '<EOF>'\n"
           " | has(device.attributes[\"dra.example.com\"]\n"
           " | ........................................^");
    EXPECT("has(device.",
           "compile: ERROR: <input>:1:5: invalid argument to has() macro\n"
           " | has(device.\n"
           " | ....^\n"
           "ERROR: <input>:1:12: Syntax error: no viable alternative at input '.'\n"
           " | has(device.\n"
           " | ...........^");
    EXPECT("[1].all(x, has(x)) + [1].all(x, has(x)) + ",
           "compile: ERROR: <input>:1:16: invalid argument to has() macro\n"
           " | [1].all(x, has(x)) + [1].all(x, has(x)) + \n"
           " | ...............^\n"
           "ERROR: <input>:1:37: invalid argument to has() macro\n"
           " | [1].all(x, has(x)) + [1].all(x, has(x)) + \n"
           " | ....................................^\n"
           "ERROR: <input>:1:43: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n"
           " | [1].all(x, has(x)) + [1].all(x, has(x)) + \n"
           " | ..........................................^");
    EXPECT("has(a.b ? ",
           "compile: ERROR: <input>:1:9: invalid argument to has() macro\n"
           " | has(a.b ? \n"
           " | ........^\n"
           "ERROR: <input>:1:11: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n"
           " | has(a.b ? \n"
           " | ..........^");
    EXPECT("has(a, b)",
           "compile: ERROR: <input>:1:4: undeclared reference to 'has' (in container '')\n"
           " | has(a, b)\n"
           " | ...^\n"
           "ERROR: <input>:1:5: undeclared reference to 'a' (in container '')\n"
           " | has(a, b)\n"
           " | ....^\n"
           "ERROR: <input>:1:8: undeclared reference to 'b' (in container '')\n"
           " | has(a, b)\n"
           " | .......^");
    EXPECT("[1].all(1,",
           "compile: ERROR: <input>:1:9: argument must be a simple name\n"
           " | [1].all(1,\n"
           " | ........^\n"
           "ERROR: <input>:1:11: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n"
           " | [1].all(1,\n"
           " | ..........^");
    EXPECT("1 + -!",
           "compile: ERROR: <input>:1:6: Syntax error: no viable alternative at input '-!'\n"
           " | 1 + -!\n"
           " | .....^\n"
           "ERROR: <input>:1:7: Syntax error: extraneous input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n"
           " | 1 + -!\n"
           " | ......^");
    EXPECT("(1 + !",
           "compile: ERROR: <input>:1:7: Syntax error: extraneous input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n"
           " | (1 + !\n"
           " | ......^");
    EXPECT("1 + --",
           "compile: ERROR: <input>:1:7: Syntax error: no viable alternative at input '-'\n"
           " | 1 + --\n"
           " | ......^\n"
           "ERROR: <input>:1:7: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n"
           " | 1 + --\n"
           " | ......^");
    EXPECT("[0][in",
           "compile: ERROR: <input>:1:5: Syntax error: mismatched input 'in' expecting {'[', '{', '(', '.', '-', '!', '?', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n"
           " | [0][in\n"
           " | ....^\n"
           "ERROR: <input>:1:7: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n"
           " | [0][in\n"
           " | ......^");
    EXPECT("(device.attributes[\"dra.example.com\"].?",
           "compile: ERROR: <input>:1:40: Syntax error: mismatched input '<EOF>' expecting {IDENTIFIER, ESC_IDENTIFIER}\n"
           " | (device.attributes[\"dra.example.com\"].?\n"
           " | .......................................^\n"
           "ERROR: <input>:1:40: unsupported ident kind\n"
           " | (device.attributes[\"dra.example.com\"].?\n"
           " | .......................................^");
    EXPECT("a.?1 + b",
           "compile: ERROR: <input>:1:4: Syntax error: mismatched input '1' expecting {IDENTIFIER, ESC_IDENTIFIER}\n"
           " | a.?1 + b\n"
           " | ...^\n"
           "ERROR: <input>:1:4: unsupported ident kind\n"
           " | a.?1 + b\n"
           " | ...^");
    EXPECT("f(a i",
           "compile: ERROR: <input>:1:5: Syntax error: mismatched input 'i' expecting ')'\n"
           " | f(a i\n"
           " | ....^");
    EXPECT("[1 2]",
           "compile: ERROR: <input>:1:4: Syntax error: extraneous input '2' expecting {']', ','}\n"
           " | [1 2]\n"
           " | ...^");
    EXPECT("a ? b c : d",
           "compile: ERROR: <input>:1:7: Syntax error: extraneous input 'c' expecting ':'\n"
           " | a ? b c : d\n"
           " | ......^");
    EXPECT("if(1) + ",
           "compile: ERROR: <input>:1:1: reserved identifier: if\n"
           " | if(1) + \n"
           " | ^\n"
           "ERROR: <input>:1:9: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n"
           " | if(1) + \n"
           " | ........^");
    EXPECT("-",
           "compile: ERROR: <input>:1:2: Syntax error: no viable alternative at input '-'\n"
           " | -\n"
           " | .^\n"
           "ERROR: <input>:1:2: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n"
           " | -\n"
           " | .^");
    EXPECT("",
           "compile: ERROR: <input>:1:0: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}");
    fx_fini(&f);
}

Test(oracle_errors, fixtures) {
    fixture f;
    fx_init(&f);
    EXPECT("\"é\".matches(\"(\")",
           "compile: ERROR: <input>:1:13: invalid matches argument\n"
           " | \"é\".matches(\"(\")\n"
           " | .．..........^");
    EXPECT("1 + é",
           "compile: ERROR: <input>:1:5: Syntax error: token recognition error at: 'é'\n"
           " | 1 + é\n"
           " | ....＾\n"
           "ERROR: <input>:1:6: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n"
           " | 1 + é\n"
           " | ....．^");
    EXPECT("'é' + x",
           "compile: ERROR: <input>:1:7: undeclared reference to 'x' (in container '')\n"
           " | 'é' + x\n"
           " | .．....^");
    EXPECT("semver(\"1.2",
           "compile: ERROR: <input>:1:8: Syntax error: token recognition error at: '\"1.2'\n"
           " | semver(\"1.2\n"
           " | .......^\n"
           "ERROR: <input>:1:12: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', ')', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n"
           " | semver(\"1.2\n"
           " | ...........^");
    EXPECT("[",
           "compile: ERROR: <input>:1:2: Syntax error: mismatched input '<EOF>' expecting {'[', ']', '{', '(', '.', ',', '-', '!', '?', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n"
           " | [\n"
           " | .^");
    EXPECT("!sets.contains(lists.range(5), l",
           "compile: ERROR: <input>:1:33: Syntax error: missing ')' at '<EOF>'\n"
           " | !sets.contains(lists.range(5), l\n"
           " | ................................^");
    EXPECT("(device.driver < device.attrib",
           "compile: ERROR: <input>:1:31: Syntax error: missing ')' at '<EOF>'\n"
           " | (device.driver < device.attrib\n"
           " | ..............................^");
    EXPECT("[].map(x, x * 0).",
           "compile: ERROR: <input>:1:18: Syntax error: no viable alternative at input '.'\n"
           " | [].map(x, x * 0).\n"
           " | .................^");
    EXPECT("[1, [semver(\"v1.0\", tru",
           "compile: ERROR: <input>:1:24: Syntax error: mismatched input '<EOF>' expecting ')'\n"
           " | [1, [semver(\"v1.0\", tru\n"
           " | .......................^");
    EXPECT("[1, 2, ",
           "compile: ERROR: <input>:1:8: Syntax error: missing ']' at '<EOF>'\n"
           " | [1, 2, \n"
           " | .......^");
    EXPECT("([1, 2, ",
           "compile: ERROR: <input>:1:9: Syntax error: mismatched input '<EOF>' expecting ']'\n"
           " | ([1, 2, \n"
           " | ........^");
    EXPECT("[1][",
           "compile: ERROR: <input>:1:5: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', '?', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n"
           " | [1][\n"
           " | ....^");
    EXPECT("{",
           "compile: ERROR: <input>:1:2: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '}', '(', '.', ',', '-', '!', '?', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n"
           " | {\n"
           " | .^");
    EXPECT("{1: 2,",
           "compile: ERROR: <input>:1:7: Syntax error: missing '}' at '<EOF>'\n"
           " | {1: 2,\n"
           " | ......^");
    EXPECT("size(",
           "compile: ERROR: <input>:1:6: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', ')', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n"
           " | size(\n"
           " | .....^");
    EXPECT("size(1",
           "compile: ERROR: <input>:1:7: Syntax error: missing ')' at '<EOF>'\n"
           " | size(1\n"
           " | ......^");
    EXPECT("a ? b",
           "compile: ERROR: <input>:1:6: Syntax error: mismatched input '<EOF>' expecting ':'\n"
           " | a ? b\n"
           " | .....^");
    EXPECT("quantity(\"40Gi\").compare",
           "compile: ERROR: <input>:1:17: unexpected failed resolution of 'kubernetes.Quantity'\n"
           " | quantity(\"40Gi\").compare\n"
           " | ................^");
    EXPECT("semver(\"1.0.0\").major",
           "compile: ERROR: <input>:1:16: unexpected failed resolution of 'kubernetes.Semver'\n"
           " | semver(\"1.0.0\").major\n"
           " | ...............^");
    EXPECT("dyn(1).foo == 1",
           "error: no such key: foo");
    EXPECT("has(dyn(1).foo)",
           "false");
    EXPECT("dyn([1]).foo == 1",
           "error: unsupported index type 'string' in list");
    EXPECT("1 + é",
           "compile: ERROR: <input>:1:5: Syntax error: token recognition error at: 'é'\n"
           " | 1 + é\n"
           " | ....＾\n"
           "ERROR: <input>:1:6: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n"
           " | 1 + é\n"
           " | ....．^");
    EXPECT("1 2",
           "compile: ERROR: <input>:1:3: Syntax error: extraneous input '2' expecting <EOF>\n"
           " | 1 2\n"
           " | ..^");
    EXPECT("x.y.z{",
           "compile: ERROR: <input>:1:7: Syntax error: mismatched input '<EOF>' expecting {'}', ',', '?', IDENTIFIER, ESC_IDENTIFIER}\n"
           " | x.y.z{\n"
           " | ......^");
    /* after '!' a member must follow: '-' starts none but a negative literal */
    EXPECT("!- [1]",
           "compile: ERROR: <input>:1:4: Syntax error: no viable alternative at input '- ['\n"
           " | !- [1]\n"
           " | ...^");
    /* negate_double is cel-go's first overload of -_: it binds the element type */
    EXPECT("-[][0] == 1",
           "compile: ERROR: <input>:1:8: found no matching overload for '_==_' applied to '(double, int)'\n"
           " | -[][0] == 1\n"
           " | .......^");
    fx_fini(&f);
}

/* The whole text, whatever its length: four errors of a 160-byte expression are
 * already past ERR_MSG_MAX; 120 undeclared names are 100 errors and a count. */
Test(oracle_errors, long_error_lists_are_whole) {
    fixture f;
    fx_init(&f);
    err e;
    char *text = NULL;
    const char *expr = "((int(\"42\") % (semver(\"01.2.3\", true).major() - device.attributes[\"dra.example.com\"].index)) == math.greatest(math.greatest(1, 9223372036854775807), int(\"x\")))";
    cr_assert_null(cel_compile_text(f.any, expr, strlen(expr), &e, &text));
    cr_assert_not_null(text);
    cr_expect_str_eq(text, "ERROR: <input>:1:97: undeclared reference to 'math' (in container '')\n"
           " | ((int(\"42\") % (semver(\"01.2.3\", true).major() - device.attributes[\"dra.example.com\"].index)) == math.greatest(math.greatest(1, 9223372036854775807), int(\"x\")))\n"
           " | ................................................................................................^\n"
           "ERROR: <input>:1:110: undeclared reference to 'greatest' (in container '')\n"
           " | ((int(\"42\") % (semver(\"01.2.3\", true).major() - device.attributes[\"dra.example.com\"].index)) == math.greatest(math.greatest(1, 9223372036854775807), int(\"x\")))\n"
           " | .............................................................................................................^\n"
           "ERROR: <input>:1:111: undeclared reference to 'math' (in container '')\n"
           " | ((int(\"42\") % (semver(\"01.2.3\", true).major() - device.attributes[\"dra.example.com\"].index)) == math.greatest(math.greatest(1, 9223372036854775807), int(\"x\")))\n"
           " | ..............................................................................................................^\n"
           "ERROR: <input>:1:124: undeclared reference to 'greatest' (in container '')\n"
           " | ((int(\"42\") % (semver(\"01.2.3\", true).major() - device.attributes[\"dra.example.com\"].index)) == math.greatest(math.greatest(1, 9223372036854775807), int(\"x\")))\n"
           " | ...........................................................................................................................^");
    cr_expect_gt(strlen(text), (size_t)ERR_MSG_MAX);
    cr_expect_eq(strncmp(e.msg, text, sizeof e.msg - 1), 0, "e->msg holds the start of the text");
    free(text);

    strbuf b;
    sbuf_init(&b);
    for (int i = 0; i < 120; i++) sbuf_addf(&b, "%sx%d", i ? " + " : "", i);
    cr_assert_null(cel_compile_text(f.any, b.buf, b.len, &e, &text));
    size_t n = 0;
    for (const char *s = text; (s = strstr(s, "ERROR: ")); s++) n++;
    cr_expect_eq(n, 100);
    const char *tail = "\n20 more errors were truncated";
    cr_expect_str_eq(text + strlen(text) - strlen(tail), tail);
    cr_expect(!strncmp(text, "ERROR: <input>:1:1: undeclared reference to 'x0' (in container '')\n | x0 + x1", 76));
    free(text);
    sbuf_free(&b);
    fx_fini(&f);
}
