// fake-kubelet stands in for the kubelets of a test cluster that has no real nodes
// (tests/e2e/cluster.sh). For every Node object it:
//   - renews the node's heartbeat Lease in kube-node-lease and keeps its Ready
//     condition True and fresh, so that the node lifecycle controller of
//     kube-controller-manager (left on) never taints it not-ready or unreachable;
//   - marks pods bound to it Running and Ready (what a kubelet reports once the
//     containers start);
//   - finishes the deletion of its pods that have a deletionTimestamp (delete with
//     grace period 0, as a kubelet does once the containers are gone).
//
// It uses client-go only; it prepares no DRA resources (there is no driver).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of a user allowed to write nodes, leases and pods")
	interval := flag.Duration("interval", 10*time.Second, "heartbeat period (Lease renewal and Ready condition)")
	flag.Parse()
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fatal(err)
	}
	cfg.QPS, cfg.Burst = 200, 400
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	factory := informers.NewSharedInformerFactory(cs, 0)
	nodes := factory.Core().V1().Nodes()
	pods := factory.Core().V1().Pods()
	queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	enqueue := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			queue.Add(key)
		}
	}
	if _, err := pods.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
	}); err != nil {
		fatal(err)
	}
	nodeLister := nodes.Lister()
	podLister := pods.Lister()
	nodes.Informer() // registered before Start
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	fmt.Println("fake-kubelet: caches synced")

	go func() {
		<-ctx.Done()
		queue.ShutDown()
	}()
	go func() {
		for {
			key, quit := queue.Get()
			if quit {
				return
			}
			if err := syncPod(ctx, cs, podLister, key); err != nil {
				fmt.Fprintf(os.Stderr, "fake-kubelet: pod %s: %v\n", key, err)
				queue.AddRateLimited(key)
			} else {
				queue.Forget(key)
			}
			queue.Done(key)
		}
	}()

	tick := time.NewTicker(*interval)
	defer tick.Stop()
	for {
		list, err := nodeLister.List(everything)
		if err == nil {
			for _, n := range list {
				if err := heartbeat(ctx, cs, n); err != nil && ctx.Err() == nil {
					fmt.Fprintf(os.Stderr, "fake-kubelet: node %s: %v\n", n.Name, err)
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

var everything = labels.Everything()

type podLister = corelisters.PodLister

func strategicPatch(ctx context.Context, apply func([]byte) error, patch map[string]any) error {
	b, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	return apply(b)
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "fake-kubelet:", err)
	os.Exit(1)
}

// heartbeat renews the node's Lease and its Ready condition.
func heartbeat(ctx context.Context, cs kubernetes.Interface, n *corev1.Node) error {
	now := metav1.NewMicroTime(time.Now())
	leases := cs.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	l, err := leases.Get(ctx, n.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		l = &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{
				Name: n.Name,
				OwnerReferences: []metav1.OwnerReference{{
					APIVersion: "v1", Kind: "Node", Name: n.Name, UID: n.UID,
				}},
			},
			Spec: coordinationv1.LeaseSpec{
				HolderIdentity:       ptr.To(n.Name),
				LeaseDurationSeconds: ptr.To[int32](40),
				RenewTime:            &now,
			},
		}
		if _, err := leases.Create(ctx, l, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	case err != nil:
		return err
	default:
		l = l.DeepCopy()
		l.Spec.RenewTime = &now
		if _, err := leases.Update(ctx, l, metav1.UpdateOptions{}); err != nil && !apierrors.IsConflict(err) {
			return err
		}
	}

	t := metav1.Now()
	ready := corev1.NodeCondition{
		Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
		Message: "fake-kubelet is posting ready status", LastHeartbeatTime: t, LastTransitionTime: t,
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
			ready.LastTransitionTime = c.LastTransitionTime
		}
	}
	patch := map[string]any{"status": map[string]any{"conditions": []corev1.NodeCondition{ready}}}
	return strategicPatch(ctx, func(b []byte) error {
		_, err := cs.CoreV1().Nodes().PatchStatus(ctx, n.Name, b)
		return err
	}, patch)
}

// syncPod reports a bound pod Running and Ready, or finishes its deletion.
func syncPod(ctx context.Context, cs kubernetes.Interface, lister podLister, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	p, err := lister.Pods(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if p.Spec.NodeName == "" {
		return nil
	}
	if p.DeletionTimestamp != nil {
		err := cs.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{
			GracePeriodSeconds: ptr.To[int64](0),
			Preconditions:      &metav1.Preconditions{UID: &p.UID},
		})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return nil
		}
		return err
	}
	if p.Status.Phase == corev1.PodRunning || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return nil
	}
	now := metav1.Now()
	cond := func(t corev1.PodConditionType) corev1.PodCondition {
		return corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: now}
	}
	var statuses []corev1.ContainerStatus
	for _, c := range p.Spec.Containers {
		statuses = append(statuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, ImageID: c.Image, Ready: true, Started: ptr.To(true),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		})
	}
	patch := map[string]any{"status": map[string]any{
		"phase":     corev1.PodRunning,
		"startTime": now,
		"hostIP":    "127.0.0.1",
		"conditions": []corev1.PodCondition{
			cond(corev1.PodInitialized), cond(corev1.PodReady), cond(corev1.ContainersReady), cond(corev1.PodScheduled),
		},
		"containerStatuses": statuses,
	}}
	return strategicPatch(ctx, func(b []byte) error {
		_, err := cs.CoreV1().Pods(ns).Patch(ctx, name, types.StrategicMergePatchType, b, metav1.PatchOptions{}, "status")
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}, patch)
}
