// Package schema holds what each supported kubelet minor version knows: its
// KubeletConfiguration fields, the defaults it applies, its feature gates, its
// command-line flags and the traits of its configuration loading. The data is
// generated from the kubelet's own code by `make schema` (hack/schemagen) and
// embedded; nothing here is typed by hand, and no other package knows versions.
package schema

import (
	"bufio"
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	goversion "github.com/hashicorp/go-version"
)

//go:embed releases.txt data/legacy-*.json data/docs/*.json
var files embed.FS

// Field is one JSON path of the v1beta1 KubeletConfiguration. Paths of list
// elements end in "[]" (registerWithTaints[].key), of map values in "{}".
type Field struct {
	Path    string `json:"path"`
	Type    string `json:"type"`
	Pointer bool   `json:"pointer,omitempty"`
}

// Gate is a feature gate as the kubelet registers it.
type Gate struct {
	Name    string `json:"name"`
	Default bool   `json:"default"`
	Stage   string `json:"stage"` // ALPHA, BETA, GA, DEPRECATED
	Locked  bool   `json:"locked,omitempty"`
	// DependsOn lists the gates this one needs enabled (from 1.35 on).
	DependsOn []string `json:"dependsOn,omitempty"`
}

// Flag is one kubelet command-line flag. Field is the JSON path of the
// configuration field it sets, or empty for a flag with no config field.
type Flag struct {
	Name        string `json:"name"`
	Shorthand   string `json:"shorthand,omitempty"`
	Type        string `json:"type"`
	GoType      string `json:"goType"` // the kubelet's flag value type, e.g. *flag.LangleSeparatedMapStringString
	Default     string `json:"default"`
	NoOptDefVal string `json:"noOptDefVal,omitempty"`
	Deprecated  string `json:"deprecated,omitempty"`
	Hidden      bool   `json:"hidden,omitempty"`
	Field       string `json:"field,omitempty"`
}

// BelongsInConfigFile says the kubelet deprecates the flag only because its
// field belongs in the --config file (its notice says so).
func (f Flag) BelongsInConfigFile() bool {
	return f.Field != "" && strings.Contains(f.Deprecated, "config file")
}

// GatedDefault: when Gate is set to Enabled (the opposite of its default), the
// defaulting code fills Values (top-level field → value) instead.
type GatedDefault struct {
	Gate    string          `json:"gate"`
	Enabled bool            `json:"enabled"`
	Values  json.RawMessage `json:"values"`
}

// MergeVariant names how a kubelet release merges --config-dir drop-ins.
type MergeVariant string

const (
	// LoadAndCopy (1.28): each drop-in is loaded and defaulted like a main
	// config file, then copied over the base.
	LoadAndCopy MergeVariant = "load-and-copy"
	// InternalMergePatch (1.29–1.31): RFC 7386 merge patches onto the JSON of
	// the internal configuration.
	InternalMergePatch MergeVariant = "internal-merge-patch"
	// VersionedMergePatch (1.32+): merge patches onto the v1beta1 JSON, then
	// non-strict decoding and defaulting.
	VersionedMergePatch MergeVariant = "versioned-merge-patch"
)

type data struct {
	Fields        []Field           `json:"fields"`
	Defaults      json.RawMessage   `json:"defaults"`
	FlagsBaseline json.RawMessage   `json:"flagsBaseline"`
	GatedDefaults []GatedDefault    `json:"gatedDefaults"`
	FeatureGates  []Gate            `json:"featureGates"`
	Flags         []Flag            `json:"flags"`
	Behaviour     map[string]string `json:"behaviour"`
	PathFields    []string          `json:"pathFields"`
	// RegisterResets: fields that registering the flags sets to a value.
	RegisterResets map[string]json.RawMessage `json:"registerResets"`
}

// Version is one supported kubelet minor version.
type Version struct {
	Minor   string // "1.37"
	Release string // the k8s.io/kubernetes release the data was read from

	once      sync.Once
	flagsOnce sync.Once
	docsOnce  sync.Once
	docsData  *docs
	err       error
	d         data
	fields    map[string]*Field
	gates     map[string]*Gate
	flags     map[string]*Flag
}

var (
	releasesOnce sync.Once
	releases     []*Version
)

func all() []*Version {
	releasesOnce.Do(func() {
		raw, err := files.ReadFile("releases.txt")
		if err != nil {
			panic(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(raw))
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			parts := strings.Fields(line)
			releases = append(releases, &Version{Minor: parts[0], Release: parts[1]})
		}
		sort.Slice(releases, func(i, j int) bool { return minorLess(releases[i].Minor, releases[j].Minor) })
	})
	return releases
}

func minorLess(a, b string) bool {
	if x, ok := plainMinor(a); ok {
		if y, ok := plainMinor(b); ok {
			return x[0] < y[0] || (x[0] == y[0] && x[1] < y[1])
		}
	}
	return parseMinor(a).LessThan(parseMinor(b))
}

// Segments are the numbers of version s (1.31, 1.31.4, 1.31.4-rc.0) as
// go-version reads them, at least three. Two or three plain numbers are read
// without the regular expression go-version compiles on first use.
func Segments(s string) ([]int, error) {
	if parts := strings.Split(s, "."); len(parts) == 2 || len(parts) == 3 {
		seg := make([]int, 3)
		plain := true
		for i, part := range parts {
			n, ok := plainNumber(part)
			plain = plain && ok
			seg[i] = n
		}
		if plain {
			return seg, nil
		}
	}
	parsed, err := goversion.NewVersion(s)
	if err != nil {
		return nil, err
	}
	return parsed.Segments(), nil
}

// plainNumber reads up to nine decimal digits.
func plainNumber(s string) (int, bool) {
	if s == "" || len(s) > 9 {
		return 0, false
	}
	n := 0
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// plainMinor reads "MAJOR.MINOR" (decimal digits only, as go-version
// compares them: by number), without the regular expression parseMinor
// runs; false for anything else.
func plainMinor(s string) ([2]int, bool) {
	var out [2]int
	major, minor, ok := strings.Cut(s, ".")
	if !ok {
		return out, false
	}
	for i, part := range []string{major, minor} {
		if out[i], ok = plainNumber(part); !ok {
			return out, false
		}
	}
	return out, true
}

// parsedMinors caches parseMinor: the rules tables compare minors many times,
// and parsing one runs a regular expression.
var parsedMinors sync.Map

func parseMinor(s string) *goversion.Version {
	if v, ok := parsedMinors.Load(s); ok {
		return v.(*goversion.Version)
	}
	v, err := goversion.NewVersion(s)
	if err == nil {
		parsedMinors.Store(s, v)
	}
	return v
}

// Supported lists the supported minors, oldest first.
func Supported() []string {
	var out []string
	for _, v := range all() {
		out = append(out, v.Minor)
	}
	return out
}

// Versions returns every supported version, oldest first.
func Versions() []*Version { return all() }

// Newest is the newest supported version.
func Newest() *Version { v := all(); return v[len(v)-1] }

// Resolve accepts "1.31", "v1.31.4" or "1.31.4" and returns that minor.
func Resolve(s string) (*Version, error) {
	seg, err := Segments(strings.TrimPrefix(strings.TrimSpace(s), "v"))
	if err != nil {
		return nil, fmt.Errorf("kubelet version %q: not a version like 1.31, 1.31.4 or v1.31.4", s)
	}
	minor := fmt.Sprintf("%d.%d", seg[0], seg[1])
	for _, v := range all() {
		if v.Minor == minor {
			return v, nil
		}
	}
	return nil, fmt.Errorf("kubelet version %s is not supported; supported: %s", s, strings.Join(Supported(), ", "))
}

func (v *Version) load() error {
	v.once.Do(func() {
		t := tableOf(v.Minor)
		if t == nil {
			v.err = fmt.Errorf("schema data for kubelet %s: no table (run make schema)", v.Minor)
			return
		}
		v.d = t.data()
		v.fields = make(map[string]*Field, len(v.d.Fields))
		for i := range v.d.Fields {
			v.fields[v.d.Fields[i].Path] = &v.d.Fields[i]
		}
		v.gates = make(map[string]*Gate, len(v.d.FeatureGates))
		for i := range v.d.FeatureGates {
			v.gates[v.d.FeatureGates[i].Name] = &v.d.FeatureGates[i]
		}
	})
	return v.err
}

// flagList is the flags, indexed by name on first use.
func (v *Version) flagList() []Flag {
	v.mustLoad()
	v.flagsOnce.Do(func() {
		v.flags = make(map[string]*Flag, len(v.d.Flags))
		for i := range v.d.Flags {
			v.flags[v.d.Flags[i].Name] = &v.d.Flags[i]
		}
	})
	return v.d.Flags
}

func (v *Version) mustLoad() {
	if err := v.load(); err != nil {
		// The data is embedded at build time; failing to read it is a build defect.
		panic(err)
	}
}

func (v *Version) String() string { return v.Minor }

// AtLeast reports whether v is minor or newer.
func (v *Version) AtLeast(minor string) bool { return !minorLess(v.Minor, minor) }

// Fields lists every field path this version has.
func (v *Version) Fields() []Field { v.mustLoad(); return v.d.Fields }

// Field looks a JSON path up ("authentication.webhook.cacheTTL").
func (v *Version) Field(path string) (Field, bool) {
	v.mustLoad()
	f, ok := v.fields[path]
	if !ok {
		return Field{}, false
	}
	return *f, true
}

// Defaults is the configuration this version runs with when given a --config
// file that sets nothing (v1beta1 JSON, as /configz would serve it).
func (v *Version) Defaults() json.RawMessage { v.mustLoad(); return v.d.Defaults }

// FlagsBaseline is the configuration the kubelet starts from when it has no
// --config file: the legacy flag defaults.
func (v *Version) FlagsBaseline() json.RawMessage { v.mustLoad(); return v.d.FlagsBaseline }

// GatedDefaults lists defaults that depend on feature gates.
func (v *Version) GatedDefaults() []GatedDefault { v.mustLoad(); return v.d.GatedDefaults }

// Gates lists the feature gates of this version, by name.
func (v *Version) Gates() []Gate { v.mustLoad(); return v.d.FeatureGates }

// Gate looks a feature gate up by its exact name.
func (v *Version) Gate(name string) (Gate, bool) {
	v.mustLoad()
	g, ok := v.gates[name]
	if !ok {
		return Gate{}, false
	}
	return *g, true
}

// Flags lists the kubelet's command-line flags, by name.
func (v *Version) Flags() []Flag { return v.flagList() }

// Flag looks a flag up by its normalized name (underscores as dashes).
func (v *Version) Flag(name string) (Flag, bool) {
	v.flagList()
	f, ok := v.flags[strings.ReplaceAll(name, "_", "-")]
	if !ok {
		return Flag{}, false
	}
	return *f, true
}

// FlagForField returns the flag that sets a config field, if there is one.
func (v *Version) FlagForField(path string) (Flag, bool) {
	for _, f := range v.flagList() {
		if f.Field == path {
			return f, true
		}
	}
	return Flag{}, false
}

// PathFields lists the fields whose relative paths the kubelet resolves
// against the directory of the --config file.
func (v *Version) PathFields() []string { v.mustLoad(); return v.d.PathFields }

// RegisterResets lists the fields (JSON path → value) that the kubelet sets
// when it registers its flags over a loaded configuration to re-apply the
// command line: their values in the --config file and drop-ins are lost.
func (v *Version) RegisterResets() map[string]json.RawMessage {
	v.mustLoad()
	return v.d.RegisterResets
}

// DropinMerge is how this version merges --config-dir drop-ins.
func (v *Version) DropinMerge() MergeVariant {
	v.mustLoad()
	return MergeVariant(v.d.Behaviour["dropinMerge"])
}

// DropinEnv names the environment variable that must be set for --config-dir
// to be accepted, or "" when none is needed.
func (v *Version) DropinEnv() string { v.mustLoad(); return v.d.Behaviour["dropinEnv"] }

// MergesDefaultEvictionSettings reports whether the version has the
// mergeDefaultEvictionSettings field.
func (v *Version) MergesDefaultEvictionSettings() bool {
	v.mustLoad()
	return v.d.Behaviour["mergeDefaultEvictionSettings"] == "true"
}

// FieldAddedIn returns the oldest supported version that has the field path,
// or "" when none has it.
func FieldAddedIn(path string) string {
	for _, v := range all() {
		if _, ok := v.Field(path); ok {
			return v.Minor
		}
	}
	return ""
}

// FieldRemovedIn returns the first version after one that had the field and
// does not have it any more, or "".
func FieldRemovedIn(path string) string {
	had := false
	for _, v := range all() {
		_, ok := v.Field(path)
		if had && !ok {
			return v.Minor
		}
		had = had || ok
	}
	return ""
}

// FlagRemovedIn returns the first supported version without a flag that an
// older supported version had, or "".
func FlagRemovedIn(name string) string {
	had := false
	for _, v := range all() {
		_, ok := v.Flag(name)
		if had && !ok {
			return v.Minor
		}
		had = had || ok
	}
	return ""
}

// CheckGates checks feature gate settings as the kubelet's feature gate does
// when it takes them: every unknown gate and every locked gate set to the
// other value is an error, in the kubelet's words, sorted.
func (v *Version) CheckGates(set map[string]bool) []string {
	v.mustLoad()
	var errs []string
	for name, on := range set {
		g, ok := v.gates[name]
		switch {
		case !ok:
			errs = append(errs, fmt.Sprintf("unrecognized feature gate: %s", name))
		case g.Locked && g.Default != on:
			errs = append(errs, fmt.Sprintf("cannot set feature gate %v to %v, feature is locked to %v", name, on, g.Default))
		}
	}
	sort.Strings(errs)
	return errs
}

// SetGates is the verdict of the kubelet's feature gate on taking the
// settings in set all at once (featuregate's SetFromMap): the errors of
// CheckGates, else, where the version records dependencies, every enabled
// gate whose dependencies are not all enabled.
func (v *Version) SetGates(set map[string]bool) []string {
	if errs := v.CheckGates(set); len(errs) > 0 {
		return errs
	}
	var errs []string
	for _, g := range v.Gates() {
		if len(g.DependsOn) == 0 || !v.GateEnabled(g.Name, set) {
			continue
		}
		var disabled []string
		for _, dep := range g.DependsOn {
			if !v.GateEnabled(dep, set) {
				disabled = append(disabled, dep)
			}
		}
		if len(disabled) > 0 {
			errs = append(errs, fmt.Sprintf("%s is enabled, but depends on features that are disabled: %v", g.Name, disabled))
		}
	}
	sort.Strings(errs)
	return errs
}

// DefaultingChecksGates reports whether this version's defaulting takes the
// config's feature gates itself: then a bad gate makes the kubelet panic while
// loading its config file instead of failing with an error.
func (v *Version) DefaultingChecksGates() bool {
	v.mustLoad()
	return v.d.Behaviour["defaultingChecksGates"] == "true"
}

// LegacyFlag is a flag of a kubelet older than the supported versions that
// no supported version has (hack/legacyflags reads them from the source of
// the old releases).
type LegacyFlag struct {
	Name       string `json:"name"`
	Type       string `json:"type"` // bool, or the kind of value it takes
	LastIn     string `json:"lastIn"`
	Deprecated string `json:"deprecated,omitempty"`
}

var (
	legacyOnce sync.Once
	legacy     map[string]LegacyFlag
)

// Legacy looks up a flag that went away before the oldest supported version.
func Legacy(name string) (LegacyFlag, bool) {
	legacyOnce.Do(func() {
		legacy = byName("data/legacy-flags.json", func(f LegacyFlag) string { return f.Name })
	})
	name = strings.ReplaceAll(name, "_", "-")
	for _, v := range all() {
		if _, ok := v.Flag(name); ok {
			return LegacyFlag{}, false
		}
	}
	f, ok := legacy[name]
	return f, ok
}

// GoneGate is a feature gate a kubelet version does not have any more, as
// the last release that had it declared it.
type GoneGate struct {
	Name    string `json:"name"`
	LastIn  string `json:"lastIn"`
	Default bool   `json:"default"`
	Stage   string `json:"stage"`
	Locked  bool   `json:"locked,omitempty"`
}

// Dropping says what leaving out a setting of the gate to value means for
// kubelet v, judged on the last kubelet that had the gate.
func (g GoneGate) Dropping(v *Version, value bool) string {
	reason := fmt.Sprintf("kubelet %s has no feature gate %s: the last kubelet with it was %s", v.Minor, g.Name, g.LastIn)
	switch {
	case g.Locked && g.Default == value:
		return reason + fmt.Sprintf(", where it was %s and locked to %t: dropping the setting changes nothing", g.Stage, g.Default)
	case g.Default == value:
		return reason + fmt.Sprintf(", where it was %s and %t by default, as set here: dropping the setting changes nothing on that kubelet", g.Stage, g.Default)
	}
	state := "off"
	if value {
		state = "on"
	}
	return reason + fmt.Sprintf(", where it was %s and %t by default; this setup sets it to %t: dropping the setting changes behaviour (kubelet %s cannot turn the feature %s)", g.Stage, g.Default, value, v.Minor, state)
}

var (
	legacyGatesOnce sync.Once
	legacyGates     map[string]GoneGate
)

// RemovedGate looks up a gate v does not have that an older kubelet had: the
// newest supported version before v with it, else the legacy releases
// (hack/legacyflags). A gate only newer kubelets have was not removed.
func (v *Version) RemovedGate(name string) (GoneGate, bool) {
	if _, ok := v.Gate(name); ok {
		return GoneGate{}, false
	}
	versions := all()
	for i := len(versions) - 1; i >= 0; i-- {
		old := versions[i]
		if !minorLess(old.Minor, v.Minor) {
			continue
		}
		if g, ok := old.Gate(name); ok {
			return GoneGate{Name: name, LastIn: old.Minor, Default: g.Default, Stage: g.Stage, Locked: g.Locked}, true
		}
	}
	legacyGatesOnce.Do(func() {
		legacyGates = byName("data/legacy-gates.json", func(g GoneGate) string { return g.Name })
	})
	g, ok := legacyGates[name]
	return g, ok
}

// byName reads an embedded JSON list into a map keyed by name. The data is
// embedded at build time; failing to read it is a build defect.
func byName[T any](file string, name func(T) string) map[string]T {
	raw, err := files.ReadFile(file)
	if err != nil {
		panic(err)
	}
	var list []T
	if err := json.Unmarshal(raw, &list); err != nil {
		panic(err)
	}
	out := make(map[string]T, len(list))
	for _, x := range list {
		out[name(x)] = x
	}
	return out
}

type docs struct {
	Fields map[string]string `json:"fields"`
	Flags  map[string]string `json:"flags"`
}

// Doc is the upstream description of a field; the descriptions are kept
// apart from the rest of the data and read only when asked for.
func (v *Version) Doc(path string) string { return v.docs().Fields[path] }

// Usage is the kubelet's help text of a flag.
func (v *Version) Usage(flag string) string { return v.docs().Flags[flag] }

func (v *Version) docs() *docs {
	v.docsOnce.Do(func() {
		v.docsData = &docs{}
		raw, err := files.ReadFile("data/docs/v" + v.Minor + ".json")
		if err == nil {
			err = json.Unmarshal(raw, v.docsData)
		}
		if err != nil {
			panic(fmt.Sprintf("schema docs for kubelet %s: %v", v.Minor, err))
		}
	})
	return v.docsData
}

// GateEnabled is the kubelet's feature gate's answer for a gate after it took
// the settings in set: the setting, else the one AllAlpha or AllBeta gives
// the gate's stage, else the default. A gate the version lacks is off.
func (v *Version) GateEnabled(name string, set map[string]bool) bool {
	if on, ok := set[name]; ok {
		return on
	}
	g, ok := v.Gate(name)
	if !ok {
		return false
	}
	if !g.Locked && name != "AllAlpha" && name != "AllBeta" {
		switch g.Stage {
		case "ALPHA":
			if on, ok := set["AllAlpha"]; ok {
				return on
			}
		case "BETA":
			if on, ok := set["AllBeta"]; ok {
				return on
			}
		}
	}
	return g.Default
}
