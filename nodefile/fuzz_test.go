package nodefile

import (
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
