package node

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

const sample = "../testdata/nodes/kubeadm-1.31"

func TestDiscoverKubelet(t *testing.T) {
	k, err := DiscoverKubelet(sample)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf", "--kubeconfig=/etc/kubernetes/kubelet.conf",
		"--config=/var/lib/kubelet/config.yaml",
		"--container-runtime-endpoint=unix:///var/run/containerd/containerd.sock", "--pod-infra-container-image=registry.k8s.io/pause:3.9", "--node-ip=10.0.0.21",
		"--max-pods=150", "--node-labels=node.kubernetes.io/pool=general", "--eviction-hard=memory.available<500Mi",
	}
	if diff := cmp.Diff(want, k.Args); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	if got := k.Sources[6]; got != "/etc/default/kubelet:1 ($KUBELET_EXTRA_ARGS)" {
		t.Errorf("source of --max-pods = %q", got)
	}
}

func TestFromFilesInCommandLineOrder(t *testing.T) {
	k, err := FromFiles(sample, []string{"/etc/default/kubelet", "/var/lib/kubelet/kubeadm-flags.env"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"--max-pods=150", "--node-labels=node.kubernetes.io/pool=general", "--eviction-hard=memory.available<500Mi",
		"--container-runtime-endpoint=unix:///var/run/containerd/containerd.sock", "--pod-infra-container-image=registry.k8s.io/pause:3.9", "--node-ip=10.0.0.21",
	}
	if diff := cmp.Diff(want, k.Args); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	if _, err := FromFiles(sample, []string{"/etc/default/missing"}); err == nil {
		t.Error("a missing file should be an error")
	}
}
