package testkit

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
)

// The kubeconfig is what client-go loads: server, CA or not, token or
// client certificate.
func TestKubeconfigLoads(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	for _, name := range []string{`ca "x".crt`, "a.crt", "a.key"} {
		files[name] = filepath.Join(dir, name)
		if err := os.WriteFile(files[name], nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []Kubeconfig{
		{Server: "https://10.0.0.1:6443/prefix", Token: "s3cret"},
		{Server: "https://127.0.0.1:16443", CAFile: files[`ca "x".crt`], ClientCert: files["a.crt"], ClientKey: files["a.key"]},
	} {
		path := filepath.Join(dir, "kubeconfig")
		if err := k.Write(path); err != nil {
			t.Fatal(err)
		}
		if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
			t.Errorf("mode %v, want 0600", st.Mode().Perm())
		}
		cfg, err := clientcmd.BuildConfigFromFlags("", path)
		if err != nil {
			t.Fatalf("%+v: %v\n%s", k, err, k)
		}
		if cfg.Host != k.Server || cfg.BearerToken != k.Token || cfg.CAFile != k.CAFile || cfg.Insecure != (k.CAFile == "") ||
			cfg.CertFile != k.ClientCert || cfg.KeyFile != k.ClientKey {
			t.Errorf("%+v loaded as %+v", k, cfg)
		}
	}
}

func TestCopyTree(t *testing.T) {
	src, dst := t.TempDir(), filepath.Join(t.TempDir(), "copy")
	if err := os.MkdirAll(filepath.Join(src, "etc", "kubernetes"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "etc", "kubernetes", "kubelet.conf"), []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := CopyTree(src, dst); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dst, "etc", "kubernetes", "kubelet.conf")); err != nil || string(b) != "x\n" {
		t.Errorf("copied file: %q %v", b, err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(src, "link")); err != nil {
		t.Fatal(err)
	}
	if err := CopyTree(src, filepath.Join(t.TempDir(), "again")); err == nil {
		t.Error("a link in the tree was copied")
	}
}

func TestWriteTree(t *testing.T) {
	dir := t.TempDir()
	if err := WriteTree(dir, map[string]string{"a/b/c.conf": "c\n", "args": "--v=2\n"}); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"a/b/c.conf": "c\n", "args": "--v=2\n"} {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != want {
			t.Errorf("%s: %q %v", name, b, err)
		}
	}
	if st, err := os.Stat(filepath.Join(dir, "a", "b", "c.conf")); err != nil || st.Mode().Perm() != 0o644&^umask() {
		t.Errorf("mode %v %v", st.Mode(), err)
	}
}

func umask() os.FileMode {
	mask := syscall.Umask(0)
	syscall.Umask(mask)
	return os.FileMode(mask)
}
