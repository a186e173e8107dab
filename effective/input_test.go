package effective

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kubeletcfg/kubeletcfg/flags"
	"github.com/kubeletcfg/kubeletcfg/internal/testkit"
	"github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

const head = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"

// writeTree writes files (path relative to dir: content) and returns dir.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	if err := testkit.WriteTree(dir, files); err != nil {
		t.Fatal(err)
	}
	return dir
}

// A refusal about a word of the command line names where the word was
// written on the node; a command line given directly has no such place.
func TestComputePlacesErrors(t *testing.T) {
	s, err := node.ReadSetup(node.Source{Root: "../testdata/nodes/kubeadm-1.31", KubeletVersion: "1.31"})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.Index(s.Args, "--max-pods=150")
	s.Args = slices.Clone(s.Args)
	s.Args[i] = "--max-podz=150"
	_, err = Compute(Input{Setup: s})
	var r *Refused
	if !errors.As(err, &r) || len(r.Reasons) != 1 || !strings.HasPrefix(r.Reasons[0], s.Sources[i]+": ") {
		t.Fatalf("refusal %v does not name the env file, line and variable (%s)", err, s.Sources[i])
	}
	var fe *flags.Error
	if !errors.As(err, &fe) || fe.Arg != "--max-podz" {
		t.Errorf("the placed error lost its flags.Error: %v", err)
	}
	_, err = Compute(Input{Setup: node.Given(s.Version, "--max-podz=150")})
	if !errors.As(err, &r) || !errors.As(err, &fe) || r.Reasons[0] != fe.Error() {
		t.Errorf("a command line given directly has nowhere to point at: %v", err)
	}
}

// Drop-ins laid over the --config-dir take their place in the kubelet's
// order (a depth-first walk in byte order), replace or remove the files
// there, and go by the name of the file they were given as; nothing on
// disk changes.
func TestComputeDropinOverlays(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"config.yaml":          head + "maxPods: 100\n",
		"conf.d/10-a.conf":     head + "maxPods: 110\n",
		"conf.d/20-sub/x.conf": head + "podPidsLimit: 20\n",
		"conf.d/30-c.conf":     head + "maxPods: 130\n",
	})
	v, _ := schema.Resolve("1.37")
	s := node.Given(v, "--config="+filepath.Join(dir, "config.yaml"), "--config-dir="+filepath.Join(dir, "conf.d"))
	conf := func(name string) string { return filepath.Join(dir, "conf.d", name) }

	res, err := Compute(Input{Setup: s,
		Dropins: []Overlay{
			{Name: "25-new.conf", Content: []byte(head + "podPidsLimit: 25\nmaxPods: 125\n"), From: "new.yaml"},
			{Name: "10-a.conf", Content: []byte(head + "\nmaxPods: 111\n"), From: "a.yaml"},
			{Name: "15-b.conf", Content: []byte(head + "podPidsLimit: 15\n")},
		},
		RemoveDropins: []string{"30-c.conf", "99-absent.conf"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a.yaml", conf("15-b.conf"), conf("20-sub/x.conf"), "new.yaml"}
	if diff := cmp.Diff(want, res.Dropins); diff != "" {
		t.Errorf("drop-ins read (-want +got):\n%s", diff)
	}
	if *res.Config.PodPidsLimit != 25 || res.Config.MaxPods != 125 {
		t.Errorf("podPidsLimit %d, maxPods %d; want 25 and 125 (the new drop-in after 20-sub/x.conf, 30-c.conf gone)", *res.Config.PodPidsLimit, res.Config.MaxPods)
	}
	if o := res.Origins["maxPods"]; o.String() != "new.yaml:4" {
		t.Errorf("maxPods from %s, want new.yaml:4", o)
	}
	if b, _ := os.ReadFile(conf("10-a.conf")); !strings.Contains(string(b), "maxPods: 110") {
		t.Errorf("10-a.conf changed on disk: %q", b)
	}

	// An overlay the kubelet refuses is named by the file it was given as.
	_, err = Compute(Input{Setup: s, Dropins: []Overlay{{Name: "50-x.conf", Content: []byte("apiVersion: v1\nkind: Pod\n"), From: "pod.yaml"}}})
	if err == nil || !strings.Contains(err.Error(), "pod.yaml") {
		t.Errorf("a Pod as a drop-in: %v, want it named pod.yaml", err)
	}
	if _, err := Compute(Input{Setup: s, Dropins: []Overlay{{Name: "../x.conf"}}}); err == nil {
		t.Error("a drop-in name that is a path was taken")
	}
	if _, err := Compute(Input{Setup: node.Given(v, "--config="+filepath.Join(dir, "config.yaml")), Dropins: []Overlay{{Name: "10-a.conf", Content: []byte(head)}}}); err == nil {
		t.Error("drop-ins over a kubelet without --config-dir were taken")
	}
}

// A replaced --config file goes by its own name in origins, errors and the
// verdict, and resolves relative paths against the real file's directory.
func TestComputeConfigOverlay(t *testing.T) {
	dir := writeTree(t, map[string]string{"etc/config.yaml": head + "maxPods: 100\n"})
	v, _ := schema.Resolve("1.37")
	s := node.Given(v, "--config="+filepath.Join(dir, "etc/config.yaml"))
	res, err := Compute(Input{Setup: s, Config: []byte(head + "staticPodPath: manifests\nimageGCHighThresholdPercent: 200\n"), ConfigName: "new.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Config.StaticPodPath != filepath.Join(dir, "etc/manifests") {
		t.Errorf("staticPodPath %q, want it resolved against the --config file's directory", res.Config.StaticPodPath)
	}
	r := res.Verdict()
	if r == nil || len(r.Problems) != 1 || r.Problems[0].Origin.String() != "new.yaml:4" || !strings.Contains(r.Reasons[0], "(imageGCHighThresholdPercent from new.yaml:4)") {
		t.Fatalf("verdict %+v, want imageGCHighThresholdPercent placed at new.yaml:4", r)
	}
	_, err = Compute(Input{Setup: s, Config: []byte("a: [\n"), ConfigName: "new.yaml"})
	if err == nil || !strings.Contains(err.Error(), "path: new.yaml") {
		t.Errorf("undecodable replacement: %v, want it named new.yaml", err)
	}
	// With no --config on the command line, ConfigFile stands for it.
	res, err = Compute(Input{Setup: node.Given(v), ConfigFile: filepath.Join(dir, "etc/config.yaml")})
	if err != nil || res.Config.MaxPods != 100 || res.Origins["maxPods"].Kind != "file" {
		t.Errorf("a file on its own: %v, %+v", err, res)
	}
}

// Read as another version, the flags and gates that version no longer has
// are left out, and the other words keep their sources.
func TestComputeReadAs(t *testing.T) {
	from, _ := schema.Resolve("1.31")
	to, _ := schema.Resolve("1.37")
	s := &node.Setup{Version: from, FromNode: true, Kubelet: node.Kubelet{
		Args:    []string{"--pod-infra-container-image", "registry.k8s.io/pause:3.9", "--feature-gates=CloudDualStackNodeIPs=true", "--max-pods=7"},
		Sources: []string{"a.env:1", "a.env:1", "b.env:2", "c.env:3"},
		Env:     map[string]string{}}}
	res, err := Compute(Input{Setup: s, ReadAs: to})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.LostFlags) != 1 || res.LostFlags[0].Word != "--pod-infra-container-image registry.k8s.io/pause:3.9" {
		t.Errorf("lost flags %+v", res.LostFlags)
	}
	if len(res.DroppedGates) != 1 || res.DroppedGates[0].Name != "CloudDualStackNodeIPs" {
		t.Errorf("dropped gates %+v", res.DroppedGates)
	}
	if o := res.Origins["maxPods"]; o.From != "c.env:3" || res.Config.MaxPods != 7 {
		t.Errorf("maxPods %d from %+v, want 7 from c.env:3", res.Config.MaxPods, o)
	}
	if res.Version != to {
		t.Errorf("read as %s, want %s", res.Version.Minor, to.Minor)
	}
	s.Args[3] = "--no-such-flag=1"
	var fe *flags.Error
	if _, err := Compute(Input{Setup: s, ReadAs: to}); !errors.As(err, &fe) || fe.Arg != "--no-such-flag" {
		t.Errorf("a flag no kubelet had: %v", err)
	}
}

// A computation that reuses the drop-ins another read (apply's new
// configuration over its current one) gives what reading them again gives,
// the drop-ins laid over the directory and those removed included; it
// takes the files read, not what was laid over them.
func TestComputeReuse(t *testing.T) {
	s, err := node.ReadSetup(node.Source{Root: "../testdata/bench/node", KubeletVersion: "1.37"})
	if err != nil {
		t.Fatal(err)
	}
	newFile, err := os.ReadFile("../testdata/bench/node/new-config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	old, err := Compute(Input{Setup: s})
	if err != nil {
		t.Fatal(err)
	}
	v136, err := schema.Resolve("1.36")
	if err != nil {
		t.Fatal(err)
	}
	over := []Overlay{{Name: "05-part.conf", Content: []byte(head + "maxPods: 99\n"), From: "new.conf"}}
	n := len(old.dropins)
	for _, c := range []struct {
		in     Input
		reused int
	}{
		{Input{Setup: s, Config: newFile, ConfigName: "new-config.yaml"}, n},
		{Input{Setup: s, Dropins: over, RemoveDropins: []string{"07-part.conf"}}, n - 2},
		{Input{Setup: s, ReadAs: v136}, 0},
	} {
		in := c.in
		want, err := Compute(in)
		if err != nil {
			t.Fatal(err)
		}
		in.Reuse = old
		got, err := Compute(in)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(want, got) {
			t.Errorf("reused drop-ins differ from reading them again (-read +reused):\n%s", cmp.Diff(want, got, cmpopts.IgnoreUnexported(Result{}, Dropin{}, schema.Version{})))
		}
		reused := 0
		for _, d := range got.dropins {
			if slices.Contains(old.dropins, d) {
				reused++
			}
		}
		if n < 20 || reused != c.reused {
			t.Errorf("%d of %d drop-ins reused, want %d", reused, n, c.reused)
		}
	}
}
