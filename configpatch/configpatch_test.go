package configpatch

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/kubeletcfg/kubeletcfg/config"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

const file = `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# the node's pods
maxPods: 110 # kubeadm's
evictionHard:
  memory.available: 200Mi
  nodefs.available: 10%
clusterDNS:
- 10.96.0.10
reservedSystemCPUs: "0"
shutdownGracePeriod: 30s
shutdownGracePeriodCriticalPods: 10s
`

func opts() Options {
	v, err := schema.Resolve("1.31")
	if err != nil {
		panic(err)
	}
	return Options{File: "config.yaml", PatchFile: "patch.yaml", Version: v}
}

// fields is the file's configuration as a generic tree.
func fields(t *testing.T, text []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal(text, &m); err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	return m
}

func TestApply(t *testing.T) {
	for _, c := range []struct {
		name, patch string
		want        func(m map[string]any)
	}{
		{"a field set, the others kept", "maxPods: 150\n", func(m map[string]any) { m["maxPods"] = 150.0 }},
		{"null removes a field", "shutdownGracePeriodCriticalPods: null\n", func(m map[string]any) { delete(m, "shutdownGracePeriodCriticalPods") }},
		{"null of a field not there is nothing", "containerLogMaxSize: null\n", func(map[string]any) {}},
		{"a new field", "containerLogMaxSize: 20Mi\n", func(m map[string]any) { m["containerLogMaxSize"] = "20Mi" }},
		{"a mapping merges into a mapping", "evictionHard:\n  memory.available: 500Mi\n  nodefs.available: null\n  imagefs.available: 15%\n",
			func(m map[string]any) {
				m["evictionHard"] = map[string]any{"memory.available": "500Mi", "imagefs.available": "15%"}
			}},
		{"a list is replaced whole", "clusterDNS: [10.96.0.11, 10.96.0.12]\n", func(m map[string]any) { m["clusterDNS"] = []any{"10.96.0.11", "10.96.0.12"} }},
		{"a new mapping drops its nulls", "systemReserved: {memory: 1Gi, cpu: null}\n", func(m map[string]any) { m["systemReserved"] = map[string]any{"memory": "1Gi"} }},
		{"JSON is a patch too", `{"maxPods": 120, "reservedSystemCPUs": "0-1"}`, func(m map[string]any) { m["maxPods"] = 120.0; m["reservedSystemCPUs"] = "0-1" }},
		{"a string that reads as a number stays a string", `{"reservedSystemCPUs": "1"}`, func(m map[string]any) { m["reservedSystemCPUs"] = "1" }},
		{"the empty patch", "{}\n", func(map[string]any) {}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Apply([]byte(file), []byte(c.patch), opts())
			if err != nil {
				t.Fatal(err)
			}
			want := fields(t, []byte(file))
			c.want(want)
			if d := cmp.Diff(want, fields(t, got)); d != "" {
				t.Errorf("(-want +got)\n%s\n%s", d, got)
			}
			// The result is a valid config file of the version, and the same
			// patch again changes nothing.
			if _, err := config.Decode(got, config.DecodeOptions{File: "result", Version: opts().Version}); err != nil {
				t.Errorf("the result does not decode: %v\n%s", err, got)
			}
			again, err := Apply(got, []byte(c.patch), opts())
			if err != nil || string(again) != string(got) {
				t.Errorf("the patch applied again: %v\n%s\nwas\n%s", err, again, got)
			}
		})
	}
}

func TestApplyKeepsCommentsAndOrder(t *testing.T) {
	got, err := Apply([]byte(file), []byte("maxPods: 150\n"), opts())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# the node's pods\nmaxPods: 150 # kubeadm's\n", "reservedSystemCPUs: \"0\"\n"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("lacks %q:\n%s", want, got)
		}
	}
	if i, j := strings.Index(string(got), "maxPods"), strings.Index(string(got), "evictionHard"); i < 0 || j < i {
		t.Errorf("key order changed:\n%s", got)
	}
}

func TestApplyEmptyFile(t *testing.T) {
	got, err := Apply(nil, []byte("maxPods: 150\n"), opts())
	if err != nil || !strings.Contains(string(got), "maxPods: 150") {
		t.Errorf("%v\n%s", err, got)
	}
}

func TestApplyRefuses(t *testing.T) {
	for _, c := range []struct{ name, file, patch, want string }{
		{"unknown fields, all of them, at the patch's lines", file, "maxPods: 1\nmaxPod: 5\nsyncFrequncy: 1s\n",
			`patch.yaml:2:1: maxPod: unknown field "maxPod" (did you mean "maxPods"?)`},
		{"unknown fields, all of them (second)", file, "maxPods: 1\nmaxPod: 5\nsyncFrequncy: 1s\n", `patch.yaml:3:1: syncFrequncy: unknown field`},
		{"a nested unknown field", file, "evictionHard: {}\nauthentication:\n  anonymus: {enabled: true}\n", `patch.yaml:3:3: authentication.anonymus: unknown field`},
		{"a field twice", file, "maxPods: 1\nmaxPods: 2\n", "patch.yaml:2:1: maxPods: duplicate key"},
		{"not a mapping", file, "- maxPods\n", "patch.yaml"},
		{"apiVersion removed", file, "apiVersion: null\n", "apiVersion: null would remove it"},
		{"through a merge key", "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nbase: &b {memory: 1Gi}\nsystemReserved:\n  <<: *b\n", "systemReserved: {cpu: \"1\"}\n",
			"config.yaml:5:3: systemReserved.<<: a merge key"},
		{"a file that is not a mapping", "- a\n", "maxPods: 1\n", "config.yaml: not a mapping"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Apply([]byte(c.file), []byte(c.patch), opts())
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want an error with %q", err, c.want)
			}
		})
	}
}
