package nodefile

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"syscall"
	"testing"
)

// resolveByPrefix is Resolve as it was first written: every prefix looked
// at from the root. Resolve walks down holding the directories open
// instead; both must say the same of every path.
func resolveByPrefix(n *Root, p string) (string, error) {
	todo := splitPath(p)
	cur := "/"
	links := 0
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		if c == ".." {
			cur = path.Dir(cur)
			continue
		}
		next := path.Join(cur, c)
		fi, err := n.r.Lstat(rel(next))
		if err != nil {
			return path.Join(append([]string{next}, todo...)...), nodeError("stat", p, err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if links++; links > maxLinks {
			return next, &fs.PathError{Op: "resolve", Path: p, Err: syscall.ELOOP}
		}
		target, err := n.r.Readlink(rel(next))
		if err != nil {
			return next, nodeError("readlink", p, err)
		}
		if path.IsAbs(target) {
			cur = "/"
		}
		todo = append(splitPath(target), todo...)
	}
	return cur, nil
}

func TestResolveAsByPrefix(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"etc/kubernetes/kubelet.conf.d/sub", "var/lib/kubelet", "usr/lib/systemd/system"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"etc/kubernetes/kubelet.conf.d/10.conf", "var/lib/kubelet/config.yaml", "usr/lib/systemd/system/kubelet.service"} {
		if err := os.WriteFile(filepath.Join(root, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"etc/abs-dir": "/etc/kubernetes",
		"etc/rel-dir": "kubernetes/kubelet.conf.d",
		"etc/up":      "../../../../var/lib",
		"etc/file":    "/var/lib/kubelet/config.yaml",
		"etc/chain":   "abs-dir",
		"etc/missing": "/nowhere/at/all",
		"etc/loop1":   "loop2",
		"etc/loop2":   "loop1",
		"etc/kubernetes/kubelet.conf.d/sub/parent": "..",
		"etc/kubernetes/kubelet.conf.d/20.conf":    "10.conf",
		"var/lib/kubelet/dot":                      ".",
		"lib":                                      "usr/lib",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	paths := []string{
		"/", "", ".", "..", "/..", "/etc", "/etc/", "/etc/abs-dir", "/etc/abs-dir/kubelet.conf.d/10.conf",
		"/etc/rel-dir/10.conf", "/etc/rel-dir/20.conf", "/etc/up/kubelet/config.yaml", "/etc/file", "/etc/file/x",
		"/etc/file/..", "/etc/chain/kubelet.conf.d/sub/parent/10.conf", "/etc/missing", "/etc/missing/x/..",
		"/etc/loop1", "/etc/loop1/x", "/var/lib/kubelet/dot/dot/config.yaml", "/lib/systemd/system/kubelet.service",
		"/lib/../etc/abs-dir", "/etc/kubernetes/kubelet.conf.d/sub/parent/sub/parent", "/nope/../etc", "/var/lib/kubelet/config.yaml/..",
		"etc//kubernetes/./kubelet.conf.d/", "/etc/kubernetes/kubelet.conf.d/sub/parent/../../../../../..",
		"/etc/kubernetes/none", "/etc/abs-dir/none", "/etc/up/kubelet/none", "/etc/chain/kubelet.conf.d/sub/parent/none",
		"/none", "/etc/file/none", "/etc/kubernetes/kubelet.conf.d/sub/parent/../none",
	}
	// A root that holds the directories it walked (Hold) says the same, on
	// the first walk of a directory and on the next ones, and lets go of
	// them all when closed; the walk alone (no openat2) says the same too.
	fds := func() int { e, _ := os.ReadDir("/proc/self/fd"); return len(e) }
	before := fds()
	defer func() { beneathOff = false }()
	for _, off := range []bool{false, true} {
		beneathOff = off
		for _, hold := range []bool{false, true} {
			r, err := OpenRoot(root)
			if err != nil {
				t.Fatal(err)
			}
			if hold {
				r.Hold()
			}
			for range 2 {
				checkResolve(t, root, r, paths)
			}
			if hold && off && (len(r.held) == 0 || len(r.dirs) == 0) {
				t.Errorf("Hold: %d directories held, %d remembered", len(r.held), len(r.dirs))
			}
			if !off && r.fd < 0 && !noBeneath.Load() {
				t.Errorf("openat2 answered nothing")
			}
			r.Close()
			if n := fds(); n != before {
				t.Errorf("openat2 off %v, hold %v: %d descriptors open after Close, %d before", off, hold, n, before)
			}
		}
	}
	if noBeneath.Load() {
		t.Log("this kernel has no openat2 for kubeletcfg: only the walk was checked")
	}
}

func checkResolve(t *testing.T, root string, r *Root, paths []string) {
	t.Helper()
	for _, p := range paths {
		want, wantErr := resolveByPrefix(r, p)
		got, fi, gotErr := r.resolve(p)
		if got != want || !sameError(gotErr, wantErr) {
			t.Errorf("Resolve(%q) = %q, %v; want %q, %v", p, got, gotErr, want, wantErr)
			continue
		}
		_, sfi, serr := r.Stat(p)
		if wantErr != nil {
			continue
		}
		wfi, werr := r.r.Lstat(rel(want))
		if fi != nil && (werr != nil || !sameInfo(fi, wfi)) {
			t.Errorf("Resolve(%q) names %v, want %v (%v)", p, fi, wfi, werr)
		}
		if serr != nil || !sameInfo(sfi, wfi) {
			t.Errorf("Stat(%q) = %v, %v; want %v", p, sfi, serr, wfi)
		}
		// Open and ReadDir read, from the walk's directory, what the
		// resolved path names from the root.
		if wfi.Mode().IsRegular() {
			data, err := r.ReadFile(p, Config)
			if want, _ := os.ReadFile(filepath.Join(root, want)); err != nil || string(data) != string(want) {
				t.Errorf("ReadFile(%q) = %q, %v; want %q", p, data, err, want)
			}
		}
		if wfi.IsDir() {
			names, err := r.ReadDir(p)
			entries, _ := os.ReadDir(filepath.Join(root, want))
			if err != nil || len(names) != len(entries) {
				t.Errorf("ReadDir(%q) = %v, %v; want %d entries", p, names, err, len(entries))
			}
		}
	}
}

// sameInfo says a and b are what one lstat says of one file.
func sameInfo(a, b fs.FileInfo) bool {
	sa, oka := a.Sys().(*syscall.Stat_t)
	sb, okb := b.Sys().(*syscall.Stat_t)
	return oka && okb && sa.Dev == sb.Dev && sa.Ino == sb.Ino && a.Name() == b.Name() && a.Mode() == b.Mode() &&
		a.Size() == b.Size() && a.ModTime().Equal(b.ModTime()) && a.IsDir() == b.IsDir() && sa.Uid == sb.Uid && sa.Gid == sb.Gid
}

// What openat2's path says of a file is what os says of it, whatever the
// file's type and mode bits.
func TestBeneathInfoAsOs(t *testing.T) {
	root := t.TempDir()
	mk := func(name string, f func(string) error) {
		if err := f(filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	mk("plain", func(p string) error { return os.WriteFile(p, []byte("abc"), 0o640) })
	mk("setid", func(p string) error {
		if err := os.WriteFile(p, nil, 0o755); err != nil {
			return err
		}
		return os.Chmod(p, 0o755|os.ModeSetuid|os.ModeSetgid)
	})
	mk("sticky", func(p string) error {
		if err := os.Mkdir(p, 0o777); err != nil {
			return err
		}
		return os.Chmod(p, 0o777|os.ModeSticky)
	})
	mk("fifo", func(p string) error { return syscall.Mkfifo(p, 0o600) })
	mk("sock", func(p string) error {
		fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
		if err != nil {
			return err
		}
		defer syscall.Close(fd)
		return syscall.Bind(fd, &syscall.SockaddrUnix{Name: p})
	})
	mk("link", func(p string) error { return os.Symlink("plain", p) })
	r, err := OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, name := range []string{"plain", "setid", "sticky", "fifo", "sock", "link"} {
		res, fi, err, ok := r.statBeneath("/" + name)
		if noBeneath.Load() {
			t.Skip("no openat2 here")
		}
		target := name
		if name == "link" {
			target = "plain"
		}
		want, werr := os.Lstat(filepath.Join(root, target))
		if !ok || err != nil || werr != nil || res != "/"+target || !sameInfo(fi, want) {
			t.Errorf("%s: %q %v %v %v; os says %v %v", name, res, fi, err, ok, want, werr)
		}
	}
	// A FIFO or a socket is refused without being opened: by the walk.
	for _, name := range []string{"fifo", "sock", "sticky"} {
		if _, err, ok := r.openBeneath("/"+name, Config); ok {
			t.Errorf("%s: opened by the fast path (%v)", name, err)
		}
		if _, err := r.ReadFile("/"+name, Config); err == nil {
			t.Errorf("%s: read", name)
		}
	}
}

func sameError(a, b error) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	var pa, pb *fs.PathError
	if !errors.As(a, &pa) || !errors.As(b, &pb) {
		return a.Error() == b.Error()
	}
	return pa.Op == pb.Op && pa.Path == pb.Path && errors.Is(pa.Err, pb.Err) && errors.Is(pb.Err, pa.Err)
}

// A root that holds its walks remembers the directories it went through as
// it first saw them: one replaced since by a link out of the root is not
// followed (what was held is read, or nothing).
func TestHoldReplacedByLink(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	for dir, files := range map[string]string{root: "ours", outside: "theirs"} {
		if err := os.MkdirAll(filepath.Join(dir, "etc/a/b"), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"etc/a/b/1.conf", "etc/a/b/2.conf"} {
			if err := os.WriteFile(filepath.Join(dir, f), []byte(files), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	r, err := OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.Hold()
	if data, err := r.ReadFile("/etc/a/b/1.conf", Config); err != nil || string(data) != "ours" {
		t.Fatalf("first read: %q, %v", data, err)
	}
	if err := os.Rename(filepath.Join(root, "etc/a"), filepath.Join(root, "etc/old")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "etc/a"), filepath.Join(root, "etc/a")); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"/etc/a/b/2.conf", "/etc/a/b/1.conf"} {
		if data, err := r.ReadFile(f, Config); err == nil && string(data) != "ours" {
			t.Errorf("%s read through a link out of the root: %q", f, data)
		}
	}
}
