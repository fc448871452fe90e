// Package oracle runs Kubernetes' own DRA code (k8s.io/dynamic-resource-allocation
// v0.37.2, the allocator and CEL compiler kube-scheduler 1.37 runs) on the inputs
// dralloc takes, and answers in dralloc's output shapes, so that the two can be
// compared byte for byte after normalisation (see Normalize).
//
// fixture.go: one allocator conformance case (../shared/conformance/allocator/README.md)
// through structured.NewAllocator, exactly as the upstream test table runs it
// (allocatortesting.RunTestAllocator): the case's features, its allocated state, the
// classes through a lister that returns them in case order, the slices in case order,
// and a CEL cache built with the case's consumable-capacity and list-type flags.
// NewAllocator picks the variant (stable, incubating, experimental) that kube-scheduler
// would pick for those features.
package oracle

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"
	kjson "sigs.k8s.io/json"
)

// Case is the conformance case format. Objects stay raw until decoded strictly.
type Case struct {
	Name                     string                       `json:"name,omitempty"`
	Features                 map[string]bool              `json:"features,omitempty"`
	Node                     json.RawMessage              `json:"node,omitempty"`
	Classes                  []json.RawMessage            `json:"classes,omitempty"`
	Slices                   []json.RawMessage            `json:"slices,omitempty"`
	AllocatedDevices         []string                     `json:"allocatedDevices"`
	AllocatedSharedDeviceIDs []string                     `json:"allocatedSharedDeviceIDs,omitempty"`
	AllocatedCapacity        map[string]map[string]string `json:"allocatedCapacity,omitempty"`
	Claims                   []json.RawMessage            `json:"claims,omitempty"`
	DeviceTaintRules         []json.RawMessage            `json:"deviceTaintRules,omitempty"`
	Pod                      json.RawMessage              `json:"pod,omitempty"`
	Expect                   json.RawMessage              `json:"expect,omitempty"`
}

// ErrUnsupported marks a case the oracle cannot run (a dralloc-only extension such
// as a whole pod, which is kube-scheduler's plugin and not the allocator).
var ErrUnsupported = errors.New("not supported by the oracle")

// FeatureNames maps the case's feature keys to the allocator's Features. The keys
// are the conformance format's; the ones after listTypeAttributes are the 1.37
// gates the format did not have yet (dralloc's fixture reader takes the same keys).
var FeatureNames = []string{
	"adminAccess", "prioritizedList", "partitionableDevices", "deviceTaints",
	"deviceBindingConditions", "consumableCapacity", "listTypeAttributes",
	"derivedAttributes", "compatibilityGroups", "fractionalCapacityRange", "optionalNodeOperations",
}

// Features of a case as the allocator takes them.
func Features(fs map[string]bool) structured.Features {
	return structured.Features{
		AdminAccess:             fs["adminAccess"],
		PrioritizedList:         fs["prioritizedList"],
		PartitionableDevices:    fs["partitionableDevices"],
		DeviceTaints:            fs["deviceTaints"],
		DeviceBindingAndStatus:  fs["deviceBindingConditions"] || fs["deviceStatus"],
		ConsumableCapacity:      fs["consumableCapacity"],
		ListTypeAttributes:      fs["listTypeAttributes"],
		DerivedAttributes:       fs["derivedAttributes"],
		CompatibilityGroups:     fs["compatibilityGroups"],
		FractionalCapacityRange: fs["fractionalCapacityRange"],
		OptionalNodeOperations:  fs["optionalNodeOperations"],
	}
}

// decode reads one object as the API server's strict JSON decoder would see its
// field names (case-sensitive), without defaulting: the cases are "exactly what the
// Go objects contain".
func decode(raw json.RawMessage, into any) error {
	return kjson.UnmarshalCaseSensitivePreserveInts(raw, into)
}

// classLister is an informer lister over the case's classes, in case order; Get
// returns the NotFound error a real lister returns.
type classLister struct{ objs []*resourceapi.DeviceClass }

func (l classLister) List() ([]*resourceapi.DeviceClass, error) { return l.objs, nil }
func (l classLister) Get(name string) (*resourceapi.DeviceClass, error) {
	for _, o := range l.objs {
		if o.Name == name {
			return o, nil
		}
	}
	return nil, apierrors.NewNotFound(resourceapi.Resource("deviceclass"), name)
}

// Outcome is what `dralloc allocate --fixture` prints: exactly one of the three.
type Outcome struct {
	Allocations   []resourceapi.AllocationResult `json:"allocations"`
	Unsatisfiable bool                           `json:"unsatisfiable,omitempty"`
	Error         string                         `json:"error,omitempty"`
	Panic         string                         `json:"-"`
}

// MarshalJSON prints only the member that applies, as dralloc does.
func (o Outcome) MarshalJSON() ([]byte, error) {
	switch {
	case o.Panic != "":
		return json.Marshal(map[string]string{"upstreamPanic": o.Panic})
	case o.Error != "":
		return json.Marshal(map[string]string{"error": o.Error})
	case o.Unsatisfiable:
		return []byte(`{"unsatisfiable":true}`), nil
	default:
		a := o.Allocations
		if a == nil {
			a = []resourceapi.AllocationResult{}
		}
		return json.Marshal(map[string]any{"allocations": a})
	}
}

// Inputs is a case decoded into upstream's types.
type Inputs struct {
	Features  structured.Features
	Node      *v1.Node
	Classes   []*resourceapi.DeviceClass
	Slices    []*resourceapi.ResourceSlice
	Claims    []*resourceapi.ResourceClaim
	Allocated structured.AllocatedState
}

// Decode turns a case into upstream's inputs (taint rules applied to the slices).
func Decode(c *Case) (*Inputs, error) {
	if len(c.Pod) > 0 && !bytes.Equal(c.Pod, []byte("null")) {
		return nil, fmt.Errorf("case with a pod: %w", ErrUnsupported)
	}
	// dralloc converts v1beta1/v1beta2 objects as the API server does; that
	// conversion lives in k8s.io/kubernetes/pkg/apis/resource, not in a module the
	// oracle imports, so such cases are not for the oracle.
	for _, group := range [][]json.RawMessage{c.Classes, c.Slices, c.Claims} {
		for _, raw := range group {
			var tm struct {
				APIVersion string `json:"apiVersion"`
			}
			_ = json.Unmarshal(raw, &tm)
			if tm.APIVersion != "" && tm.APIVersion != "resource.k8s.io/v1" {
				return nil, fmt.Errorf("object of %s: %w", tm.APIVersion, ErrUnsupported)
			}
		}
	}
	in := &Inputs{Features: Features(c.Features)}
	if len(c.Node) == 0 || bytes.Equal(c.Node, []byte("null")) {
		return nil, errors.New("case: node missing")
	}
	in.Node = &v1.Node{}
	if err := decode(c.Node, in.Node); err != nil {
		return nil, fmt.Errorf("case node: %w", err)
	}
	for i, raw := range c.Classes {
		o := &resourceapi.DeviceClass{}
		if err := decode(raw, o); err != nil {
			return nil, fmt.Errorf("case classes[%d]: %w", i, err)
		}
		in.Classes = append(in.Classes, o)
	}
	for i, raw := range c.Slices {
		o := &resourceapi.ResourceSlice{}
		if err := decode(raw, o); err != nil {
			return nil, fmt.Errorf("case slices[%d]: %w", i, err)
		}
		in.Slices = append(in.Slices, o)
	}
	for i, raw := range c.Claims {
		o := &resourceapi.ResourceClaim{}
		if err := decode(raw, o); err != nil {
			return nil, fmt.Errorf("case claims[%d]: %w", i, err)
		}
		in.Claims = append(in.Claims, o)
	}
	if len(c.DeviceTaintRules) > 0 {
		var rules []*resourceapi.DeviceTaintRule
		for i, raw := range c.DeviceTaintRules {
			// A DeviceTaintRule of v1alpha3 or v1beta2 has v1's fields unless it uses
			// the v1alpha3-only ones (deviceClassName, CEL selectors): decoded strictly
			// into v1, any field v1 lacks makes the case one the oracle cannot run.
			o := &resourceapi.DeviceTaintRule{}
			strictErrs, err := kjson.UnmarshalStrict(raw, o)
			if err != nil {
				return nil, fmt.Errorf("case deviceTaintRules[%d]: %w", i, err)
			}
			if len(strictErrs) > 0 {
				return nil, fmt.Errorf("case deviceTaintRules[%d]: %v: %w", i, strictErrs, ErrUnsupported)
			}
			o.APIVersion = "resource.k8s.io/v1"
			rules = append(rules, o)
		}
		patched, err := ApplyTaintRules(in.Slices, rules, in.Features.ConsumableCapacity)
		if err != nil {
			return nil, err
		}
		in.Slices = patched
	}
	st := structured.AllocatedState{
		AllocatedDevices:         sets.New[structured.DeviceID](),
		AllocatedSharedDeviceIDs: sets.New[structured.SharedDeviceID](),
		AggregatedCapacity:       structured.NewConsumedCapacityCollection(),
	}
	for _, s := range c.AllocatedDevices {
		d, p, n, _, err := splitID(s, false)
		if err != nil {
			return nil, err
		}
		st.AllocatedDevices.Insert(structured.MakeDeviceID(d, p, n))
	}
	for _, s := range c.AllocatedSharedDeviceIDs {
		d, p, n, share, err := splitID(s, true)
		if err != nil {
			return nil, err
		}
		uid := types.UID(share)
		st.AllocatedSharedDeviceIDs.Insert(structured.MakeSharedDeviceID(structured.MakeDeviceID(d, p, n), &uid))
	}
	// Sorted so that the collection is built the same way every run.
	devs := make([]string, 0, len(c.AllocatedCapacity))
	for k := range c.AllocatedCapacity {
		devs = append(devs, k)
	}
	sort.Strings(devs)
	for _, k := range devs {
		d, p, n, _, err := splitID(k, false)
		if err != nil {
			return nil, err
		}
		caps := map[resourceapi.QualifiedName]resource.Quantity{}
		for name, q := range c.AllocatedCapacity[k] {
			qq, err := resource.ParseQuantity(q)
			if err != nil {
				return nil, fmt.Errorf("allocatedCapacity %s %s: %w", k, name, err)
			}
			caps[resourceapi.QualifiedName(name)] = qq
		}
		st.AggregatedCapacity.Insert(structured.NewDeviceConsumedCapacity(structured.MakeDeviceID(d, p, n), caps))
	}
	in.Allocated = st
	return in, nil
}

// splitID splits "driver/pool/device[/shareID]". Pools may contain slashes (a pool
// name is a path of DNS subdomains), so the driver is the first part, the device
// (and shareID) the last ones, the pool everything between.
func splitID(s string, withShare bool) (driver, pool, device, share string, err error) {
	parts := bytes.Split([]byte(s), []byte("/"))
	min := 3
	if withShare {
		min = 4
	}
	if len(parts) < min {
		return "", "", "", "", fmt.Errorf("device ID %q: want driver/pool/device%s", s, map[bool]string{true: "/shareID"}[withShare])
	}
	if withShare {
		share = string(parts[len(parts)-1])
		parts = parts[:len(parts)-1]
	}
	driver = string(parts[0])
	device = string(parts[len(parts)-1])
	pool = string(bytes.Join(parts[1:len(parts)-1], []byte("/")))
	return
}

// Panic is set in an Outcome when upstream panicked (an input the API server would
// have rejected, or an upstream bug): the text of the panic.
// Allocate runs upstream's allocator on the inputs. A zero timeout means none.
func Allocate(ctx context.Context, in *Inputs, timeout time.Duration) (out Outcome) {
	defer func() {
		if r := recover(); r != nil {
			out = Outcome{Panic: fmt.Sprint(r)}
		}
	}()
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	lister := classLister{objs: in.Classes}
	celCache := cel.NewCache(1, cel.Features{
		EnableConsumableCapacity: in.Features.ConsumableCapacity,
		EnableListTypeAttributes: in.Features.ListTypeAttributes,
	})
	a, err := structured.NewAllocator(ctx, in.Features, in.Allocated, lister, in.Slices, celCache)
	if err != nil {
		return Outcome{Error: err.Error()}
	}
	res, err := a.Allocate(ctx, in.Node, in.Claims)
	if err != nil {
		return Outcome{Error: err.Error()}
	}
	if res == nil && len(in.Claims) > 0 {
		return Outcome{Unsatisfiable: true}
	}
	return Outcome{Allocations: res}
}

// RunCase decodes and allocates one case; a case the oracle cannot decode is an
// error of the case (returned), not an allocator error.
func RunCase(ctx context.Context, raw []byte, timeout time.Duration) (Outcome, error) {
	var c Case
	if err := json.Unmarshal(raw, &c); err != nil {
		return Outcome{}, fmt.Errorf("case: %w", err)
	}
	in, err := Decode(&c)
	if err != nil {
		return Outcome{}, err
	}
	return Allocate(ctx, in, timeout), nil
}
