package migrate

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubeletcfg/kubeletcfg/internal/jsonshape"
	"github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/schema"
	"github.com/kubeletcfg/kubeletcfg/units"
	"github.com/kubeletcfg/kubeletcfg/warning"
)

func TestWriteDir(t *testing.T) {
	v, err := schema.Resolve("1.31")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(Options{Setup: node.Given(v, "--kubeconfig=/etc/kubernetes/kubelet.conf", "--max-pods=150", "--network-plugin=cni")})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "out")
	if err := res.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	env, _ := os.ReadFile(filepath.Join(dir, "kubelet-flags.env"))
	if !strings.Contains(string(env), `KUBELET_KUBEADM_ARGS="--config=/var/lib/kubelet/config.yaml --kubeconfig=/etc/kubernetes/kubelet.conf"`) {
		t.Errorf("kubelet-flags.env:\n%s", env)
	}
	// Read back as systemd reads an EnvironmentFile, $KUBELET_KUBEADM_ARGS
	// splits into exactly the remaining flags.
	vars, _, err := units.ReadEnvFile(filepath.Join(dir, "kubelet-flags.env"))
	if err != nil {
		t.Fatal(err)
	}
	words, err := units.SplitCommandLine("$KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS", vars)
	if err != nil || strings.Join(words, " ") != strings.Join(res.Flags, " ") {
		t.Errorf("read back %q (%v), want %q", words, err, res.Flags)
	}
	doc, _ := os.ReadFile(filepath.Join(dir, "config.yaml"))
	if !strings.Contains(string(doc), "maxPods: 150") || !strings.Contains(string(doc), "kind: KubeletConfiguration") {
		t.Errorf("config.yaml:\n%s", doc)
	}
	js, _ := os.ReadFile(filepath.Join(dir, "migration.json"))
	var back struct {
		Version  int               `json:"version"`
		Flags    []string          `json:"flags"`
		Warnings []warning.Warning `json:"warnings"`
	}
	if err := json.Unmarshal(js, &back); err != nil || back.Version != jsonshape.Version || !strings.HasPrefix(string(js), "{\n  \"version\": ") ||
		strings.Join(back.Flags, " ") != strings.Join(res.Flags, " ") {
		t.Errorf("migration.json (%v):\n%s", err, js)
	}
	report, _ := os.ReadFile(filepath.Join(dir, "report.txt"))
	if !strings.Contains(string(report), "--network-plugin=cni") {
		t.Errorf("report.txt does not name the removed flag:\n%s", report)
	}
	// A second migration into the same place is refused and changes nothing.
	before, _ := os.ReadFile(filepath.Join(dir, "config.yaml"))
	res.Config["maxPods"] = 1
	if err := res.WriteDir(dir); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("err = %v, want a refusal", err)
	}
	after, _ := os.ReadFile(filepath.Join(dir, "config.yaml"))
	if string(before) != string(after) {
		t.Error("an existing config.yaml was overwritten")
	}
}

func TestKlogFlagsAreKnownRemovals(t *testing.T) {
	v, _ := schema.Resolve("1.31")
	res, err := Run(Options{Setup: node.Given(v, "--logtostderr", "--log-dir", "/var/log/kubelet", "--v=2")})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Removed) != 2 || res.Removed[1].Flag != "--log-dir /var/log/kubelet" || !strings.Contains(res.Removed[0].Reason, "1.25") {
		t.Errorf("removed %+v, want --logtostderr (a boolean) and --log-dir with its value, last in 1.25", res.Removed)
	}
}
