package main

// Pod workers: one per pod bound to one of the agent's nodes. A worker does what a kubelet
// does for that pod: sandbox (netns + IP), volumes, env, init containers then containers as
// local processes, status updates, restarts (per restartPolicy), logs, and graceful deletion.

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

type ctrRun struct {
	spec   v1.Container
	isInit bool
	mu     sync.Mutex // guards the fields below (with the worker's mu for status)
	status v1.ContainerStatus
	proc   *os.Process
	logs   []string // one log file per attempt
	doneAt []bool   // attempt finished
}

type podWorker struct {
	a    *Agent
	uid  types.UID
	ns   string
	name string
	node *node
	dir  string

	mu         sync.Mutex
	pod        *v1.Pod
	ip         net.IP
	sandboxUp  bool
	startTime  *metav1.Time
	initCtrs   []*ctrRun
	ctrs       []*ctrRun
	conds      map[v1.PodConditionType]v1.PodCondition
	phase      v1.PodPhase
	reason     string
	message    string
	gone       bool // the pod no longer exists in the API
	deleting   bool
	grace      time.Duration
	deadlineEx bool

	statusMu sync.Mutex
	runCtx   context.Context
	stopRun  context.CancelFunc // stops the containers: deletion, deadline, or agent exit
	delCtx   context.Context
	stopDel  context.CancelFunc // the pod is being deleted, or the agent exits
	restart  v1.RestartPolicy
}

func (a *Agent) newWorker(pod *v1.Pod, n *node) *podWorker {
	w := &podWorker{
		a: a, uid: pod.UID, ns: pod.Namespace, name: pod.Name, node: n,
		dir:   filepath.Join(a.cfg.stateDir, "pods", string(pod.UID)),
		pod:   pod.DeepCopy(),
		conds: map[v1.PodConditionType]v1.PodCondition{},
		phase: v1.PodPending,
	}
	w.runCtx, w.stopRun = context.WithCancel(a.ctx)
	w.delCtx, w.stopDel = context.WithCancel(a.ctx)
	w.restart = pod.Spec.RestartPolicy
	for _, c := range pod.Spec.InitContainers {
		w.initCtrs = append(w.initCtrs, newCtrRun(c, true))
	}
	for _, c := range pod.Spec.Containers {
		w.ctrs = append(w.ctrs, newCtrRun(c, false))
	}
	return w
}

func newCtrRun(c v1.Container, isInit bool) *ctrRun {
	return &ctrRun{spec: c, isInit: isInit, status: v1.ContainerStatus{
		Name: c.Name, Image: c.Image,
		State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "ContainerCreating"}},
	}}
}

func (w *podWorker) logf(format string, args ...any) {
	w.a.log.Printf("pod %s/%s (%s): %s", w.ns, w.name, w.node.name, fmt.Sprintf(format, args...))
}

// update stores the newest pod object and reacts to deletion.
func (w *podWorker) update(pod *v1.Pod) {
	w.mu.Lock()
	w.pod = pod.DeepCopy()
	startDelete := pod.DeletionTimestamp != nil && !w.deleting
	if startDelete {
		w.deleting = true
		g := int64(30)
		if pod.Spec.TerminationGracePeriodSeconds != nil {
			g = *pod.Spec.TerminationGracePeriodSeconds
		}
		if pod.DeletionGracePeriodSeconds != nil {
			g = *pod.DeletionGracePeriodSeconds
		}
		w.grace = time.Duration(g) * time.Second
	}
	w.mu.Unlock()
	if startDelete {
		w.logf("deletion requested (grace %s)", w.grace)
		w.stopRun()
		w.stopDel()
	}
}

// vanished: the pod was removed from the API (force deletion or finalised elsewhere).
func (w *podWorker) vanished() {
	w.mu.Lock()
	w.gone = true
	if !w.deleting {
		w.deleting = true
		w.grace = 2 * time.Second
	}
	w.mu.Unlock()
	w.stopRun()
	w.stopDel()
}

func (w *podWorker) latest() *v1.Pod {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.pod.DeepCopy()
}

// ---- main lifecycle ----

func (w *podWorker) run() {
	defer w.a.forget(w)
	pod := w.latest()
	if pod.Status.StartTime != nil || isTerminal(pod.Status.Phase) {
		// Started by an earlier agent: its processes are gone. Fail it (unless already over),
		// then wait for deletion.
		if !isTerminal(pod.Status.Phase) {
			w.failAdopted()
		}
		<-w.delCtx.Done()
		w.finalize()
		return
	}
	go w.killer()
	w.lifecycle()
	// The lifecycle is over: the pod reached a terminal phase, or its run was stopped
	// (deletion, activeDeadlineSeconds, agent exit). Wait for its processes (the killer
	// escalates to SIGKILL after the grace period).
	for len(w.runningProcs()) > 0 {
		time.Sleep(50 * time.Millisecond)
	}
	w.mu.Lock()
	report := !isTerminal(w.phase) && w.a.ctx.Err() == nil && !w.gone
	if report {
		w.phase = w.computePhase()
		if !isTerminal(w.phase) || w.deadlineEx {
			w.phase = v1.PodFailed
		}
		for _, c := range append(append([]*ctrRun{}, w.initCtrs...), w.ctrs...) {
			if c.status.State.Terminated == nil && c.status.State.Running == nil {
				c.status.State = v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
					ExitCode: 137, Reason: "ContainerStatusUnknown",
					Message: "The container could not be located when the pod was terminated",
				}}
			}
		}
	}
	w.mu.Unlock()
	w.teardownSandbox()
	if report {
		w.sync()
	}
	<-w.delCtx.Done()
	w.finalize()
}

func (w *podWorker) failAdopted() {
	w.mu.Lock()
	w.phase = v1.PodFailed
	w.reason = "NodeAgentRestarted"
	w.message = "the test node agent restarted; the pod's processes are gone"
	w.mu.Unlock()
	w.statusMu.Lock()
	defer w.statusMu.Unlock()
	_ = w.writeStatus(func(st *v1.PodStatus) {
		st.Phase = v1.PodFailed
		st.Reason = w.reason
		st.Message = w.message
	})
}

// finalize: the pod is being deleted (or the agent exits). Removes what is left and, for a
// deletion, finishes it in the API like a kubelet: delete with grace 0 and the pod's UID.
func (w *podWorker) finalize() {
	w.killAll(0)
	w.teardownSandbox()
	w.mu.Lock()
	gone := w.gone
	ip := w.ip
	w.mu.Unlock()
	if w.a.ctx.Err() == nil && !gone {
		zero := int64(0)
		uid := w.uid
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := w.a.cs.CoreV1().Pods(w.ns).Delete(ctx, w.name, metav1.DeleteOptions{
			GracePeriodSeconds: &zero,
			Preconditions:      &metav1.Preconditions{UID: &uid},
		})
		cancel()
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			w.logf("finalise deletion: %v", err)
		}
	}
	if ip != nil {
		w.a.net.release(ip)
	}
	_ = os.RemoveAll(w.dir)
	w.logf("removed")
}

func (w *podWorker) lifecycle() {
	ctx := w.runCtx
	now := metav1.Now()
	w.mu.Lock()
	w.startTime = &now
	w.setCond(v1.PodReadyToStartContainers, v1.ConditionFalse, "", "")
	if len(w.initCtrs) > 0 {
		w.setCond(v1.PodInitialized, v1.ConditionFalse, "ContainersNotInitialized", "containers with incomplete status: "+ctrNames(w.initCtrs))
	} else {
		w.setCond(v1.PodInitialized, v1.ConditionTrue, "", "")
	}
	w.setCond(v1.ContainersReady, v1.ConditionFalse, "ContainersNotReady", "containers with unready status: "+ctrNames(w.ctrs))
	w.setCond(v1.PodReady, v1.ConditionFalse, "ContainersNotReady", "containers with unready status: "+ctrNames(w.ctrs))
	if d := w.pod.Spec.ActiveDeadlineSeconds; d != nil {
		deadline := time.Duration(*d) * time.Second
		time.AfterFunc(deadline, func() {
			w.mu.Lock()
			if w.phase == v1.PodPending || w.phase == v1.PodRunning {
				w.deadlineEx = true
				w.reason = "DeadlineExceeded"
				w.message = "Pod was active on the node longer than the specified deadline"
				w.grace = 2 * time.Second
				if g := w.pod.Spec.TerminationGracePeriodSeconds; g != nil {
					w.grace = time.Duration(*g) * time.Second
				}
			}
			ex := w.deadlineEx
			w.mu.Unlock()
			if ex {
				w.logf("activeDeadlineSeconds exceeded")
				w.stopRun()
			}
		})
	}
	w.mu.Unlock()
	w.sync()

	// Sandbox.
	for {
		ip, err := w.a.net.allocate()
		if err == nil {
			if _, err = w.a.net.createSandbox(ip); err != nil {
				w.a.net.release(ip)
			} else {
				w.mu.Lock()
				w.ip, w.sandboxUp = ip, true
				w.setCond(v1.PodReadyToStartContainers, v1.ConditionTrue, "", "")
				w.mu.Unlock()
				break
			}
		}
		w.logf("sandbox: %v", err)
		w.a.event(w.latest(), v1.EventTypeWarning, "FailedCreatePodSandBox", err.Error())
		if !sleepCtx(ctx, 2*time.Second) {
			return
		}
	}
	w.sync()

	// Volumes.
	var vols map[string]string
	for {
		var err error
		vols, err = w.materializeVolumes(ctx)
		if err == nil {
			break
		}
		w.logf("volumes: %v", err)
		w.a.event(w.latest(), v1.EventTypeWarning, "FailedMount", err.Error())
		if !sleepCtx(ctx, 2*time.Second) {
			return
		}
	}

	// Init containers, one after the other.
	for i, c := range w.initCtrs {
		for {
			code, ran := w.runContainer(ctx, c, vols)
			if !ran {
				return
			}
			if code == 0 {
				break
			}
			if w.restart == v1.RestartPolicyNever {
				w.mu.Lock()
				for _, rest := range w.initCtrs[i+1:] {
					rest.status.State = v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "PodInitializing"}}
				}
				w.phase = v1.PodFailed
				w.mu.Unlock()
				w.sync()
				return
			}
			if !w.backoff(ctx, c) {
				return
			}
		}
	}
	w.mu.Lock()
	w.setCond(v1.PodInitialized, v1.ConditionTrue, "", "")
	w.mu.Unlock()

	// Containers, all at once.
	var wg sync.WaitGroup
	for _, c := range w.ctrs {
		wg.Add(1)
		go func(c *ctrRun) {
			defer wg.Done()
			for {
				code, ran := w.runContainer(ctx, c, vols)
				if !ran {
					return
				}
				rp := w.restart
				if rp == v1.RestartPolicyNever || (rp == v1.RestartPolicyOnFailure && code == 0) {
					return
				}
				if !w.backoff(ctx, c) {
					return
				}
			}
		}(c)
	}
	wg.Wait()
	if ctx.Err() != nil {
		return
	}
	w.mu.Lock()
	w.phase = w.computePhase()
	w.mu.Unlock()
	w.sync()
	w.teardownSandbox()
}

// killer stops every process of the pod when the run is stopped (deletion, deadline, agent
// exit): SIGTERM to each process group, SIGKILL after the grace period.
func (w *podWorker) killer() {
	<-w.runCtx.Done()
	w.mu.Lock()
	grace := w.grace
	w.mu.Unlock()
	if w.a.ctx.Err() != nil {
		grace = 3 * time.Second
	}
	w.killAll(grace)
}

func (w *podWorker) killAll(grace time.Duration) {
	procs := w.runningProcs()
	if len(procs) == 0 {
		return
	}
	for _, p := range procs {
		_ = syscall.Kill(-p.Pid, syscall.SIGTERM)
	}
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		if len(w.runningProcs()) == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, p := range w.runningProcs() {
		_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
	}
}

func (w *podWorker) runningProcs() []*os.Process {
	var out []*os.Process
	for _, c := range append(append([]*ctrRun{}, w.initCtrs...), w.ctrs...) {
		c.mu.Lock()
		if c.proc != nil {
			out = append(out, c.proc)
		}
		c.mu.Unlock()
	}
	return out
}

func (w *podWorker) teardownSandbox() {
	w.mu.Lock()
	up, ip := w.sandboxUp, w.ip
	w.sandboxUp = false
	if up {
		w.setCond(v1.PodReadyToStartContainers, v1.ConditionFalse, "", "")
	}
	w.mu.Unlock()
	if up {
		w.a.net.deleteSandbox(ip)
	}
}

func (w *podWorker) backoff(ctx context.Context, c *ctrRun) bool {
	w.mu.Lock()
	n := c.status.RestartCount
	d := 10 * time.Second << uint(min(int(n), 5))
	if d > 300*time.Second {
		d = 300 * time.Second
	}
	last := c.status.State.Terminated
	c.status.LastTerminationState = v1.ContainerState{Terminated: last}
	c.status.State = v1.ContainerState{Waiting: &v1.ContainerStateWaiting{
		Reason:  "CrashLoopBackOff",
		Message: fmt.Sprintf("back-off %s restarting failed container=%s pod=%s_%s(%s)", d, c.spec.Name, w.name, w.ns, w.uid),
	}}
	c.status.Ready = false
	w.updateReadiness()
	w.mu.Unlock()
	w.sync()
	if !sleepCtx(ctx, d) {
		return false
	}
	w.mu.Lock()
	c.status.RestartCount++
	w.mu.Unlock()
	return true
}

// runContainer runs one attempt of a container to its end. ran is false when the run was
// stopped before the process started (deletion while pulling, say) and no exit code exists.
func (w *podWorker) runContainer(ctx context.Context, c *ctrRun, vols map[string]string) (code int, ran bool) {
	// "Pull" the image.
	var rule *imageRule
	pullBackoff := 5 * time.Second
	for {
		r, err := lookupImage(c.spec.Image)
		if err == nil {
			rule = r
			break
		}
		w.setWaiting(c, "ErrImagePull", err.Error())
		w.a.event(w.latest(), v1.EventTypeWarning, "Failed", fmt.Sprintf("Failed to pull image %q: %v", c.spec.Image, err))
		if !sleepCtx(ctx, 3*time.Second) {
			return 0, false
		}
		w.setWaiting(c, "ImagePullBackOff", fmt.Sprintf("Back-off pulling image %q: ErrImagePull: %v", c.spec.Image, err))
		w.a.event(w.latest(), v1.EventTypeNormal, "BackOff", fmt.Sprintf("Back-off pulling image %q", c.spec.Image))
		if !sleepCtx(ctx, pullBackoff) {
			return 0, false
		}
		if pullBackoff < time.Minute {
			pullBackoff *= 2
		}
	}
	// Env.
	var env []string
	for {
		var err error
		env, err = w.resolveEnv(ctx, c)
		if err == nil {
			break
		}
		w.setWaiting(c, "CreateContainerConfigError", err.Error())
		w.a.event(w.latest(), v1.EventTypeWarning, "Failed", "Error: "+err.Error())
		if !sleepCtx(ctx, 2*time.Second) {
			return 0, false
		}
	}
	if ctx.Err() != nil {
		return 0, false
	}
	envMap := envToMap(env)
	command := expandAll(c.spec.Command, envMap)
	args := expandAll(c.spec.Args, envMap)
	argv, err := rule.resolveArgv(command, args)
	if err != nil {
		return w.startError(c, err), true
	}

	// Files for the process.
	w.mu.Lock()
	attempt := len(c.logs)
	c.mu.Lock()
	logPath := filepath.Join(w.dir, "logs", fmt.Sprintf("%s-%d.log", c.spec.Name, attempt))
	c.logs = append(c.logs, logPath)
	c.doneAt = append(c.doneAt, false)
	c.mu.Unlock()
	w.mu.Unlock()
	markDone := func() {
		c.mu.Lock()
		c.doneAt[attempt] = true
		c.mu.Unlock()
	}
	cdir := filepath.Join(w.dir, "containers", fmt.Sprintf("%s-%d", c.spec.Name, attempt))
	for _, d := range []string{filepath.Dir(logPath), filepath.Join(cdir, "root"), filepath.Join(cdir, "scratch")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			markDone()
			return w.startError(c, err), true
		}
	}
	lf, err := newLogFile(logPath)
	if err != nil {
		markDone()
		return w.startError(c, err), true
	}
	spec := initSpec{
		Root: filepath.Join(cdir, "root"), Scratch: filepath.Join(cdir, "scratch"),
		WorkingDir: c.spec.WorkingDir, Hostname: w.name, Argv: argv, Env: env,
	}
	for _, m := range c.spec.VolumeMounts {
		src, ok := vols[m.Name]
		if !ok {
			continue
		}
		if m.SubPath != "" || m.SubPathExpr != "" {
			sp := m.SubPath
			if m.SubPathExpr != "" {
				sp = expand(m.SubPathExpr, envMap)
			}
			src = filepath.Join(src, filepath.Clean("/"+sp))
			if _, err := os.Stat(src); os.IsNotExist(err) {
				_ = os.MkdirAll(src, 0o755)
			}
		}
		spec.Mounts = append(spec.Mounts, initMount{Source: src, Target: m.MountPath, ReadOnly: m.ReadOnly || w.readOnlyVolume(m.Name)})
	}
	for target, local := range rule.files {
		local = os.ExpandEnv(local)
		if local == "" {
			continue
		}
		if _, err := os.Stat(local); err == nil {
			spec.Mounts = append(spec.Mounts, initMount{Source: local, Target: target, ReadOnly: true})
		}
	}
	specPath := filepath.Join(cdir, "spec.json")
	data, _ := json.Marshal(spec)
	if err := os.WriteFile(specPath, data, 0o600); err != nil {
		markDone()
		lf.close()
		return w.startError(c, err), true
	}
	w.mu.Lock()
	netns, _ := w.a.net.names(w.ip)
	w.mu.Unlock()

	cmd := exec.Command("ip", "netns", "exec", netns, w.a.self, "container-init", specPath)
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	outR, outW, err := os.Pipe()
	if err != nil {
		markDone()
		lf.close()
		return w.startError(c, err), true
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		markDone()
		lf.close()
		return w.startError(c, err), true
	}
	cmd.Stdout, cmd.Stderr = outW, errW
	// Hold the lock across Start so the killer cannot miss this process.
	c.mu.Lock()
	if ctx.Err() != nil {
		c.mu.Unlock()
		outR.Close()
		outW.Close()
		errR.Close()
		errW.Close()
		markDone()
		lf.close()
		return 0, false
	}
	err = cmd.Start()
	if err == nil {
		c.proc = cmd.Process
	}
	c.mu.Unlock()
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		markDone()
		lf.close()
		return w.startError(c, err), true
	}
	var copyWG sync.WaitGroup
	copyWG.Add(2)
	go func() { defer copyWG.Done(); lf.copyStream("stdout", outR) }()
	go func() { defer copyWG.Done(); lf.copyStream("stderr", errR) }()

	started := metav1.Now()
	containerID := fmt.Sprintf("k6d://%s-%s-%d", w.uid, c.spec.Name, attempt)
	w.mu.Lock()
	c.status.State = v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: started}}
	c.status.ContainerID = containerID
	c.status.ImageID = "k6d-local://" + imageRepository(c.spec.Image)
	t := true
	c.status.Started = &t
	c.status.Ready = !c.isInit
	w.updateReadiness()
	if w.phase == v1.PodPending && !c.isInit {
		w.phase = v1.PodRunning
	}
	w.mu.Unlock()
	w.logf("container %s started (pid %d): %s", c.spec.Name, cmd.Process.Pid, strings.Join(argv, " "))
	w.a.event(w.latest(), v1.EventTypeNormal, "Started", "Started container "+c.spec.Name)
	w.sync()

	waitErr := cmd.Wait()
	finished := metav1.Now()
	c.mu.Lock()
	c.proc = nil
	c.mu.Unlock()
	// The pipes close when every holder is gone; don't wait forever for a straggler.
	copied := make(chan struct{})
	go func() { copyWG.Wait(); close(copied) }()
	select {
	case <-copied:
	case <-time.After(2 * time.Second):
		outR.Close()
		errR.Close()
		<-copied
	}
	outR.Close()
	errR.Close()
	lf.close()
	markDone()

	code = 0
	if waitErr != nil {
		if ee, ok := waitErr.(*exec.ExitError); ok {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				code = 128 + int(ws.Signal())
			} else {
				code = ee.ExitCode()
			}
		} else {
			code = 128
		}
	}
	reason := "Completed"
	if code != 0 {
		reason = "Error"
	}
	msg := ""
	if code != 0 && c.spec.TerminationMessagePolicy == v1.TerminationMessageFallbackToLogsOnError {
		msg = tailText(logPath, 80, 2048)
	}
	w.mu.Lock()
	c.status.State = v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
		ExitCode: int32(code), Reason: reason, Message: msg,
		StartedAt: started, FinishedAt: finished, ContainerID: containerID,
	}}
	f := false
	c.status.Started = &f
	c.status.Ready = false
	w.updateReadiness()
	w.mu.Unlock()
	w.logf("container %s exited with code %d", c.spec.Name, code)
	w.sync()
	return code, true
}

// startError: the process could not be started (like runc's "executable file not found").
func (w *podWorker) startError(c *ctrRun, err error) int {
	now := metav1.Now()
	w.mu.Lock()
	c.status.State = v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
		ExitCode: 128, Reason: "StartError", Message: err.Error(), StartedAt: now, FinishedAt: now,
	}}
	c.status.Ready = false
	w.updateReadiness()
	w.mu.Unlock()
	w.logf("container %s: start error: %v", c.spec.Name, err)
	w.a.event(w.latest(), v1.EventTypeWarning, "Failed", "Error: "+err.Error())
	w.sync()
	return 128
}

func (w *podWorker) setWaiting(c *ctrRun, reason, msg string) {
	w.mu.Lock()
	changed := c.status.State.Waiting == nil || c.status.State.Waiting.Reason != reason || c.status.State.Waiting.Message != msg
	c.status.State = v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: reason, Message: msg}}
	w.mu.Unlock()
	if changed {
		w.sync()
	}
}

// logPath returns the log file of a container's current (or previous) attempt and a function
// that tells whether that attempt has ended.
func (w *podWorker) logPath(ctr string, previous bool) (string, func() bool, error) {
	for _, c := range append(append([]*ctrRun{}, w.initCtrs...), w.ctrs...) {
		if c.spec.Name != ctr {
			continue
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		i := len(c.logs) - 1
		if previous {
			i--
		}
		if i < 0 {
			if previous {
				return "", nil, fmt.Errorf("previous terminated container %q in pod %q not found", ctr, w.name)
			}
			return "", nil, fmt.Errorf("container %q in pod %q is waiting to start: %s", ctr, w.name, waitingReason(c.status))
		}
		idx := i
		return c.logs[idx], func() bool {
			c.mu.Lock()
			defer c.mu.Unlock()
			return c.doneAt[idx]
		}, nil
	}
	return "", nil, fmt.Errorf("container %s is not valid for pod %s", ctr, w.name)
}

func waitingReason(s v1.ContainerStatus) string {
	if s.State.Waiting != nil {
		return s.State.Waiting.Reason
	}
	return "ContainerCreating"
}

// ---- status ----

func (w *podWorker) setCond(t v1.PodConditionType, s v1.ConditionStatus, reason, msg string) {
	old, ok := w.conds[t]
	if ok && old.Status == s && old.Reason == reason && old.Message == msg {
		return
	}
	c := v1.PodCondition{Type: t, Status: s, Reason: reason, Message: msg, LastTransitionTime: metav1.Now()}
	if ok && old.Status == s {
		c.LastTransitionTime = old.LastTransitionTime
	}
	w.conds[t] = c
}

// updateReadiness recomputes Ready/ContainersReady (caller holds w.mu).
func (w *podWorker) updateReadiness() {
	var notReady []string
	for _, c := range w.ctrs {
		if !c.status.Ready {
			notReady = append(notReady, c.spec.Name)
		}
	}
	if len(notReady) == 0 {
		w.setCond(v1.ContainersReady, v1.ConditionTrue, "", "")
		w.setCond(v1.PodReady, v1.ConditionTrue, "", "")
		return
	}
	reason, msg := "ContainersNotReady", "containers with unready status: ["+strings.Join(notReady, " ")+"]"
	if isTerminal(w.phase) {
		reason, msg = "PodCompleted", ""
	}
	w.setCond(v1.ContainersReady, v1.ConditionFalse, reason, msg)
	w.setCond(v1.PodReady, v1.ConditionFalse, reason, msg)
}

// computePhase like the kubelet's getPhase (caller holds w.mu).
func (w *podWorker) computePhase() v1.PodPhase {
	if w.phase == v1.PodFailed {
		return v1.PodFailed
	}
	running, waiting, succeeded, failed := 0, 0, 0, 0
	stopping := w.runCtx.Err() != nil
	for _, c := range w.ctrs {
		switch {
		case c.status.State.Running != nil:
			running++
		case c.status.State.Terminated != nil:
			code := c.status.State.Terminated.ExitCode
			restarts := !stopping && (w.restart == v1.RestartPolicyAlways || (w.restart == v1.RestartPolicyOnFailure && code != 0))
			switch {
			case restarts:
				running++ // about to be restarted: the kubelet reports Running
			case code == 0:
				succeeded++
			default:
				failed++
			}
		case c.status.State.Waiting != nil && c.status.State.Waiting.Reason == "CrashLoopBackOff" && !stopping:
			running++
		default:
			waiting++
		}
	}
	switch {
	case running > 0:
		return v1.PodRunning
	case waiting > 0:
		return v1.PodPending
	case failed > 0:
		return v1.PodFailed
	default:
		return v1.PodSucceeded
	}
}

func (w *podWorker) buildStatus(st *v1.PodStatus) {
	if !isTerminal(w.phase) && w.startTime != nil {
		w.phase = w.computePhase()
		if w.deadlineEx && w.phase != v1.PodPending && w.phase != v1.PodRunning {
			w.phase = v1.PodFailed
		}
	}
	st.Phase = w.phase
	if isTerminal(w.phase) {
		// conditions follow a terminal phase
		for _, c := range w.ctrs {
			c.status.Ready = false
		}
		w.updateReadiness()
	}
	st.Reason, st.Message = w.reason, w.message
	st.HostIP = w.node.ip.String()
	st.HostIPs = []v1.HostIP{{IP: st.HostIP}}
	if w.ip != nil {
		st.PodIP = w.ip.String()
		st.PodIPs = []v1.PodIP{{IP: st.PodIP}}
	}
	st.StartTime = w.startTime
	// Conditions: ours, plus any others already on the pod (PodScheduled, DisruptionTarget...).
	var conds []v1.PodCondition
	own := map[v1.PodConditionType]bool{}
	for _, t := range []v1.PodConditionType{v1.PodReadyToStartContainers, v1.PodInitialized, v1.PodReady, v1.ContainersReady} {
		if c, ok := w.conds[t]; ok {
			conds = append(conds, c)
			own[t] = true
		}
	}
	for _, c := range st.Conditions {
		if !own[c.Type] {
			conds = append(conds, c)
		}
	}
	st.Conditions = conds
	st.InitContainerStatuses = nil
	for _, c := range w.initCtrs {
		st.InitContainerStatuses = append(st.InitContainerStatuses, *c.status.DeepCopy())
	}
	st.ContainerStatuses = nil
	for _, c := range w.ctrs {
		st.ContainerStatuses = append(st.ContainerStatuses, *c.status.DeepCopy())
	}
}

// sync writes the worker's view of the status to the API (serialised per pod).
func (w *podWorker) sync() {
	w.statusMu.Lock()
	defer w.statusMu.Unlock()
	w.mu.Lock()
	gone := w.gone
	w.mu.Unlock()
	if gone || w.a.ctx.Err() != nil {
		return
	}
	if err := w.writeStatus(func(st *v1.PodStatus) {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.buildStatus(st)
	}); err != nil {
		if apierrors.IsNotFound(err) {
			w.mu.Lock()
			w.gone = true
			w.mu.Unlock()
			return
		}
		w.logf("status update: %v", err)
	}
}

func (w *podWorker) writeStatus(mutate func(*v1.PodStatus)) error {
	pods := w.a.cs.CoreV1().Pods(w.ns)
	var err error
	for i := 0; i < 8; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		var cur *v1.Pod
		cur, err = pods.Get(ctx, w.name, metav1.GetOptions{})
		if err == nil && cur.UID != w.uid {
			cancel()
			return apierrors.NewNotFound(v1.Resource("pods"), w.name)
		}
		if err == nil {
			if isTerminal(cur.Status.Phase) && cur.Status.Phase != w.phase && w.phase != "" {
				// never move a terminal pod back
				cancel()
				return nil
			}
			mutate(&cur.Status)
			_, err = pods.UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		}
		cancel()
		if err == nil || apierrors.IsNotFound(err) {
			return err
		}
		if !apierrors.IsConflict(err) {
			time.Sleep(200 * time.Millisecond)
		}
	}
	return err
}

func isTerminal(p v1.PodPhase) bool { return p == v1.PodSucceeded || p == v1.PodFailed }

func ctrNames(cs []*ctrRun) string {
	var n []string
	for _, c := range cs {
		n = append(n, c.spec.Name)
	}
	return "[" + strings.Join(n, " ") + "]"
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func tailText(logPath string, lines, maxBytes int) string {
	var b strings.Builder
	_ = serveLogFile(context.Background(), logPath, logOptions{tailLines: int64(lines)}, &b, func() bool { return true })
	s := b.String()
	if len(s) > maxBytes {
		s = s[len(s)-maxBytes:]
	}
	return s
}
