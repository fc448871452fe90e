/* json_simd.cc — a JSON text's jansson tree read with simdjson (Debian's libsimdjson):
 * the parse of a cluster file's items at several times jansson's speed, the tree
 * built with jansson's constructors (private to engine/; see json_fast.h). NULL when
 * the text holds anything whose tree or error json_loadb would give differently: an
 * integer beyond int64, a NUL in a string or key, a byte-order mark, any error (then
 * json_loadb reads it, and reports it in its own words). */
extern "C" {
#include "engine/text/json_fast.h"
}

#include <cstring>
#include <simdjson.h>

namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

json_t *tree(element e, bool *ok);

json_t *string_of(std::string_view s, bool *ok) {
    /* jansson refuses a NUL inside a string unless asked (JSON_ALLOW_NUL) */
    if (std::memchr(s.data(), 0, s.size())) return *ok = false, nullptr;
    /* simdjson has checked the UTF-8: no second check */
    return json_stringn_nocheck(s.data(), s.size());
}

json_t *object_of(simdjson::dom::object o, bool *ok) {
    json_t *obj = json_object();
    for (auto field : o) {
        std::string_view k = field.key;
        if (std::memchr(k.data(), 0, k.size())) return *ok = false, json_decref(obj), nullptr;
        json_t *v = tree(field.value, ok);
        if (!v) return json_decref(obj), nullptr;
        /* a repeated key: the last value wins, where the first stood, as json_loadb does */
        json_object_setn_new_nocheck(obj, k.data(), k.size(), v);
    }
    return obj;
}

json_t *tree(element e, bool *ok) {
    switch (e.type()) {
    case element_type::OBJECT: {
        simdjson::dom::object o = e.get_object().value_unsafe();
        return object_of(o, ok);
    }
    case element_type::ARRAY: {
        json_t *a = json_array();
        simdjson::dom::array items = e.get_array().value_unsafe();
        for (element x : items) {
            json_t *v = tree(x, ok);
            if (!v) return json_decref(a), nullptr;
            json_array_append_new(a, v);
        }
        return a;
    }
    case element_type::STRING:
        return string_of(e.get_string().value_unsafe(), ok);
    case element_type::INT64:
        return json_integer((json_int_t)e.get_int64().value_unsafe());
    case element_type::UINT64:   /* beyond int64: json_loadb's "too big" path */
        return *ok = false, nullptr;
    case element_type::DOUBLE:
        return json_real(e.get_double().value_unsafe());
    case element_type::BOOL:
        return e.get_bool().value_unsafe() ? json_true() : json_false();
    case element_type::NULL_VALUE:
        return json_null();
    }
    return *ok = false, nullptr;
}

}  // namespace

extern "C" json_t *dra__json_fast_load(const char *text, size_t len) {
    if (len >= 3 && !std::memcmp(text, "\xEF\xBB\xBF", 3)) return nullptr;   /* json_loadb refuses a BOM */
    /* a parser per thread (the reader parses on a second thread), kept for the items
     * that follow: its buffers (about 14 bytes per byte of text) are sized by the
     * largest text it read and stay with the thread, so a text past 64 KiB (an item
     * larger than a fleet's largest slice) gets a parser of its own, freed with it */
    static thread_local simdjson::dom::parser kept;
    simdjson::dom::parser own;
    simdjson::dom::parser &parser = len <= (64u << 10) ? kept : own;
    element root;
    if (parser.parse(text, len, true).get(root)) return nullptr;
    bool ok = true;
    json_t *t = tree(root, &ok);
    if (!ok) {
        json_decref(t);
        return nullptr;
    }
    return t;
}
