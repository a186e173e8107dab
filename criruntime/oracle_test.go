package criruntime

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	toml "github.com/pelletier/go-toml/v2"

	"github.com/kubeletcfg/kubeletcfg/nodefile"
)

// TestContainerdConfigDump checks the model's loading (versions,
// migration, imports, merging, decoding over the defaults) against the
// real containerd: `containerd config dump` prints the configuration
// containerd 2.4 would run with, no daemon needed. CONTAINERD2_DIR names
// the directory of containerd 2.4.2 (make containerd); without it the test
// is skipped (make e2e runs it).
func TestContainerdConfigDump(t *testing.T) {
	dir := os.Getenv("CONTAINERD2_DIR")
	if dir == "" {
		t.Skip("CONTAINERD2_DIR is not set (make containerd; make e2e runs this test)")
	}
	bin := filepath.Join(dir, "containerd")
	for _, c := range containerdCases {
		if c.name == "none" {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			tree := copyCase(t, c.name)
			cmd := exec.Command(bin, "--config", filepath.Join(tree, "etc/containerd/config.toml"), "config", "dump")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			runErr := cmd.Run()
			root, err := nodefile.OpenRoot("/")
			if err != nil {
				t.Fatal(err)
			}
			defer root.Close()
			model, err := Containerd(root, ContainerdOptions{Path: filepath.Join(tree, "etc/containerd/config.toml")})
			switch {
			case c.err != "":
				// The model refuses what it does not model; containerd 2.4
				// refuses it too.
				if err == nil || runErr == nil {
					t.Fatalf("model %v / %v, containerd %v: want both to refuse", model, err, runErr)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			switch {
			case strings.Contains(model.Fatal, "no such file"):
				// `config dump` passes over a missing file (the daemon
				// exits on it: the e2e test runs the daemon).
				return
			case runErr != nil || strings.Contains(model.Fatal, "containerd does not start"):
				if runErr == nil || !strings.Contains(model.Fatal, "containerd does not start") {
					t.Fatalf("containerd: %v %s; model: %s", runErr, stderr.String(), model)
				}
				return
			}
			got := fromDump(t, stdout.Bytes())
			if model.Fatal != "" {
				// The plugin's own check refuses what containerd decoded.
				if got.Fatal == "" || !strings.Contains(model.Fatal, got.Fatal) {
					t.Fatalf("from containerd's dump: %s; model: %s", got, model)
				}
				return
			}
			if got.Driver != model.Driver || got.Condition != model.Condition {
				t.Fatalf("from containerd's dump: %s; model: %s", got, model)
			}
		})
	}
}

// copyCase copies a corpus tree to a directory and points its absolute
// paths there, so that containerd reads it as it is.
func copyCase(t *testing.T, name string) string {
	dst := t.TempDir()
	src := filepath.Join("testdata", "containerd", name)
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		data = bytes.ReplaceAll(data, []byte("/etc/containerd"), []byte(filepath.Join(dst, "etc/containerd")))
		return os.WriteFile(out, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// fromDump decides the answer from containerd's own dump of the runtime
// plugin's configuration, with the same walk as the model.
func fromDump(t *testing.T, dump []byte) *Answer {
	var cfg struct {
		P        map[string]any `toml:"plugins"`
		Disabled []string       `toml:"disabled_plugins"`
	}
	if err := toml.Unmarshal(dump, &cfg); err != nil {
		t.Fatalf("containerd's dump: %v", err)
	}
	rc := criRuntime{}
	b, err := toml.Marshal(cfg.P[pluginCRIRuntime])
	if err != nil {
		t.Fatal(err)
	}
	if err := toml.Unmarshal(b, &rc); err != nil {
		t.Fatal(err)
	}
	a := &Answer{}
	for _, id := range cfg.Disabled {
		if id == pluginCRIGRPC || id == pluginCRIRuntime {
			a.Fatal = "disables " + id
			return a
		}
	}
	if err := validateRuntimes(&rc, Host{}, a); err != nil {
		a.Fatal = err.Error()
		return a
	}
	decide(&rc, Host{}, &loaded{}, a)
	return a
}
