package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubeletcfg/kubeletcfg/fleet/fleettest"
	"github.com/kubeletcfg/kubeletcfg/internal/jsonshape"
)

// TestEveryJSONIsVersioned: every command's -o json, a failure's too, is an
// object whose first key is "version", the shape's version; fleet -o yaml
// carries it as well.
func TestEveryJSONIsVersioned(t *testing.T) {
	dir := t.TempDir()
	head := "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
	cfg, next := filepath.Join(dir, "config.yaml"), filepath.Join(dir, "new.yaml")
	for p, c := range map[string]string{cfg: head + "maxPods: 100\n", next: head + "maxPods: 120\n"} {
		if err := os.WriteFile(p, []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	host, _ := os.Hostname()
	api := fleettest.NewAPIServer(t, "v1.37.2", fleettest.KubeadmConfigMap, []fleettest.Node{
		{Name: "w-1", Version: "v1.37.2", Ready: "True", Answer: fleettest.Serves(fleettest.KubeadmNode(t, "1.37", "unix:///run/containerd/containerd.sock", nil))},
	})
	v := "--kubelet-version=1.31"
	for name, args := range map[string][]string{
		"validate":          {"validate", v, cfg},
		"validate refused":  {"validate", v, filepath.Join(dir, "missing.yaml")},
		"effective":         {"effective", v, "--root", sample},
		"migrate":           {"migrate", v, "--root", sample},
		"audit":             {"audit", v, "--root", sample},
		"diff":              {"diff", v, next, "--against", cfg},
		"diff --to-version": {"diff", v, "--to-version", "1.37", "--root", sample},
		"apply":             {"apply", "--node", host, v, "-f", next, "--dry-run", "--", "--config=" + cfg},
		"fleet":             {"fleet", "--kubeconfig", api.Kubeconfig},
	} {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := runCLI(t, append([]string{args[0], "-o", "json"}, args[1:]...)...)
			dec := json.NewDecoder(strings.NewReader(out))
			docs := 0
			for dec.More() {
				docs++
				if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
					t.Fatalf("exit %d: document %d is not an object (%v %v):\n%s%s", code, docs, tok, err, out, errOut)
				}
				key, _ := dec.Token()
				var version int
				if err := dec.Decode(&version); key != "version" || err != nil || version != jsonshape.Version {
					t.Fatalf("exit %d: document %d starts with %v = %d (%v), want version %d:\n%s", code, docs, key, version, err, jsonshape.Version, out)
				}
				var rest json.RawMessage
				for dec.More() {
					if _, err := dec.Token(); err != nil {
						t.Fatal(err)
					}
					if err := dec.Decode(&rest); err != nil {
						t.Fatal(err)
					}
				}
				if _, err := dec.Token(); err != nil {
					t.Fatal(err)
				}
			}
			if docs == 0 {
				t.Fatalf("exit %d: no JSON:\n%s%s", code, out, errOut)
			}
		})
	}
	_, out, _ := runCLI(t, "fleet", "--kubeconfig", api.Kubeconfig, "-o", "yaml")
	if !bytes.Contains([]byte(out), []byte("\nversion: 1\n")) {
		t.Errorf("fleet -o yaml lacks version: 1:\n%s", out)
	}
}
