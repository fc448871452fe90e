/* lexer_internal.h — CEL tokens (private to the parser).
 *
 * The lexer turns source bytes into tokens on demand. Literal tokens carry their
 * decoded value: numbers are converted (with range checks reported as cel-go does:
 * "invalid int literal"), strings and bytes have escapes decoded into the parser's
 * arena. A token the lexer cannot recognise is T_ERROR with a message. */
#ifndef DRA_CEL_LEXER_INTERNAL_H
#define DRA_CEL_LEXER_INTERNAL_H

#include "base/arena.h"
#include "cel/value.h"

typedef enum cel_tok {
    T_EOF, T_ERROR,
    T_INT, T_UINT, T_DOUBLE, T_STRING, T_BYTES,
    T_IDENT, T_ESC_IDENT,   /* identifier, `backtick-quoted` field name */
    T_TRUE, T_FALSE, T_NULL, T_IN,
    T_LBRACKET, T_RBRACKET, T_LBRACE, T_RBRACE, T_LPAREN, T_RPAREN,
    T_DOT, T_COMMA, T_MINUS, T_EXCLAM, T_QUESTION, T_COLON, T_PLUS, T_STAR, T_SLASH, T_PERCENT,
    T_EQ, T_NE, T_LT, T_LE, T_GE, T_GT, T_AND, T_OR,
    T_OPT_DOT,     /* .? */
    T_OPT_LBRACKET /* [? */
} cel_tok;

typedef struct cel_token {
    cel_tok kind;
    uint32_t pos, end;   /* byte offsets [pos, end) */
    cel_value val;       /* literals; identifiers in val.u.s / val.len (NUL-terminated) */
    const char *msg;     /* T_ERROR; also set for a number literal out of range */
} cel_token;

typedef struct cel_lexer {
    const char *src;
    size_t n;
    size_t i;
    arena *a;
} cel_lexer;

void cel__lex_init(cel_lexer *lx, const char *src, size_t n, arena *a);
cel_token cel__lex_next(cel_lexer *lx);
const char *cel__tok_text(cel_tok t);

#endif
