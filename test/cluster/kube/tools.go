//go:build tools

// Package tools pins the Kubernetes control-plane version that test/cluster/build.sh builds.
// The go.mod beside it requires k8s.io/kubernetes and replaces each k8s.io/<staging> module
// (the `=> ./staging/...` lines of k8s.io/kubernetes' own go.mod) with its published v0.35.x.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kubelet"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
