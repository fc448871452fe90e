// gen-podschema writes planner/plan_tmpl_schema.c: the JSON shape of a Kubernetes
// PodTemplateSpec (k8s.io/api/core/v1 at v0.37.2, the version go.mod pins) as C tables,
// for the planner's strict pod templates (planner/plan_tmpl.h). It walks the Go types
// by reflection as encoding/json (and sigs.k8s.io/json, the API server's decoder) sees
// them: a field's name is its json tag (its Go name without one), embedded structs
// without a tag are flattened, map[string]X is a map, []X a list ([]byte a base64
// string), and the types with their own UnmarshalJSON are their JSON forms: Quantity,
// IntOrString, Time, MicroTime and FieldsV1. A type it does not know is a failure, so a
// new kind of field in a later API is never silently accepted as "anything".
//
//	cd tests/upstream && go run ./cmd/gen-podschema >../../planner/plan_tmpl_schema.c
//	go run ./cmd/gen-podschema -check ../../planner/plan_tmpl_schema.c   # exit 1 if stale
//
// Test tooling beside the product: see tests/upstream/README.md.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// kinds as planner/plan_tmpl.h names them
const (
	kObject = "PT_OBJECT"
	kMap    = "PT_MAP"
	kList   = "PT_LIST"
	kString = "PT_STRING"
	kBytes  = "PT_BYTES"
	kBool   = "PT_BOOL"
	kInt32  = "PT_INT32"
	kInt64  = "PT_INT64"
	kFloat  = "PT_FLOAT"
	kIntStr = "PT_INT_OR_STRING"
	kQty    = "PT_QUANTITY"
	kTime   = "PT_TIME"
	kAny    = "PT_ANY"
)

type field struct {
	name  string // the JSON key
	typ   int
	owner string // the Go struct it is decoded into, embedding flattened (the API server's "Go struct field OWNER.path")
	via   string // embedded structs Go adds to that path ("ProbeHandler.")
	depth int    // embedding depth: the shallowest of two equal names wins, as in encoding/json
}

type typ struct {
	kind   string
	elem   int // map value or list element
	goName string
	fields []field
}

type gen struct {
	types []*typ
	index map[reflect.Type]int
}

// special: the types whose UnmarshalJSON decides their JSON form.
var special = map[reflect.Type]string{
	reflect.TypeOf(resource.Quantity{}):  kQty,
	reflect.TypeOf(intstr.IntOrString{}): kIntStr,
	reflect.TypeOf(metav1.Time{}):        kTime,
	reflect.TypeOf(metav1.MicroTime{}):   kTime,
	reflect.TypeOf(metav1.FieldsV1{}):    kAny,
}

var unmarshaler = reflect.TypeOf((*json.Unmarshaler)(nil)).Elem()

func (g *gen) add(t reflect.Type) int {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if i, ok := g.index[t]; ok {
		return i
	}
	i := len(g.types)
	ty := &typ{goName: t.String(), elem: -1}
	g.types = append(g.types, ty)
	g.index[t] = i
	if k, ok := special[t]; ok {
		ty.kind = k
		if k == kIntStr {
			ty.goName = "int32" // IntOrString decodes a non-string into its int32 (the error names int32)
		}
		if k == kTime {
			ty.goName = "string" // Time decodes a string first (the error names string)
		}
		return i
	}
	if reflect.PointerTo(t).Implements(unmarshaler) || t.Implements(unmarshaler) {
		fail("%s has its own UnmarshalJSON: add its JSON form to special", t)
	}
	switch t.Kind() {
	case reflect.Struct:
		ty.kind = kObject
		g.fields(t, t.Name(), ty, "", 0)
		sort.Slice(ty.fields, func(a, b int) bool { return ty.fields[a].name < ty.fields[b].name })
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			fail("%s: map keys other than strings", t)
		}
		ty.kind = kMap
		ty.elem = g.add(t.Elem())
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			ty.kind = kBytes
			break
		}
		ty.kind = kList
		ty.elem = g.add(t.Elem())
	case reflect.String:
		ty.kind = kString
	case reflect.Bool:
		ty.kind = kBool
	case reflect.Int32:
		ty.kind = kInt32
	case reflect.Int64, reflect.Int:
		ty.kind = kInt64
	case reflect.Float64, reflect.Float32:
		ty.kind = kFloat
	default:
		fail("%s: kind %s has no JSON form here", t, t.Kind())
	}
	return i
}

// fields adds t's JSON fields to ty, flattening embedded structs as encoding/json does.
// owner: the outermost struct, which Go's decode errors name even for an embedded field.
func (g *gen) fields(t reflect.Type, owner string, ty *typ, via string, depth int) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			if _, sp := special[ft]; !sp {
				g.fields(ft, owner, ty, via+f.Name+".", depth+1)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		nf := field{name: name, typ: -1, owner: owner, via: via, depth: depth}
		dup := -1
		for k := range ty.fields {
			if ty.fields[k].name == name {
				dup = k
			}
		}
		if dup >= 0 {
			if ty.fields[dup].depth <= depth {
				continue
			}
			ty.fields = append(ty.fields[:dup], ty.fields[dup+1:]...)
		}
		nf.typ = g.add(f.Type)
		ty.fields = append(ty.fields, nf)
	}
}

func fail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "gen-podschema: "+format+"\n", a...)
	os.Exit(2)
}

func render(g *gen) []byte {
	var b bytes.Buffer
	nfields := 0
	for _, t := range g.types {
		nfields += len(t.fields)
	}
	fmt.Fprintf(&b, `/* plan_tmpl_schema.c — GENERATED, do not edit: the JSON shape of a PodTemplateSpec
 * (k8s.io/api/core/v1 v0.37.2, Kubernetes v1.37.2) for plan_tmpl.c, written by
 * tests/upstream/cmd/gen-podschema from the Go types by reflection. Regenerate with
 *   cd tests/upstream && go run ./cmd/gen-podschema >../../planner/plan_tmpl_schema.c
 * (the podschema test fails when this file differs from what the generator writes).
 * %d types, %d fields; type 0 is PodTemplateSpec; each type's fields are sorted by name. */
#include "planner/plan_tmpl.h"

const plan_tmpl_field plan_tmpl_fields[] = {
`, len(g.types), nfields)
	first := make([]int, len(g.types))
	n := 0
	for i, t := range g.types {
		first[i] = n
		for _, f := range t.fields {
			fmt.Fprintf(&b, "    {%q, %d, %q, %q},\n", f.name, f.typ, f.owner, f.via)
			n++
		}
	}
	fmt.Fprintf(&b, "};\n\nconst plan_tmpl_type plan_tmpl_types[] = {\n")
	for i, t := range g.types {
		elem := 0
		if t.elem >= 0 {
			elem = t.elem
		}
		fmt.Fprintf(&b, "    {%s, %d, %d, %d, %q}, /* %d */\n", t.kind, elem, first[i], len(t.fields), t.goName, i)
	}
	fmt.Fprintf(&b, "};\n\nconst size_t plan_tmpl_ntypes = %d;\nconst size_t plan_tmpl_nfields = %d;\n", len(g.types), nfields)
	return b.Bytes()
}

// generate: the C file for PodTemplateSpec.
func generate() []byte {
	g := &gen{index: map[reflect.Type]int{}}
	g.add(reflect.TypeOf(v1.PodTemplateSpec{}))
	return render(g)
}

func main() {
	check := flag.String("check", "", "compare with this file instead of printing (exit 1 when it differs)")
	flag.Parse()
	out := generate()
	if *check == "" {
		os.Stdout.Write(out)
		return
	}
	have, err := os.ReadFile(*check)
	if err != nil {
		fail("%v", err)
	}
	if !bytes.Equal(have, out) {
		fmt.Fprintf(os.Stderr, "gen-podschema: %s differs from what the generator writes; regenerate:\n"+
			"  cd tests/upstream && go run ./cmd/gen-podschema >../../planner/plan_tmpl_schema.c\n", *check)
		os.Exit(1)
	}
	fmt.Println("gen-podschema: up to date")
}
