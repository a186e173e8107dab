package node

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestPackagedVersion(t *testing.T) {
	root := t.TempDir()
	if _, err := KubeletVersion(root); !errors.Is(err, ErrNoKubelet) {
		t.Fatalf("an image without dpkg: err = %v, want ErrNoKubelet", err)
	}
	status := "Package: containerd\nVersion: 1.6.20~ds1-1\n\nPackage: kubelet\nStatus: install ok installed\nVersion: 1.30.4-1.1\n\n"
	if err := os.MkdirAll(filepath.Join(root, "var/lib/dpkg"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "var/lib/dpkg/status"), []byte(status), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := KubeletVersion(root)
	if err != nil || got != "1.30.4" {
		t.Fatalf("KubeletVersion = %q, %v; want 1.30.4", got, err)
	}
}
