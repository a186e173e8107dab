package validate

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/kubelet/config/v1beta1"
	"sigs.k8s.io/yaml"

	"github.com/kubeletcfg/kubeletcfg/config"
	"github.com/kubeletcfg/kubeletcfg/internal/reftest"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

// gatePanicPrefix starts the panic of the kubelet's defaulting (1.32+) when
// the file's featureGates cannot be set; the rest is SetFromMap's error.
const gatePanicPrefix = "failed to merge global and in-flight KubeletConfiguration while setting defaults, error: "

// asGateVerdict turns a loading panic over feature gates into the verdict
// the gates would get from ValidateKubeletConfiguration: from 1.32 on the
// kubelet's defaulting sets them first, and panics, with the same error.
func asGateVerdict(ref reftest.Case) reftest.Case {
	if ref.Stage != "load" || !ref.Panic || len(ref.Errors) != 1 || !strings.HasPrefix(ref.Errors[0], gatePanicPrefix) {
		return ref
	}
	return reftest.Case{Stage: "gates", Errors: []string{strings.TrimPrefix(ref.Errors[0], gatePanicPrefix)}}
}

// TestReferenceVerdicts validates, for every version with a reference file,
// the configuration the kubelet itself validated (the reference's effective
// configuration) and compares the messages with the kubelet's. Feature gate
// verdicts are compared whether the kubelet reached them in validation or
// (1.32+) in defaulting. Other cases the kubelet refused while loading
// belong to decoding and defaulting and are skipped here.
func TestReferenceVerdicts(t *testing.T) {
	forEachReference(t, func(t *testing.T, v *schema.Version, name string, ref reftest.Case, host Host) {
		var cfg *v1beta1.KubeletConfiguration
		if ref.Stage == "gates" {
			cfg = rawCase(t, v, name)
		} else {
			cfg = effective(t, ref)
		}
		compareVerdict(t, v, ref, ConfigOnHost(cfg, v, host))
	})
}

// forEachReference runs check on every validation verdict of every supported
// version; a version without references fails.
func forEachReference(t *testing.T, check func(t *testing.T, v *schema.Version, name string, ref reftest.Case, host Host)) {
	refs := map[*schema.Version]map[string]reftest.Case{}
	for _, v := range reftest.Validate.Versions() {
		refs[v] = reftest.Validate.Load(t, v)
	}
	host := Host{CgroupV1: reftest.CgroupV1(slices.Collect(maps.Values(refs))...)}
	for _, v := range reftest.Validate.Versions() {
		m := refs[v]
		t.Run(v.Minor, func(t *testing.T) {
			for _, name := range reftest.Names(m) {
				ref := m[name]
				t.Run(strings.TrimSuffix(name, ".yaml"), func(t *testing.T) {
					ref := asGateVerdict(ref)
					skipUnlessValidationVerdict(t, ref)
					check(t, v, name, ref, host)
				})
			}
		})
	}
}

// TestCorpusThroughConfig runs the corpus through config.Decode and
// config.Default, as kubeletcfg does, then validates: the whole pipeline
// must reach the kubelet's verdict.
func TestCorpusThroughConfig(t *testing.T) {
	forEachReference(t, func(t *testing.T, v *schema.Version, name string, ref reftest.Case, host Host) {
		data, err := os.ReadFile(reftest.Validate.Path(v, name))
		if err != nil {
			t.Fatal(err)
		}
		// The kubelet ignores fields its version lacks, and so do we.
		doc, err := config.Decode(data, config.DecodeOptions{File: name, Version: v, AllowUnknownFields: true})
		if err != nil {
			t.Fatalf("decode: %v", err)
		}
		if errs := doc.Errors(); len(errs) > 0 {
			t.Fatalf("decode problems: %v", errs)
		}
		compareVerdict(t, v, ref, ConfigOnHost(config.ResolvePaths(config.Default(doc.Config, v), v, reftest.Validate.Dir(v)), v, host))
	})
}

func skipUnlessValidationVerdict(t *testing.T, ref reftest.Case) {
	t.Helper()
	if ref.Panic || ref.Stage == "load" {
		t.Skipf("the kubelet refused the file while loading it (decoding/defaulting): %v", ref.Errors)
	}
}

// compareVerdict compares our errors with the kubelet's.
func compareVerdict(t *testing.T, v *schema.Version, ref reftest.Case, got []Error) {
	t.Helper()
	msgs := Messages(got)
	ref.Errors = unstampedVersion(v, ref.Errors)
	if ref.Stage == "gates" {
		// The kubelet returns SetFromMap's error whole: one message, or an
		// aggregate "[a, b]" in map order.
		if len(ref.Errors) != 1 || !aggregateOf(ref.Errors[0], msgs) {
			t.Errorf("feature gate verdict: kubelet %q, we %q", ref.Errors, msgs)
		}
		return
	}
	want := append([]string{}, ref.Errors...)
	sort.Strings(want)
	if want == nil {
		want = []string{}
	}
	if diff := cmp.Diff(want, msgs); diff != "" {
		t.Errorf("messages differ (-kubelet +validate):\n%s", diff)
	}
}

// unstampedMetricsVersion is what a kubelet built without version ldflags
// (gitVersion v0.0.0) offers as the only valid showHiddenMetricsForVersion:
// minor 0 minus one, as an unsigned integer. The reference generator is such
// a build; a released kubelet offers its previous minor.
const unstampedMetricsVersion = "'0.18446744073709551615'"

// unstampedVersion rewrites the generator's unstamped version to the one a
// released kubelet of v reports.
func unstampedVersion(v *schema.Version, msgs []string) []string {
	var major, minor int
	fmt.Sscanf(v.Minor, "%d.%d", &major, &minor)
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = strings.ReplaceAll(m, unstampedMetricsVersion, fmt.Sprintf("'%d.%d'", major, minor-1))
	}
	return out
}

// aggregateOf reports whether s is what utilerrors.Aggregate prints for
// msgs, in any order.
func aggregateOf(s string, msgs []string) bool {
	if len(msgs) == 1 {
		return s == msgs[0]
	}
	if len(msgs) == 0 || !strings.HasPrefix(s, "[") || !strings.HasSuffix(s, "]") {
		return false
	}
	n := 2 + 2*(len(msgs)-1)
	for _, m := range msgs {
		if !strings.Contains(s, m) {
			return false
		}
		n += len(m)
	}
	return n == len(s)
}

// effective decodes the configuration the kubelet validated.
func effective(t *testing.T, ref reftest.Case) *v1beta1.KubeletConfiguration {
	t.Helper()
	cfg := &v1beta1.KubeletConfiguration{}
	if err := json.Unmarshal(ref.Effective, cfg); err != nil {
		t.Fatalf("effective configuration: %v", err)
	}
	return cfg
}

// rawCase decodes a corpus file as written (for feature gate verdicts, which
// come before anything else).
func rawCase(t *testing.T, v *schema.Version, name string) *v1beta1.KubeletConfiguration {
	t.Helper()
	data, err := os.ReadFile(reftest.Validate.Path(v, name))
	if err != nil {
		t.Fatal(err)
	}
	cfg := &v1beta1.KubeletConfiguration{}
	if err := yaml.Unmarshal(data, cfg); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return cfg
}

// TestCorpusCoverage keeps every corpus case and every reference entry in step.
func TestCorpusCoverage(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(reftest.Validate.Dir(schema.Newest()), "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) > 120 {
		t.Errorf("%d corpus cases; keep it at 120 or fewer (each costs seconds per version to regenerate)", len(files))
	}
	for _, v := range reftest.Validate.Versions() {
		m := reftest.Validate.Load(t, v)
		for _, f := range files {
			if _, ok := m[filepath.Base(f)]; !ok {
				t.Errorf("verdicts-v%s.json lacks %s: regenerate with SCHEMAGEN_ONLY=verdicts hack/schemagen/generate.sh", v.Minor, filepath.Base(f))
			}
		}
	}
}
