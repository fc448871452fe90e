package oracle

// cel.go: one CEL expression on one device through upstream's DRA CEL compiler
// (k8s.io/dynamic-resource-allocation/cel), answered in the keys of
// `dralloc cel eval -o json`:
//
//	value          the result as CEL literal text ("true", "42", "\"a\"", "[1, 2]",
//	               "semver(\"1.2.3\")"), absent on an error
//	error          the compile or runtime error text, absent on success
//	errorKind      "compile" or "runtime"
//	cost           the runtime cost cel-go tracked (absent on a compile error)
//	estimatedCost  the compile-time worst case (cel.EstimateCost with the DRA
//	               estimator; absent on a compile error)
//	costLimit      resourceapi.CELSelectorExpressionMaxCost (1,000,000)
//	tooComplex     estimatedCost > costLimit: the API server's "Forbidden: too
//	               complex, exceeds cost limit" on a selector
//
// A bool (or dyn) expression runs as a selector (CompilationResult.DeviceMatches, the
// allocator's path, with its EnhanceRuntimeError wording); any other type runs as a
// derived attribute (EvaluateDerivedAttribute), which is the only other way upstream
// evaluates an expression on a device — so a type neither path takes (double,
// quantity, map) is upstream's compile error.

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	resourceapi "k8s.io/api/resource/v1"
	dracel "k8s.io/dynamic-resource-allocation/cel"
)

// Device is the --device-json shape: a resource.k8s.io/v1 Device plus its driver.
type Device struct {
	Name                     string                                                 `json:"name,omitempty"`
	Driver                   string                                                 `json:"driver"`
	Attributes               map[resourceapi.QualifiedName]resourceapi.DeviceAttribute `json:"attributes,omitempty"`
	Capacity                 map[resourceapi.QualifiedName]resourceapi.DeviceCapacity  `json:"capacity,omitempty"`
	AllowMultipleAllocations *bool                                                  `json:"allowMultipleAllocations,omitempty"`
}

// CELResult is the answer, in dralloc's keys.
type CELResult struct {
	Value         *string `json:"value,omitempty"`
	Error         string  `json:"error,omitempty"`
	ErrorKind     string  `json:"errorKind,omitempty"`
	Cost          *uint64 `json:"cost,omitempty"`
	EstimatedCost *uint64 `json:"estimatedCost,omitempty"`
	CostLimit     uint64  `json:"costLimit"`
	TooComplex    bool    `json:"tooComplex"`
}

// DecodeDevice reads the --device-json shape strictly.
func DecodeDevice(raw []byte) (*Device, error) {
	d := &Device{}
	if err := decode(raw, d); err != nil {
		return nil, fmt.Errorf("device: %w", err)
	}
	return d, nil
}

var celCompiler = dracel.GetCompiler(dracel.Features{EnableConsumableCapacity: true, EnableListTypeAttributes: true})

// EvalCEL compiles expr (the stored-expressions environment, as the allocator's cache
// compiles) with cost estimation on, and evaluates it on d.
func EvalCEL(ctx context.Context, expr string, d *Device) CELResult {
	out := CELResult{CostLimit: resourceapi.CELSelectorExpressionMaxCost}
	res := celCompiler.CompileCELExpression(expr, dracel.Options{})
	derived := false
	if res.Error != nil && res.Program == nil && strings.HasPrefix(res.Error.Detail, "must evaluate to bool") {
		// not a selector: the derived attribute path, if its types allow
		res = celCompiler.CompileCELExpression(expr, dracel.Options{DerivedAttribute: true})
		derived = true
	}
	if res.Program == nil {
		out.Error = res.Error.Detail
		out.ErrorKind = "compile"
		return out
	}
	if res.Error != nil { // cost estimation failed: compiled, but no estimate
		out.Error = res.Error.Detail
		out.ErrorKind = "compile"
		return out
	}
	est := res.MaxCost
	out.EstimatedCost = &est
	out.TooComplex = est > out.CostLimit
	in := dracel.Device{Driver: d.Driver, Attributes: d.Attributes, Capacity: d.Capacity, AllowMultipleAllocations: d.AllowMultipleAllocations}
	if !derived {
		ok, details, err := res.DeviceMatches(ctx, in)
		setCost(&out, details)
		if err != nil {
			out.Error = dracel.EnhanceRuntimeError(err).Error()
			out.ErrorKind = "runtime"
			return out
		}
		s := strconv.FormatBool(ok)
		out.Value = &s
		return out
	}
	attr, details, err := res.EvaluateDerivedAttribute(ctx, in)
	setCost(&out, details)
	if err != nil {
		out.Error = dracel.EnhanceRuntimeError(err).Error()
		out.ErrorKind = "runtime"
		return out
	}
	s := AttrLiteral(attr)
	out.Value = &s
	return out
}

func setCost(out *CELResult, details interface{ ActualCost() *uint64 }) {
	if details == nil {
		return
	}
	if c := details.ActualCost(); c != nil {
		v := *c
		out.Cost = &v
	}
}

// AttrLiteral prints a derived attribute value as CEL literal text.
func AttrLiteral(a *resourceapi.DeviceAttribute) string {
	str := func(s string) string { return celQuote(s) }
	ver := func(s string) string { return "semver(" + celQuote(s) + ")" }
	list := func(n int, f func(i int) string) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = f(i)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	switch {
	case a.BoolValue != nil:
		return strconv.FormatBool(*a.BoolValue)
	case a.IntValue != nil:
		return strconv.FormatInt(*a.IntValue, 10)
	case a.StringValue != nil:
		return str(*a.StringValue)
	case a.VersionValue != nil:
		return ver(*a.VersionValue)
	case a.BoolValues != nil:
		return list(len(a.BoolValues), func(i int) string { return strconv.FormatBool(a.BoolValues[i]) })
	case a.IntValues != nil:
		return list(len(a.IntValues), func(i int) string { return strconv.FormatInt(a.IntValues[i], 10) })
	case a.VersionValues != nil:
		return list(len(a.VersionValues), func(i int) string { return ver(a.VersionValues[i]) })
	case a.StringValues != nil:
		return list(len(a.StringValues), func(i int) string { return str(a.StringValues[i]) })
	}
	return "null"
}

// celQuote is a JSON string, which is also a CEL string literal for what dralloc
// prints (dralloc escapes as JSON does).
func celQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
