package apply

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	hostnode "github.com/kubeletcfg/kubeletcfg/node"
)

// kubeadmNode is a copy of a node image with flags in kubeadm's env files,
// and its setup read from those files.
func kubeadmNode(t *testing.T) (string, *hostnode.Setup) {
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS("../testdata/nodes/kubeadm-1.31")); err != nil {
		t.Fatal(err)
	}
	setup, err := hostnode.ReadSetup(hostnode.Source{Root: root, KubeletVersion: "1.31",
		From: []string{"/var/lib/kubelet/kubeadm-flags.env", "/etc/default/kubelet"}})
	if err != nil {
		t.Fatal(err)
	}
	return root, setup
}

// treeOf reads every file under root.
func treeOf(t *testing.T, root string) map[string]string {
	files := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		files[strings.TrimPrefix(path, root)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestPlanMigration(t *testing.T) {
	root, setup := kubeadmNode(t)
	o, removed, err := planMigration(setup, "/var/lib/kubelet/migrated.yaml", Options{Node: "node-1", Extra: []FileWrite{{Path: "stale"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 0 {
		t.Errorf("removed %v: kubelet 1.31 has every flag of the image", removed)
	}
	if o.Node != "node-1" || o.ConfigPath != "/var/lib/kubelet/migrated.yaml" {
		t.Errorf("node %q, config path %q", o.Node, o.ConfigPath)
	}
	if !strings.Contains(string(o.NewFile), "maxPods: 150") || !strings.Contains(string(o.NewFile), "memory.available: 500Mi") {
		t.Errorf("the new config file lacks the flags moved into it:\n%s", o.NewFile)
	}
	wantArgs := []string{"--pod-infra-container-image=registry.k8s.io/pause:3.9",
		"--node-ip=10.0.0.21", "--node-labels=node.kubernetes.io/pool=general", "--config=/var/lib/kubelet/migrated.yaml"}
	got := slices.Clone(o.NewArgs)
	slices.Sort(got)
	slices.Sort(wantArgs)
	if diff := cmp.Diff(wantArgs, got); diff != "" {
		t.Errorf("the command line after the migration (-want +got):\n%s", diff)
	}
	var paths []string
	for _, w := range o.Extra {
		paths = append(paths, strings.TrimPrefix(w.Path, root))
		if strings.Contains(string(w.Content), "--max-pods") {
			t.Errorf("%s keeps --max-pods:\n%s", w.Path, w.Content)
		}
	}
	if diff := cmp.Diff([]string{"/etc/default/kubelet", "/var/lib/kubelet/kubeadm-flags.env"}, paths); diff != "" {
		t.Errorf("files rewritten (-want +got), under the root:\n%s", diff)
	}
	if o.ReadAs != setup.Version || o.Setup != setup || o.Setup.Root != root || !o.Setup.FromNode {
		t.Errorf("the apply's setup is not the node's: %+v", o.Setup)
	}
}

func TestRunMigrationDryRun(t *testing.T) {
	root, setup := kubeadmNode(t)
	before := treeOf(t, root)
	var progress bytes.Buffer
	out, err := RunMigration(context.Background(), setup, "/var/lib/kubelet/migrated.yaml", Options{Node: "node-1", DryRun: true, Progress: &progress})
	if err != nil {
		t.Fatalf("RunMigration: %v\n%s", err, progress.String())
	}
	if len(out.Changes) != 0 || out.Applied {
		t.Errorf("a migration changes nothing the kubelet runs, and a dry run applies nothing: changes %v, applied %v", out.Changes, out.Applied)
	}
	var writes []string
	for _, w := range out.Writes {
		writes = append(writes, strings.TrimPrefix(w, root))
	}
	slices.Sort(writes)
	if diff := cmp.Diff([]string{"/etc/default/kubelet", "/var/lib/kubelet/kubeadm-flags.env", "/var/lib/kubelet/migrated.yaml"}, writes); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, treeOf(t, root)); diff != "" {
		t.Errorf("a dry run changed the node's tree (-before +after):\n%s", diff)
	}
}

func TestRunMigrationRefuses(t *testing.T) {
	_, setup := kubeadmNode(t)
	given := &hostnode.Setup{Kubelet: hostnode.Kubelet{Args: setup.Args}, Version: setup.Version, Root: setup.Root}
	if _, err := RunMigration(context.Background(), given, "/var/lib/kubelet/config.yaml", Options{Node: "node-1", DryRun: true}); err == nil || !strings.Contains(err.Error(), "not given directly") {
		t.Errorf("a command line given directly has no files to rewrite: err = %v", err)
	}
	if _, err := RunMigration(context.Background(), setup, "/var/lib/kubelet/config.yaml", Options{Node: "node-2", DryRun: true}); err == nil || !strings.Contains(err.Error(), "refusing to touch it") {
		t.Errorf("another node's migration: err = %v", err)
	}
}

// A rollback of a migration puts back every file of its record in one
// transaction: the env files as they were, byte for byte, and the config
// file the migration made gone, with the command line the kubelet had.
func TestRollbackOfAMigrationRestoresEveryFile(t *testing.T) {
	root, setup := kubeadmNode(t)
	before := treeOf(t, root)
	clock := newFakeClock()
	k := &fakeKubelet{clock: clock, behave: byContent(nil), pid: 1}
	o := Options{Node: "node-1", Restarter: k, Clock: clock, probe: k.probe, Timeout: 30 * time.Second, StableFor: time.Second}
	if _, err := RunMigration(context.Background(), setup, "/var/lib/kubelet/migrated.yaml", o); err != nil {
		t.Fatal(err)
	}
	if after := treeOf(t, root); after["/var/lib/kubelet/kubeadm-flags.env"] == before["/var/lib/kubelet/kubeadm-flags.env"] {
		t.Fatal("the migration rewrote nothing")
	}
	setup, err := hostnode.ReadSetup(hostnode.Source{Root: root, KubeletVersion: "1.31",
		From: []string{"/var/lib/kubelet/kubeadm-flags.env", "/etc/default/kubelet"}})
	if err != nil {
		t.Fatal(err)
	}
	back := o
	back.Setup = setup
	rec, err := RestoreRecord(filepath.Join(root, DefaultStateDir), 0, &back)
	if err != nil {
		t.Fatal(err)
	}
	if rec == nil || rec.N != 1 {
		t.Errorf("restoring record %+v, want 1", rec)
	}
	if _, err := Run(context.Background(), back); err != nil {
		t.Fatal(err)
	}
	after := treeOf(t, root)
	for _, f := range []string{"/var/lib/kubelet/kubeadm-flags.env", "/etc/default/kubelet", "/var/lib/kubelet/config.yaml"} {
		if after[f] != before[f] {
			t.Errorf("%s after the rollback:\n%s\nwant:\n%s", f, after[f], before[f])
		}
	}
	if _, ok := after["/var/lib/kubelet/migrated.yaml"]; ok {
		t.Error("the config file the migration made stays")
	}
}
