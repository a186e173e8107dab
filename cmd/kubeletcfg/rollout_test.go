package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func TestRolloutDryRun(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "pods.conf")
	if err := os.WriteFile(good, []byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: 150\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "rollout", "--dropin", "50-pods.conf="+good, "--dry-run", "-o", "yaml", "--batch", "2",
		"--node", "c", "--kubelet-version", "1.37", "--node", "a", "--kubelet-version", "v1.36.1", "--node", "b", "--kubelet-version", "1.37")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	docs := strings.Split(strings.TrimPrefix(out, "---\n"), "\n---\n")
	var kinds []string
	for _, d := range docs {
		var obj struct {
			Kind     string
			Metadata struct{ Annotations map[string]string }
			Spec     struct {
				Template struct {
					Spec struct{ NodeName string }
				}
			}
		}
		if err := yaml.Unmarshal([]byte(d), &obj); err != nil {
			t.Fatalf("%v\n%s", err, d)
		}
		k := obj.Kind
		if obj.Kind == "Job" {
			k += ":" + obj.Spec.Template.Spec.NodeName + "@" + obj.Metadata.Annotations["kubeletcfg.io/wave"]
		}
		kinds = append(kinds, k)
	}
	if got := strings.Join(kinds, " "); got != "Secret Job:a@canary Job:b@1 Job:c@1" {
		t.Errorf("objects %s", got)
	}
	if !strings.Contains(out, "--kubelet-version=1.36") || !strings.Contains(out, "maxPods: 150") {
		t.Errorf("the Job of a 1.36 node, the change in the Secret:\n%s", out)
	}
}

func TestRolloutRefusals(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(good, []byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: 150\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nfailCgroupV1: false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	node := []string{"--node", "n", "--kubelet-version", "1.28"}
	for _, c := range []struct {
		name string
		args []string
		says string
	}{
		{"no change", append([]string{"--dry-run"}, node...), "give one of"},
		{"two changes", append([]string{"-f", good, "--patch", good, "--dry-run"}, node...), "give one of"},
		{"invalid for a minor", append([]string{"-f", bad, "--dry-run"}, node...), "kubelet 1.28"},
		{"yaml without a dry run", []string{"-f", good, "-o", "yaml"}, "add --dry-run"},
		{"nodes without a dry run", append([]string{"-f", good}, node...), "--dry-run without --kubeconfig"},
		{"versions short", []string{"-f", good, "--dry-run", "--node", "a", "--node", "b", "--kubelet-version", "1.37"}, "a --kubelet-version for each --node"},
		{"resume with a change", []string{"--resume", "-f", good}, "--resume continues"},
		{"canary twice", append([]string{"-f", good, "--dry-run", "--canary", "2", "--canary-selector", "a=b"}, node...), "exclude each other"},
		{"a bad apply flag", append([]string{"-f", good, "--dry-run", "--apply-flag", "persist"}, node...), "--apply-flag"},
		{"drain offline", append([]string{"-f", good, "--dry-run", "--drain"}, node...), "--api-server"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, append([]string{"rollout"}, c.args...)...)
			if code != 2 || !strings.Contains(errOut, c.says) {
				t.Errorf("exit %d, want 2 saying %q\n%s%s", code, c.says, out, errOut)
			}
		})
	}
}
