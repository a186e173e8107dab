package migrate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubeletcfg/kubeletcfg/kubeadm"
	"github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/schema"
	"github.com/kubeletcfg/kubeletcfg/units"
)

func TestRewrite(t *testing.T) {
	v, _ := schema.Resolve("1.37")
	dir := t.TempDir()
	env := filepath.Join(dir, "kubelet")
	content := "# keep me\nKUBELET_KUBEADM_ARGS=\"--kubeconfig=/etc/k.conf --max-pods 150\"\nOTHER=1\nKUBELET_EXTRA_ARGS=\"--v=2 --node-ip=10.0.0.1\"\n"
	if err := os.WriteFile(env, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--kubeconfig=/etc/k.conf", "--max-pods", "150", "--v=2", "--node-ip=10.0.0.1"}
	origins := []units.Source{{File: env, Line: 2, Var: "KUBELET_KUBEADM_ARGS"}, {File: env, Line: 2, Var: "KUBELET_KUBEADM_ARGS"},
		{File: env, Line: 2, Var: "KUBELET_KUBEADM_ARGS"}, {File: env, Line: 4, Var: "KUBELET_EXTRA_ARGS"}, {File: env, Line: 4, Var: "KUBELET_EXTRA_ARGS"}}
	res, err := Run(Options{Setup: node.Given(v, args...), ConfigPath: "/etc/kubernetes/kubelet-config.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	files, err := res.Rewrite(args, origins, "")
	if err != nil {
		t.Fatal(err)
	}
	want := "# keep me\nKUBELET_KUBEADM_ARGS=\"--kubeconfig=/etc/k.conf\"\nOTHER=1\nKUBELET_EXTRA_ARGS=\"--node-ip=10.0.0.1 --config=/etc/kubernetes/kubelet-config.yaml\"\n"
	if got := string(files[env]); got != want {
		t.Errorf("rewritten:\n%s\nwant:\n%s", got, want)
	}
	if got := strings.Join(res.CommandLine(args), " "); got != "--kubeconfig=/etc/k.conf --node-ip=10.0.0.1 --config=/etc/kubernetes/kubelet-config.yaml" {
		t.Errorf("command line %q", got)
	}

	// A config flag written in the unit itself cannot be moved by rewriting env files.
	unitOrigins := append([]units.Source(nil), origins...)
	unitOrigins[1] = units.Source{File: "/etc/systemd/system/kubelet.service", Line: 7}
	if _, err := res.Rewrite(args, unitOrigins, ""); err == nil || !strings.Contains(err.Error(), "written in the unit itself") {
		t.Errorf("err = %v, want a refusal naming the unit", err)
	}
	// An assignment continued over several lines is not rewritten.
	if err := os.WriteFile(env, []byte("KUBELET_KUBEADM_ARGS=\"--kubeconfig=/etc/k.conf \\\n--max-pods 150\"\nKUBELET_EXTRA_ARGS=\"--v=2 --node-ip=10.0.0.1\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range origins {
		origins[i].Line -= 1 // the assignments now start on lines 1 and 3
	}
	if _, err := res.Rewrite(args, origins, ""); err == nil || !strings.Contains(err.Error(), "spans several lines") {
		t.Errorf("err = %v, want a refusal of the continued line", err)
	}
}

// kubeadm-flags.env is rewritten as kubeadm's parser reads it: one
// assignment, every flag --name=value (a value word joined, a bare boolean
// made explicit, a shorthand spelled out), and never empty.
func TestRewriteKubeadmFlagsEnv(t *testing.T) {
	v, _ := schema.Resolve("1.37")
	dir := t.TempDir()
	env := filepath.Join(dir, "kubeadm-flags.env")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(env, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("KUBELET_KUBEADM_ARGS=\"--node-ip 10.0.0.1 --fail-swap-on -v 2 --exit-on-lock-contention --max-pods=150 --hostname-override node-1\"\n")
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--config=" + cfg, "--node-ip", "10.0.0.1", "--fail-swap-on", "-v", "2", "--exit-on-lock-contention", "--max-pods=150", "--hostname-override", "node-1"}
	origins := make([]units.Source, len(args))
	origins[0] = units.Source{File: "/etc/systemd/system/kubelet.service.d/10-kubeadm.conf", Line: 3, Var: "KUBELET_CONFIG_ARGS"}
	for i := 1; i < len(args); i++ {
		origins[i] = units.Source{File: env, Line: 1, Var: "KUBELET_KUBEADM_ARGS"}
	}
	res, err := Run(Options{Setup: node.Given(v, args...), ConfigPath: cfg})
	if err != nil {
		t.Fatal(err)
	}
	files, err := res.Rewrite(args, origins, "")
	if err != nil {
		t.Fatal(err)
	}
	want := "KUBELET_KUBEADM_ARGS=\"--node-ip=10.0.0.1 --exit-on-lock-contention=true --hostname-override=node-1\"\n"
	if got := string(files[env]); got != want {
		t.Errorf("rewritten:\n%s\nwant:\n%s", got, want)
	}
	r, _ := kubeadm.ResolveRelease("1.34")
	back, err := kubeadm.ParseFlagsEnv(files[env], env, r)
	if err != nil || len(back.Warnings) > 0 || len(back.Args) != 3 {
		t.Errorf("kubeadm 1.34 reads %+v, %v", back, err)
	}

	// Every flag moves into the file: --config stays, so that the value is
	// never empty.
	write("KUBELET_KUBEADM_ARGS=\"--max-pods=150\"\n")
	args2, origins2 := args[:1], origins[:1]
	args2 = append(append([]string{}, args2...), "--max-pods=150")
	origins2 = append(append([]units.Source{}, origins2...), units.Source{File: env, Line: 1, Var: "KUBELET_KUBEADM_ARGS"})
	res, err = Run(Options{Setup: node.Given(v, args2...), ConfigPath: cfg})
	if err != nil {
		t.Fatal(err)
	}
	files, err = res.Rewrite(args2, origins2, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := string(files[env]); got != "KUBELET_KUBEADM_ARGS=\"--config="+cfg+"\"\n" {
		t.Errorf("rewritten: %q", got)
	}
	// A file with more than the assignment (here a comment first, which
	// kubeadm refuses) is not rewritten behind the operator's back.
	write("# by hand\nKUBELET_KUBEADM_ARGS=\"--max-pods=150\"\n")
	origins2[1].Line = 2
	if _, err := res.Rewrite(args2, origins2, ""); err == nil || !strings.Contains(err.Error(), "kubeadm-flags.env:1: kubeadm reads this file as the single assignment") {
		t.Errorf("err = %v", err)
	}
}
