// Command k6d-agent stands in for the kubelets of the k6-distributed test cluster.
//
// It registers nodes through the API (dedicated load-test nodes with a label and a taint, and
// general-purpose nodes), keeps them alive (Lease + Ready heartbeats), and runs the pods bound to
// them as local processes, each pod in its own network namespace whose address is the pod IP.
// See test/cluster/README.md.
//
// Usage:
//
//	k6d-agent                         run (configured by the environment, see loadConfig)
//	k6d-agent container-init SPEC     internal: first program of a container process
//	k6d-agent sweep                   remove every netns/veth/bridge of CLUSTER_POD_NET
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

type config struct {
	kubeconfig     string
	stateDir       string
	podNet         string
	dedicated      int
	general        int
	nodeCPU        string
	nodeMemory     string
	nodePods       string
	kubeletPort    int
	kubeletVersion string
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func envInt(k string, def int) (int, error) {
	v := os.Getenv(k)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s must be a non-negative integer, got %q", k, v)
	}
	return n, nil
}

func loadConfig() (config, error) {
	c := config{
		kubeconfig:     os.Getenv("KUBECONFIG"),
		stateDir:       os.Getenv("AGENT_STATE_DIR"),
		podNet:         envOr("CLUSTER_POD_NET", "10.213"),
		nodeCPU:        envOr("NODE_CPU", "4"),
		nodeMemory:     envOr("NODE_MEMORY", "8Gi"),
		nodePods:       envOr("NODE_PODS", "110"),
		kubeletVersion: envOr("KUBELET_VERSION", "v1.35.4"),
	}
	var err error
	if c.dedicated, err = envInt("DEDICATED_NODES", 4); err != nil {
		return c, err
	}
	if c.general, err = envInt("GENERAL_NODES", 1); err != nil {
		return c, err
	}
	if c.kubeletPort, err = envInt("KUBELET_PORT", 10250); err != nil {
		return c, err
	}
	if c.kubeconfig == "" {
		return c, fmt.Errorf("KUBECONFIG must name the agent's kubeconfig")
	}
	if c.stateDir == "" {
		return c, fmt.Errorf("AGENT_STATE_DIR must name a directory for pod files")
	}
	if c.dedicated+c.general == 0 || c.dedicated+c.general > 200 {
		return c, fmt.Errorf("DEDICATED_NODES + GENERAL_NODES must be 1..200")
	}
	return c, nil
}

type Agent struct {
	cfg     config
	cs      kubernetes.Interface
	ctx     context.Context
	log     *log.Logger
	net     *podNet
	self    string
	bootID  string
	nodes   map[string]*node
	servers []*http.Server

	mu      sync.Mutex
	workers map[string]*podWorker // by UID
	byName  map[string]*podWorker // by namespace/name (latest)
	wg      sync.WaitGroup
}

func main() {
	if len(os.Args) >= 3 && os.Args[1] == "container-init" {
		containerInitMain(os.Args[2])
		return
	}
	logger := log.New(os.Stderr, "k6d-agent ", log.LstdFlags|log.Lmicroseconds)
	if len(os.Args) >= 2 && os.Args[1] == "sweep" {
		pn, err := newPodNet(envOr("CLUSTER_POD_NET", "10.213"))
		if err != nil {
			logger.Fatal(err)
		}
		pn.sweep(true)
		return
	}
	if len(os.Args) >= 2 {
		fmt.Fprintln(os.Stderr, "usage: k6d-agent [container-init SPEC | sweep]  (configured by the environment, see test/cluster/README.md)")
		os.Exit(2)
	}
	if err := runAgent(logger); err != nil {
		logger.Printf("error: %v", err)
		os.Exit(1)
	}
}

func runAgent(logger *log.Logger) error {
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("the node agent must run as root (it creates network namespaces)")
	}
	rc, err := clientcmd.BuildConfigFromFlags("", cfg.kubeconfig)
	if err != nil {
		return fmt.Errorf("kubeconfig %s: %w", cfg.kubeconfig, err)
	}
	rc.QPS, rc.Burst = 200, 400
	rc.UserAgent = "k6d-agent"
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	pn, err := newPodNet(cfg.podNet)
	if err != nil {
		return err
	}
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	a := &Agent{
		cfg: cfg, cs: cs, ctx: ctx, log: logger, net: pn, self: self,
		bootID:  hex.EncodeToString(b),
		nodes:   map[string]*node{},
		workers: map[string]*podWorker{},
		byName:  map[string]*podWorker{},
	}
	if err := os.MkdirAll(filepath.Join(cfg.stateDir, "pods"), 0o755); err != nil {
		return err
	}
	// Leftovers of an earlier agent of this network.
	pn.sweep(false)
	_ = os.RemoveAll(filepath.Join(cfg.stateDir, "pods"))
	_ = os.MkdirAll(filepath.Join(cfg.stateDir, "pods"), 0o755)

	total := cfg.dedicated + cfg.general
	if err := pn.setupBridge(total); err != nil {
		return err
	}
	defer a.shutdown()

	var nodes []*node
	for i := 1; i <= cfg.dedicated; i++ {
		nodes = append(nodes, &node{name: fmt.Sprintf("k6d-loadtest-%d", i), dedicated: true})
	}
	for i := 1; i <= cfg.general; i++ {
		nodes = append(nodes, &node{name: fmt.Sprintf("k6d-general-%d", i)})
	}
	for i, n := range nodes {
		n.ip = pn.nodeIP(i + 1)
		a.nodes[n.name] = n
		if err := a.startKubeletServer(n); err != nil {
			return err
		}
	}
	for _, n := range nodes {
		var err error
		for try := 0; try < 30; try++ {
			if err = a.registerNode(ctx, n); err == nil {
				break
			}
			if !sleepCtx(ctx, time.Second) {
				return ctx.Err()
			}
		}
		if err != nil {
			return err
		}
		if err := a.renewLease(ctx, n); err != nil {
			logger.Printf("lease of %s: %v", n.name, err)
		}
		go a.heartbeat(ctx, n)
		logger.Printf("node %s registered (InternalIP %s, dedicated=%v)", n.name, n.ip, n.dedicated)
	}

	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermNotEqualSelector("spec.nodeName", "").String()
	}))
	inf := factory.Core().V1().Pods().Informer()
	_, err = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { a.onPod(obj) },
		UpdateFunc: func(_, obj any) { a.onPod(obj) },
		DeleteFunc: func(obj any) { a.onPodDeleted(obj) },
	})
	if err != nil {
		return err
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return fmt.Errorf("pod informer did not sync")
	}
	logger.Printf("ready: %d dedicated + %d general nodes, pod network %s.0.0/16 on bridge %s", cfg.dedicated, cfg.general, cfg.podNet, pn.bridge())
	<-ctx.Done()
	logger.Printf("stopping: killing pods' processes and removing their namespaces")
	factory.Shutdown()
	return nil
}

func (a *Agent) onPod(obj any) {
	pod, ok := obj.(*v1.Pod)
	if !ok {
		return
	}
	n, ours := a.nodes[pod.Spec.NodeName]
	if !ours || a.ctx.Err() != nil {
		return
	}
	a.mu.Lock()
	w, known := a.workers[string(pod.UID)]
	if !known {
		if pod.DeletionTimestamp != nil && (isTerminal(pod.Status.Phase) || pod.Status.StartTime == nil) {
			a.mu.Unlock()
			// Nothing of ours runs for it: finish the deletion right away.
			go a.finishDeletion(pod)
			return
		}
		w = a.newWorker(pod, n)
		a.workers[string(pod.UID)] = w
		a.byName[pod.Namespace+"/"+pod.Name] = w
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			w.run()
		}()
	}
	a.mu.Unlock()
	w.update(pod)
}

func (a *Agent) onPodDeleted(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	pod, ok := obj.(*v1.Pod)
	if !ok {
		return
	}
	a.mu.Lock()
	w := a.workers[string(pod.UID)]
	a.mu.Unlock()
	if w != nil {
		w.vanished()
	}
}

func (a *Agent) finishDeletion(pod *v1.Pod) {
	zero := int64(0)
	uid := pod.UID
	ctx, cancel := context.WithTimeout(a.ctx, 30*time.Second)
	defer cancel()
	_ = a.cs.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
		GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &uid},
	})
}

func (a *Agent) forget(w *podWorker) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.workers[string(w.uid)] == w {
		delete(a.workers, string(w.uid))
	}
	key := w.ns + "/" + w.name
	if a.byName[key] == w {
		delete(a.byName, key)
	}
}

func (a *Agent) workerByName(ns, name string) *podWorker {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.byName[ns+"/"+name]
}

// shutdown: every pod's processes are killed and its netns removed (the workers do it when the
// agent's context ends), then the bridge and anything left with our prefixes.
func (a *Agent) shutdown() {
	done := make(chan struct{})
	go func() { a.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		a.log.Printf("some pod workers did not stop in time; sweeping")
	}
	for _, s := range a.servers {
		_ = s.Close()
	}
	a.net.sweep(true)
	_ = os.RemoveAll(filepath.Join(a.cfg.stateDir, "pods"))
	a.log.Printf("stopped")
}

func (a *Agent) event(pod *v1.Pod, typ, reason, msg string) {
	if a.ctx.Err() != nil || pod == nil {
		return
	}
	now := metav1.Now()
	ev := &v1.Event{
		ObjectMeta: metav1.ObjectMeta{
			Name:      fmt.Sprintf("%s.%x", pod.Name, time.Now().UnixNano()),
			Namespace: pod.Namespace,
		},
		InvolvedObject: v1.ObjectReference{
			Kind: "Pod", APIVersion: "v1", Namespace: pod.Namespace, Name: pod.Name,
			UID: pod.UID, ResourceVersion: pod.ResourceVersion,
		},
		Reason: reason, Message: msg, Type: typ,
		Source:         v1.EventSource{Component: "kubelet", Host: pod.Spec.NodeName},
		FirstTimestamp: now, LastTimestamp: now, Count: 1,
		ReportingController: "kubelet", ReportingInstance: pod.Spec.NodeName,
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = a.cs.CoreV1().Events(pod.Namespace).Create(ctx, ev, metav1.CreateOptions{})
	}()
}

func kernelVersion() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}
