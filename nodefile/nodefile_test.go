package nodefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestReadFileRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/dev/zero", "/dev/null", fifo, dir} {
		_, err := ReadFile(p, Config)
		var nr *NotRegularError
		if !errors.As(err, &nr) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v, want a NotRegularError naming it", p, err)
		}
	}
	if _, err := ReadFile(filepath.Join(dir, "missing"), Config); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestReadFileStopsAtTheLimit(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big")
	k := Kind{What: "test file", Limit: 1000}
	if err := os.WriteFile(p, make([]byte, 1000), 0o600); err != nil {
		t.Fatal(err)
	}
	if data, err := ReadFile(p, k); err != nil || len(data) != 1000 {
		t.Fatalf("at the limit: %d bytes, %v", len(data), err)
	}
	if err := os.WriteFile(p, make([]byte, 3<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := ReadFile(p, k)
	var le *LimitError
	if !errors.As(err, &le) || le.Size != 3<<20 {
		t.Fatalf("over the limit: %v", err)
	}
	if want := "big: the file is 3 MiB; kubeletcfg reads at most 1000 bytes of a test file (kubeletcfg's limit, not the kubelet's)"; !strings.HasSuffix(err.Error(), want) {
		t.Errorf("message %q, want suffix %q", err, want)
	}
}

func TestRootStaysInside(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret")
	if err := os.WriteFile(secret, []byte("outside"), 0o600); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "etc/inside"), []byte("inside"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"abs": secret, "rel": "../../../../../../.." + secret, "ok": "/etc/inside"} {
		if err := os.Symlink(target, filepath.Join(root, "etc", name)); err != nil {
			t.Fatal(err)
		}
	}
	r, err := OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, p := range []string{"/etc/abs", "/etc/rel", "/../../../.." + secret, "/etc/ok"} {
		data, err := r.ReadFile(p, Config)
		if string(data) == "outside" {
			t.Errorf("%s read the file outside the root", p)
		}
		if p == "/etc/ok" && (err != nil || string(data) != "inside") {
			t.Errorf("%s: %q, %v", p, data, err)
		}
		hp, err := HostPath(root, p)
		if err == nil && !strings.HasPrefix(hp, root+"/") {
			t.Errorf("HostPath(%s) = %s, outside the root", p, hp)
		}
	}
	if hp, err := HostPath(root, "/missing/../etc/abs"); err == nil {
		t.Errorf("HostPath climbing past a missing component gave %s", hp)
	}
	if hp, _ := HostPath(root, "/etc/"); !strings.HasSuffix(hp, "/etc/") {
		t.Errorf("HostPath dropped the trailing slash: %s", hp)
	}
}

func TestHostDirFollowsALastLinkOnlyWithASlash(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "etc/real.d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/real.d", filepath.Join(root, "etc/link.d")); err != nil {
		t.Fatal(err)
	}
	if hp, err := HostDir(root, "/etc/link.d"); err != nil || hp != filepath.Join(root, "etc/link.d") {
		t.Errorf("without a slash: %s, %v; want the link itself", hp, err)
	}
	if hp, err := HostDir(root, "/etc/link.d/"); err != nil || hp != filepath.Join(root, "etc/real.d")+"/" {
		t.Errorf("with a slash: %s, %v; want the directory it names", hp, err)
	}
}

// A file of an image that is a link reads inside the image: an absolute
// target from the image's /, a ../ target stopping at it, never this host's.
func TestReadFileUnderResolvesLinksInTheRoot(t *testing.T) {
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret"), []byte("host"), 0o600)
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "etc/d"), 0o755)
	os.MkdirAll(filepath.Join(root, outside), 0o755)
	os.WriteFile(filepath.Join(root, outside, "secret"), []byte("image"), 0o600)
	os.Symlink(filepath.Join(outside, "secret"), filepath.Join(root, "etc/d/abs.conf"))
	os.Symlink("../../../../../../../.."+filepath.Join(outside, "secret"), filepath.Join(root, "etc/d/rel.conf"))
	os.Symlink("/nowhere", filepath.Join(root, "etc/d/gone.conf"))
	for _, name := range []string{"abs.conf", "rel.conf"} {
		b, err := ReadFileUnder(root, filepath.Join(root, "etc/d", name), Config)
		if err != nil || string(b) != "image" {
			t.Errorf("%s: %q %v, want the image's file", name, b, err)
		}
	}
	p := filepath.Join(root, "etc/d/gone.conf")
	if _, err := ReadFileUnder(root, p, Config); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), p) {
		t.Errorf("a link to a file the image lacks: %v", err)
	}
	if _, err := ReadFileUnder(root, filepath.Join(outside, "secret"), Config); err == nil {
		t.Error("a path outside the root was read")
	}
}
