/* test_check_errors.c — compile errors as upstream reports them (issue #38): every
 * type-check error (cel-go checker/checker.go goes on after an error), type
 * inference deciding the homogeneous-literal validator (cel-go cel/validator.go on
 * the inferred types), the literal validators (duration, timestamp, matches: the
 * literal's position) and program construction (interpreter/decorators.go
 * maybeOptimizeConstUnary, the regex optimizations: "program instantiation failed"). */
#include <criterion/criterion.h>

#include "tests/cel/cel_helpers.h"

#define EXPECT(expr, want) cr_expect_str_eq(fx_eval(&f, expr), want, "%s", expr)

/* cel-go reports each error; `math` and the member function `greatest` both */
Test(check_errors, all_errors_reported) {
    fixture f;
    fx_init(&f);
    EXPECT("math.greatest(1, 2)",
           "compile: ERROR: <input>:1:1: undeclared reference to 'math' (in container '')\n | math.greatest(1, 2)\n | ^\n"
           "ERROR: <input>:1:14: undeclared reference to 'greatest' (in container '')\n | math.greatest(1, 2)\n"
           " | .............^");
    fx_fini(&f);
}

/* checker/types.go: orValue's type parameter is bound to dyn by optional(dyn), so
 * the element is dyn; an empty list's element variable is bound by its neighbour */
Test(check_errors, inferred_literal_types) {
    fixture f;
    fx_init(&f);
    EXPECT("[dyn({'a': 1}).?a.orValue(3), size('x')]",
           "compile: ERROR: <input>:1:35: expected type 'dyn' but found 'int'\n"
           " | [dyn({'a': 1}).?a.orValue(3), size('x')]\n | ..................................^");
    EXPECT("[[][0], 1]", "error: index out of bounds: 0");
    fx_fini(&f);
}

/* cel/validator.go formatValidator: the first argument (not the receiver) */
Test(check_errors, literal_validators) {
    fixture f;
    fx_init(&f);
    EXPECT("'x'.matches('(')",
           "compile: ERROR: <input>:1:13: invalid matches argument\n | 'x'.matches('(')\n | ............^");
    EXPECT("duration('1x')", "compile: ERROR: <input>:1:10: invalid duration argument\n | duration('1x')\n | .........^");
    fx_fini(&f);
}

/* interpreter/decorators.go maybeOptimizeConstUnary and the regex optimizations;
 * common/types/string.go's conversion error at run time */
Test(check_errors, program_construction) {
    fixture f;
    fx_init(&f);
    EXPECT("int('x')", "compile: program instantiation failed: type conversion error from 'string' to 'int'");
    EXPECT("[uint(-1)]", "compile: program instantiation failed: unsigned integer overflow");
    EXPECT("matches('x', '(')", "compile: program instantiation failed: error parsing regexp: missing closing ): `(`");
    EXPECT("int('1' + 'x')", "error: type conversion error from 'string' to 'int'");
    EXPECT("'x'.matches('(' + '')", "error: error parsing regexp: missing closing ): `(`");
    fx_fini(&f);
}
