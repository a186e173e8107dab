package dropins

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubeletcfg/kubeletcfg/config"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

const scenarioDir = "../testdata/effective/scenarios"

// differentialVersions are the versions whose merge models the differential
// test covers: one per drop-in model and the newest.
var differentialVersions = []string{"1.28", "1.31", "1.32", "1.34", "1.37"}

type reference struct {
	Error     string          `json:"error"`
	Panic     bool            `json:"panic"`
	Effective json.RawMessage `json:"effective"`
}

// TestEffectiveMatchesKubelet runs every scenario (a command line, a config
// file, a drop-in tree, an environment) through Effective and compares the
// verdict and the effective configuration with what the kubelet's own code
// made of it (hack/schemagen scenarios → testdata/effective/reference-*.json).
func TestEffectiveMatchesKubelet(t *testing.T) {
	for _, minor := range differentialVersions {
		v, err := schema.Resolve(minor)
		if err != nil {
			t.Fatal(err)
		}
		refs := loadReferences(t, v)
		names := make([]string, 0, len(refs))
		for n := range refs {
			names = append(names, n)
		}
		sort.Strings(names)
		if len(names) < 200 {
			t.Errorf("kubelet %s: %d scenarios, want at least 200", minor, len(names))
		}
		for _, name := range names {
			ref := refs[name]
			t.Run(minor+"/"+name, func(t *testing.T) {
				dir, _ := filepath.Abs(filepath.Join(scenarioDir, name))
				res, err := Effective(Options{Version: v, Args: scenarioArgs(t, dir), Dir: dir, LookupEnv: scenarioEnv(dir)})
				if ref.Error != "" {
					if err == nil {
						t.Fatalf("the kubelet refuses this setup (%s), kubeletcfg accepts it", ref.Error)
					}
					return
				}
				if err != nil {
					t.Fatalf("the kubelet accepts this setup, kubeletcfg refuses it: %v", err)
				}
				got, err := config.JSON(res.Config, v)
				if err != nil {
					t.Fatal(err)
				}
				want := bytes.ReplaceAll(ref.Effective, []byte("$SCENARIO"), []byte(dir))
				if diff := cmp.Diff(asMap(t, want), asMap(t, got)); diff != "" {
					t.Errorf("effective configuration (-kubelet +kubeletcfg):\n%s", diff)
				}
			})
		}
	}
}

func loadReferences(t *testing.T, v *schema.Version) map[string]reference {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("../testdata/effective", "reference-v"+v.Minor+".json"))
	if err != nil {
		t.Fatalf("reference for kubelet %s: %v (run make schema)", v.Minor, err)
	}
	refs := map[string]reference{}
	if err := json.Unmarshal(raw, &refs); err != nil {
		t.Fatal(err)
	}
	return refs
}

func scenarioArgs(t *testing.T, dir string) []string {
	raw, err := os.ReadFile(filepath.Join(dir, "args"))
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, l := range strings.Split(string(raw), "\n") {
		if l != "" {
			args = append(args, l)
		}
	}
	return args
}

func scenarioEnv(dir string) func(string) (string, bool) {
	env := map[string]string{}
	raw, _ := os.ReadFile(filepath.Join(dir, "env"))
	for _, l := range strings.Split(string(raw), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			env[k] = v
		}
	}
	return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

func asMap(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	return m
}
