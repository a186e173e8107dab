// Package audit judges a kubelet's effective configuration — flags, config
// file, drop-ins and the version's defaults, or the flags-only baseline — and
// its files on the node against the kubelet checks of the CIS Kubernetes
// Benchmark (sections 4.1 and 4.2) and against operational rules, each
// result with the value, where it came from and the change that fixes it.
package audit

import (
	"encoding/json"
	"fmt"
	"path"
	"reflect"
	"strings"

	"k8s.io/kubelet/config/v1beta1"

	"github.com/kubeletcfg/kubeletcfg/config"
	"github.com/kubeletcfg/kubeletcfg/effective"
	"github.com/kubeletcfg/kubeletcfg/flags"
	"github.com/kubeletcfg/kubeletcfg/kubeadm"
	"github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/nodefile"
	"github.com/kubeletcfg/kubeletcfg/schema"
	"github.com/kubeletcfg/kubeletcfg/warning"
)

// Status is the outcome of one check.
type Status string

const (
	Pass   Status = "pass"
	Fail   Status = "fail"
	Warn   Status = "warn"
	Manual Status = "manual" // needs a person: what the node holds is not enough to decide
	// NotApplicable is a rule the profile itself does not apply to this
	// node or kubelet (the STIG's V-242397 on a control-plane node).
	NotApplicable Status = "n/a"
)

// Sections of the audit: a benchmark's checks (CIS or the STIG, as
// --benchmark picks) and the operational rules.
const (
	SectionCIS  = "cis"
	SectionSTIG = "stig"
	SectionOps  = "ops"
	// SectionBenchmark stands for the checks of the profile picked, CIS or
	// STIG alike (--section cis or stig mean it too).
	SectionBenchmark = "benchmark"
)

// Fix is one config field set to the value that makes a check pass.
type Fix struct {
	Field string `json:"field"`
	Value any    `json:"value"`
}

// Result is one check's outcome, with what it rests on.
type Result struct {
	ID      string `json:"id"`
	Section string `json:"section"`
	Title   string `json:"title"`
	Status  Status `json:"status"`
	// Value is the effective value judged, Origin where it came from (as
	// effective --show-origin names it).
	Value  string `json:"value"`
	Origin string `json:"origin,omitempty"`
	// Detail says what was found when the value alone does not.
	Detail string `json:"detail,omitempty"`
	// Reason says, for an operational rule, why it matters.
	Reason string `json:"reason,omitempty"`
	// Remediation is the change to make, when the check does not pass.
	Remediation string `json:"remediation,omitempty"`
	// Fixes are the config fields that make it pass (audit --fix-to).
	Fixes []Fix `json:"fixes,omitempty"`
}

// Options say what to audit.
type Options struct {
	// Setup is the node's kubelet setup: version, command line and where
	// each argument was written, environment, root. Its Files, the unit,
	// its drop-ins and the environment files, are judged too.
	Setup *node.Setup
	// Benchmark is "auto" (or "") for the benchmark of the kubelet version,
	// or one of Benchmarks().
	Benchmark string
	// Sections are SectionBenchmark (or SectionCIS, SectionSTIG: the same)
	// and/or SectionOps; nil means both.
	Sections []string
	// PodCIDR is the node's pod CIDR (its spec.podCIDR) when known; else the
	// config's podCIDR is used.
	PodCIDR string
	// Kubeadm says where kubeadm's inputs are, to judge what the next
	// kubeadm upgrade node does with config.yaml (nil: not looked at).
	Kubeadm *kubeadm.NodeOptions
}

// Report is an audit.
type Report struct {
	KubeletVersion string   `json:"kubeletVersion"`
	Benchmark      string   `json:"benchmark"`
	Notes          []string `json:"notes,omitempty"`
	Results        []Result `json:"results"`
	// ConfigFile is the --config file as the kubelet names it ("" for none).
	ConfigFile string `json:"configFile,omitempty"`

	root     string
	version  *schema.Version
	origins  map[string]effective.Origin
	warnings []warning.Warning
}

// Warnings are what layering the setup reported (dropped keys, shadowed
// values), for the caller to show.
func (r *Report) Warnings() []warning.Warning { return r.warnings }

// Count returns how many results have status st.
func (r *Report) Count(st Status) int {
	n := 0
	for _, res := range r.Results {
		if res.Status == st {
			n++
		}
	}
	return n
}

// state is what a check looks at.
type state struct {
	v      *schema.Version
	b      *benchmark
	cfg    *v1beta1.KubeletConfiguration
	values map[string]any // cfg as the kubelet prints it
	// The rest is nil or empty when only a configuration is judged (the
	// security gate of diff, migrate and apply).
	eff  *effective.Result
	opts *Options
	// cl is the command line parsed; fileOnly
	// is the layering of the config file and its drop-ins alone (the
	// STIG's "config file"), made when first asked for.
	cl       *flags.CommandLine
	fileOnly *fileLayer
	// trees are the drop-in trees walked; root is the node's root the
	// checks look at files through (look).
	trees   trees
	root    *nodefile.Root
	kubeadm *kubeadm.Assessment
}

// Run audits a kubelet's setup.
func Run(opts Options) (*Report, error) {
	if opts.Setup == nil || opts.Setup.Version == nil {
		return nil, fmt.Errorf("audit: no kubelet setup to audit")
	}
	v := opts.Setup.Version
	b, note, err := pickBenchmark(opts.Benchmark, v)
	if err != nil {
		return nil, err
	}
	sections, err := sectionSet(opts.Sections)
	if err != nil {
		return nil, err
	}
	walked := trees{}
	if err := confine(opts.Setup, walked); err != nil {
		return nil, err
	}
	eff, err := effective.Compute(effective.Input{Setup: opts.Setup})
	if err != nil {
		return nil, err
	}
	s, err := newState(v, b, eff.Config)
	if err != nil {
		return nil, err
	}
	s.eff, s.opts, s.trees = eff, &opts, walked
	defer s.close()
	if s.cl, err = flags.Parse(opts.Setup.Args, v); err != nil {
		return nil, err
	}
	if s.kubeadm, err = assessKubeadm(opts, eff); err != nil {
		return nil, fmt.Errorf("kubeadm: %w", err)
	}
	rep := &Report{KubeletVersion: v.Minor, Benchmark: b.name, ConfigFile: eff.ConfigFile,
		root: opts.Setup.Root, version: v, origins: eff.Origins, warnings: eff.Warnings}
	if note != "" {
		rep.Notes = append(rep.Notes, note)
	}
	if b.section == SectionSTIG {
		rep.Notes = append(rep.Notes, stigNote)
	}
	if eff.ConfigFile == "" {
		rep.Notes = append(rep.Notes, "no --config file: the kubelet runs on its flags-only defaults, which differ from a config file's (anonymous auth on, AlwaysAllow, read-only port 10255)")
	}
	for _, c := range checks {
		want := sections[SectionBenchmark]
		if c.section == SectionOps {
			want = sections[SectionOps]
		}
		if !want || !c.in(b) {
			continue
		}
		rep.Results = append(rep.Results, s.judge(c))
	}
	return rep, nil
}

func sectionSet(names []string) (map[string]bool, error) {
	if len(names) == 0 {
		return map[string]bool{SectionBenchmark: true, SectionOps: true}, nil
	}
	out := map[string]bool{}
	for _, n := range names {
		switch n {
		case SectionBenchmark, SectionCIS, SectionSTIG:
			out[SectionBenchmark] = true
		case SectionOps:
			out[SectionOps] = true
		default:
			return nil, fmt.Errorf("--section %q: must be %s (or %s, %s: the profile --benchmark picks) or %s", n, SectionBenchmark, SectionCIS, SectionSTIG, SectionOps)
		}
	}
	return out, nil
}

func newState(v *schema.Version, b *benchmark, cfg *v1beta1.KubeletConfiguration) (*state, error) {
	return newStateOf(v, b, cfg, nil)
}

// newStateOf is newState given cfg's config.ToMap (nil: made here).
func newStateOf(v *schema.Version, b *benchmark, cfg *v1beta1.KubeletConfiguration, values map[string]any) (*state, error) {
	if values == nil {
		var err error
		if values, err = config.ToMap(cfg, v); err != nil {
			return nil, err
		}
	}
	return &state{v: v, b: b, cfg: cfg, values: values}, nil
}

// judge runs one check and fills in its result.
func (s *state) judge(c *check) Result {
	o := c.rule(s)
	r := Result{ID: c.id, Section: c.section, Title: c.titleFor(s.b), Status: o.status, Detail: o.detail, Reason: c.reason}
	switch {
	case o.value != "":
		r.Value = o.value
	case c.field != "":
		r.Value = s.show(c.field)
	}
	switch {
	case o.origin != "":
		r.Origin = o.origin
	case c.field != "":
		r.Origin = s.origin(c.field)
	}
	if o.status != Pass {
		r.Fixes = o.fixes
		r.Remediation = o.remedy
		if r.Remediation == "" && len(o.fixes) > 0 {
			r.Remediation = s.remedy(o.fixes)
		}
	}
	return r
}

// value reads a field as the kubelet prints it (nil when unset): from the
// printed configuration, else the typed field, whose zero value printing
// leaves out.
func (s *state) value(path string) any {
	var cur any = s.values
	for _, part := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			cur = nil
			break
		}
		cur = m[part]
	}
	if cur != nil {
		return cur
	}
	if f, ok := config.FieldByPath(s.cfg, path); ok {
		return f.Interface()
	}
	return nil
}

func (s *state) show(path string) string { return render(s.value(path)) }

func render(x any) string {
	if x == nil {
		return "(unset)"
	}
	switch v := reflect.ValueOf(x); v.Kind() {
	case reflect.String, reflect.Slice, reflect.Map:
		if v.Len() == 0 {
			return "(unset)"
		}
	case reflect.Pointer:
		if v.IsNil() {
			return "(unset)"
		}
	}
	b, _ := json.Marshal(x)
	return string(b)
}

// origin names where a field's value came from; "featureGates.X" names the
// gate's own origin.
func (s *state) origin(path string) string {
	if s.eff == nil {
		return ""
	}
	if gate, ok := strings.CutPrefix(path, "featureGates."); ok {
		if o, ok := s.eff.KeyOrigins["featureGates"][gate]; ok {
			return originString(o, s.v)
		}
		return "default (" + s.v.Minor + ")"
	}
	o, ok := s.eff.Origins[path]
	if !ok {
		return ""
	}
	return originString(o, s.v)
}

func originString(o effective.Origin, v *schema.Version) string {
	if o.Kind == "default" {
		return "default (" + v.Minor + ")"
	}
	return o.String()
}

// remedy words the change that applies fixes.
func (s *state) remedy(fixes []Fix) string {
	var parts []string
	for _, f := range fixes {
		parts = append(parts, s.advise(f.Field, fmt.Sprintf("%s: %s", f.Field, render(f.Value)), flagValue(f.Value)))
	}
	return strings.Join(parts, "; ")
}

// advise words where to make a field's change ("set" what), from where its
// value comes from now: a flag must go (it overrides every file), a drop-in
// must change (it overrides the config file), else the config file; value
// is the flag's value for a kubelet without a config file ("" for none).
func (s *state) advise(field, what, value string) string {
	set := "set " + what
	if s.eff == nil {
		return set
	}
	o := s.eff.Origins[field]
	flag := "--" + flagFor(s.v, field)
	if _, ok := s.v.FlagForField(field); !ok {
		value = "" // only the config file sets it
	}
	switch o.Kind {
	case "flag":
		from := ""
		if o.From != "" {
			from = " from " + o.From
		}
		return fmt.Sprintf("remove %s%s (a flag overrides the config file) and %s in %s", flag, from, set, s.configName())
	case "dropin":
		return fmt.Sprintf("%s in the drop-in %s, which overrides the config file (kubeletcfg apply --dropin %s=FILE)", set, nodeName(s.opts, o.File), path.Base(o.File))
	case "flags-default":
		if value == "" {
			return fmt.Sprintf("%s in a --config file (kubeletcfg migrate --secure writes one)", set)
		}
		return fmt.Sprintf("%s in a --config file (kubeletcfg migrate --secure writes one), or add %s=%s", set, flag, value)
	}
	return fmt.Sprintf("%s in %s (kubeletcfg audit --fix-to FILE, then kubeletcfg apply -f FILE)", set, s.configName())
}

func (s *state) configName() string {
	if s.eff != nil && s.eff.ConfigFile != "" {
		return s.eff.ConfigFile
	}
	return "the config file"
}

// nodeName is a path dropins read, as the node names it (without --root).
func nodeName(opts *Options, p string) string {
	if opts == nil || opts.Setup.Root == "" {
		return p
	}
	root := strings.TrimSuffix(opts.Setup.Root, "/")
	if rest, ok := strings.CutPrefix(p, root); ok && strings.HasPrefix(rest, "/") {
		return rest
	}
	return p
}

func flagFor(v *schema.Version, field string) string {
	if f, ok := v.FlagForField(field); ok {
		return f.Name
	}
	return field
}

func flagValue(x any) string {
	if s, ok := x.(string); ok {
		return s
	}
	if l, ok := x.([]string); ok {
		return strings.Join(l, ",")
	}
	return render(x)
}
