package apply

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubeletcfg/kubeletcfg/kubeadm"
	hostnode "github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

// kubeadmImage is an image of a node kubeadm set up (config.yaml as kubeadm
// 1.37 writes it from the corpus' ConfigMap, instance-config.yaml), a fake
// kubelet on it, and apply's options with the kubeadm check.
func kubeadmImage(t *testing.T, persist kubeadm.Persist) (*node, string, []byte) {
	t.Helper()
	img := t.TempDir()
	kdir := filepath.Join(img, "var/lib/kubelet")
	os.MkdirAll(kdir, 0o755)
	os.MkdirAll(filepath.Join(img, "etc"), 0o755)
	os.WriteFile(filepath.Join(img, "etc/hostname"), []byte("n1\n"), 0o644)
	os.WriteFile(filepath.Join(kdir, "instance-config.yaml"), []byte("containerRuntimeEndpoint: \"unix:///var/run/containerd/containerd.sock\"\n"), 0o644)
	rel, _ := kubeadm.ResolveRelease("1.37")
	nr, err := kubeadm.OpenNode(context.Background(), kubeadm.NodeOptions{Root: img, Release: rel,
		ConfigMapFile: "../testdata/kubeadm/corpus/cm-only/configmap.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nr.Close() })
	res, err := nr.Render(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	written, _ := res.YAML()
	cfg := filepath.Join(kdir, "config.yaml")
	os.WriteFile(cfg, written, 0o644)
	n := &node{dir: kdir, config: cfg, state: filepath.Join(img, "state"), clock: newFakeClock()}
	n.kubelet = &fakeKubelet{clock: n.clock, config: cfg, behave: byContent(map[string]life{"maxPods: 666": {healthyAfter: -1, diesAfter: time.Second}}), pid: 1}
	setup := hostnode.Given(schema.Newest(), "--config=/var/lib/kubelet/config.yaml")
	setup.Root = img
	n.opts = Options{Node: "n1", Setup: setup, Timeout: 30 * time.Second, StableFor: time.Second,
		Restarter: n.kubelet, Clock: n.clock, probe: n.kubelet.probe, StateDir: "/state",
		Kubeadm: &KubeadmCheck{Node: nr, Persist: persist}}
	return n, img, written
}

func TestApplyKubeadmRefusesWhatTheUpgradeReverts(t *testing.T) {
	n, img, written := kubeadmImage(t, kubeadm.PersistNone)
	o := n.opts
	o.NewFile = append(append([]byte(nil), written...), "maxPods: 200\n"...)
	out, err := Run(context.Background(), o)
	if !errors.Is(err, kubeadm.ErrReverted) || !strings.Contains(err.Error(), "kubeadm: ") || !strings.Contains(err.Error(), "maxPods: 200 here, 110 after the upgrade") {
		t.Fatalf("err %v", err)
	}
	if out != nil && out.Applied {
		t.Error("applied")
	}
	if b, _ := os.ReadFile(n.config); string(b) != string(written) {
		t.Error("config.yaml changed")
	}
	if entries, _ := os.ReadDir(n.dir); len(entries) != 2 {
		t.Errorf("files written next to config.yaml: %v", entries)
	}
	if _, err := os.Stat(filepath.Join(img, "etc/kubernetes")); err == nil {
		t.Error("a patches directory was made")
	}
	// A merge patch of the file (apply --patch) goes through the same check.
	po := n.opts
	po.Patch, po.PatchName = []byte(`{"maxPods": 201}`), "patch.json"
	if _, err := Run(context.Background(), po); !errors.Is(err, kubeadm.ErrReverted) || !strings.Contains(err.Error(), "maxPods: 201 here") {
		t.Errorf("--patch: %v", err)
	}
	// A dry run says the same, and shows the change.
	o.DryRun = true
	out, err = Run(context.Background(), o)
	if !errors.Is(err, kubeadm.ErrReverted) || out == nil || len(out.Changes) != 1 {
		t.Errorf("dry run: %+v %v", out, err)
	}
}

func TestApplyKubeadmPersistPatch(t *testing.T) {
	n, img, written := kubeadmImage(t, kubeadm.PersistPatch)
	o := n.opts
	o.NewFile = append(append([]byte(nil), written...), "maxPods: 200\n"...)
	out, err := Run(context.Background(), o)
	if err != nil || !out.Applied || out.Kubeadm == nil || out.Kubeadm.PatchFile == "" {
		t.Fatalf("%+v %v", out, err)
	}
	patch := filepath.Join(img, "etc/kubernetes/patches", kubeadm.PatchFileName)
	if b, err := os.ReadFile(patch); err != nil || !strings.HasSuffix(string(b), "\nmaxPods: 200\n") {
		t.Fatalf("patch %q %v", b, err)
	}
	// What the next kubeadm upgrade node writes now keeps the change.
	rel, _ := kubeadm.ResolveRelease("1.37")
	next, _, err := kubeadm.RenderNode(context.Background(), kubeadm.NodeOptions{Root: img, Release: rel, PatchesDir: kubeadm.DefaultPatchesDir,
		ConfigMapFile: "../testdata/kubeadm/corpus/cm-only/configmap.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	now, _ := os.ReadFile(n.config)
	d, err := kubeadm.CompareDrift(now, "config.yaml", next, schema.Newest())
	if err != nil || len(d.Reverts)+len(d.Brings) != 0 {
		t.Errorf("drift after the persisted change: %+v %v", d, err)
	}
	if got := next.Origins["maxPods"].String(); got != "patch /etc/kubernetes/patches/"+kubeadm.PatchFileName+":3" {
		t.Errorf("maxPods from %s", got)
	}

	// A change the kubelet fails on: both files come back, the patch (a
	// new file the first time) as it was.
	o.NewFile = append(append([]byte(nil), written...), "maxPods: 666\n"...)
	before, _ := os.ReadFile(patch)
	out, err = Run(context.Background(), o)
	if !errors.Is(err, ErrRolledBack) || !out.RolledBack {
		t.Fatalf("%+v %v", out, err)
	}
	if b, _ := os.ReadFile(patch); string(b) != string(before) {
		t.Errorf("patch after the rollback: %q", b)
	}
	if b, _ := os.ReadFile(n.config); string(b) != string(now) {
		t.Errorf("config.yaml after the rollback: %q", b)
	}
}

// A created patch file is removed again by a rollback.
func TestApplyKubeadmPersistPatchRolledBack(t *testing.T) {
	n, img, written := kubeadmImage(t, kubeadm.PersistPatch)
	o := n.opts
	o.NewFile = append(append([]byte(nil), written...), "maxPods: 666\n"...)
	out, err := Run(context.Background(), o)
	if !errors.Is(err, ErrRolledBack) || !out.RolledBack {
		t.Fatalf("%+v %v", out, err)
	}
	if _, err := os.Stat(filepath.Join(img, "etc/kubernetes/patches", kubeadm.PatchFileName)); err == nil {
		t.Error("the patch file is left after the rollback")
	}
	if b, _ := os.ReadFile(n.config); string(b) != string(written) {
		t.Error("config.yaml not restored")
	}
}

// A kubeconfig that cannot be read stops the check, unless the change is
// forced anyway (then it is said).
func TestNewKubeadmCheckUnreadableCluster(t *testing.T) {
	_, img, _ := kubeadmImage(t, kubeadm.PersistNone)
	setup := hostnode.Given(schema.Newest(), "--config=/var/lib/kubelet/config.yaml")
	setup.Root = img
	missing := filepath.Join(t.TempDir(), "no-such-kubeconfig")
	if _, err := NewKubeadmCheck(context.Background(), setup, KubeadmOptions{Kubeconfig: missing}); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("without --force-unmanaged: %v", err)
	}
	var said []string
	check, err := NewKubeadmCheck(context.Background(), setup, KubeadmOptions{Kubeconfig: missing, Force: true,
		Progress: func(f string, a ...any) { said = append(said, fmt.Sprintf(f, a...)) }})
	if err != nil || check == nil || !check.Force {
		t.Fatalf("with --force-unmanaged: %+v %v", check, err)
	}
	defer check.Node.Close()
	if len(said) == 0 || !strings.Contains(said[len(said)-1], "ConfigMap not read") {
		t.Errorf("said %q", said)
	}
}
