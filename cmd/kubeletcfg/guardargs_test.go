package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubeletcfg/kubeletcfg/apply"
)

// The guard of an apply on the host lifts the cordon with the apply's
// kubeconfig; the guard of an apply in a pod (--root-is-host) is not given
// the pod's kubeconfig: it is not in the host's root where that guard runs
// (a guard given it would fail at its start and guard nothing).
func TestGuardArgsKubeconfig(t *testing.T) {
	o := &apply.Options{Node: "n1", Unit: "kubelet.service", Restart: "/etc/kubelet/restart", PIDFile: "/run/kubelet.pid"}
	if args := apply.GuardArgs(o, "/var/lib/kubeletcfg", "x", "/etc/kubeletcfg/kubeconfig", ""); !slices.Contains(args, "--kubeconfig") || !slices.Contains(args, "/etc/kubeletcfg/kubeconfig") {
		t.Errorf("host apply's guard: %s", strings.Join(args, " "))
	}
	args := podGuardArgs(o, "/var/lib/kubeletcfg", "x")
	if slices.Contains(args, "--kubeconfig") {
		t.Errorf("a pod's guard is given a kubeconfig: %s", strings.Join(args, " "))
	}
	if !slices.Contains(args, "/etc/kubelet/restart") {
		t.Errorf("a pod's guard has not the plain restart command: %s", strings.Join(args, " "))
	}
}
