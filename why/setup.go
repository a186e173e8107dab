package why

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"k8s.io/kubelet/config/v1beta1"

	"github.com/kubeletcfg/kubeletcfg/config"
	"github.com/kubeletcfg/kubeletcfg/effective"
	"github.com/kubeletcfg/kubeletcfg/flags"
	"github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/nodefile"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

// Origin is where a value came from, as effective --show-origin names it,
// with the place on the node a flag was written.
type Origin struct {
	// Kind: "default" (of the kubelet version), "flags-default" (of a
	// kubelet run without --config), "file" (the --config file),
	// "dropin", "flag".
	Kind string `json:"kind"`
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
	// Flag is the flag that set it; File, Line and Variable then say
	// where the flag was written (a unit, drop-in or environment file,
	// and the variable it was expanded from).
	Flag     string `json:"flag,omitempty"`
	Variable string `json:"variable,omitempty"`
	// Version is the kubelet version whose default it is.
	Version string `json:"version,omitempty"`
	// Text says it as people read it.
	Text string `json:"text"`
}

// Layers are the node's kubelet setup and its effective configuration,
// read the way `kubeletcfg effective` reads them.
type Layers struct {
	Version *schema.Version
	Setup   *node.Setup
	// Result is the effective configuration; nil when the kubelet's own
	// layering refuses the setup (Err says why) or it cannot be read.
	Result *effective.Result
	Err    error
	// Dropped are the gate settings left out to get past a gate refusal
	// (the refused gates themselves).
	Dropped []effective.DroppedGate
	// Render, when set, renders a configuration as config.ToMap does with
	// Version (a caller that has rendered this one already).
	Render func(*v1beta1.KubeletConfiguration) (map[string]any, error)
	cl     *flags.CommandLine
	// tree is config.ToMap of treeOf as treeV has it: fieldValue's, made
	// once for the many fields a check looks at.
	tree   map[string]any
	treeOf *v1beta1.KubeletConfiguration
	treeV  *schema.Version
}

// ReadLayers reads the setup as kubelet v and layers it; gates named in
// dropGates are left out (a refused gate would stop the layering where the
// kubelet stopped, and the rest is still wanted).
func ReadLayers(src node.Source, v *schema.Version, dropGates []string) (*Layers, error) {
	setup, err := node.ReadSetupAs(v, src)
	if err != nil {
		return nil, err
	}
	l := &Layers{Version: v, Setup: setup}
	l.cl, _ = flags.Parse(setup.Args, v)
	in := effective.Input{Setup: setup}
	if len(dropGates) > 0 {
		drop := map[string]bool{}
		for _, g := range dropGates {
			drop[g] = true
		}
		in.DropGates = func(name string) bool { return drop[name] }
	}
	l.Result, l.Err = effective.Compute(in)
	if l.Result != nil {
		l.Dropped = l.Result.DroppedGates
	}
	return l, nil
}

// LayersOf are the layers of an effective configuration already computed
// (apply's planned one) on its setup.
func LayersOf(setup *node.Setup, res *effective.Result) *Layers {
	l := &Layers{Version: res.Version, Setup: setup, Result: res, Dropped: res.DroppedGates}
	args := setup.Args
	if res.Args != nil {
		args = res.Args
	}
	l.cl, _ = flags.Parse(args, res.Version)
	return l
}

// flagOrigin is where the last occurrence of a flag (normalized name, no
// dashes) was written, and its value.
func (l *Layers) flagOrigin(name string) (Origin, string, bool) {
	name = strings.TrimLeft(name, "-")
	idx, value := -1, ""
	if l.cl != nil {
		for _, o := range l.cl.Occurrences {
			if o.Flag.Name == name || o.Flag.Shorthand == name {
				idx, value = o.Index, o.Value
			}
		}
	}
	if idx < 0 {
		// The command line does not parse (or the flag is unknown): find
		// the word itself.
		for i, a := range l.Setup.Args {
			n, v, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
			if strings.HasPrefix(a, "-") && strings.ReplaceAll(n, "_", "-") == name {
				idx, value = i, v
				if !hasValue && i+1 < len(l.Setup.Args) && !strings.HasPrefix(l.Setup.Args[i+1], "-") {
					value = l.Setup.Args[i+1]
				}
			}
		}
	}
	if idx < 0 {
		return Origin{}, "", false
	}
	return l.argOrigin(idx, name), value, true
}

// argOrigin is where the command line's word idx was written.
func (l *Layers) argOrigin(idx int, flag string) Origin {
	o := Origin{Kind: "flag", Flag: flag}
	if idx < len(l.Setup.Origins) {
		src := l.Setup.Origins[idx]
		o.File, o.Line, o.Variable = src.File, src.Line, src.Var
	}
	o.Text = originText(o)
	return o
}

// argIndex finds a word of the command line.
func (l *Layers) argIndex(word string) int {
	for i, a := range l.Setup.Args {
		if a == word {
			return i
		}
	}
	return -1
}

func originText(o Origin) string {
	switch o.Kind {
	case "file", "dropin":
		if o.Line > 0 {
			return fmt.Sprintf("%s:%d", o.File, o.Line)
		}
		return o.File
	case "flag":
		s := "flag --" + o.Flag
		if o.File != "" {
			where := fmt.Sprintf("%s:%d", o.File, o.Line)
			if o.Variable != "" {
				where += " ($" + o.Variable + ")"
			}
			s += " (from " + where + ")"
		}
		return s
	case "flags-default":
		return "flags-only default (" + o.Version + ")"
	case "default":
		return "default (" + o.Version + ")"
	}
	return o.Kind
}

// fromLayer turns an origin of the layering into one of ours.
func (l *Layers) fromLayer(o effective.Origin) Origin {
	switch o.Kind {
	case "flag":
		if fo, _, ok := l.flagOrigin(o.Flag); ok {
			return fo
		}
		out := Origin{Kind: "flag", Flag: o.Flag}
		out.Text = originText(out)
		return out
	case "default", "flags-default":
		out := Origin{Kind: o.Kind, Version: l.Version.Minor}
		out.Text = originText(out)
		return out
	}
	out := Origin{Kind: o.Kind, File: l.nodePath(o.File), Line: o.Line}
	out.Text = originText(out)
	return out
}

// fieldOrigin is where a field's effective value (or a map key's) came
// from: the field path, a key of a map field below it, or the nearest
// field above it.
func (l *Layers) fieldOrigin(path string) (Origin, bool) {
	if l.Result == nil {
		return Origin{}, false
	}
	for p := path; p != ""; {
		if o, ok := l.Result.Origins[p]; ok {
			if keys, ok := l.Result.KeyOrigins[p]; ok {
				if ko, ok := keys[strings.TrimPrefix(path, p+".")]; ok {
					return l.fromLayer(ko), true
				}
			}
			return l.fromLayer(o), true
		}
		i := strings.LastIndexAny(p, ".[")
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return Origin{}, false
}

// fieldValue is a field's effective value as JSON text ("" when unknown),
// a map field's key included (featureGates.Foo).
func (l *Layers) fieldValue(path string) string {
	if l.Result == nil {
		return ""
	}
	if l.tree == nil || l.treeOf != l.Result.Config || l.treeV != l.Version {
		render := l.Render
		if render == nil {
			render = func(c *v1beta1.KubeletConfiguration) (map[string]any, error) { return config.ToMap(c, l.Version) }
		}
		m, err := render(l.Result.Config)
		if err != nil {
			return ""
		}
		l.tree, l.treeOf, l.treeV = m, l.Result.Config, l.Version
	}
	var cur any = l.tree
	for _, part := range splitPath(path) {
		obj, ok := cur.(map[string]any)
		if !ok {
			return ""
		}
		if cur, ok = obj[part]; !ok {
			return ""
		}
	}
	if s, ok := cur.(string); ok {
		return s
	}
	b, err := json.Marshal(cur)
	if err != nil {
		return ""
	}
	return string(b)
}

// splitPath splits a field path at its dots, a map key being the rest
// after its field (featureGates.Foo.Bar is the key "Foo.Bar").
func splitPath(path string) []string {
	for _, mapField := range []string{"featureGates", "evictionHard", "evictionSoft", "evictionSoftGracePeriod", "evictionMinimumReclaim", "kubeReserved", "systemReserved", "qosReserved", "cpuManagerPolicyOptions", "topologyManagerPolicyOptions", "staticPodURLHeader"} {
		if strings.HasPrefix(path, mapField+".") {
			return []string{mapField, strings.TrimPrefix(path, mapField+".")}
		}
	}
	return strings.Split(path, ".")
}

// problems are what the kubelet's verdict on the effective configuration
// says, each with its field: its validation errors or, when validation
// passes, what only its start-up parses.
func (l *Layers) problems() []effective.Problem {
	if l.Result == nil {
		return nil
	}
	if r := l.Result.Verdict(); r != nil {
		return r.Problems
	}
	return nil
}

// pathFields are the fields and flags that name files, with their
// values: which one names a path.
func (l *Layers) pathFields(names []string) map[string]string {
	out := map[string]string{}
	for _, n := range names {
		var v string
		if strings.HasPrefix(n, "--") {
			_, v, _ = l.flagOrigin(n)
		} else {
			v = l.fieldValue(n)
		}
		if v != "" {
			out[n] = v
		}
	}
	return out
}

// samePath tells whether two paths name the same file as the kubelet sees
// them (relative ones against /, where a service runs).
func samePath(a, b string) bool {
	clean := func(p string) string {
		if !filepath.IsAbs(p) {
			p = "/" + p
		}
		return filepath.Clean(p)
	}
	return a != "" && b != "" && clean(a) == clean(b)
}

// gateOrigin finds where a feature gate was set: the command line's
// --feature-gates (the last that names it), else the drop-ins (the last
// that names it), else the --config file. The kubelet stops on a gate it
// refuses before the layering could say.
func (l *Layers) gateOrigin(gate string) (Origin, bool) {
	if l.cl != nil {
		for i := len(l.cl.Occurrences) - 1; i >= 0; i-- {
			o := l.cl.Occurrences[i]
			if o.Flag.Name != "feature-gates" {
				continue
			}
			for _, kv := range strings.Split(o.Value, ",") {
				if k, _, _ := strings.Cut(kv, "="); strings.TrimSpace(k) == gate {
					return l.argOrigin(o.Index, "feature-gates"), true
				}
			}
		}
	}
	if l.Result != nil {
		if keys, ok := l.Result.KeyOrigins["featureGates"]; ok {
			if o, ok := keys[gate]; ok {
				return l.fromLayer(o), true
			}
		}
	}
	// Left out (Dropped) or never layered: read the files.
	var cfgFile, cfgDir string
	if l.cl != nil {
		cfgFile, _ = l.cl.Value("config")
		cfgDir, _ = l.cl.Value("config-dir")
	}
	if cfgDir != "" {
		if dir, err := l.onNode(cfgDir, true); err == nil {
			files, _ := effective.List(dir)
			for i := len(files) - 1; i >= 0; i-- {
				if line, ok := keyLine(files[i], "featureGates."+gate, l.Version); ok {
					o := Origin{Kind: "dropin", File: l.nodePath(files[i]), Line: line}
					o.Text = originText(o)
					return o, true
				}
			}
		}
	}
	if cfgFile != "" {
		if path, err := l.onNode(cfgFile, false); err == nil {
			if line, ok := keyLine(path, "featureGates."+gate, l.Version); ok {
				o := Origin{Kind: "file", File: l.nodePath(path), Line: line}
				o.Text = originText(o)
				return o, true
			}
		}
	}
	return Origin{}, false
}

// keyLine is the line of a key in a config file.
func keyLine(path, key string, v *schema.Version) (int, bool) {
	data, err := nodefile.ReadFile(path, nodefile.Config)
	if err != nil {
		return 0, false
	}
	doc, err := config.Decode(data, config.DecodeOptions{File: path, Version: v, AllowUnknownFields: true})
	if err != nil {
		return 0, false
	}
	pos, ok := doc.Keys[key]
	return pos.Line, ok
}

// onNode is where a path the kubelet names is read (under the root of an
// image, links resolved inside it).
func (l *Layers) onNode(p string, dir bool) (string, error) {
	if !filepath.IsAbs(p) {
		p = "/" + p
	}
	if l.Setup.Root == "" {
		return p, nil
	}
	if dir {
		return nodefile.HostDir(l.Setup.Root, p)
	}
	return nodefile.HostPath(l.Setup.Root, p)
}

// nodePath is a host path as the node names it (without the root).
func (l *Layers) nodePath(p string) string {
	if l.Setup.Root == "" {
		return p
	}
	rel, err := filepath.Rel(l.Setup.Root, p)
	if err != nil || strings.HasPrefix(rel, "..") {
		return p
	}
	return "/" + rel
}

// refusedGates are the gates the layering's refusal names.
func refusedGates(err error) []string {
	var r *effective.Refused
	if !errors.As(err, &r) {
		return nil
	}
	var out []string
	for _, reason := range r.Reasons {
		for _, prefix := range []string{"unrecognized feature gate: ", "cannot set feature gate "} {
			for _, part := range strings.Split(reason, prefix)[1:] {
				name := strings.FieldsFunc(part, func(r rune) bool { return r == ' ' || r == ',' || r == ';' })
				if len(name) > 0 {
					out = append(out, name[0])
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

var (
	defaultsMu sync.Mutex
	defaults   = map[string]map[string]any{}
)

// defaultOf is a field's default in kubelet v (its --config defaults), as
// JSON text.
func defaultOf(v *schema.Version, path string) (string, bool) {
	defaultsMu.Lock()
	m, ok := defaults[v.Minor]
	if !ok {
		_ = json.Unmarshal(v.Defaults(), &m)
		defaults[v.Minor] = m
	}
	defaultsMu.Unlock()
	var cur any = m
	for _, part := range splitPath(path) {
		obj, ok := cur.(map[string]any)
		if !ok {
			return "", false
		}
		if cur, ok = obj[part]; !ok {
			return "", false
		}
	}
	if s, ok := cur.(string); ok {
		return s, true
	}
	b, err := json.Marshal(cur)
	return string(b), err == nil
}

// FieldValue is a field's effective value as text ("" when unset or
// unknown); a key of a map field is a path too (featureGates.Foo).
func (l *Layers) FieldValue(path string) string { return l.fieldValue(path) }

// FieldOrigin is where a field's effective value came from.
func (l *Layers) FieldOrigin(path string) (Origin, bool) { return l.fieldOrigin(path) }

// FlagValue is the value of the last occurrence of a flag on the kubelet's
// command line, and where it was written.
func (l *Layers) FlagValue(name string) (string, Origin, bool) {
	o, v, ok := l.flagOrigin(name)
	return v, o, ok
}

// OnNode is where a path the kubelet names is read on this machine (under
// the root of an image, links resolved inside it).
func (l *Layers) OnNode(p string, dir bool) (string, error) { return l.onNode(p, dir) }

// Place says where to make a change to a value of this origin: the file and
// line or the flag's line; for a default, the config file.
func (o Origin) Place() string {
	switch o.Kind {
	case "default", "flags-default":
		return "the config file (unset now: " + o.Text + ")"
	case "flag", "argument":
		if o.File != "" {
			where := fmt.Sprintf("%s:%d", o.File, o.Line)
			if o.Variable != "" {
				where += " ($" + o.Variable + ")"
			}
			return where
		}
		return "the kubelet's command line"
	}
	return o.Text
}

// Refusal is the kubelet's refusal of the effective configuration (its
// one verdict, on a cgroup v2 host): its validation errors (class
// config-invalid), else what only its start-up parses (class
// value-unparsable); nothing when it takes it.
func (l *Layers) Refusal() (class string, problems []effective.Problem) {
	if l.Result == nil {
		return "", nil
	}
	r := l.Result.Verdict()
	if r == nil {
		return "", nil
	}
	class = "value-unparsable"
	if len(r.Reasons) > 0 && strings.HasPrefix(r.Reasons[0], "failed to validate kubelet configuration") {
		class = "config-invalid"
	}
	return class, r.Problems
}

// KubeletWords says a refusal kubeletcfg's layering met as the kubelet
// would: kubeletcfg words a command line it cannot parse its own way (with
// the flag's history), the kubelet says "unknown flag: --NAME".
func KubeletWords(err error) string {
	var fe *flags.Error
	if !errors.As(err, &fe) {
		return err.Error()
	}
	switch {
	case strings.Contains(fe.Reason, `("unknown flag")`) && strings.HasPrefix(fe.Arg, "--"):
		return "failed to parse kubelet flag: unknown flag: " + fe.Arg
	case strings.Contains(fe.Reason, `("unknown command")`):
		return "unknown command " + fe.Arg
	}
	return "failed to parse kubelet flag: " + fe.Reason
}
