package migrate

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/kubeletcfg/kubeletcfg/internal/reftest"
	"github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/schema"
	"github.com/kubeletcfg/kubeletcfg/validate"
)

// TestMigrationIsEquivalentForTheKubelet: for every legacy setup of the
// corpus, the kubelet's own code (hack/schemagen scenarios) layers the old
// setup (less the flags the version lacks) and kubeletcfg's migration of it
// (new config file plus remaining flags) to the same effective configuration,
// which it validates alike.
// The migrations it judged are the ones kubeletcfg writes today.
func TestMigrationIsEquivalentForTheKubelet(t *testing.T) {
	corpus, err := os.ReadDir("../testdata/migrate/corpus")
	if err != nil {
		t.Fatal(err)
	}
	if len(corpus) < 40 {
		t.Errorf("corpus has %d setups, want at least 40", len(corpus))
	}
	for _, v := range reftest.Migrate.Versions() {
		refs := reftest.Migrate.Load(t, v)
		host := validate.Host{CgroupV1: reftest.CgroupV1(refs)}
		for _, e := range corpus {
			name := e.Name()
			t.Run(v.Minor+"/"+name, func(t *testing.T) {
				res := checkCurrentOutput(t, v, name)
				old, nw := refs[name+".old"], refs[name+".new"]
				if old.Error != "" || nw.Error != "" {
					t.Fatalf("the kubelet refused a setup: old: %q, new: %q", old.Error, nw.Error)
				}
				if diff := cmp.Diff(reftest.AsMap(t, old.Effective), reftest.AsMap(t, nw.Effective)); diff != "" {
					t.Errorf("kubelet %s: effective configuration of the old setup vs the migrated one (-old +new):\n%s", v.Minor, diff)
				}
				if diff := cmp.Diff(old.Validation, nw.Validation); diff != "" {
					t.Errorf("kubelet %s: its validation of the old setup vs the migrated one (-old +new):\n%s", v.Minor, diff)
				}
				kubelet := append([]string{}, old.Validation...)
				if diff := cmp.Diff(kubelet, validate.Messages(validate.ConfigOnHost(res.Effective, v, host))); diff != "" {
					t.Errorf("kubelet %s: the verdict on the migration (-kubelet +kubeletcfg):\n%s", v.Minor, diff)
				}
			})
		}
	}
}

// checkCurrentOutput: what Run writes now is what was judged.
func checkCurrentOutput(t *testing.T, v *schema.Version, name string) *Result {
	t.Helper()
	src, _ := filepath.Abs(filepath.Join("../testdata/migrate/corpus", name))
	args := reftest.Args(t, src)
	res, err := Run(Options{ConfigPath: "new-config.yaml", Setup: &node.Setup{Version: v, Kubelet: node.Kubelet{Args: args, Env: dropinEnv(v)}, Dir: src}})
	if err != nil {
		t.Fatal(err)
	}
	dir := reftest.Migrate.Path(v, name+".new")
	doc, err := os.ReadFile(filepath.Join(dir, "new-config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var judged map[string]any
	if err := yaml.Unmarshal(doc, &judged); err != nil {
		t.Fatal(err)
	}
	now, _ := json.Marshal(res.Config)
	var current map[string]any
	_ = json.Unmarshal(now, &current)
	if diff := cmp.Diff(judged, current); diff != "" {
		t.Errorf("migrate writes another config than the one the kubelet judged (run go run ./hack/migratecorpus -migrate && make schema) (-judged +now):\n%s", diff)
	}
	judgedArgs, _ := os.ReadFile(filepath.Join(dir, "args"))
	if got := strings.Join(res.Flags, "\n") + "\n"; got != string(judgedArgs) {
		t.Errorf("remaining flags differ from the judged ones:\njudged: %q\nnow:    %q", judgedArgs, got)
	}
	return res
}

// TestEveryConfigFlagIsInTheCorpus: every config-backed flag of every
// supported version appears in some setup.
func TestEveryConfigFlagIsInTheCorpus(t *testing.T) {
	used := map[string]bool{}
	dirs, _ := filepath.Glob("../testdata/migrate/corpus/*/args")
	for _, p := range dirs {
		raw, _ := os.ReadFile(p)
		for _, a := range strings.Fields(string(raw)) {
			name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
			used[strings.ReplaceAll(name, "_", "-")] = true
		}
	}
	var missing []string
	for _, v := range schema.Versions() {
		for _, f := range v.Flags() {
			if f.Field != "" && !used[f.Name] {
				missing = append(missing, v.Minor+":"+f.Name)
			}
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("config-backed flags not in the corpus: %v", missing)
	}
}

// dropinEnv is an environment with what a --config-dir of kubelet v needs.
func dropinEnv(v *schema.Version) map[string]string {
	env := map[string]string{}
	if name := v.DropinEnv(); name != "" {
		env[name] = ""
	}
	return env
}
