package apply

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestChange(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml")
	for p, c := range map[string]string{a: "maxPods: 1\n", b: "maxPods: 2\n"} {
		if err := os.WriteFile(p, []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var o Options
	o.Node = "n"
	if err := (Change{Dropins: []string{"50-a.conf=" + a, "60-b.conf=" + b}, RemoveDropins: []string{"10-x.conf"}}).Into(&o); err != nil {
		t.Fatal(err)
	}
	if o.Dropin != "50-a.conf" || string(o.NewFile) != "maxPods: 1\n" || o.NewFileName != a || len(o.MoreDropins) != 1 ||
		o.MoreDropins[0].Path != "60-b.conf" || string(o.MoreDropins[0].Content) != "maxPods: 2\n" || o.RemoveDropins[0] != "10-x.conf" {
		t.Errorf("drop-ins: %+v", o)
	}
	o = Options{Node: "n"}
	if err := (Change{Patch: b}).Into(&o); err != nil || string(o.Patch) != "maxPods: 2\n" || o.PatchName != b || o.NewFile != nil {
		t.Errorf("patch: %v %+v", err, o)
	}
	for _, bad := range []struct {
		node string
		c    Change
		want string
	}{
		{"n", Change{File: a, Dropins: []string{"x.conf=" + b}}, "give either -f"},
		{"n", Change{Dropins: []string{"x.conf"}}, "give either -f"},
		{"n", Change{File: a, Patch: b}, "--patch sets fields"},
		{"n", Change{Dropins: []string{"x.conf=" + a}, Patch: b}, "--patch sets fields"},
		{"", Change{File: a}, "--node and -f"},
		{"n", Change{}, "--node and -f"},
	} {
		if err := bad.c.Check(bad.node); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%+v: %v, want %q", bad.c, err, bad.want)
		}
	}
	o = Options{Node: "n"}
	if err := (Change{File: filepath.Join(dir, "missing.yaml")}).Into(&o); err == nil {
		t.Error("a missing file read")
	}
}

func TestStateDirOfAndRestartSpec(t *testing.T) {
	if StateDirOf("", "") != DefaultStateDir || StateDirOf("/img", "") != "/img"+DefaultStateDir || StateDirOf("/img", "/s") != "/s" {
		t.Error("StateDirOf")
	}
	for _, c := range []struct {
		r    RestartSpec
		root string
		want string
	}{
		{RestartSpec{Command: "x"}, "", "needs --pid-file"},
		{RestartSpec{}, "/img", "give --restart-command (this host's kubelet.service"},
		{RestartSpec{Command: "x", PIDFile: "/p"}, "/img", ""},
		{RestartSpec{}, "", ""},
	} {
		err := c.r.Check(c.root)
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%+v %q: %v, want %q", c.r, c.root, err, c.want)
		}
	}
	if _, ok := (RestartSpec{Command: "x", PIDFile: "/p"}).Restarter().(*commandRestarter); !ok {
		t.Error("a command: not the command's restarter")
	}
	if r, ok := (RestartSpec{}).Restarter().(*systemdRestarter); !ok || r.unit != "kubelet.service" {
		t.Error("no command: not kubelet.service")
	}
}
