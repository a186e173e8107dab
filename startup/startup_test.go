package startup

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubeletcfg/kubeletcfg/schema"
)

// Every probe finds words in some version's source, and every version's
// words have as many verbs as the probe names captures: a reworded message
// shows here, not as a silent miss.
func TestWordsOfEveryVersion(t *testing.T) {
	texts := map[string]bool{}
	ids := map[string]bool{}
	for _, c := range append(append([]Class{}, Classes...), Degradations...) {
		if ids[c.ID] {
			t.Errorf("class %s twice", c.ID)
		}
		ids[c.ID] = true
		if c.Fix == "" || c.Title == "" || c.Kind == "" {
			t.Errorf("class %s: no fix, title or kind", c.ID)
		}
		for _, p := range c.Words {
			if texts[p.Text] {
				t.Errorf("probe %q twice", p.Text)
			}
			texts[p.Text] = true
			found := false
			for _, v := range schema.Versions() {
				for _, w := range v.StartupWords()[p.Text] {
					found = true
					if n := verbs(w.Format); n < len(p.Captures) {
						t.Errorf("kubelet %s %s: %q has %d verbs, fewer than the %d captures the probe names", v.Minor, c.ID, w.Format, n, len(p.Captures))
					}
					if _, err := compileFormat(w.Format); err != nil {
						t.Errorf("kubelet %s: %q: %v", v.Minor, w.Format, err)
					}
					if !strings.Contains(w.Source, "@") || !strings.Contains(w.Source, ".go:") {
						t.Errorf("kubelet %s: %q: source %q", v.Minor, w.Format, w.Source)
					}
				}
			}
			if !found {
				t.Errorf("class %s: no kubelet version has words for %q", c.ID, p.Text)
			}
		}
	}
}

// Classes that exist only in some versions, as their source shows.
func TestClassesPerVersion(t *testing.T) {
	for _, tc := range []struct {
		minor, id string
		want      bool
	}{
		{"1.28", "gate-dependency", false},
		{"1.34", "gate-dependency", false},
		{"1.35", "gate-dependency", true},
		{"1.37", "gate-dependency", true},
		{"1.30", "cgroup-v1", false},
		{"1.31", "cgroup-v1", true},
		{"1.28", "dropin-env-missing", true},
		{"1.29", "dropin-env-missing", true},
		{"1.30", "dropin-env-missing", false},
		{"1.28", "flag-unknown", true},
		{"1.37", "cpu-manager-state", true},
	} {
		v, err := schema.Resolve(tc.minor)
		if err != nil {
			t.Fatal(err)
		}
		tab, err := For(v)
		if err != nil {
			t.Fatal(err)
		}
		if got := tab.Has(tc.id); got != tc.want {
			t.Errorf("kubelet %s has %s: %v, want %v", tc.minor, tc.id, got, tc.want)
		}
	}
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		minor, words, id string
		captures         map[string]string
		stages           int
	}{
		{"1.37", `failed to parse kubelet flag: unknown flag: --no-such-flag`, "flag-unknown", map[string]string{"flag": "no-such-flag"}, 1},
		{"1.37", `failed to parse kubelet flag: invalid argument "abc" for "--max-pods" flag: strconv.ParseInt: parsing "abc": invalid syntax`, "flag-invalid", map[string]string{"value": "abc", "flag": "--max-pods"}, 1},
		{"1.37", `failed to set feature gates from initial flags-based config: unrecognized feature gate: NoSuchGate`, "gate-unknown", map[string]string{"gate": "NoSuchGate"}, 1},
		{"1.37", `failed to merge global and in-flight KubeletConfiguration while setting defaults, error: cannot set feature gate KubeletCgroupDriverFromCRI to false, feature is locked to true`, "gate-locked", map[string]string{"gate": "KubeletCgroupDriverFromCRI", "value": "false", "locked": "true"}, 1},
		{"1.37", `failed to load kubelet config file, path: /etc/kubelet.yaml, error: failed to read kubelet config file "/etc/kubelet.yaml", error: open /etc/kubelet.yaml: no such file or directory`, "config-unreadable", map[string]string{"path": "/etc/kubelet.yaml"}, 1},
		{"1.37", `failed to run Kubelet: failed to create kubelet: could not restore state from checkpoint: configured policy "static" differs from state checkpoint policy "none", please drain this node and delete the CPU manager checkpoint file "/var/lib/kubelet/cpu_manager_state" before restarting Kubelet`, "cpu-manager-state", nil, 0},
		{"1.37", `failed to run Kubelet: failed to create kubelet: systemd not running on this host, cannot use systemd cgroups manager`, "cgroup-driver-systemd", map[string]string{}, 0},
		{"1.28", `failed to run Kubelet: running with swap on is not supported, please disable swap! or set --fail-swap-on flag to false. /proc/swaps contained: [Filename Type]`, "swap-on", map[string]string{}, 0},
		{"1.28", `invalid Node Allocatable configuration. Resource "memory" has an allocatable of {{1048576000000 0} {<nil>} 1000G DecimalSI}, capacity of {{-1040000000000 0} {<nil>}  DecimalSI}`, "reserved-beyond-capacity", map[string]string{"resource": "memory"}, 1},
		{"1.37", `something nobody knows`, "", nil, 0},
	} {
		v, _ := schema.Resolve(tc.minor)
		tab, err := For(v)
		if err != nil {
			t.Fatal(err)
		}
		m := tab.Classify(tc.words)
		if tc.id == "" {
			if m != nil {
				t.Errorf("%q: classified %s", tc.words, m.Class.ID)
			}
			continue
		}
		if m == nil {
			t.Errorf("%s %q: not classified", tc.minor, tc.words)
			continue
		}
		if m.Class.ID != tc.id {
			t.Errorf("%q: %s, want %s", tc.words, m.Class.ID, tc.id)
		}
		for k, want := range tc.captures {
			if m.Captures[k] != want {
				t.Errorf("%q: capture %s = %q, want %q", tc.words, k, m.Captures[k], want)
			}
		}
		if len(m.Stages) != tc.stages {
			t.Errorf("%q: stages %q, want %d", tc.words, m.Stages, tc.stages)
		}
	}
}

func TestCompileFormat(t *testing.T) {
	p, err := compileFormat(`cannot set feature gate %v to %v, feature is locked to %v`)
	if err != nil {
		t.Fatal(err)
	}
	got := p.match(`x: cannot set feature gate A to false, feature is locked to true`)
	if diff := cmp.Diff([]string{"A", "false", "true"}, got); diff != "" {
		t.Error(diff)
	}
	p, _ = compileFormat(`configured policy %q differs from state checkpoint policy %q`)
	got = p.match(`configured policy "static" differs from state checkpoint policy "no\"ne"`)
	if diff := cmp.Diff([]string{"static", `no"ne`}, got); diff != "" {
		t.Error(diff)
	}
	if p, _ := compileFormat("100%% sure %d"); p.match("100% sure 42")[0] != "42" {
		t.Error("escaped percent or number verb")
	}
	if got := Fill("a {x} b {y}", map[string]string{"x": "1"}); got != "a 1 b " {
		t.Errorf("Fill: %q", got)
	}
}
