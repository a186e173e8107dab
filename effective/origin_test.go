package effective

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/kubeletcfg/kubeletcfg/config"
	"github.com/kubeletcfg/kubeletcfg/internal/reftest"
	"github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

// TestOriginsInScenarios checks, in every scenario the kubelet accepts, that
// each field's origin could have produced its value: a flag that is on the
// command line and sets that field; a file line that names the field; a
// default that is the version's default value.
func TestOriginsInScenarios(t *testing.T) {
	for _, v := range reftest.Effective.Versions() {
		refs := reftest.Effective.Load(t, v)
		for _, name := range reftest.Names(refs) {
			if refs[name].Error != "" {
				continue
			}
			t.Run(v.Minor+"/"+name, func(t *testing.T) {
				dir := reftest.Effective.Path(v, name)
				args := reftest.Args(t, dir)
				res, err := Compute(Input{Setup: &node.Setup{Version: v, Kubelet: node.Kubelet{Args: args}, Dir: dir}, LookupEnv: reftest.Env(dir)})
				if err != nil {
					t.Fatal(err)
				}
				checkOrigins(t, v, res, args)
			})
		}
	}
}

func checkOrigins(t *testing.T, v *schema.Version, res *Result, args []string) {
	t.Helper()
	defaults := reftest.AsMap(t, v.Defaults())
	baseline := reftest.AsMap(t, v.FlagsBaseline())
	have, err := config.ToMap(res.Config, v)
	if err != nil {
		t.Fatal(err)
	}
	checkKeyOrigins(t, res, args, have, defaults, baseline)
	for path, o := range res.Origins {
		got, set := lookupPath(have, path)
		switch o.Kind {
		case "flag":
			if f, ok := v.Flag(o.Flag); !ok || f.Field != path || !hasFlag(args, o.Flag) {
				t.Errorf("%s: origin flag --%s is not on the command line or does not set it", path, o.Flag)
			}
		case "file", "dropin":
			if o.Line == 0 {
				continue // a 1.28 drop-in rewrites defaults it does not name
			}
			raw, err := os.ReadFile(o.File)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(string(raw), "\n")
			key := path[strings.LastIndex(path, ".")+1:]
			if o.Line > len(lines) || !strings.Contains(strings.ToLower(lines[o.Line-1]), strings.ToLower(key)+":") {
				t.Errorf("%s: origin %s:%d does not name %s", path, o.File, o.Line, key)
			}
		case "default", "flags-default":
			ref := defaults
			if o.Kind == "flags-default" {
				ref = baseline
			}
			want, wantSet := lookupPath(ref, path)
			if !derived(path) && (set != wantSet || set && !reflect.DeepEqual(got, want)) {
				t.Errorf("%s = %v (set %v): origin %s, whose value is %v (set %v)", path, got, set, o.Kind, want, wantSet)
			}
		}
	}
}

// checkKeyOrigins checks that every key of every map the configuration sets
// has an origin that could have produced it: a flag on the command line whose
// value names the key, a file line that names it, or a default map that holds
// the key with that value.
func checkKeyOrigins(t *testing.T, res *Result, args []string, have, defaults, baseline map[string]any) {
	t.Helper()
	for path, want := range res.KeyOrigins {
		final, _ := lookupPath(have, path)
		m, _ := final.(map[string]any)
		if len(m) != len(want) {
			t.Errorf("%s: %d keys, %d with an origin", path, len(m), len(want))
		}
		for key, o := range want {
			got, ok := m[key]
			if !ok {
				t.Errorf("%s[%s]: origin %s for a key the configuration does not have", path, key, o)
				continue
			}
			switch o.Kind {
			case "flag":
				if !flagNamesKey(args, o.Flag, key) {
					t.Errorf("%s[%s]: origin flag --%s is not on the command line with that key", path, key, o.Flag)
				}
			case "file", "dropin":
				if o.Line == 0 {
					continue // a 1.28 drop-in put the default back
				}
				raw, err := os.ReadFile(o.File)
				if err != nil {
					t.Fatal(err)
				}
				lines := strings.Split(string(raw), "\n")
				if o.Line < 1 || o.Line > len(lines) || !strings.Contains(lines[o.Line-1], key) {
					t.Errorf("%s[%s]: origin %s:%d does not name the key", path, key, o.File, o.Line)
				}
			case "default", "flags-default":
				ref := defaults
				if o.Kind == "flags-default" {
					ref = baseline
				}
				def, _ := lookupPath(ref, path)
				if dm, _ := def.(map[string]any); !derived(path) && !reflect.DeepEqual(dm[key], got) {
					t.Errorf("%s[%s] = %v: origin %s, whose value is %v", path, key, got, o.Kind, dm[key])
				}
			default:
				t.Errorf("%s[%s]: origin kind %q", path, key, o.Kind)
			}
		}
	}
}

func flagNamesKey(args []string, flag, key string) bool {
	for _, a := range args {
		n, val, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.ReplaceAll(n, "_", "-") == flag && strings.Contains(val, key) {
			return true
		}
	}
	return false
}

// derived are the fields whose default follows another field or a gate.
func derived(path string) bool {
	switch path {
	case "nodeStatusReportFrequency", "serializeImagePulls", "evictionHard", "crashLoopBackOff.maxContainerRestartPeriod", "imagePullCredentialsVerificationPolicy":
		return true
	}
	return false
}

func hasFlag(args []string, name string) bool {
	for _, a := range args {
		n, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.ReplaceAll(n, "_", "-") == name {
			return true
		}
	}
	return false
}
