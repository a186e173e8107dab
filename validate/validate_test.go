package validate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/kubelet/config/v1beta1"
	"sigs.k8s.io/yaml"

	"github.com/kubeletcfg/kubeletcfg/config"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

const (
	corpusDir    = "../testdata/validate"
	referenceDir = "../testdata/reference"
)

// verdict is what the real kubelet made of one corpus case
// (hack/schemagen verdicts).
type verdict struct {
	Stage     string          `json:"stage"`
	Panic     bool            `json:"panic"`
	Errors    []string        `json:"errors"`
	Effective json.RawMessage `json:"effective"`
}

// cgroupV1Message starts the error a kubelet with failCgroupV1 gives on a
// cgroup v1 host; its presence in a reference tells which host made it.
const cgroupV1Message = "kubelet is configured to not run on a host using cgroup v1"

// loadReferences reads the reference verdicts of every version that has a
// file, keyed by minor.
func loadReferences(t *testing.T) map[string]map[string]verdict {
	t.Helper()
	refs := map[string]map[string]verdict{}
	for _, v := range schema.Versions() {
		data, err := os.ReadFile(filepath.Join(referenceDir, "verdicts-v"+v.Minor+".json"))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]verdict
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("verdicts-v%s.json: %v", v.Minor, err)
		}
		refs[v.Minor] = m
	}
	if len(refs) == 0 {
		t.Skip("no reference verdicts in " + referenceDir)
	}
	return refs
}

// referenceHost infers the host the references were made on: only a cgroup
// v1 host makes the kubelet refuse failCgroupV1.
func referenceHost(refs map[string]map[string]verdict) Host {
	for _, m := range refs {
		for _, ref := range m {
			for _, e := range ref.Errors {
				if strings.HasPrefix(e, cgroupV1Message) {
					return Host{CgroupV1: true}
				}
			}
		}
	}
	return Host{}
}

// gatePanicPrefix starts the panic of the kubelet's defaulting (1.32+) when
// the file's featureGates cannot be set; the rest is SetFromMap's error.
const gatePanicPrefix = "failed to merge global and in-flight KubeletConfiguration while setting defaults, error: "

// asGateVerdict turns a loading panic over feature gates into the verdict
// the gates would get from ValidateKubeletConfiguration: from 1.32 on the
// kubelet's defaulting sets them first, and panics, with the same error.
func asGateVerdict(ref verdict) verdict {
	if ref.Stage != "load" || !ref.Panic || len(ref.Errors) != 1 || !strings.HasPrefix(ref.Errors[0], gatePanicPrefix) {
		return ref
	}
	return verdict{Stage: "gates", Errors: []string{strings.TrimPrefix(ref.Errors[0], gatePanicPrefix)}}
}

// TestReferenceVerdicts validates, for every version with a reference file,
// the configuration the kubelet itself validated (the reference's effective
// configuration) and compares the messages with the kubelet's. Feature gate
// verdicts are compared whether the kubelet reached them in validation or
// (1.32+) in defaulting. Other cases the kubelet refused while loading
// belong to decoding and defaulting and are skipped here.
func TestReferenceVerdicts(t *testing.T) {
	forEachReference(t, func(t *testing.T, v *schema.Version, name string, ref verdict, host Host) {
		var cfg *v1beta1.KubeletConfiguration
		if ref.Stage == "gates" {
			cfg = rawCase(t, name)
		} else {
			cfg = effective(t, ref)
		}
		compareVerdict(t, v, ref, ConfigOnHost(cfg, v, host))
	})
}

// forEachReference runs check on every validation verdict of every supported
// version; a version without references fails.
func forEachReference(t *testing.T, check func(t *testing.T, v *schema.Version, name string, ref verdict, host Host)) {
	refs := loadReferences(t)
	host := referenceHost(refs)
	for _, v := range schema.Versions() {
		m, ok := refs[v.Minor]
		if !ok {
			t.Errorf("no reference verdicts for kubelet %s (run make schema)", v.Minor)
			continue
		}
		t.Run(v.Minor, func(t *testing.T) {
			for _, name := range sortedKeys(m) {
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
	forEachReference(t, func(t *testing.T, v *schema.Version, name string, ref verdict, host Host) {
		data, err := os.ReadFile(filepath.Join(corpusDir, name))
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
		abs, _ := filepath.Abs(corpusDir)
		compareVerdict(t, v, ref, ConfigOnHost(config.ResolvePaths(config.Default(doc.Config, v), v, abs), v, host))
	})
}

func skipUnlessValidationVerdict(t *testing.T, ref verdict) {
	t.Helper()
	if ref.Panic || ref.Stage == "load" {
		t.Skipf("the kubelet refused the file while loading it (decoding/defaulting): %v", ref.Errors)
	}
}

// compareVerdict compares our errors with the kubelet's.
func compareVerdict(t *testing.T, v *schema.Version, ref verdict, got []Error) {
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

// corpusPlaceholder stands for the corpus directory in the references'
// effective configurations (paths the kubelet resolved against it).
const corpusPlaceholder = "$CORPUS"

// effective decodes the configuration the kubelet validated.
func effective(t *testing.T, ref verdict) *v1beta1.KubeletConfiguration {
	t.Helper()
	dir, err := filepath.Abs(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	data := strings.ReplaceAll(string(ref.Effective), corpusPlaceholder, filepath.ToSlash(dir))
	cfg := &v1beta1.KubeletConfiguration{}
	if err := json.Unmarshal([]byte(data), cfg); err != nil {
		t.Fatalf("effective configuration: %v", err)
	}
	return cfg
}

// rawCase decodes a corpus file as written (for feature gate verdicts, which
// come before anything else).
func rawCase(t *testing.T, name string) *v1beta1.KubeletConfiguration {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(corpusDir, name))
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
	files, err := filepath.Glob(filepath.Join(corpusDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) > 120 {
		t.Errorf("%d corpus cases; keep it at 120 or fewer (each costs seconds per version to regenerate)", len(files))
	}
	refs := loadReferences(t)
	for minor, m := range refs {
		for _, f := range files {
			if _, ok := m[filepath.Base(f)]; !ok {
				t.Errorf("verdicts-v%s.json lacks %s: regenerate with SCHEMAGEN_ONLY=verdicts hack/schemagen/generate.sh", minor, filepath.Base(f))
			}
		}
	}
}
