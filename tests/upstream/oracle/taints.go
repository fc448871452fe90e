package oracle

// taints.go: DeviceTaintRules applied to slices as kube-scheduler 1.37 applies them —
// by the ResourceSlice tracker (k8s.io/dynamic-resource-allocation/resourceslice/tracker),
// which the DynamicResources plugin lists its slices from when DRADeviceTaintRules is on.
// The tracker is fed from informers over a fake clientset holding the case's objects;
// its patched slices are put back into the case's order (the tracker's store is a map,
// and the allocator's answer depends on slice order).

import (
	"context"
	"fmt"
	"time"

	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/dynamic-resource-allocation/resourceslice/tracker"
)

// ApplyTaintRules returns the slices with the rules' taints added, in the given order.
func ApplyTaintRules(slices []*resourceapi.ResourceSlice, rules []*resourceapi.DeviceTaintRule, consumableCapacity bool) ([]*resourceapi.ResourceSlice, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	objs := make([]runtime.Object, 0, len(slices)+len(rules))
	// The fake clientset needs names; a nameless slice gets one the tracker keys it by.
	names := make([]string, len(slices))
	for i, s := range slices {
		s = s.DeepCopy()
		if s.Name == "" {
			s.Name = fmt.Sprintf("oracle-unnamed-slice-%d", i)
		}
		if s.CreationTimestamp.IsZero() {
			s.CreationTimestamp = metav1.Unix(0, 0)
		}
		names[i] = s.Name
		objs = append(objs, s)
	}
	for _, r := range rules {
		objs = append(objs, r.DeepCopy())
	}
	client := fake.NewClientset(objs...)
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0)
	t, err := tracker.StartTracker(ctx, tracker.Options{
		EnableDeviceTaintRules:   true,
		EnableConsumableCapacity: consumableCapacity,
		SliceInformer:            factory.Resource().V1().ResourceSlices(),
		TaintInformer:            factory.Resource().V1().DeviceTaintRules(),
	})
	if err != nil {
		return nil, fmt.Errorf("resource slice tracker: %w", err)
	}
	// The informers stop when stop closes; Shutdown waits for them, so it must come
	// after close (a deferred Shutdown alone waits for the 30 s context).
	stop := make(chan struct{})
	factory.Start(stop)
	defer func() {
		close(stop)
		factory.Shutdown()
		t.Stop()
	}()
	for !t.HasSynced() {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("resource slice tracker: not synced: %w", ctx.Err())
		}
		time.Sleep(time.Millisecond)
	}
	patched, err := t.ListPatchedResourceSlices()
	if err != nil {
		return nil, err
	}
	byName := make(map[string]*resourceapi.ResourceSlice, len(patched))
	for _, s := range patched {
		byName[s.Name] = s
	}
	out := make([]*resourceapi.ResourceSlice, 0, len(slices))
	for i, n := range names {
		s := byName[n]
		if s == nil {
			return nil, fmt.Errorf("resource slice tracker: slice %s missing", n)
		}
		s = s.DeepCopy()
		if slices[i].Name == "" {
			s.Name = ""
		}
		s.CreationTimestamp = slices[i].CreationTimestamp
		out = append(out, s)
	}
	return out, nil
}
