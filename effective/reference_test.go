package effective

import (
	"os"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubeletcfg/kubeletcfg/config"
	"github.com/kubeletcfg/kubeletcfg/internal/reftest"
	"github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/schema"
	"github.com/kubeletcfg/kubeletcfg/validate"
)

// TestEffectiveMatchesKubelet runs every scenario (a command line, a config
// file, a drop-in tree, an environment) through Effective and compares the
// verdict, the effective configuration and the verdict of the kubelet's
// validation on it with what the kubelet's own code made of it
// (hack/schemagen scenarios → testdata/effective/reference-*.json). Every
// scenario must have a reference for every version.
func TestEffectiveMatchesKubelet(t *testing.T) {
	entries, err := os.ReadDir(reftest.Effective.Dir(schema.Newest()))
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
	for _, v := range reftest.Effective.Versions() {
		refs := reftest.Effective.Load(t, v)
		host := validate.Host{CgroupV1: reftest.CgroupV1(refs)}
		for _, name := range names {
			ref, ok := refs[name]
			t.Run(v.Minor+"/"+name, func(t *testing.T) {
				if !ok {
					t.Fatalf("no reference for kubelet %s (run make schema)", v.Minor)
				}
				dir := reftest.Effective.Path(v, name)
				res, err := Compute(Input{Setup: &node.Setup{Version: v, Kubelet: node.Kubelet{Args: reftest.Args(t, dir)}, Dir: dir}, LookupEnv: reftest.Env(dir), Host: host})
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
				if diff := cmp.Diff(reftest.AsMap(t, ref.Effective), reftest.AsMap(t, got)); diff != "" {
					t.Errorf("effective configuration (-kubelet +kubeletcfg):\n%s", diff)
				}
				verdict := validate.Messages(validate.ConfigOnHost(res.Config, v, host))
				if diff := cmp.Diff(sorted(ref.Validation), verdict); diff != "" {
					t.Errorf("validation of the effective configuration (-kubelet +kubeletcfg):\n%s", diff)
				}
				if len(ref.Validation) > 0 && res.Verdict() == nil {
					t.Errorf("the kubelet refuses the effective configuration (%v), Verdict does not", ref.Validation)
				}
			})
		}
	}
}

func sorted(xs []string) []string {
	out := append([]string{}, xs...)
	sort.Strings(out)
	return out
}
