package main

// Node registration and heartbeats, as kubelets do them: the Node object with capacity,
// addresses, the kubelet endpoint port and conditions; its Lease in kube-node-lease renewed
// every 10 s; and the Ready condition's heartbeat refreshed every 30 s.

import (
	"context"
	"fmt"
	"net"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

const (
	poolLabel     = "k6-distributed.test/pool"
	dedicatedKey  = "k6-distributed.test/dedicated"
	leaseDuration = 40
)

type node struct {
	name      string
	ip        net.IP
	dedicated bool
}

func (a *Agent) nodeObject(n *node) *v1.Node {
	labels := map[string]string{
		"kubernetes.io/hostname":    n.name,
		"kubernetes.io/os":          "linux",
		"kubernetes.io/arch":        "amd64",
		"k6-distributed.test/agent": "true",
	}
	var taints []v1.Taint
	if n.dedicated {
		labels[poolLabel] = "loadtest"
		taints = append(taints, v1.Taint{Key: dedicatedKey, Value: "loadtest", Effect: v1.TaintEffectNoSchedule})
	} else {
		labels[poolLabel] = "general"
	}
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: n.name, Labels: labels},
		Spec:       v1.NodeSpec{Taints: taints},
	}
}

func (a *Agent) nodeStatus(n *node, old *v1.NodeStatus) v1.NodeStatus {
	now := metav1.Now()
	res := v1.ResourceList{
		v1.ResourceCPU:              resource.MustParse(a.cfg.nodeCPU),
		v1.ResourceMemory:           resource.MustParse(a.cfg.nodeMemory),
		v1.ResourcePods:             resource.MustParse(a.cfg.nodePods),
		v1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
	}
	cond := func(t v1.NodeConditionType, s v1.ConditionStatus, reason, msg string) v1.NodeCondition {
		c := v1.NodeCondition{Type: t, Status: s, Reason: reason, Message: msg, LastHeartbeatTime: now, LastTransitionTime: now}
		if old != nil {
			for _, o := range old.Conditions {
				if o.Type == t && o.Status == s {
					c.LastTransitionTime = o.LastTransitionTime
				}
			}
		}
		return c
	}
	return v1.NodeStatus{
		Capacity:    res,
		Allocatable: res.DeepCopy(),
		Phase:       v1.NodeRunning,
		Conditions: []v1.NodeCondition{
			cond(v1.NodeMemoryPressure, v1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
			cond(v1.NodeDiskPressure, v1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
			cond(v1.NodePIDPressure, v1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
			cond(v1.NodeReady, v1.ConditionTrue, "KubeletReady", "k6-distributed test node agent is posting ready status"),
		},
		Addresses: []v1.NodeAddress{
			{Type: v1.NodeInternalIP, Address: n.ip.String()},
			{Type: v1.NodeHostName, Address: n.name},
		},
		DaemonEndpoints: v1.NodeDaemonEndpoints{KubeletEndpoint: v1.DaemonEndpoint{Port: int32(a.cfg.kubeletPort)}},
		NodeInfo: v1.NodeSystemInfo{
			MachineID:               n.name,
			SystemUUID:              n.name,
			BootID:                  a.bootID,
			KernelVersion:           kernelVersion(),
			OSImage:                 "k6-distributed test node (processes in network namespaces)",
			ContainerRuntimeVersion: "k6d-agent://0.1.0",
			KubeletVersion:          a.cfg.kubeletVersion,
			KubeProxyVersion:        "",
			OperatingSystem:         "linux",
			Architecture:            "amd64",
		},
	}
}

// registerNode creates or updates the Node and posts its status.
func (a *Agent) registerNode(ctx context.Context, n *node) error {
	nodes := a.cs.CoreV1().Nodes()
	want := a.nodeObject(n)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := nodes.Get(ctx, n.name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			_, err = nodes.Create(ctx, want, metav1.CreateOptions{})
			return err
		}
		if err != nil {
			return err
		}
		if cur.Labels == nil {
			cur.Labels = map[string]string{}
		}
		for k, v := range want.Labels {
			cur.Labels[k] = v
		}
		var taints []v1.Taint
		for _, t := range cur.Spec.Taints {
			if t.Key != dedicatedKey {
				taints = append(taints, t)
			}
		}
		cur.Spec.Taints = append(taints, want.Spec.Taints...)
		cur.Spec.Unschedulable = false
		_, err = nodes.Update(ctx, cur, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("register node %s: %w", n.name, err)
	}
	return a.postNodeStatus(ctx, n)
}

func (a *Agent) postNodeStatus(ctx context.Context, n *node) error {
	nodes := a.cs.CoreV1().Nodes()
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := nodes.Get(ctx, n.name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Status = a.nodeStatus(n, &cur.Status)
		_, err = nodes.UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		return err
	})
}

func (a *Agent) renewLease(ctx context.Context, n *node) error {
	leases := a.cs.CoordinationV1().Leases(v1.NamespaceNodeLease)
	now := metav1.NewMicroTime(time.Now())
	dur := int32(leaseDuration)
	holder := n.name
	cur, err := leases.Get(ctx, n.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		l := &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: n.name, Namespace: v1.NamespaceNodeLease},
			Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &dur, RenewTime: &now},
		}
		if node, err := a.cs.CoreV1().Nodes().Get(ctx, n.name, metav1.GetOptions{}); err == nil {
			l.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID}}
		}
		_, err = leases.Create(ctx, l, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	cur.Spec.HolderIdentity = &holder
	cur.Spec.LeaseDurationSeconds = &dur
	cur.Spec.RenewTime = &now
	_, err = leases.Update(ctx, cur, metav1.UpdateOptions{})
	return err
}

// heartbeat keeps one node alive until ctx ends.
func (a *Agent) heartbeat(ctx context.Context, n *node) {
	leaseTick := time.NewTicker(10 * time.Second)
	statusTick := time.NewTicker(30 * time.Second)
	defer leaseTick.Stop()
	defer statusTick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-leaseTick.C:
			if err := a.renewLease(ctx, n); err != nil && ctx.Err() == nil {
				a.log.Printf("lease of %s: %v", n.name, err)
			}
		case <-statusTick.C:
			if err := a.postNodeStatus(ctx, n); err != nil && ctx.Err() == nil {
				a.log.Printf("status of %s: %v", n.name, err)
			}
		}
	}
}
