package config

import (
	"encoding/json"
	"reflect"
	"testing"

	"k8s.io/kubelet/config/v1beta1"

	"github.com/kubeletcfg/kubeletcfg/schema"
)

// PruneTree drops what kubelet v has no field for, as v's own decoding
// ignores it, and keeps everything else as it is: an empty list stays, a key
// in another case stays, and its input is left alone.
func TestPruneTree(t *testing.T) {
	v128, err := schema.Resolve("1.28")
	if err != nil {
		t.Fatal(err)
	}
	in := `{"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
		"failCgroupV1": true, "FailCgroupV1": true, "MaxPods": 12, "noSuchField": 1,
		"enforceNodeAllocatable": [], "clusterDNS": [],
		"logging": {"format": "json", "options": {"text": {"splitStream": true}, "json": {"splitStream": true}}},
		"crashLoopBackOff": {"maxContainerRestartPeriod": "1m"},
		"reservedMemory": [{"numaNode": 0, "limits": {"memory": "1Gi"}, "extra": 1}]}`
	want := `{"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
		"MaxPods": 12, "enforceNodeAllocatable": [], "clusterDNS": [],
		"logging": {"format": "json", "options": {"json": {"splitStream": true}}},
		"reservedMemory": [{"numaNode": 0, "limits": {"memory": "1Gi"}}]}`
	var tree, before, wantTree map[string]any
	for s, m := range map[string]*map[string]any{in: &tree, want: &wantTree} {
		if err := json.Unmarshal([]byte(s), m); err != nil {
			t.Fatal(err)
		}
	}
	json.Unmarshal([]byte(in), &before)
	got := PruneTree(tree, v128)
	if !reflect.DeepEqual(got, wantTree) {
		g, _ := json.Marshal(got)
		t.Errorf("PruneTree for 1.28:\n got %s\nwant %s", g, want)
	}
	if !reflect.DeepEqual(tree, before) {
		t.Errorf("PruneTree changed its input")
	}
	// Nothing to drop: the same tree, not a copy.
	if got := PruneTree(wantTree, v128); reflect.ValueOf(got).Pointer() != reflect.ValueOf(wantTree).Pointer() {
		t.Errorf("a tree with nothing to drop was copied")
	}
	// Decoded, the empty list is the kubelet's: not nil, so not defaulted.
	js, _ := json.Marshal(got)
	var cfg v1beta1.KubeletConfiguration
	if err := json.Unmarshal(js, &cfg); err != nil || cfg.EnforceNodeAllocatable == nil || len(cfg.EnforceNodeAllocatable) != 0 || cfg.MaxPods != 12 {
		t.Errorf("decoded: enforceNodeAllocatable %#v, maxPods %d (%v)", cfg.EnforceNodeAllocatable, cfg.MaxPods, err)
	}
}
