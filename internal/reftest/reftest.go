// Package reftest loads what the kubelet's own code made of kubeletcfg's
// test corpora (written by make schema: hack/schemagen), for the reference
// tests of config, validate, effective and migrate. The versions come from
// the schema: a kubelet version added to schema/releases.txt is covered, and
// its reference tests fail until make schema has judged its cases.
package reftest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/kubeletcfg/kubeletcfg/schema"
)

// Corpus is a set of cases and the kubelet's references on them, one file
// per version.
type Corpus struct {
	// Name says what the corpus is, in messages.
	Name string
	// Cases is the directory of the cases (for Migrate, of one version's:
	// Cases/v1.NN), references the directory of the reference files, file
	// their name with %s for the minor; all relative to the repository.
	cases, references, file string
	// placeholder stands in the references for a case's path ("$CORPUS":
	// the cases' directory; "$SCENARIO": the case's own).
	placeholder string
	// perVersion says the cases are migrations written for some versions
	// (a directory v1.NN each), not for every one.
	perVersion bool
	// regenerate says how to make the references.
	regenerate string
}

// The corpora.
var (
	// Validate: testdata/validate/*.yaml, each used as a --config file.
	Validate = Corpus{Name: "validation corpus", cases: "testdata/validate", references: "testdata/reference",
		file: "verdicts-v%s.json", placeholder: "$CORPUS", regenerate: "make schema (SCHEMAGEN_ONLY=verdicts hack/schemagen/generate.sh)"}
	// Effective: testdata/effective/scenarios/*, each a command line, a
	// config file, drop-ins and an environment.
	Effective = Corpus{Name: "effective scenarios", cases: "testdata/effective/scenarios", references: "testdata/effective",
		file: "reference-v%s.json", placeholder: "$SCENARIO", regenerate: "make schema"}
	// Migrate: testdata/migrate/out/v1.NN/NAME.old and NAME.new, the old
	// setups of testdata/migrate/corpus and kubeletcfg's migrations of them.
	Migrate = Corpus{Name: "migrate corpus", cases: "testdata/migrate/out", references: "testdata/migrate",
		file: "reference-v%s.json", placeholder: "$SCENARIO", perVersion: true,
		regenerate: "go run ./hack/migratecorpus -migrate && make schema"}
)

// Case is what the kubelet made of one case. A validation case has Stage,
// Panic, Errors and Effective; a scenario Error, Panic, Effective and
// Validation. Paths in them are the case's own (the placeholder resolved).
type Case struct {
	// Stage is where the kubelet stopped: "load", "gates", "validate", or
	// "" when it accepts the file.
	Stage  string   `json:"stage"`
	Errors []string `json:"errors"`
	// Error is why the kubelet refused a scenario while layering it.
	Error string `json:"error"`
	Panic bool   `json:"panic"`
	// Effective is the configuration the kubelet ran with (or validated).
	Effective json.RawMessage `json:"effective"`
	// Validation are the errors of its validation of a scenario's
	// effective configuration.
	Validation []string `json:"validation"`
}

// Root is the repository's root directory.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Dir is the directory of the corpus's cases for kubelet v.
func (c Corpus) Dir(v *schema.Version) string {
	dir := filepath.Join(Root(), c.cases)
	if c.perVersion {
		dir = filepath.Join(dir, "v"+v.Minor)
	}
	return dir
}

// Path is the path of a case for kubelet v.
func (c Corpus) Path(v *schema.Version, name string) string {
	return filepath.Join(c.Dir(v), name)
}

// Versions are the kubelet versions the corpus covers: every supported
// one, or, for a corpus of migrations, those it was written for and the
// newest supported one (MigrateVersions).
func (c Corpus) Versions() []*schema.Version {
	if !c.perVersion {
		return schema.Versions()
	}
	return MigrateVersions()
}

// MigrateVersions are the versions the migrate corpus is migrated for: those
// testdata/migrate/out has, and always the newest supported one.
func MigrateVersions() []*schema.Version {
	var out []*schema.Version
	for _, v := range schema.Versions() {
		if st, err := os.Stat(Migrate.Dir(v)); (err == nil && st.IsDir()) || v == schema.Newest() {
			out = append(out, v)
		}
	}
	return out
}

// Load reads the references of kubelet v; a version without them fails the
// test, saying how to make them.
func (c Corpus) Load(t testing.TB, v *schema.Version) map[string]Case {
	t.Helper()
	refs, err := c.read(v)
	if err != nil {
		t.Fatalf("%s: the references of kubelet %s: %v (run %s)", c.Name, v.Minor, err, c.regenerate)
	}
	return refs
}

// Exists says whether kubelet v has a reference file.
func (c Corpus) Exists(v *schema.Version) bool {
	_, err := os.Stat(c.referencePath(v))
	return !errors.Is(err, fs.ErrNotExist)
}

func (c Corpus) referencePath(v *schema.Version) string {
	return filepath.Join(Root(), c.references, strings.Replace(c.file, "%s", v.Minor, 1))
}

func (c Corpus) read(v *schema.Version) (map[string]Case, error) {
	raw, err := os.ReadFile(c.referencePath(v))
	if err != nil {
		return nil, err
	}
	var refs map[string]Case
	if err := json.Unmarshal(raw, &refs); err != nil {
		return nil, err
	}
	for name, ref := range refs {
		path := c.Dir(v)
		if c.placeholder == "$SCENARIO" {
			path = c.Path(v, name)
		}
		refs[name] = ref.resolve(c.placeholder, filepath.ToSlash(path))
	}
	return refs, nil
}

func (r Case) resolve(placeholder, path string) Case {
	in := func(s string) string { return strings.ReplaceAll(s, placeholder, path) }
	r.Effective = bytes.ReplaceAll(r.Effective, []byte(placeholder), []byte(path))
	r.Error = in(r.Error)
	r.Errors = each(r.Errors, in)
	r.Validation = each(r.Validation, in)
	return r
}

func each(xs []string, f func(string) string) []string {
	if xs == nil {
		return nil
	}
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

// Names are the cases of refs, sorted.
func Names(refs map[string]Case) []string {
	names := make([]string, 0, len(refs))
	for n := range refs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// cgroupV1Message starts the error of a kubelet with failCgroupV1 on a
// cgroup v1 host.
const cgroupV1Message = "kubelet is configured to not run on a host using cgroup v1"

// CgroupV1 says the references were made on a cgroup v1 host (the host
// validate.Host describes): only there does the kubelet refuse failCgroupV1.
func CgroupV1(refs ...map[string]Case) bool {
	for _, m := range refs {
		for _, ref := range m {
			for _, e := range append(append([]string{}, ref.Errors...), ref.Validation...) {
				if strings.HasPrefix(e, cgroupV1Message) {
					return true
				}
			}
		}
	}
	return false
}

// AsMap decodes a JSON object, for comparing configurations with cmp.Diff.
func AsMap(t testing.TB, raw []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%v: %s", err, bytes.TrimSpace(raw))
	}
	return m
}

// ReadArgs reads the kubelet command line of a scenario or a corpus setup:
// its "args" file, one argument per line, as hack/schemagen runs it.
func ReadArgs(dir string) ([]string, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "args"))
	if err != nil {
		return nil, err
	}
	var args []string
	for _, l := range strings.Split(string(raw), "\n") {
		if l != "" {
			args = append(args, l)
		}
	}
	return args, nil
}

// Args is ReadArgs in a test.
func Args(t testing.TB, dir string) []string {
	t.Helper()
	args, err := ReadArgs(dir)
	if err != nil {
		t.Fatal(err)
	}
	return args
}

// Env is the kubelet's environment in a scenario: its "env" file (KEY=VALUE
// lines; none without one), as a lookup.
func Env(dir string) func(string) (string, bool) {
	env := map[string]string{}
	raw, _ := os.ReadFile(filepath.Join(dir, "env"))
	for _, l := range strings.Split(string(raw), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			env[k] = v
		}
	}
	return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}
