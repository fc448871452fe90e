// benche2e: the load side of bench/e2e/run.sh (issue #39, item 4).
//
//	benche2e setup --kubeconfig F --nodes N --devices D --shape basic|match --ns NS
//	benche2e run   --kubeconfig F --ns NS --pods P --scheduler NAME [--out FILE]
//	               [--sched-metrics URL] [--dralloc-metrics URL] [--tls-cert C --tls-key K]
//	               [--pids name=pid,...]
//
// setup creates scheduler_perf's DRA objects (dra/templates: deviceclass.yaml,
// resourceslice-basic-devices.yaml with numPCIRoots 2, resourceclaimtemplate.yaml) for the
// Nodes node-0..node-N-1 that tests/e2e/cluster.sh made. run watches the namespace's pods,
// creates P pods from pod-with-claim-template.yaml (schedulerName set) as fast as the
// client allows, and waits until every pod has spec.nodeName. Per pod: created = when its
// Create call returned, bound = when the watch first saw spec.nodeName (both this
// process's monotonic clock). Throughput = P / (last bound - first created). Around the
// run it scrapes kube-scheduler's, dralloc's and kube-apiserver's /metrics and the CPU
// time of the given processes, and prints the deltas.
package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
)

const driver = "test-driver.cdi.k8s.io"

func die(f string, a ...any) { fmt.Fprintf(os.Stderr, "benche2e: "+f+"\n", a...); os.Exit(1) }

func client(kubeconfig string, qps float32, burst int) *kubernetes.Clientset {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		die("kubeconfig: %v", err)
	}
	cfg.QPS, cfg.Burst = qps, burst
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		die("client: %v", err)
	}
	return cs
}

// parallel runs f(0..n-1) on w workers; the first error wins
func parallel(n, w int, f func(i int) error) error {
	var next atomic.Int64
	var first error
	var mu sync.Mutex
	var wg sync.WaitGroup
	for k := 0; k < w; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := f(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}

func str(s string) resourcev1.DeviceAttribute { return resourcev1.DeviceAttribute{StringValue: &s} }

// resourceslice-basic-devices.yaml for one node
func slice(node string, index, numDevices, numPCIRoots int) *resourcev1.ResourceSlice {
	name := fmt.Sprintf("resourceslice-%d", index)
	s := &resourcev1.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: resourcev1.ResourceSliceSpec{
			Pool:     resourcev1.ResourcePool{Name: name, Generation: 1, ResourceSliceCount: 1},
			Driver:   driver,
			NodeName: ptr.To(node),
		},
	}
	for d := 0; d < numDevices; d++ {
		root := d % numPCIRoots
		s.Spec.Devices = append(s.Spec.Devices, resourcev1.Device{
			Name: fmt.Sprintf("basic-device-%d", d),
			Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
				"driver":                          str("xe"),
				"driverVersion":                   {VersionValue: ptr.To("1.2.3")},
				"resource.k8s.io/pciRoot":         str(strconv.Itoa(root)),
				"family":                          str("Arc Pro B-Series"),
				"health":                          str("Healthy"),
				"model":                           str("B60"),
				"pciAddress":                      str(fmt.Sprintf("0000:0%d:00.0", d)),
				"pciId":                           str("0xe211"),
				"pciRoot":                         str(fmt.Sprintf("0%d", root)),
				"resource.kubernetes.io/pciBusID": str(fmt.Sprintf("0000:0%d:00.0", d)),
				"resource.kubernetes.io/pciRoot":  str(fmt.Sprintf("pci0000:0%d", root)),
				"sriov":                           {BoolValue: ptr.To(true)},
				"type":                            str("gpu"),
			},
			Capacity: map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{
				"memory":     {Value: resource.MustParse("24480Mi")},
				"millicores": {Value: resource.MustParse("1k")},
			},
		})
	}
	return s
}

// the MIG shape (bench/README.md's mig_5000nodes, dralloc's own scale point): per node
// one counter-set slice (a set gpu-K per GPU: memory 40Gi, multiprocessors 98,
// memory-slice-0..7 = 1) and device slices of at most 64 devices: per GPU the whole GPU
// and the MIG placements 1g.5gb x7, 1g.10gb x4, 2g.10gb x3, 3g.20gb x2, 4g.20gb, 7g.40gb
// (19), each consuming its memory slices
type migProfile struct {
	name        string
	starts      []int
	slices, sms int
	memGi       int64
}

var migProfiles = []migProfile{
	{"whole", []int{0}, 8, 98, 40},
	{"1g.5gb", []int{0, 1, 2, 3, 4, 5, 6}, 1, 14, 5},
	{"1g.10gb", []int{0, 2, 4, 6}, 2, 14, 10},
	{"2g.10gb", []int{0, 2, 4}, 2, 28, 10},
	{"3g.20gb", []int{0, 4}, 4, 42, 20},
	{"4g.20gb", []int{0}, 4, 56, 20},
	{"7g.40gb", []int{0}, 8, 98, 40},
}

func migSlices(node string, index, gpus int) []*resourcev1.ResourceSlice {
	pool := fmt.Sprintf("resourceslice-%d", index)
	var devs []resourcev1.Device
	cs := &resourcev1.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: pool + "-counters"},
		Spec:       resourcev1.ResourceSliceSpec{Driver: driver, NodeName: ptr.To(node)},
	}
	for g := 0; g < gpus; g++ {
		set := fmt.Sprintf("gpu-%d", g)
		counters := map[string]resourcev1.Counter{
			"memory":          {Value: resource.MustParse("40Gi")},
			"multiprocessors": {Value: *resource.NewQuantity(98, resource.DecimalSI)},
		}
		for m := 0; m < 8; m++ {
			counters[fmt.Sprintf("memory-slice-%d", m)] = resourcev1.Counter{Value: resource.MustParse("1")}
		}
		cs.Spec.SharedCounters = append(cs.Spec.SharedCounters, resourcev1.CounterSet{Name: set, Counters: counters})
		for _, p := range migProfiles {
			for _, st := range p.starts {
				typ, name := "mig", fmt.Sprintf("gpu-%d-mig-%s-%d", g, strings.ReplaceAll(p.name, ".", "-"), st)
				if p.name == "whole" {
					typ, name = "gpu", fmt.Sprintf("gpu-%d", g)
				}
				use := map[string]resourcev1.Counter{
					"memory":          {Value: *resource.NewQuantity(p.memGi<<30, resource.BinarySI)},
					"multiprocessors": {Value: *resource.NewQuantity(int64(p.sms), resource.DecimalSI)},
				}
				for m := st; m < st+p.slices; m++ {
					use[fmt.Sprintf("memory-slice-%d", m)] = resourcev1.Counter{Value: resource.MustParse("1")}
				}
				devs = append(devs, resourcev1.Device{
					Name: name,
					Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
						"type":           str(typ),
						"profile":        str(p.name),
						"index":          {IntValue: ptr.To(int64(g))},
						"placementStart": {IntValue: ptr.To(int64(st))},
						"uuid":           str(fmt.Sprintf("GPU-%s-%d-%s-%d", node, g, p.name, st)),
						"productName":    str("NVIDIA A100-SXM4-40GB"),
						"architecture":   str("Ampere"),
						"driverVersion":  {VersionValue: ptr.To("550.54.15")},
					},
					ConsumesCounters: []resourcev1.DeviceCounterConsumption{{CounterSet: set, Counters: use}},
				})
			}
		}
	}
	out := []*resourcev1.ResourceSlice{cs}
	for i := 0; i*64 < len(devs); i++ {
		end := min(len(devs), (i+1)*64)
		out = append(out, &resourcev1.ResourceSlice{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-devices-%d", pool, i)},
			Spec:       resourcev1.ResourceSliceSpec{Driver: driver, NodeName: ptr.To(node), Devices: devs[i*64 : end]},
		})
	}
	n := int64(len(out))
	for _, sl := range out {
		sl.Spec.Pool = resourcev1.ResourcePool{Name: pool, Generation: 1, ResourceSliceCount: n}
	}
	return out
}

func setup(args []string) {
	fs := flag.NewFlagSet("setup", flag.ExitOnError)
	kc := fs.String("kubeconfig", "", "admin kubeconfig")
	nodes := fs.Int("nodes", 500, "nodes node-0..N-1 (made by cluster.sh)")
	devices := fs.Int("devices", 10, "devices per node")
	shape := fs.String("shape", "basic", "basic (1 request) | match (5 requests, matchAttribute pciRoot) | mig (--devices GPUs of 19 partitions, 1 request for a 1g.5gb)")
	ns := fs.String("ns", "test", "namespace of the template and pods")
	fs.Parse(args)
	cs := client(*kc, 1000, 2000)
	ctx := context.Background()
	t0 := time.Now()
	create := func(err error) error {
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		return nil
	}
	if err := create(func() error {
		_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: *ns}}, metav1.CreateOptions{})
		return err
	}()); err != nil {
		die("namespace: %v", err)
	}
	// deviceclass.yaml
	if err := create(func() error {
		_, err := cs.ResourceV1().DeviceClasses().Create(ctx, &resourcev1.DeviceClass{
			ObjectMeta: metav1.ObjectMeta{Name: "test-class"},
			Spec: resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{
				CEL: &resourcev1.CELDeviceSelector{Expression: `device.driver == "` + driver + `"`}}}},
		}, metav1.CreateOptions{})
		return err
	}()); err != nil {
		die("deviceclass: %v", err)
	}
	// resourceclaimtemplate.yaml: numRequests 1 (basic) or 5 with matchAttribute (match_*)
	nreq := 1
	var constraints []resourcev1.DeviceConstraint
	if *shape == "match" {
		nreq = 5
		constraints = []resourcev1.DeviceConstraint{{MatchAttribute: ptr.To(resourcev1.FullyQualifiedName("resource.kubernetes.io/pciRoot"))}}
	} else if *shape != "basic" && *shape != "mig" {
		die("--shape: basic, match or mig, not %s", *shape)
	}
	rct := &resourcev1.ResourceClaimTemplate{ObjectMeta: metav1.ObjectMeta{Name: "test-claim-template"}}
	rct.Spec.Spec.Devices.Constraints = constraints
	for r := 0; r < nreq; r++ {
		rct.Spec.Spec.Devices.Requests = append(rct.Spec.Spec.Devices.Requests, resourcev1.DeviceRequest{
			Name: fmt.Sprintf("req-%d", r), Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "test-class"}})
	}
	if *shape == "mig" {
		rct.Spec.Spec.Devices.Requests[0].Exactly.Selectors = []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{
			Expression: `device.attributes["` + driver + `"].type == "mig" && device.attributes["` + driver + `"].profile == "1g.5gb"`}}}
	}
	if err := create(func() error {
		_, err := cs.ResourceV1().ResourceClaimTemplates(*ns).Create(ctx, rct, metav1.CreateOptions{})
		return err
	}()); err != nil {
		die("resourceclaimtemplate: %v", err)
	}
	if err := parallel(*nodes, 16, func(i int) error {
		node := fmt.Sprintf("node-%d", i)
		slices := []*resourcev1.ResourceSlice{}
		if *shape == "mig" {
			slices = migSlices(node, i, *devices)
		} else {
			slices = append(slices, slice(node, i, *devices, 2))
		}
		for _, sl := range slices {
			if _, err := cs.ResourceV1().ResourceSlices().Create(ctx, sl, metav1.CreateOptions{}); create(err) != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		die("resourceslices: %v", err)
	}
	fmt.Printf("setup: %d nodes' ResourceSlices × %d devices (mig: GPUs), DeviceClass test-class, ResourceClaimTemplate %s/test-claim-template (%s: %d request(s)) in %.1fs\n",
		*nodes, *devices, *ns, *shape, nreq, time.Since(t0).Seconds())
}

// ---- metrics ------------------------------------------------------------------------

type sample map[string]float64 // "name{labels}" -> value

var lineRE = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)`)

func parseProm(r io.Reader, keep func(name string) bool) sample {
	s := sample{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		m := lineRE.FindStringSubmatch(sc.Text())
		if m == nil || !keep(m[1]) {
			continue
		}
		v, err := strconv.ParseFloat(m[3], 64)
		if err != nil {
			continue
		}
		s[m[1]+m[2]] += v
	}
	return s
}

func label(key, name string) string {
	i := strings.Index(key, "{"+name+`="`)
	if i < 0 {
		i = strings.Index(key, ","+name+`="`)
	}
	if i < 0 {
		return ""
	}
	rest := key[i+len(name)+3:]
	return rest[:strings.IndexByte(rest, '"')]
}

func scrape(url string, tlsCfg *tls.Config, keep func(string) bool) sample {
	if url == "" {
		return sample{}
	}
	c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsCfg}}
	resp, err := c.Get(url)
	if err != nil {
		fmt.Fprintf(os.Stderr, "benche2e: scrape %s: %v\n", url, err)
		return sample{}
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		fmt.Fprintf(os.Stderr, "benche2e: scrape %s: %s\n", url, resp.Status)
		return sample{}
	}
	return parseProm(resp.Body, keep)
}

func delta(a, b sample) sample {
	d := sample{}
	for k, v := range b {
		d[k] = v - a[k]
	}
	return d
}

// histogram summary of a delta: over keys of family fam whose labels pass sel, grouped
// by the value of label group; returns count, mean and the p50/p99 interpolated from
// the buckets, as histogram_quantile does
type hist struct {
	Count, Sum, P50, P99 float64
}

func histograms(d sample, fam, group string, sel func(key string) bool) map[string]hist {
	type acc struct {
		count, sum float64
		le         map[float64]float64
	}
	by := map[string]*acc{}
	get := func(g string) *acc {
		if by[g] == nil {
			by[g] = &acc{le: map[float64]float64{}}
		}
		return by[g]
	}
	for k, v := range d {
		if !sel(k) {
			continue
		}
		g := label(k, group)
		switch {
		case strings.HasPrefix(k, fam+"_count"):
			get(g).count += v
		case strings.HasPrefix(k, fam+"_sum"):
			get(g).sum += v
		case strings.HasPrefix(k, fam+"_bucket"):
			les := label(k, "le")
			le := math.Inf(1)
			if les != "+Inf" {
				le, _ = strconv.ParseFloat(les, 64)
			}
			get(g).le[le] += v
		}
	}
	out := map[string]hist{}
	for g, a := range by {
		if a.count <= 0 {
			continue
		}
		var bounds []float64
		for le := range a.le {
			bounds = append(bounds, le)
		}
		sort.Float64s(bounds)
		q := func(p float64) float64 {
			rank := p * a.count
			prevLe, prevC := 0.0, 0.0
			for _, le := range bounds {
				c := a.le[le]
				if c >= rank {
					if math.IsInf(le, 1) {
						return -prevLe // past the last bucket: printed as >prevLe
					}
					if c == prevC {
						return le
					}
					return prevLe + (le-prevLe)*(rank-prevC)/(c-prevC)
				}
				prevLe, prevC = le, c
			}
			return prevLe
		}
		out[g] = hist{Count: a.count, Sum: a.sum, P50: q(0.5), P99: q(0.99)}
	}
	return out
}

func cpuSeconds(pid string) float64 {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100 // USER_HZ
}

// ---- run ----------------------------------------------------------------------------

type result struct {
	Scheduler     string             `json:"scheduler"`
	Pods          int                `json:"pods"`
	Bound         int                `json:"bound"`
	CreateSeconds float64            `json:"createSeconds"`
	Seconds       float64            `json:"seconds"`
	PodsPerSecond float64            `json:"podsPerSecond"`
	LatencyP50Ms  float64            `json:"latencyP50Ms"`
	LatencyP90Ms  float64            `json:"latencyP90Ms"`
	LatencyP99Ms  float64            `json:"latencyP99Ms"`
	LatencyMaxMs  float64            `json:"latencyMaxMs"`
	CPUSeconds    map[string]float64 `json:"cpuSeconds"`
	Writes        map[string]float64 `json:"apiserverWrites"`
	Scheduler_    map[string]hist    `json:"schedulerExtensionPoints"`
	Attempts      map[string]hist    `json:"schedulingAttempts"`
	AttemptsTotal map[string]float64 `json:"scheduleAttemptsTotal"`
	Dralloc       map[string]hist    `json:"drallocRequests"`
	Errors        []string           `json:"errors,omitempty"`
}

func run(args []string) {
	fs := flag.NewFlagSet("run", flag.ExitOnError)
	kc := fs.String("kubeconfig", "", "admin kubeconfig")
	ns := fs.String("ns", "test", "namespace")
	pods := fs.Int("pods", 500, "pods to create")
	sched := fs.String("scheduler", "default-scheduler", "spec.schedulerName")
	workers := fs.Int("workers", 8, "concurrent Create calls")
	qps := fs.Float64("qps", 1000, "client QPS (burst 2x)")
	timeout := fs.Duration("timeout", 10*time.Minute, "give up after")
	out := fs.String("out", "", "write the result as JSON here")
	schedURL := fs.String("sched-metrics", "", "kube-scheduler /metrics URL")
	drallocURL := fs.String("dralloc-metrics", "", "dralloc /metrics URL")
	cert := fs.String("tls-cert", "", "client certificate for kube-scheduler's /metrics")
	key := fs.String("tls-key", "", "its key")
	pids := fs.String("pids", "", "name=pid,... whose CPU time to report")
	fs.Parse(args)

	cs := client(*kc, float32(*qps), int(2**qps))
	ctx := context.Background()
	tlsCfg := &tls.Config{InsecureSkipVerify: true} // loopback, our own CA; only metrics
	if *cert != "" {
		c, err := tls.LoadX509KeyPair(*cert, *key)
		if err != nil {
			die("tls: %v", err)
		}
		tlsCfg.Certificates = []tls.Certificate{c}
	}
	keepSched := func(n string) bool {
		return strings.HasPrefix(n, "scheduler_framework_extension_point_duration_seconds") ||
			strings.HasPrefix(n, "scheduler_scheduling_attempt_duration_seconds") ||
			n == "scheduler_schedule_attempts_total"
	}
	keepDralloc := func(n string) bool { return strings.HasPrefix(n, "dralloc_http_request_duration_seconds") }
	keepAPI := func(n string) bool { return n == "apiserver_request_total" }
	apiScrape := func() sample {
		b, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
		if err != nil {
			fmt.Fprintf(os.Stderr, "benche2e: apiserver /metrics: %v\n", err)
			return sample{}
		}
		return parseProm(strings.NewReader(string(b)), keepAPI)
	}
	type proc struct{ name, pid string }
	var procs []proc
	for _, p := range strings.Split(*pids, ",") {
		if n, v, ok := strings.Cut(p, "="); ok {
			procs = append(procs, proc{n, v})
		}
	}
	cpu0 := map[string]float64{}
	for _, p := range procs {
		cpu0[p.name] = cpuSeconds(p.pid)
	}
	s0, d0, a0 := scrape(*schedURL, tlsCfg, keepSched), scrape(*drallocURL, nil, keepDralloc), apiScrape()

	// the watch first, so that no binding is missed
	base := time.Now()
	created := make([]time.Duration, *pods)
	bound := map[string]time.Duration{}
	var mu sync.Mutex
	allBound := make(chan struct{})
	record := func(p *corev1.Pod) {
		if p.Spec.NodeName == "" {
			return
		}
		t := time.Since(base)
		mu.Lock()
		if _, seen := bound[p.Name]; !seen {
			bound[p.Name] = t
			if len(bound) == *pods {
				close(allBound)
			}
		}
		mu.Unlock()
	}
	// a watch that survives being closed: resumed from the last resourceVersion, or
	// after a relist (whose bound pods are recorded at the time of the list)
	wctx, stopWatch := context.WithCancel(ctx)
	var rewatches atomic.Int64
	listed := make(chan struct{})
	go func() {
		rv := ""
		for wctx.Err() == nil {
			if rv == "" {
				l, err := cs.CoreV1().Pods(*ns).List(wctx, metav1.ListOptions{})
				if err != nil {
					time.Sleep(200 * time.Millisecond)
					continue
				}
				for i := range l.Items {
					record(&l.Items[i])
				}
				rv = l.ResourceVersion
				select {
				case <-listed:
				default:
					close(listed)
				}
			}
			w, err := cs.CoreV1().Pods(*ns).Watch(wctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
			if err != nil {
				rv = ""
				continue
			}
			for ev := range w.ResultChan() {
				if ev.Type == watch.Error {
					rv = ""
					break
				}
				p, ok := ev.Object.(*corev1.Pod)
				if !ok {
					continue
				}
				rv = p.ResourceVersion
				if ev.Type == watch.Added || ev.Type == watch.Modified {
					record(p)
				}
			}
			w.Stop()
			if wctx.Err() == nil {
				rewatches.Add(1)
			}
		}
	}()
	<-listed

	pod := func(i int) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("test-dra-%05d", i)},
			Spec: corev1.PodSpec{
				SchedulerName: *sched,
				Containers: []corev1.Container{{
					Name: "pause", Image: "registry.k8s.io/pause:3.10.1",
					Resources: corev1.ResourceRequirements{Claims: []corev1.ResourceClaim{{Name: "resource"}}},
				}},
				ResourceClaims: []corev1.PodResourceClaim{{Name: "resource", ResourceClaimTemplateName: ptr.To("test-claim-template")}},
			},
		}
	}
	go func() { // progress, to stderr
		for wctx.Err() == nil {
			time.Sleep(10 * time.Second)
			mu.Lock()
			n := len(bound)
			mu.Unlock()
			fmt.Fprintf(os.Stderr, "benche2e: %s: %d/%d bound after %.0fs\n", *sched, n, *pods, time.Since(base).Seconds())
		}
	}()
	err := parallel(*pods, *workers, func(i int) error {
		_, err := cs.CoreV1().Pods(*ns).Create(ctx, pod(i), metav1.CreateOptions{})
		created[i] = time.Since(base)
		return err
	})
	if err != nil {
		die("creating pods: %v", err)
	}
	createdAll := time.Since(base)
	var errs []string
	select {
	case <-allBound:
	case <-time.After(*timeout - createdAll):
		errs = append(errs, fmt.Sprintf("timed out after %s", *timeout))
	}
	stopWatch()
	if n := rewatches.Load(); n > 0 {
		fmt.Fprintf(os.Stderr, "benche2e: the pod watch was closed and resumed %d times\n", n)
	}
	s1, d1, a1 := scrape(*schedURL, tlsCfg, keepSched), scrape(*drallocURL, nil, keepDralloc), apiScrape()

	mu.Lock()
	var lat []float64
	first, last := time.Duration(math.MaxInt64), time.Duration(0)
	for i := 0; i < *pods; i++ {
		if created[i] < first {
			first = created[i]
		}
		if b, ok := bound[fmt.Sprintf("test-dra-%05d", i)]; ok {
			lat = append(lat, float64(b-created[i])/1e6)
			if b > last {
				last = b
			}
		}
	}
	nb := len(bound)
	mu.Unlock()
	sort.Float64s(lat)
	pct := func(p float64) float64 {
		if len(lat) == 0 {
			return 0
		}
		return lat[int(math.Ceil(p*float64(len(lat))))-1]
	}
	r := result{Scheduler: *sched, Pods: *pods, Bound: nb, CreateSeconds: (createdAll - first).Seconds(),
		Seconds: (last - first).Seconds(), LatencyP50Ms: pct(0.5), LatencyP90Ms: pct(0.9), LatencyP99Ms: pct(0.99),
		LatencyMaxMs: pct(1), CPUSeconds: map[string]float64{}, Writes: map[string]float64{}, Errors: errs,
		AttemptsTotal: map[string]float64{}}
	if r.Seconds > 0 {
		r.PodsPerSecond = float64(nb) / r.Seconds
	}
	for _, p := range procs {
		r.CPUSeconds[p.name] = cpuSeconds(p.pid) - cpu0[p.name]
	}
	for k, v := range delta(a0, a1) {
		verb := label(k, "verb")
		if v <= 0 || !(verb == "POST" || verb == "PUT" || verb == "PATCH" || verb == "DELETE" || verb == "APPLY") {
			continue
		}
		res := label(k, "resource")
		if sub := label(k, "subresource"); sub != "" {
			res += "/" + sub
		}
		r.Writes[verb+" "+res] += v
	}
	ds := delta(s0, s1)
	r.Scheduler_ = histograms(ds, "scheduler_framework_extension_point_duration_seconds", "extension_point",
		func(k string) bool { return label(k, "profile") == *sched })
	r.Attempts = histograms(ds, "scheduler_scheduling_attempt_duration_seconds", "result",
		func(k string) bool { return label(k, "profile") == *sched })
	for k, v := range ds {
		if strings.HasPrefix(k, "scheduler_schedule_attempts_total") && label(k, "profile") == *sched && v > 0 {
			r.AttemptsTotal[label(k, "result")] += v
		}
	}
	r.Dralloc = histograms(delta(d0, d1), "dralloc_http_request_duration_seconds", "verb", func(string) bool { return true })

	// the report
	fmt.Printf("%s: %d/%d pods bound in %.2fs from first created to last bound (creating took %.2fs): %.1f pods/s\n",
		*sched, nb, *pods, r.Seconds, r.CreateSeconds, r.PodsPerSecond)
	fmt.Printf("%s: latency created→bound p50 %.0f ms, p90 %.0f ms, p99 %.0f ms, max %.0f ms\n",
		*sched, r.LatencyP50Ms, r.LatencyP90Ms, r.LatencyP99Ms, r.LatencyMaxMs)
	ms := func(v float64) string {
		if v < 0 {
			return fmt.Sprintf(">%.1f ms", -1e3*v)
		}
		return fmt.Sprintf("%.3f ms", 1e3*v)
	}
	keys := func(m map[string]hist) []string {
		var ks []string
		for k := range m {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		return ks
	}
	var at []string
	for k, v := range r.AttemptsTotal {
		at = append(at, fmt.Sprintf("%s %.0f", k, v))
	}
	sort.Strings(at)
	fmt.Printf("%s: scheduling attempts: %s\n", *sched, strings.Join(at, ", "))
	for _, k := range keys(r.Attempts) {
		h := r.Attempts[k]
		fmt.Printf("%s:   attempt duration (%s): n=%.0f mean %.2f ms, p50 %s, p99 %s, total %.2fs\n",
			*sched, k, h.Count, 1e3*h.Sum/h.Count, ms(h.P50), ms(h.P99), h.Sum)
	}
	for _, k := range keys(r.Scheduler_) {
		h := r.Scheduler_[k]
		fmt.Printf("%s:   extension point %-14s n=%.0f mean %.3f ms, p50 %s, p99 %s, total %.2fs\n",
			*sched, k, h.Count, 1e3*h.Sum/h.Count, ms(h.P50), ms(h.P99), h.Sum)
	}
	for _, k := range keys(r.Dralloc) {
		if k != "filter" && k != "prioritize" && k != "bind" {
			continue
		}
		h := r.Dralloc[k]
		fmt.Printf("%s:   dralloc /%-10s n=%.0f mean %.3f ms, p50 %s, p99 %s, total %.2fs\n",
			*sched, k, h.Count, 1e3*h.Sum/h.Count, ms(h.P50), ms(h.P99), h.Sum)
	}
	var wk []string
	total := 0.0
	for k, v := range r.Writes {
		wk = append(wk, k)
		total += v
	}
	sort.Slice(wk, func(i, j int) bool { return r.Writes[wk[i]] > r.Writes[wk[j]] })
	var wl []string
	for _, k := range wk {
		if r.Writes[k] >= float64(*pods)/10 {
			wl = append(wl, fmt.Sprintf("%s %.0f", k, r.Writes[k]))
		}
	}
	fmt.Printf("%s: API writes %.0f (%.0f/s, %.1f per pod): %s\n", *sched, total, total/math.Max(r.Seconds, 1e-9),
		total/float64(*pods), strings.Join(wl, ", "))
	var cl []string
	for _, p := range procs {
		cl = append(cl, fmt.Sprintf("%s %.1f", p.name, r.CPUSeconds[p.name]))
	}
	if len(cl) > 0 {
		fmt.Printf("%s: CPU seconds during the run: %s\n", *sched, strings.Join(cl, ", "))
	}
	for _, e := range errs {
		fmt.Printf("%s: ERROR %s\n", *sched, e)
	}
	if *out != "" {
		b, _ := json.MarshalIndent(r, "", "  ")
		if err := os.WriteFile(*out, b, 0o644); err != nil {
			die("%v", err)
		}
	}
	if nb < *pods {
		os.Exit(3)
	}
}

func main() {
	if len(os.Args) < 2 {
		die("usage: benche2e setup|run [flags]")
	}
	switch os.Args[1] {
	case "setup":
		setup(os.Args[2:])
	case "run":
		run(os.Args[2:])
	default:
		die("unknown command %s", os.Args[1])
	}
}
