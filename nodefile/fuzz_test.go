package nodefile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzHostPath: whatever the node path, the host path it gives is under the
// root, through a tree of links that point in and out of it.
func FuzzHostPath(f *testing.F) {
	for _, seed := range []string{"/etc/a/../../x", "/etc/out/y", "/etc/rel/", "..", "/etc/loop", "/etc/in/../../../z", "etc//./in"} {
		f.Add(seed)
	}
	root, err := filepath.EvalSymlinks(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "etc/real"), 0o755); err != nil {
		f.Fatal(err)
	}
	for name, target := range map[string]string{
		"etc/out": "/tmp", "etc/rel": "../../../../..", "etc/in": "/etc/real", "etc/loop": "/etc/loop", "etc/real/up": "..",
	} {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, p string) {
		hp, err := HostPath(root, p)
		if err != nil {
			return
		}
		under := func(q string) bool { return q == root || strings.HasPrefix(q, root+"/") }
		if !under(hp) {
			t.Fatalf("HostPath(%q) = %q, outside %s", p, hp, root)
		}
		// What the host makes of it, following its links, is inside too.
		if real, err := filepath.EvalSymlinks(hp); err == nil && !under(real) {
			t.Fatalf("HostPath(%q) = %q, which leads to %q outside %s", p, hp, real, root)
		}
	})
}

// FuzzBeneathAsWalk: openat2's answer for any node path is the walk's:
// the resolved path, what it names, the error, what a read and a listing
// give.
func FuzzBeneathAsWalk(f *testing.F) {
	for _, seed := range []string{"/etc/a/../../x", "/etc/in/f", "/etc/rel/", "..", "/etc/loop", "/etc/in/../in/f", "etc//./in", "/etc/dangling", "/etc/real/up/in/f", "/etc/real/none"} {
		f.Add(seed)
	}
	root := f.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "etc/real"), 0o755); err != nil {
		f.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "etc/real/f"), []byte("f"), 0o644); err != nil {
		f.Fatal(err)
	}
	for name, target := range map[string]string{
		"etc/out": "/tmp", "etc/rel": "../../../../..", "etc/in": "/etc/real", "etc/loop": "/etc/loop",
		"etc/real/up": "..", "etc/dangling": "/nowhere", "etc/file": "real/f",
	} {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			f.Fatal(err)
		}
	}
	r, err := OpenRoot(root)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { r.Close() })
	f.Fuzz(func(t *testing.T, p string) {
		type answer struct {
			res        string
			fi         fs.FileInfo
			err        error
			data       []byte
			readErr    error
			names      []string
			readDirErr error
		}
		ask := func(off bool) answer {
			beneathOff = off
			defer func() { beneathOff = false }()
			var a answer
			a.res, a.fi, a.err = r.Stat(p)
			a.data, a.readErr = r.ReadFile(p, Config)
			a.names, a.readDirErr = r.ReadDir(p)
			return a
		}
		fast, walk := ask(false), ask(true)
		same := func(a, b error) bool {
			return fmt.Sprint(a) == fmt.Sprint(b) && sameError(a, b) || isNotRegular(a) && fmt.Sprint(a) == fmt.Sprint(b)
		}
		if fast.res != walk.res || !same(fast.err, walk.err) || (fast.fi == nil) != (walk.fi == nil) || fast.fi != nil && !sameInfo(fast.fi, walk.fi) {
			t.Fatalf("Stat(%q): openat2 %q %v %v; walk %q %v %v", p, fast.res, fast.fi, fast.err, walk.res, walk.fi, walk.err)
		}
		if string(fast.data) != string(walk.data) || !same(fast.readErr, walk.readErr) {
			t.Fatalf("ReadFile(%q): openat2 %q %v; walk %q %v", p, fast.data, fast.readErr, walk.data, walk.readErr)
		}
		if strings.Join(fast.names, "/") != strings.Join(walk.names, "/") || !same(fast.readDirErr, walk.readDirErr) {
			t.Fatalf("ReadDir(%q): openat2 %v %v; walk %v %v", p, fast.names, fast.readDirErr, walk.names, walk.readDirErr)
		}
	})
}

func isNotRegular(err error) bool {
	var nr *NotRegularError
	return errors.As(err, &nr)
}
