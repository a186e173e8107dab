package effective

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
	"github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/schema"
	"github.com/kubeletcfg/kubeletcfg/validate"
)

const scenarioDir = "../testdata/effective/scenarios"

// differentialVersions are the versions the differential test covers: every
// supported one.
var differentialVersions = []string{"1.28", "1.29", "1.30", "1.31", "1.32", "1.33", "1.34", "1.35", "1.36", "1.37"}

type reference struct {
	Error      string          `json:"error"`
	Panic      bool            `json:"panic"`
	Effective  json.RawMessage `json:"effective"`
	Validation []string        `json:"validation"`
}

// cgroupV1Message starts the validation error of a kubelet with failCgroupV1
// on a cgroup v1 host: its presence tells which host made the references.
const cgroupV1Message = "kubelet is configured to not run on a host using cgroup v1"

// TestEffectiveMatchesKubelet runs every scenario (a command line, a config
// file, a drop-in tree, an environment) through Effective and compares the
// verdict, the effective configuration and the verdict of the kubelet's
// validation on it with what the kubelet's own code made of it
// (hack/schemagen scenarios → testdata/effective/reference-*.json). Every
// scenario must have a reference for every version.
func TestEffectiveMatchesKubelet(t *testing.T) {
	entries, err := os.ReadDir(scenarioDir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	if len(names) < 200 {
		t.Errorf("%d scenarios, want at least 200", len(names))
	}
	for _, minor := range differentialVersions {
		v, err := schema.Resolve(minor)
		if err != nil {
			t.Fatal(err)
		}
		refs := loadReferences(t, v)
		host := referenceHost(refs)
		for _, name := range names {
			ref, ok := refs[name]
			t.Run(minor+"/"+name, func(t *testing.T) {
				if !ok {
					t.Fatalf("no reference for kubelet %s (run make schema)", minor)
				}
				dir, _ := filepath.Abs(filepath.Join(scenarioDir, name))
				res, err := Compute(Input{Setup: &node.Setup{Version: v, Kubelet: node.Kubelet{Args: scenarioArgs(t, dir)}, Dir: dir}, LookupEnv: scenarioEnv(dir), Host: host})
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
				verdict := validate.Messages(validate.ConfigOnHost(res.Config, v, host))
				var kubelet []string
				for _, e := range ref.Validation {
					kubelet = append(kubelet, strings.ReplaceAll(e, "$SCENARIO", dir))
				}
				if diff := cmp.Diff(sorted(kubelet), verdict); diff != "" {
					t.Errorf("validation of the effective configuration (-kubelet +kubeletcfg):\n%s", diff)
				}
				if len(ref.Validation) > 0 && res.Verdict() == nil {
					t.Errorf("the kubelet refuses the effective configuration (%v), Verdict does not", ref.Validation)
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

// referenceHost infers the host the references were made on: only a cgroup
// v1 host makes the kubelet refuse failCgroupV1.
func referenceHost(refs map[string]reference) validate.Host {
	for _, ref := range refs {
		for _, e := range ref.Validation {
			if strings.HasPrefix(e, cgroupV1Message) {
				return validate.Host{CgroupV1: true}
			}
		}
	}
	return validate.Host{}
}

func sorted(xs []string) []string {
	out := append([]string{}, xs...)
	sort.Strings(out)
	return out
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
