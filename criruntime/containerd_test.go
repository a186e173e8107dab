package criruntime

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubeletcfg/kubeletcfg/nodefile"
)

// containerdCase is one node tree under testdata/containerd and what
// containerd 2.4 answers the kubelet on it. The same corpus is run through
// the real containerd by the e2e tests (containerd_e2e_test.go in e2e/).
type containerdCase struct {
	name   string
	driver string // "" with fatal or err
	why    string // a substring of Why
	cond   bool   // the answer is a condition on the host
	fatal  string // a substring of Fatal
	err    string // a substring of the error
	note   string // a substring of one note
}

var containerdCases = []containerdCase{
	{name: "none", driver: Cgroupfs, why: "containerd's default", note: "is not there"},
	{name: "v2-systemd", driver: Systemd, why: "/etc/containerd/config.toml:9"},
	{name: "v3-systemd", driver: Systemd, why: "/etc/containerd/config.toml:3"},
	{name: "v4-cgroupfs", driver: Cgroupfs, why: "/etc/containerd/config.toml:5"},
	{name: "v1-systemd", driver: Systemd, why: "/etc/containerd/config.toml:5"},
	{name: "inline-table", driver: Systemd, why: "config.toml:3"},
	{name: "default-no-options", driver: Cgroupfs, why: "runtime runc, the first in name order with runc options (the default, crun, has none)"},
	{name: "other-handler-first", driver: Systemd, why: "runtime runc, the first in name order"},
	{name: "no-runc-options", driver: Systemd, cond: true, why: "no runtime handler has runc options (kata, runc)"},
	{name: "imports", driver: Systemd, why: "/etc/containerd/conf.d/10-systemd.toml:3"},
	{name: "string-option", driver: Systemd, cond: true, note: "cannot read its runc options"},
	{name: "folded-case", driver: Systemd},
	{name: "v3-grpc-path", driver: Systemd, note: "2.0–2.2 ignore them"},
	{name: "unknown-key", driver: Systemd, note: `config.toml:2:1: containerd ignores the unknown key "colour"`},
	{name: "version5", err: "kubeletcfg models containerd 2.4, which reads versions 1 to 4"},
	{name: "syntax-error", fatal: "failed to unmarshal TOML at row 2"},
	{name: "docker-cri-disabled", fatal: "disables io.containerd.grpc.v1.cri"},
	{name: "bare-disabled-v2", fatal: `invalid plugin URI "cri"`},
	{name: "missing-default", fatal: "no corresponding runtime configured in `containerd.runtimes` for `containerd` `default_runtime_name = \"crun\""},
	{name: "wrong-type", fatal: "containerd does not start: plugins.\"io.containerd.cri.v1.runtime\": toml: cannot decode TOML string"},
	{name: "missing-import", fatal: "/etc/containerd/nothere.toml"},
}

func caseRoot(t *testing.T, name string) string {
	dir := filepath.Join("testdata", "containerd", name)
	if _, err := os.Stat(dir); os.IsNotExist(err) {
		return t.TempDir() // a node without the file
	}
	return dir
}

func TestContainerdAnswers(t *testing.T) {
	for _, c := range containerdCases {
		t.Run(c.name, func(t *testing.T) {
			root, err := nodefile.OpenRoot(caseRoot(t, c.name))
			if err != nil {
				t.Fatal(err)
			}
			defer root.Close()
			a, err := Containerd(root, ContainerdOptions{})
			checkAnswer(t, c, a, err)
		})
	}
}

func checkAnswer(t *testing.T, c containerdCase, a *Answer, err error) {
	t.Helper()
	if c.err != "" {
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Fatalf("error %v, want one with %q (answer %+v)", err, c.err, a)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if c.fatal != "" {
		if !strings.Contains(a.Fatal, c.fatal) || a.Driver != "" {
			t.Fatalf("answer %s, want fatal with %q", a, c.fatal)
		}
		return
	}
	if a.Fatal != "" || a.Driver != c.driver || (a.Condition != "") != c.cond {
		t.Fatalf("answer %s, want %s (condition %t)", a, c.driver, c.cond)
	}
	if c.cond && a.Otherwise != Cgroupfs {
		t.Errorf("otherwise %q, want cgroupfs", a.Otherwise)
	}
	if !strings.Contains(a.Why, c.why) {
		t.Errorf("why %q, want %q in it", a.Why, c.why)
	}
	if c.note != "" && !strings.Contains(strings.Join(a.Notes, "\n"), c.note) {
		t.Errorf("notes %q, want %q in one", a.Notes, c.note)
	}
}

func TestContainerdHostFacts(t *testing.T) {
	yes, no := true, false
	root, err := nodefile.OpenRoot(filepath.Join("testdata", "containerd", "no-runc-options"))
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for _, tc := range []struct {
		running *bool
		want    string
	}{{&yes, Systemd}, {&no, Cgroupfs}} {
		a, err := Containerd(root, ContainerdOptions{Host: Host{SystemdRunning: tc.running}})
		if err != nil {
			t.Fatal(err)
		}
		if a.Driver != tc.want || a.Condition != "" {
			t.Errorf("systemd running %t: %s, want %s as a fact", *tc.running, a, tc.want)
		}
	}
}

// A configuration's links and imports stay inside the root: a link out of
// it is read as the image's own path, and a file outside is never read.
func TestContainerdConfinedToRoot(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.toml")
	if err := os.WriteFile(secret, []byte("version = 3\n[plugins.\"io.containerd.cri.v1.runtime\".containerd.runtimes.runc.options]\nSystemdCgroup = true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	conf := filepath.Join(root, "etc/containerd")
	if err := os.MkdirAll(filepath.Join(conf, "conf.d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(conf, "config.toml"), []byte("version = 3\nimports = [\"/etc/containerd/conf.d/*.toml\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(filepath.Join(conf, "conf.d"), secret)
	for name, target := range map[string]string{"a.toml": secret, "b.toml": rel} {
		if err := os.Symlink(target, filepath.Join(conf, "conf.d", name)); err != nil {
			t.Fatal(err)
		}
	}
	r, err := nodefile.OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	a, err := Containerd(r, ContainerdOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The links name files the image does not have: containerd on that
	// node would not start; the file outside the root says systemd.
	if a.Driver != "" || !strings.Contains(a.Fatal, "conf.d/a.toml") {
		t.Fatalf("answer %s, want containerd not starting on the missing import", a)
	}
}

func TestContainerdLimits(t *testing.T) {
	root := t.TempDir()
	conf := filepath.Join(root, "etc/containerd")
	if err := os.MkdirAll(conf, 0o755); err != nil {
		t.Fatal(err)
	}
	big := "version = 3\n" + strings.Repeat("# padding\n", (5<<20)/10)
	if err := os.WriteFile(filepath.Join(conf, "config.toml"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	r, _ := nodefile.OpenRoot(root)
	defer r.Close()
	if _, err := Containerd(r, ContainerdOptions{}); err == nil || !strings.Contains(err.Error(), "kubeletcfg's limit") {
		t.Fatalf("err %v, want kubeletcfg's size limit", err)
	}
	// An import cycle is read once per file.
	if err := os.WriteFile(filepath.Join(conf, "config.toml"), []byte("version = 3\nimports = [\"config.toml\", \"/etc/containerd/config.toml\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if a, err := Containerd(r, ContainerdOptions{}); err != nil || a.Driver != Cgroupfs {
		t.Fatalf("cycle: %v %v", a, err)
	}
	if err := os.Remove(filepath.Join(conf, "config.toml")); err != nil {
		t.Fatal(err)
	}
	if err := syscallMkfifo(filepath.Join(conf, "config.toml")); err != nil {
		t.Skip(err)
	}
	if _, err := Containerd(r, ContainerdOptions{}); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("fifo: err %v", err)
	}
}
