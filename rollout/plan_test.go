package rollout

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func names(ws []Wave) string {
	var out []string
	for _, w := range ws {
		out = append(out, w.Name+"="+strings.Join(w.Nodes, ","))
	}
	return strings.Join(out, " ")
}

func TestWaves(t *testing.T) {
	var nodes []Node
	for _, n := range []string{"n07", "n01", "n03", "n02", "n05", "n04", "n06", "n09", "n08", "n10", "n11"} {
		nodes = append(nodes, Node{Name: n, Minor: "1.37", Labels: map[string]string{"canary": map[bool]string{true: "yes", false: "no"}[n == "n05" || n == "n09"]}})
	}
	for _, c := range []struct {
		w    Waves
		want string
	}{
		{Waves{Canary: 1, Batch: "10%"}, "canary=n01 1=n02,n03 2=n04,n05 3=n06,n07 4=n08,n09 5=n10,n11"},
		{Waves{Canary: 2, Batch: "4"}, "canary=n01,n02 1=n03,n04,n05,n06 2=n07,n08,n09,n10 3=n11"},
		{Waves{Canary: 0, Batch: "50%"}, "1=n01,n02,n03,n04,n05,n06 2=n07,n08,n09,n10,n11"},
		{Waves{CanarySelector: "canary=yes", Batch: "100%"}, "canary=n05,n09 1=n01,n02,n03,n04,n06,n07,n08,n10,n11"},
		{Waves{Canary: 20, Batch: "1"}, "canary=n01,n02,n03,n04,n05,n06,n07,n08,n09,n10,n11"},
	} {
		got, err := c.w.Plan(nodes)
		if err != nil || names(got) != c.want {
			t.Errorf("%+v: %s %v, want %s", c.w, names(got), err, c.want)
		}
	}
	for _, bad := range []Waves{{Batch: "0"}, {Batch: "0%"}, {Batch: "120%"}, {Batch: "x"}, {Canary: -1}, {CanarySelector: "canary=none"}, {CanarySelector: "=="}} {
		if got, err := bad.Plan(nodes); err == nil {
			t.Errorf("%+v planned %s", bad, names(got))
		}
	}
}

var update = flag.Bool("update", false, "rewrite the golden files")

// The objects a rollout creates, in order, as --dry-run -o yaml prints
// them: compared with golden files (reviewed by hand; -update rewrites
// them).
func TestObjectsGolden(t *testing.T) {
	for _, c := range []struct {
		name string
		spec Spec
	}{
		{"dropin-drain", Spec{ID: "0c1f2e3d-t1", Namespace: "kube-system", Image: "registry.example/kubeletcfg:v1", ServiceAccount: DefaultServiceAccount,
			Change:    Change{Kind: KindDropin, Name: "50-pods.conf", File: "pods.conf", Content: []byte(header + "maxPods: 150\n")},
			APIServer: "https://10.0.0.1:6443",
			Apply: ApplyArgs{HealthTimeout: 30 * time.Second, StableFor: 10 * time.Second, Drain: true, DrainTimeout: 5 * time.Minute, GracePeriod: -1,
				Flags: []string{"--persist=patch"}},
			JobTimeout: 7*time.Minute + 30*time.Second, Soak: 30 * time.Second,
			Waves: []Wave{{Name: CanaryWave, Nodes: []string{"node-a"}}, {Name: "1", Nodes: []string{"node-b", "node-c"}}},
			Nodes: []Node{{Name: "node-a", Minor: "1.37"}, {Name: "node-b", Minor: "1.36"}, {Name: "node-c", Minor: "1.37"}}}},
		{"file-restart-command", Spec{ID: "9a8b7c6d-t2", Namespace: "kubeletcfg", Image: "kubeletcfg:dev", ServiceAccount: DefaultServiceAccount,
			Change: Change{Kind: KindFile, File: "config.yaml", Content: []byte(header + "maxPods: 110\n")},
			Apply: ApplyArgs{HealthTimeout: 20 * time.Second, StableFor: 2 * time.Second, GracePeriod: -1,
				RestartCommand: "/etc/kubelet/restart $(NODE_NAME)", PIDFile: "/run/kubelet.pid", KubeletLog: "/var/log/kubelet.log",
				From: []string{"/etc/default/kubelet"}, KubeletArgs: []string{"--config=/var/lib/kubelet/config.yaml"}},
			JobTimeout: 3 * time.Minute,
			Waves:      []Wave{{Name: "1", Nodes: []string{"edge-1"}}},
			Nodes:      []Node{{Name: "edge-1", Minor: "1.31"}}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.spec.Hash = c.spec.Change.Hash()
			got, err := c.spec.YAML()
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", c.name+".yaml")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test ./rollout -run TestObjectsGolden -update)", err)
			}
			if d := cmp.Diff(string(want), string(got)); d != "" {
				t.Errorf("%s (-want +got):\n%s", golden, d)
			}
		})
	}
}
