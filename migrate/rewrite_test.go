package migrate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
