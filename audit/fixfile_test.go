package audit

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteFixed(t *testing.T) {
	rep, _ := run(t, secureNode().config(t, "seccompDefault: true", "seccompDefault: false"), "1.33", nil, "")
	want, _, err := rep.FixedConfig()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "fixed.yaml")
	if _, err := rep.WriteFixed(path); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, want) || !bytes.Contains(got, []byte("seccompDefault: true")) {
		t.Errorf("wrote:\n%s", got)
	}
	if err := os.WriteFile(path, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := rep.WriteFixed(path); err == nil || !strings.HasPrefix(err.Error(), path+": the file exists") {
		t.Errorf("over an existing file: err = %v", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "mine" {
		t.Errorf("overwrote %s: %q", path, got)
	}
	legacy, _ := run(t, secureNode(), "1.33", []string{"--kubeconfig=/etc/kubernetes/kubelet.conf"}, "")
	other := filepath.Join(t.TempDir(), "fixed.yaml")
	if _, err := legacy.WriteFixed(other); err == nil || !strings.HasPrefix(err.Error(), other+": ") {
		t.Errorf("nothing to fix in a file: err = %v, want it to name %s", err, other)
	}
	if _, err := os.Lstat(other); err == nil {
		t.Errorf("a failed fix left %s", other)
	}
}
