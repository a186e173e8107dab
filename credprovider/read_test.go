package credprovider

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/kubeletcfg/kubeletcfg/nodefile"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

const provider = `apiVersion: kubelet.config.k8s.io/v1
kind: CredentialProviderConfig
providers:
- name: %s
  matchImages: ["*.example.com"]
  defaultCacheDuration: 1m
  apiVersion: credentialprovider.kubelet.k8s.io/v1
`

func version(t *testing.T, minor string) *schema.Version {
	t.Helper()
	for _, v := range schema.Versions() {
		if v.Minor == minor {
			return v
		}
	}
	t.Fatalf("no version %s", minor)
	return nil
}

func write(t *testing.T, root, p, data string, mode os.FileMode) {
	t.Helper()
	full := filepath.Join(root, p)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
}

func openRoot(t *testing.T, dir string) *nodefile.Root {
	t.Helper()
	r, err := nodefile.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func TestReadDirectoryUnderRoot(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "etc/kubernetes/credprov.d/20-b.yaml", strings.Replace(provider, "%s", "b", 1), 0o644)
	write(t, dir, "etc/kubernetes/credprov.d/10-a.json", `{"apiVersion":"kubelet.config.k8s.io/v1","kind":"CredentialProviderConfig","providers":[{"name":"a","matchImages":["a.example.com"],"defaultCacheDuration":"1m","apiVersion":"credentialprovider.kubelet.k8s.io/v1"}]}`, 0o644)
	write(t, dir, "etc/kubernetes/credprov.d/notes.txt", "not read", 0o644)
	write(t, dir, "usr/libexec/kubernetes/credential-provider/a", "#!/bin/sh\n", 0o755)
	write(t, dir, "usr/libexec/kubernetes/credential-provider/b", "#!/bin/sh\n", 0o755)
	r := openRoot(t, dir)
	c, probs, err := Check(r, "/etc/kubernetes/credprov.d", "/usr/libexec/kubernetes/credential-provider", version(t, "1.37"), nil)
	if err != nil || len(probs) > 0 {
		t.Fatalf("%v %v", probs, err)
	}
	if len(c.Providers) != 2 || c.Providers[0].Name != "a" || c.Providers[1].Name != "b" || c.Providers[1].Line != 4 ||
		c.Providers[1].File != "/etc/kubernetes/credprov.d/20-b.yaml" {
		t.Fatalf("providers %+v", c.Providers)
	}
	// A kubelet before 1.34 reads one file: the directory makes it exit.
	_, probs, err = Check(r, "/etc/kubernetes/credprov.d", "/usr/libexec/kubernetes/credential-provider", version(t, "1.33"), nil)
	if err != nil || len(probs) != 1 || !strings.Contains(probs[0].Message, "reads one file") {
		t.Fatalf("1.33: %v %v", probs, err)
	}
	// The plugin binary is looked for in the image.
	if err := os.Chmod(filepath.Join(dir, "usr/libexec/kubernetes/credential-provider/b"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, probs, _ = Check(r, "/etc/kubernetes/credprov.d", "/usr/libexec/kubernetes/credential-provider", version(t, "1.37"), nil)
	if len(probs) != 1 || probs[0].File != "/etc/kubernetes/credprov.d/20-b.yaml" || probs[0].Line != 4 || !strings.Contains(probs[0].Message, "permission denied") {
		t.Fatalf("not executable: %v", probs)
	}
}

func TestProblemsNameTheLine(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "c.yaml", strings.Replace(provider, "%s", "a b", 1)+"  timeout: 5s\n", 0o644)
	r := openRoot(t, dir)
	_, probs, err := Read(r, "/c.yaml", version(t, "1.37"))
	if err != nil || len(probs) != 1 || probs[0].Line != 8 || probs[0].Field != "providers[0].timeout" {
		t.Fatalf("%v %v", probs, err)
	}
	write(t, dir, "c.yaml", strings.Replace(provider, "%s", "a b", 1), 0o644)
	c, probs, _ := Read(r, "/c.yaml", version(t, "1.37"))
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	probs = Validate(c, version(t, "1.37"), nil)
	if len(probs) != 1 || probs[0].String() != `/c.yaml:4: providers[0].name: Invalid value: "a b": provider name cannot contain spaces` {
		t.Fatalf("%v", probs)
	}
}

// Hostile trees: links that leave the root, files over the limit, FIFOs,
// too many files. Nothing outside the root is read.
func TestHostile(t *testing.T) {
	outside := t.TempDir()
	write(t, outside, "secret.yaml", strings.Replace(provider, "%s", "stolen", 1), 0o644)
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "etc/credprov.d"), 0o755); err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(filepath.Join(dir, "etc/credprov.d"), filepath.Join(outside, "secret.yaml"))
	if err := os.Symlink(rel, filepath.Join(dir, "etc/credprov.d/a.yaml")); err != nil {
		t.Fatal(err)
	}
	r := openRoot(t, dir)
	v := version(t, "1.37")
	if _, _, err := Read(r, "/etc/credprov.d", v); err == nil || !strings.Contains(err.Error(), "leaves --root: refused") {
		t.Fatalf("link out of the root: %v", err)
	}
	// The same link named as the file itself.
	if _, _, err := Read(r, "/etc/credprov.d/a.yaml", v); err == nil || !strings.Contains(err.Error(), "leaves --root") {
		t.Fatalf("link out of the root: %v", err)
	}
	os.Remove(filepath.Join(dir, "etc/credprov.d/a.yaml"))
	// An absolute link is the image's own path.
	write(t, dir, "srv/real.yaml", strings.Replace(provider, "%s", "img", 1), 0o644)
	if err := os.Symlink("/srv/real.yaml", filepath.Join(dir, "etc/credprov.d/b.yaml")); err != nil {
		t.Fatal(err)
	}
	c, probs, err := Read(r, "/etc/credprov.d", v)
	if err != nil || len(probs) > 0 || c.Providers[0].Name != "img" {
		t.Fatalf("absolute link: %+v %v %v", c, probs, err)
	}
	write(t, dir, "etc/credprov.d/big.yaml", strings.Repeat("#\n", 1<<20), 0o644)
	if _, _, err := Read(r, "/etc/credprov.d", v); err == nil || !strings.Contains(err.Error(), "kubeletcfg's limit") {
		t.Fatalf("big: %v", err)
	}
	os.Remove(filepath.Join(dir, "etc/credprov.d/big.yaml"))
	if err := syscall.Mkfifo(filepath.Join(dir, "etc/credprov.d/c.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Read(r, "/etc/credprov.d", v); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("fifo: %v", err)
	}
	os.Remove(filepath.Join(dir, "etc/credprov.d/c.yaml"))
	for i := 0; i <= maxFiles; i++ {
		write(t, dir, filepath.Join("etc/credprov.d", "f"+itoa(i)+".yaml"), "x", 0o644)
	}
	if _, _, err := Read(r, "/etc/credprov.d", v); err == nil || !strings.Contains(err.Error(), "more than 256") {
		t.Fatalf("many: %v", err)
	}
}

func itoa(i int) string {
	return strings.TrimLeft(string([]byte{byte('0' + i/100%10), byte('0' + i/10%10), byte('0' + i%10)}), "")
}
