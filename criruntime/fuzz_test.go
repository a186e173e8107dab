package criruntime

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kubeletcfg/kubeletcfg/nodefile"
)

// A containerd config is a file of the node: whatever it holds, reading it
// ends with an answer (a driver, a condition or a fatal cause) or an error,
// never a panic.
func FuzzContainerd(f *testing.F) {
	for _, c := range containerdCases {
		if data, err := os.ReadFile(filepath.Join("testdata", "containerd", c.name, "etc", "containerd", "config.toml")); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("version = 3\n[plugins.'io.containerd.cri.v1.runtime'.containerd]\n  default_runtime_name = 'crun'\n[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.crun.options]\n  SystemdCgroup = 'yes'\n"))
	f.Add([]byte("[plugins]\nx = [[[]]]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "etc/containerd"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "etc/containerd/config.toml"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		root, err := nodefile.OpenRoot(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer root.Close()
		a, err := Containerd(root, ContainerdOptions{})
		if err == nil && a.Fatal == "" && a.Driver != Systemd && a.Driver != Cgroupfs {
			t.Fatalf("no answer: %+v", a)
		}
	})
}
