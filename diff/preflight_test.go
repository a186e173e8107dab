package diff

import (
	"testing"

	"github.com/kubeletcfg/kubeletcfg/dropins"
	"github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

func TestPreflightOfTheSampleNode(t *testing.T) {
	const root = "../testdata/nodes/kubeadm-1.31"
	k, err := node.DiscoverKubelet(root)
	if err != nil {
		t.Fatal(err)
	}
	from, _ := schema.Resolve("1.31")
	find := func(to string) map[string]Finding {
		v, err := schema.Resolve(to)
		if err != nil {
			t.Fatal(err)
		}
		fs, err := Preflight(PreflightOptions{From: from, To: v, Layer: dropins.Options{Args: k.Args, LookupEnv: k.LookupEnv, Root: root}})
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]Finding{}
		for _, f := range fs {
			m[f.Subject] = f
		}
		return m
	}
	// kubeadm-flags.env still passes --pod-infra-container-image, which 1.35
	// removed: the upgraded kubelet would not start.
	if f := find("1.37")["--pod-infra-container-image=registry.k8s.io/pause:3.9"]; f.Severity != "blocker" {
		t.Errorf("1.31 -> 1.37: want a blocker for --pod-infra-container-image, got %+v", f)
	}
	if f := find("1.37")["failCgroupV1"]; f.Severity != "change" {
		t.Errorf("1.31 -> 1.37: want failCgroupV1's new default reported, got %+v", f)
	}
	for subject, f := range find("1.32") {
		if f.Severity == "blocker" {
			t.Errorf("1.31 -> 1.32: unexpected blocker %s: %s", subject, f.Message)
		}
	}
}
