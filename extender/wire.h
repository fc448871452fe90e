/* wire.h — the kube-scheduler extender wire format (k8s.io/kube-scheduler/extender/v1)
 * as this server reads and writes it: a pre-check of request bodies (UTF-8, nesting
 * depth) done before jansson sees them, the decoder of ExtenderArgs with Go's
 * encoding/json key matching, and the encoders of ExtenderFilterResult and
 * HostPriorityList with Go's field names. Also Go duration strings ("2s", "150ms")
 * for the command-line flags. Nothing here touches a snapshot: it is pure data. */
#ifndef DRA_EXTENDER_WIRE_H
#define DRA_EXTENDER_WIRE_H

#include <jansson.h>
#include <stdint.h>

#include "base/error.h"

/* Validates a body before parsing: well-formed UTF-8 (no overlongs, surrogates or
 * code points past U+10FFFF) and arrays/objects nested at most max_depth deep. A
 * bound checked here, in one flat pass, cannot be defeated by a parser that recurses.
 * False with e set ("body is not valid UTF-8 (byte 17)"). */
bool ext_json_check(const char *body, size_t len, unsigned max_depth, err *e);

/* ext_json_check, then jansson: the document, or NULL with e set. */
json_t *ext_json_parse(const char *body, size_t len, unsigned max_depth, err *e);

/* Go's encoding/json matching of an object key to a field name: exact, else equal
 * under Unicode simple case folding (for the ASCII field names used here that adds
 * U+017F 'ſ' ~ 's' and U+212A 'K' ~ 'k'). */
bool ext_key_matches(const char *key, const char *field);

/* The value of the member matching `field` (the last such member, as Go's decoder
 * assigns each in order), and whether one was present at all (null counts as
 * present: *present true, result NULL). */
json_t *ext_member(const json_t *obj, const char *field, bool *present);

/* ExtenderArgs, decoded. Pointers borrow from doc. Exactly one of the two modes:
 *   node_list: Nodes was a NodeList (nodeCacheCapable: false); nodes[i] its items
 *   else:      NodeNames was a list of names (nodeCacheCapable: true); nodes NULL */
typedef struct ext_args {
    json_t *doc;
    const json_t *pod;
    bool node_list;
    const json_t *list_meta;   /* the NodeList's metadata, echoed back (may be NULL) */
    size_t n;
    const char **names;
    const json_t **nodes;
} ext_args;

/* Decodes a parsed body (takes ownership of doc, also on failure). max_nodes bounds
 * the node count. False with e naming the field: "NodeNames[2]: expected a string,
 * got number". */
bool ext_args_decode(json_t *doc, size_t max_nodes, ext_args *out, err *e);
void ext_args_free(ext_args *a);

/* One node's answer, as the filter and prioritize verbs need it. */
typedef enum ext_verdict { EXT_PASS, EXT_FAIL, EXT_FAIL_UNRESOLVABLE } ext_verdict;

/* ExtenderFilterResult for args: nodes with verdict[i] == EXT_PASS in the mode's field
 * (names, or the NodeList items echoed; the other field null), the others in
 * FailedNodes / FailedAndUnresolvableNodes with reason[i]. `error`, when not NULL,
 * fills Error and no node passes. Returns malloc'd compact JSON. */
char *ext_filter_result(const ext_args *a, const ext_verdict *verdict, const char *const *reason,
                        const char *error);
/* HostPriorityList: [{"Host": name, "Score": score[i]}, ...] (score may be NULL: all 0). */
char *ext_priority_list(const ext_args *a, const int64_t *score);
/* {"error": msg} — the body of every 4xx. */
char *ext_error_body(const char *msg);

/* Go's time.ParseDuration for non-negative values ("2s", "1m30s", "1.5s", "250ms",
 * "0"); false when malformed or past 2^63 ns. */
bool ext_duration_parse(const char *s, uint64_t *ns);

#endif
