package apply

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The binary a host runs for an apply in a pod is a copy in the state
// directory named by its hash: made once, made again when tampered with,
// never through a link.
func TestInstallBinary(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	exe := filepath.Join(t.TempDir(), "kubeletcfg")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\necho one\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	path, err := InstallBinary(state, exe)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(path) != filepath.Join(state, "bin") || !strings.HasPrefix(filepath.Base(path), "kubeletcfg-") {
		t.Errorf("installed at %s", path)
	}
	st, err := os.Lstat(path)
	if err != nil || st.Mode().Perm() != 0o755 || !st.Mode().IsRegular() {
		t.Fatalf("%v %v", st.Mode(), err)
	}
	if dst, _ := os.Lstat(filepath.Dir(path)); dst.Mode().Perm() != 0o700 {
		t.Errorf("bin/ is %v, want 0700", dst.Mode().Perm())
	}
	again, err := InstallBinary(state, exe)
	if err != nil || again != path {
		t.Errorf("again: %s %v", again, err)
	}
	// Tampered with: replaced by the real one.
	if err := os.WriteFile(path, []byte("evil"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := InstallBinary(state, exe); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "#!/bin/sh\necho one\n" {
		t.Errorf("the tampered copy stayed: %q", b)
	}
	// A new binary, a new name; the old copy is left to a guard that runs it.
	if err := os.WriteFile(exe, []byte("#!/bin/sh\necho two\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	two, err := InstallBinary(state, exe)
	if err != nil || two == path {
		t.Errorf("a new binary: %s %v", two, err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("the older copy is gone: %v", err)
	}
}

func TestInstallBinaryRefusesALinkedBinDir(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	elsewhere := t.TempDir()
	if err := os.Symlink(elsewhere, filepath.Join(state, "bin")); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(t.TempDir(), "kubeletcfg")
	if err := os.WriteFile(exe, []byte("x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := InstallBinary(state, exe); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("a bin/ that is a link: %v", err)
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Errorf("written through the link: %v", entries)
	}
}
