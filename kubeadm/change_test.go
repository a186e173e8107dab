package kubeadm

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// changeNode is a kubeadm node (instance-config.yaml, a patches directory)
// and the cm-only ConfigMap in a file.
func changeNode(t *testing.T, patches map[string]string, online bool) *NodeRenderer {
	t.Helper()
	root := t.TempDir()
	for p, c := range map[string]string{"var/lib/kubelet/instance-config.yaml": "containerRuntimeEndpoint: \"unix:///var/run/containerd/containerd.sock\"\n"} {
		os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755)
		os.WriteFile(filepath.Join(root, p), []byte(c), 0o644)
	}
	os.MkdirAll(filepath.Join(root, "etc/kubernetes/patches"), 0o755)
	for name, c := range patches {
		os.WriteFile(filepath.Join(root, "etc/kubernetes/patches", name), []byte(c), 0o644)
	}
	o := NodeOptions{Root: root, Release: release(t, "1.37"), PatchesDir: DefaultPatchesDir}
	if online {
		o.ConfigMapFile = filepath.Join(corpusDir, "cm-only", "configmap.yaml")
	}
	n, err := OpenNode(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

func TestCheckChange(t *testing.T) {
	v, _ := schemaVersion("1.37")
	n := changeNode(t, nil, true)
	now, err := n.Render(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	current, _ := now.YAML()
	check := func(desired string, p Persist, n *NodeRenderer) (*ChangeResult, error) {
		return CheckChange(ChangeOptions{Node: n, Current: current, Desired: []byte(desired), CurrentFile: "config.yaml", NewFile: "new.yaml", Version: v, Persist: p})
	}
	// What kubeadm writes, written another way, is kept.
	res, err := check(strings.Replace(string(current), "syncFrequency: 0s", "syncFrequency: 0m", 1), PersistNone, n)
	if err != nil || len(res.Reverted) != 0 {
		t.Fatalf("%+v %v", res, err)
	}
	changed := string(current) + "maxPods: 200\n"
	_, err = check(changed, PersistNone, n)
	if !errors.Is(err, ErrReverted) || !strings.Contains(err.Error(), "maxPods: 200 here, 110 after the upgrade (the kubelet's default (kubeadm leaves it unset))") ||
		!strings.Contains(err.Error(), "--persist patch") || !strings.Contains(err.Error(), "--persist dropin") {
		t.Fatalf("plain change: %v", err)
	}
	res, err = check(changed, PersistPatch, n)
	if err != nil || res.PatchFile != "/etc/kubernetes/patches/"+PatchFileName || !strings.HasSuffix(string(res.Patch), "\nmaxPods: 200\n") {
		t.Fatalf("patch: %+v %v\n%s", res, err, res.Patch)
	}
	res, err = check(changed, PersistDropin, n)
	if err != nil || !strings.Contains(string(res.Dropin), "maxPods: 200") || string(res.ConfigYAML) != string(current) {
		t.Fatalf("dropin: %+v %v", res, err)
	}
	// A drop-in cannot remove what kubeadm writes.
	if _, err := check(strings.Replace(string(current), "clusterDomain: cluster.local\n", "", 1), PersistDropin, n); err == nil || !strings.Contains(err.Error(), "cannot remove clusterDomain") {
		t.Errorf("dropin removing: %v", err)
	}
	// A patch later in kubeadm's walk overrides kubeletcfg's: refused.
	late := changeNode(t, map[string]string{"kubeletconfigurationzzz+merge.yaml": "maxPods: 5\n"}, true)
	if _, err := check(changed, PersistPatch, late); !errors.Is(err, ErrReverted) || !strings.Contains(err.Error(), "kubeletconfigurationzzz+merge.yaml:1") {
		t.Errorf("overridden patch: %v", err)
	}
	// Offline: the change may be reverted; --persist or --force-unmanaged.
	off := changeNode(t, nil, false)
	if _, err := check(changed, PersistNone, off); !errors.Is(err, ErrReverted) || !strings.Contains(err.Error(), "ConfigMap unknown") {
		t.Errorf("offline: %v", err)
	}
	res, err = CheckChange(ChangeOptions{Node: off, Current: current, Desired: []byte(changed), CurrentFile: "config.yaml", NewFile: "new.yaml", Version: v, Force: true})
	if err != nil || !res.Offline || len(res.Reverted) != 1 {
		t.Errorf("offline, forced: %+v %v", res, err)
	}
	res, err = check(changed, PersistPatch, off)
	if err != nil || !strings.HasSuffix(string(res.Patch), "\nmaxPods: 200\n") {
		t.Errorf("offline patch: %+v %v", res, err)
	}
}
