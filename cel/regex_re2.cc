// regex_re2.cc — the RE2 implementation behind cel/regex.h.
//
// A thin shim: RE2 with UTF-8 input, leftmost-first matching (Go's and CEL's
// semantics, not POSIX leftmost-longest), no logging to stderr, and a bounded
// program size. No C++ exception may cross into C: every entry point catches
// everything (allocation failure is the only thing RE2 throws) and reports it as a
// failed compile or a non-match. RE2's error codes are translated to the texts of
// Go's regexp/syntax, since that is what Kubernetes reports for a bad pattern.
#include "cel/regex.h"

#include <re2/re2.h>

#include <cstdio>
#include <new>

struct cel_regex {
    re2::RE2 re;
    cel_regex(const re2::StringPiece &p, const re2::RE2::Options &o) : re(p, o) {}
};

namespace {

// Go's regexp/syntax ErrorCode strings for RE2's codes.
const char *go_error_text(re2::RE2::ErrorCode code) {
    switch (code) {
    case re2::RE2::ErrorBadEscape: return "invalid escape sequence";
    case re2::RE2::ErrorBadCharClass: return "invalid character class";
    case re2::RE2::ErrorBadCharRange: return "invalid character class range";
    case re2::RE2::ErrorMissingBracket: return "missing closing ]";
    case re2::RE2::ErrorMissingParen: return "missing closing )";
    case re2::RE2::ErrorUnexpectedParen: return "unexpected )";
    case re2::RE2::ErrorTrailingBackslash: return "trailing backslash at end of expression";
    case re2::RE2::ErrorRepeatArgument: return "missing argument to repetition operator";
    case re2::RE2::ErrorRepeatSize: return "invalid repeat count";
    case re2::RE2::ErrorRepeatOp: return "invalid nested repetition operator";
    case re2::RE2::ErrorBadPerlOp: return "invalid or unsupported Perl syntax";
    case re2::RE2::ErrorBadUTF8: return "invalid UTF-8";
    case re2::RE2::ErrorBadNamedCapture: return "invalid named capture";
    case re2::RE2::ErrorPatternTooLarge: return "expression too large";
    default: return "regexp/syntax: internal error";
    }
}

void set_error(char *buf, size_t n, const char *what, const std::string &arg) {
    if (!buf || !n) return;
    std::snprintf(buf, n, "error parsing regexp: %s: `%s`", what, arg.c_str());
}

}  // namespace

extern "C" cel_regex *cel__regex_compile(const char *pattern, size_t n, char *errbuf, size_t errlen) {
    try {
        re2::RE2::Options o;
        o.set_encoding(re2::RE2::Options::EncodingUTF8);
        o.set_longest_match(false);
        o.set_log_errors(false);
        o.set_max_mem(CEL_REGEX_MAX_MEM);
        cel_regex *r = new cel_regex(re2::StringPiece(pattern, n), o);
        if (!r->re.ok()) {
            // RE2 reports the program-size failure without an argument; Go names the pattern
            std::string arg = r->re.error_arg();
            if (r->re.error_code() == re2::RE2::ErrorPatternTooLarge || arg.empty()) arg.assign(pattern, n);
            // Go names nothing for a trailing backslash
            if (r->re.error_code() == re2::RE2::ErrorTrailingBackslash) arg.clear();
            set_error(errbuf, errlen, go_error_text(r->re.error_code()), arg);
            delete r;
            return nullptr;
        }
        return r;
    } catch (...) {
        set_error(errbuf, errlen, "expression too large", std::string(pattern, n));
        return nullptr;
    }
}

extern "C" void cel__regex_free(cel_regex *re) { delete re; }

extern "C" bool cel__regex_full_match(const cel_regex *re, const char *text, size_t n) {
    try {
        return re->re.Match(re2::StringPiece(text, n), 0, n, re2::RE2::ANCHOR_BOTH, nullptr, 0);
    } catch (...) {
        return false;
    }
}

extern "C" bool cel__regex_partial_match(const cel_regex *re, const char *text, size_t n) {
    try {
        return re->re.Match(re2::StringPiece(text, n), 0, n, re2::RE2::UNANCHORED, nullptr, 0);
    } catch (...) {
        return false;
    }
}

extern "C" bool cel__regex_find(const cel_regex *re, const char *text, size_t n, size_t pos, size_t *start,
                               size_t *end) {
    if (pos > n) return false;
    try {
        re2::StringPiece m;
        if (!re->re.Match(re2::StringPiece(text, n), pos, n, re2::RE2::UNANCHORED, &m, 1)) return false;
        *start = static_cast<size_t>(m.data() - text);
        *end = *start + m.size();
        return true;
    } catch (...) {
        return false;
    }
}

// Width of the code point at s[0..n) as Go's utf8.DecodeRuneInString counts it
// (1 for an invalid byte).
static size_t rune_width(const unsigned char *s, size_t n) {
    unsigned c = s[0];
    size_t w;
    unsigned v, min;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) { w = 2; v = c & 0x1F; min = 0x80; }
    else if (c >= 0xE0 && c <= 0xEF) { w = 3; v = c & 0x0F; min = 0x800; }
    else if (c >= 0xF0 && c <= 0xF4) { w = 4; v = c & 0x07; min = 0x10000; }
    else return 1;
    if (n < w) return 1;
    for (size_t i = 1; i < w; i++) {
        if ((s[i] & 0xC0) != 0x80) return 1;
        v = (v << 6) | (s[i] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 1;
    return w;
}

// Go's regexp.(*Regexp).allMatches.
extern "C" size_t cel__regex_find_all(const cel_regex *re, const char *text, size_t n, int64_t limit,
                                     cel_regex_emit emit, void *ctx) {
    uint64_t max = limit < 0 ? static_cast<uint64_t>(n) + 1 : static_cast<uint64_t>(limit);
    size_t count = 0;
    size_t pos = 0;
    bool have_prev = false;
    size_t prev_end = 0;
    while (count < max && pos <= n) {
        size_t s, e;
        if (!cel__regex_find(re, text, n, pos, &s, &e)) break;
        bool accept = true;
        if (e == pos) {
            // an empty match: not allowed right after the previous match
            if (have_prev && s == prev_end) accept = false;
            pos = pos < n ? pos + rune_width(reinterpret_cast<const unsigned char *>(text) + pos, n - pos) : n + 1;
        } else {
            pos = e;
        }
        prev_end = e;
        have_prev = true;
        if (accept) {
            count++;
            if (!emit(ctx, s, e)) break;
        }
    }
    return count;
}
