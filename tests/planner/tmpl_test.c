/* tmpl_test.c — pod templates checked as the API server decodes a PodTemplateSpec
 * (planner/plan_tmpl.h): the generated table's invariants, unknown fields with kubectl's
 * paths and the nearest known name, wrong types in Go's decoder's words (the texts below
 * are the ones sigs.k8s.io/json v0.37.2-era prints for the same documents, as
 * tests/upstream/cmd/gen-podschema's TestDecoderAgrees checks at large). */
#include <criterion/criterion.h>
#include <string.h>

#include "planner/plan_tmpl.h"

typedef struct seen {
    char text[1024];
    size_t n;
} seen;

static void collect(void *arg, const char *path, const char *nearest) {
    seen *s = arg;
    size_t len = strlen(s->text);
    snprintf(s->text + len, sizeof s->text - len, "%s%s~%s", s->n++ ? " " : "", path, nearest ? nearest : "-");
}

/* Checks the template text; returns the error message ("" when it passes). */
static const char *check(const char *json, seen *s, err *e) {
    json_error_t je;
    json_t *t = json_loads(json, 0, &je);
    cr_assert_not_null(t, "%s: %s", json, je.text);
    memset(s, 0, sizeof *s);
    err_clear(e);
    bool ok = plan_tmpl_check(t, collect, s, e);
    json_decref(t);
    cr_assert_eq(ok, !e->set, "%s", json);
    return ok ? "" : e->msg;
}

Test(tmpl, schema_table_invariants) {
    cr_assert_gt(plan_tmpl_ntypes, 100);
    cr_assert_eq(plan_tmpl_types[0].kind, PT_OBJECT);
    cr_assert_str_eq(plan_tmpl_types[0].go, "v1.PodTemplateSpec");
    size_t fields = 0;
    for (size_t i = 0; i < plan_tmpl_ntypes; i++) {
        const plan_tmpl_type *t = &plan_tmpl_types[i];
        if (t->kind == PT_MAP || t->kind == PT_LIST) cr_assert_lt(t->elem, plan_tmpl_ntypes);
        if (t->kind != PT_OBJECT) continue;
        cr_assert_leq((size_t)t->first + t->nfields, plan_tmpl_nfields);
        fields += t->nfields;
        for (size_t k = t->first; k < (size_t)t->first + t->nfields; k++) {
            cr_assert_lt(plan_tmpl_fields[k].type, plan_tmpl_ntypes);
            /* sorted strictly: the lookup is a binary search, and a name is there once */
            if (k > t->first) cr_assert_lt(strcmp(plan_tmpl_fields[k - 1].name, plan_tmpl_fields[k].name), 0, "%s", t->go);
        }
    }
    cr_assert_eq(fields, plan_tmpl_nfields);
}

Test(tmpl, unknown_fields_in_document_order_with_the_nearest_name) {
    seen s;
    err e;
    cr_assert_str_eq(check("{\"spec\": {\"nodeSelecter\": {\"node-role\": \"cpu\"}, \"containers\": [{\"name\": \"a\"},"
                           " {\"name\": \"b\", \"resources\": {\"requets\": {\"cpu\": \"60\"}}}], \"zzz\": 1},"
                           " \"metdata\": {}}",
                           &s, &e),
                     "");
    cr_assert_str_eq(s.text, "spec.nodeSelecter~nodeSelector spec.containers[1].resources.requets~requests spec.zzz~- "
                             "metdata~metadata");
}

Test(tmpl, a_realistic_template_and_null_anywhere_pass) {
    seen s;
    err e;
    cr_assert_str_eq(
        check("{\"metadata\": {\"labels\": {\"app\": \"x\"}, \"creationTimestamp\": null},"
              " \"spec\": {\"nodeSelector\": {\"zone\": \"a\"}, \"tolerations\": [{\"key\": \"k\", \"operator\": \"Exists\","
              " \"tolerationSeconds\": 300}], \"affinity\": {\"nodeAffinity\": {\"requiredDuringSchedulingIgnoredDuringExecution\":"
              " {\"nodeSelectorTerms\": [{\"matchExpressions\": [{\"key\": \"zone\", \"operator\": \"In\", \"values\": [\"a\"]}]}]}}},"
              " \"volumes\": [{\"name\": \"v\", \"emptyDir\": {\"sizeLimit\": \"1Gi\"}}, {\"name\": \"w\", \"configMap\": null}],"
              " \"containers\": [{\"name\": \"c\", \"ports\": [{\"containerPort\": 80}],"
              " \"resources\": {\"requests\": {\"cpu\": 2.5, \"memory\": \"64Gi\"}, \"limits\": {\"cpu\": 4}},"
              " \"livenessProbe\": {\"httpGet\": {\"port\": \"http\"}}, \"readinessProbe\": {\"tcpSocket\": {\"port\": 8080}}}]}}",
              &s, &e),
        "");
    cr_assert_eq(s.n, 0, "%s", s.text);
}

Test(tmpl, wrong_types_in_the_decoders_words) {
    seen s;
    err e;
    cr_assert_str_eq(check("{\"spec\": {\"containers\": [{\"name\": \"c\", \"resources\": {\"requests\": \"60\"}}]}}", &s, &e),
                     "spec.containers[0].resources.requests: expected map, got string (json: cannot unmarshal string into Go "
                     "struct field ResourceRequirements.spec.containers.resources.requests of type v1.ResourceList)");
    cr_assert_str_eq(check("{\"spec\": {\"containers\": {\"name\": \"c\"}}}", &s, &e),
                     "spec.containers: expected list, got object (json: cannot unmarshal object into Go struct field "
                     "PodSpec.spec.containers of type []v1.Container)");
    /* a number aimed at an integer is quoted, past int32 or not whole */
    cr_assert_str_eq(check("{\"spec\": {\"containers\": [{\"name\": \"c\", \"ports\": [{\"containerPort\": 80000000000}]}]}}", &s, &e),
                     "spec.containers[0].ports[0].containerPort: expected integer, got number (json: cannot unmarshal number "
                     "80000000000 into Go struct field ContainerPort.spec.containers.ports.containerPort of type int32)");
    cr_assert_str_eq(check("{\"spec\": {\"containers\": [{\"name\": \"c\", \"ports\": [{\"containerPort\": 8.5}]}]}}", &s, &e),
                     "spec.containers[0].ports[0].containerPort: expected integer, got number (json: cannot unmarshal number "
                     "8.5 into Go struct field ContainerPort.spec.containers.ports.containerPort of type int32)");
    /* an embedded struct's Go name is in Go's path, and the outer struct is the one named */
    cr_assert_str_eq(check("{\"spec\": {\"containers\": [{\"name\": \"c\", \"livenessProbe\": {\"httpGet\": {\"port\": true}}}]}}", &s, &e),
                     "spec.containers[0].livenessProbe.httpGet.port: expected integer or string, got bool (json: cannot "
                     "unmarshal bool into Go struct field HTTPGetAction.spec.containers.livenessProbe.ProbeHandler.httpGet.port "
                     "of type int32)");
    cr_assert_str_eq(check("{\"metadata\": {\"labels\": {\"a\": 5}}}", &s, &e),
                     "metadata.labels[a]: expected string, got number (json: cannot unmarshal number into Go struct field "
                     "ObjectMeta.metadata.labels of type string)");
    /* a quantity is read by its own grammar: any number, a string that parses */
    cr_assert_str_eq(check("{\"spec\": {\"containers\": [{\"name\": \"c\", \"resources\": {\"limits\": {\"cpu\": true}}}]}}", &s, &e),
                     "spec.containers[0].resources.limits[cpu]: quantities must match the regular expression "
                     "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
    cr_assert_str_eq(check("{\"spec\": {\"containers\": [{\"name\": \"c\", \"resources\": {\"limits\": {\"cpu\": \" 2 \"}}}]}}", &s, &e), "");
}

Test(tmpl, the_first_wrong_type_is_kept_and_every_unknown_field_still_reported) {
    seen s;
    err e;
    const char *msg = check("{\"spec\": {\"hostNetwork\": \"true\", \"restartPolicy\": 1, \"nodeSelecter\": {}}}", &s, &e);
    cr_assert(strstr(msg, "spec.hostNetwork: expected bool, got string") == msg, "%s", msg);
    cr_assert_str_eq(s.text, "spec.nodeSelecter~nodeSelector");
}
