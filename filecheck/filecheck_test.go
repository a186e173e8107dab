package filecheck

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kubeletcfg/kubeletcfg/schema"
	"github.com/kubeletcfg/kubeletcfg/warning"
)

const header = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"

// TestDropinEdgesOf128: kubelet 1.28 loads a drop-in as a whole --config
// file: a duplicate key is tolerated (the last wins) where 1.29 refuses the
// drop-in, and a null inside a map is an empty value its start-up refuses.
func TestDropinEdgesOf128(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(header+content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	file := write("config.yaml", "maxPods: 20\n")
	write("dup/10-a.conf", "maxPods: 21\nmaxPods: 22\n")
	write("null/10-a.conf", "evictionHard:\n  imagefs.available: null\n")
	check := func(minor, dropins string) *Report {
		v, _ := schema.Resolve(minor)
		res, err := File(Options{File: file, ConfigDir: filepath.Join(dir, dropins), Version: v})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	dup := filepath.Join(dir, "dup/10-a.conf")
	if res := check("1.28", "dup"); !res.Valid || len(res.Warnings) == 0 || res.Warnings[0].Code != warning.DuplicateKey || res.Warnings[0].File != dup || res.Warnings[0].Line != 4 {
		t.Errorf("1.28, duplicate key in a drop-in: %+v, want valid with a warning", res)
	}
	if res := check("1.29", "dup"); res.Valid || res.Errors[0].Code != warning.DuplicateKey {
		t.Errorf("1.29, duplicate key in a drop-in: %+v, want the drop-in refused", res)
	}
	if res := check("1.28", "null"); res.Valid || res.Errors[0].Field != "evictionHard.imagefs.available" || res.Errors[0].File != filepath.Join(dir, "null/10-a.conf") {
		t.Errorf("1.28, null inside a map of a drop-in: %+v, want the empty quantity refused", res)
	}
}
