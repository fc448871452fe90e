/* report_test.c — the renderers: aligned tables, CSV quoting, the HTML page is
 * self-contained and escapes what it prints. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

static char *render(void (*fn)(FILE *, const json_t *, report_format), const json_t *v, report_format fmt) {
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    fn(f, v, fmt);
    fclose(f);
    return buf;
}

static const char *plan_json =
    "{\"workloads\":[{\"name\":\"a,b\",\"replicas\":3,\"placed\":2,\"unplaced\":1,\"reason\":\"x \\\"<y>\\\"\","
    "\"placements\":[{\"node\":\"n1\",\"replicas\":2}],\"headroom\":0}],"
    "\"nodes\":[{\"name\":\"n1\",\"devices\":8,\"allocated\":4,\"free\":1,\"blocked\":{\"counters\":2,\"taints\":1},\"stranded\":0}],"
    "\"classes\":[{\"name\":\"gpu\",\"devices\":8,\"allocated\":4,\"free\":4}],"
    "\"summary\":{\"nodes\":1,\"score\":\"binpack\",\"replicas\":3,\"placed\":2,\"unplaced\":1,\"devices\":8,"
    "\"allocated\":4,\"free\":4,\"stranded\":0}}";

Test(report, table_csv_json) {
    json_t *p = json_loads(plan_json, 0, NULL);
    char *t = render(report_plan, p, REPORT_TABLE);
    cr_assert(strstr(t, "WORKLOAD  REPLICAS  PLACED  UNPLACED  HEADROOM  PLACEMENTS\n"), "%s", t);
    /* BLOCKED: counters and taints together (3), beside FREE: allocatable now (1) */
    cr_assert(strstr(t, "n1          8          4     1        3   50%         0\n"), "%s", t);
    free(t);
    char *c = render(report_plan, p, REPORT_CSV);
    cr_assert(!strncmp(c, "workload,gang,replicas,placed,unplaced,headroom,reason\n\"a,b\",false,3,2,1,0,\"x \"\"<y>\"\"\"\n", 84), "%s", c);
    free(c);
    char *j = render(report_plan, p, REPORT_JSON);
    json_t *back = json_loads(j, 0, NULL);
    /* the same object, opened by the schema's version */
    cr_assert(json_integer_value(json_object_get(back, "schemaVersion")) == REPORT_SCHEMA_VERSION);
    json_object_del(back, "schemaVersion");
    cr_assert(json_equal(back, p));
    json_decref(back);
    free(j);
    json_decref(p);
}

Test(report, html_self_contained_and_escaped) {
    json_t *p = json_loads(plan_json, 0, NULL);
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    report_plan_html(f, p, "t");
    fclose(f);
    cr_assert(strstr(buf, "<svg"));
    cr_assert(strstr(buf, "x &quot;&lt;y&gt;&quot;"));
    cr_assert_null(strstr(buf, "<script"));
    cr_assert_null(strstr(buf, "src="));
    cr_assert_null(strstr(buf, "href="));
    free(buf);
    json_decref(p);
}

Test(report, capacity_by) {
    json_t *cap = json_loads("{\"nodes\":[],\"pools\":[{\"driver\":\"d\",\"pool\":\"p\",\"devices\":2,\"allocated\":1,\"free\":1,\"blocked\":{\"counters\":0,\"taints\":0}}],"
                             "\"classes\":[],\"counters\":[{\"driver\":\"d\",\"pool\":\"p\",\"counterSet\":\"s\",\"counter\":\"mem\","
                             "\"capacity\":\"40Gi\",\"allocated\":\"10Gi\",\"free\":\"30Gi\"}]}",
                             0, NULL);
    report_by by;
    cr_assert(report_by_parse("counter", &by));
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    report_capacity(f, cap, by, REPORT_CSV);
    report_capacity(f, cap, REPORT_BY_POOL, REPORT_TABLE);
    fclose(f);
    cr_assert(strstr(buf, "driver,pool,counterset,counter,capacity,allocated,free\nd,p,s,mem,40Gi,10Gi,30Gi\n"), "%s", buf);
    /* numeric columns right-aligned under their headers; the empty node column keeps its width */
    cr_assert(strstr(buf, "DRIVER  POOL  NODE  DEVICES  ALLOCATED  FREE  BLOCKED  UTIL\nd       p                 2          1     1        0   50%\n"), "%s", buf);
    free(buf);
    json_decref(cap);
}
