package effective

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/schema"
	"github.com/kubeletcfg/kubeletcfg/warning"
)

// TestKeyOrigins builds featureGates and evictionHard from a config file, two
// drop-ins and a flag, and checks the origin of every key under each merge
// model.
func TestKeyOrigins(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"+body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	file := write("config.yaml", "featureGates:\n  EventedPLEG: false\n  MemoryQoS: false\nevictionHard:\n  memory.available: 300Mi\n")
	a := write("conf.d/10-a.conf", "featureGates:\n  MemoryQoS: true\n  ContainerCheckpoint: false\n")
	b := write("conf.d/20-b.conf", "evictionHard:\n  nodefs.available: 5%\n")
	args := []string{"--config=" + file, "--config-dir=" + filepath.Join(dir, "conf.d"), "--feature-gates=ContainerCheckpoint=true"}
	env := func(string) (string, bool) { return "", true }

	fileAt := func(n int) string { return file + ":" + strconv.Itoa(n) }
	shared := map[string]string{
		"featureGates[EventedPLEG]":         fileAt(4),
		"featureGates[MemoryQoS]":           a + ":4",
		"featureGates[ContainerCheckpoint]": "flag --feature-gates (from env)",
		"evictionHard[nodefs.available]":    b + ":4",
	}
	want := map[string]map[string]string{
		// Maps merge key by key onto the file's.
		"1.31": {"evictionHard[memory.available]": fileAt(7)},
		"1.37": {"evictionHard[memory.available]": fileAt(7)},
		// 10-a.conf, loaded as a whole config without evictionHard, brings
		// the default eviction thresholds over the file's.
		"1.28": {
			"evictionHard[memory.available]":  a,
			"evictionHard[imagefs.available]": "default",
			"evictionHard[nodefs.inodesFree]": "default",
		},
	}
	for minor, keys := range want {
		t.Run(minor, func(t *testing.T) {
			v, err := schema.Resolve(minor)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Compute(Input{Setup: &node.Setup{Version: v, Kubelet: node.Kubelet{Args: args, Sources: []string{"unit", "unit", "env"}}}, LookupEnv: env})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for path, ks := range res.KeyOrigins {
				for k, o := range ks {
					got[path+"["+k+"]"] = o.String()
				}
			}
			for k, o := range shared {
				keys[k] = o
			}
			if d := cmp.Diff(keys, got); d != "" {
				t.Errorf("key origins (-want +got):\n%s", d)
			}
			// --feature-gates merges gate by gate: it overrides the one
			// gate 10-a.conf also sets, and wipes nothing.
			shadowed := warning.Warning{Code: warning.NoEffect, File: a, Line: 5, Field: "featureGates.ContainerCheckpoint", Message: "has no effect: flag --feature-gates overrides it"}
			if !slices.Contains(res.Warnings, shadowed) {
				t.Errorf("warnings lack %v: %v", shadowed, res.Warnings)
			}
			for _, w := range res.Warnings {
				if w.Code == warning.MapReplaced || strings.Contains(w.String(), "EventedPLEG") || strings.Contains(w.String(), "MemoryQoS") {
					t.Errorf("wrong warning: %s", w)
				}
			}
		})
	}
}
