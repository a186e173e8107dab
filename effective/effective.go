package effective

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"

	"k8s.io/kubelet/config/v1beta1"

	"github.com/kubeletcfg/kubeletcfg/config"
	"github.com/kubeletcfg/kubeletcfg/criruntime"
	"github.com/kubeletcfg/kubeletcfg/flags"
	"github.com/kubeletcfg/kubeletcfg/nodefile"
	"github.com/kubeletcfg/kubeletcfg/schema"
	"github.com/kubeletcfg/kubeletcfg/validate"
	"github.com/kubeletcfg/kubeletcfg/warning"
)

// stack is what layer reads: the setup as Compute makes it of an Input.
type stack struct {
	Version *schema.Version
	// Args is the kubelet's command line, one argument per word, and
	// ArgSources where each was written ("" or missing when unknown).
	Args       []string
	ArgSources []string
	Dir        string
	LookupEnv  func(string) (string, bool)
	Root       string
	// DropGate names feature gates to leave out wherever the setup sets
	// them, as if never written; Result.DroppedGates lists them.
	DropGate func(name string) bool

	// configFile and configDir stand for --config and --config-dir when
	// the command line names none.
	configFile, configDir string
	// config, when not nil, is the --config file's content, configName
	// the name it goes by.
	config     []byte
	configName string
	// dropins are laid over the --config-dir; removed are taken out of it.
	dropins []Overlay
	removed []string
	// reuse is a computation of the same node whose drop-ins read from
	// disk are taken instead of reading them again (Input.Reuse).
	reuse *Result
}

// DroppedGate is a feature gate setting left out (Input.ReadAs, Input.DropGates).
type DroppedGate struct {
	Name  string
	Value bool
	// Where is the setting: "--feature-gates", the config file, the
	// drop-in directory.
	Where string
}

// Origin says where a value came from.
type Origin struct {
	// Kind is "default", "flags-default" (the built-in baseline of a kubelet
	// run without --config), "file", "dropin" or "flag".
	Kind string `json:"kind"`
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
	Flag string `json:"flag,omitempty"`
	// From is where the flag was written (an env file, a unit), when known.
	From string `json:"from,omitempty"`
}

func (o Origin) String() string {
	switch o.Kind {
	case "file", "dropin":
		if o.Line > 0 {
			return fmt.Sprintf("%s:%d", o.File, o.Line)
		}
		return o.File
	case "flag":
		if o.From != "" {
			return "flag --" + o.Flag + " (from " + o.From + ")"
		}
		return "flag --" + o.Flag
	case "flags-default":
		return "flags-only default"
	case "runtime":
		return "runtime: " + o.From
	}
	return o.Kind
}

// Result is a kubelet's effective configuration.
type Result struct {
	Version *schema.Version
	Config  *v1beta1.KubeletConfiguration
	// Origins maps each field path (leaves; maps and lists whole) to where its
	// value came from.
	Origins map[string]Origin
	// KeyOrigins maps each key of each map field the configuration sets
	// (featureGates, evictionHard, systemReserved, ...) to where it came from.
	KeyOrigins map[string]map[string]Origin
	// Args is the command line layered (Input.Args, less what
	// Input.ReadAs left out); Flags are its flags that have no config
	// field.
	Args       []string
	Flags      []flags.Occurrence
	ConfigFile string
	ConfigDir  string
	Dropins    []string
	// Warnings are what the kubelet does without a word: deprecated flags,
	// values something else overrides, fields it drops, ...
	Warnings []warning.Warning
	// FileProblems are the warnings of decoding the --config file and the
	// drop-ins leniently, as the kubelet does (unknown fields, ...); each is
	// also in Warnings. A strict check of the files reports them itself.
	FileProblems []warning.Warning
	// DroppedGates are the gate settings left out (Input.ReadAs,
	// Input.DropGates); LostFlags the flags Input.ReadAs left out.
	DroppedGates []DroppedGate
	LostFlags    []flags.Lost
	// CgroupDriver is the driver the kubelet runs and /configz serves,
	// given its runtime's answer (nil when the setup reads no runtime).
	CgroupDriver *criruntime.Decision
	// CredentialProvider is the credential provider configuration the
	// command line names (nil when none).
	CredentialProvider *CredentialProvider

	defaultEviction bool          // the --config file set no evictionHard
	dropins         []*Dropin     // as read, for the origins of map keys
	merger          merger        // how the version merges drop-ins, when there are
	root            string        // the node's root the drop-ins were read under
	host            validate.Host // what the verdict knows of the host
}

func layer(opts stack) (*Result, error) {
	v := opts.Version
	cl, err := flags.Parse(opts.Args, v)
	if err != nil {
		return nil, err
	}
	res := &Result{Version: v, Args: opts.Args, Flags: cl.Remaining(), Warnings: cl.Deprecations()}
	res.ConfigFile, _ = cl.Value("config")
	res.ConfigDir, _ = cl.Value("config-dir")
	if res.ConfigFile == "" {
		res.ConfigFile = opts.configFile
	}
	if res.ConfigDir == "" {
		res.ConfigDir = opts.configDir
	}
	if opts.config != nil && res.ConfigFile == "" {
		return nil, fmt.Errorf("the content of a --config file, but the kubelet runs without one")
	}
	if len(opts.dropins) > 0 && res.ConfigDir == "" {
		return nil, fmt.Errorf("drop-ins to lay over the --config-dir, but the kubelet runs without one")
	}
	leaves := leavesOf(v)
	origins := make(map[string]Origin, len(leaves.paths))

	// The kubelet takes the gates of its command line first, on their own.
	flagGates := &v1beta1.KubeletConfiguration{}
	if _, err := cl.Apply(flagGates); err != nil {
		return nil, err
	}
	dropGates(opts, res, flagGates, "--feature-gates")
	if err := gateError(v, flagGates.FeatureGates, "failed to set feature gates from initial flags-based config"); err != nil {
		return nil, err
	}
	if err := checkNodeLabels(cl); err != nil {
		return nil, fmt.Errorf("failed to validate kubelet flags: %w", err)
	}

	var cfg *v1beta1.KubeletConfiguration
	var doc *config.Document
	if res.ConfigFile == "" {
		cfg = config.FlagsBaseline(v)
		setAll(origins, leaves.paths, Origin{Kind: "flags-default"})
		set, err := cl.Apply(cfg)
		if err != nil {
			return nil, err
		}
		dropGates(opts, nil, cfg, "")
		markFlags(origins, set, cl, opts.ArgSources)
	} else {
		data, path := opts.config, cmp.Or(opts.configName, res.ConfigFile)
		if data == nil {
			if path, err = onDisk(opts, res.ConfigFile, false); err != nil {
				return nil, fmt.Errorf("failed to load kubelet config file, path: %s, error: %w", res.ConfigFile, err)
			}
			if data, err = nodefile.ReadFileUnder(opts.Root, path, nodefile.Config); err != nil {
				return nil, fmt.Errorf("failed to load kubelet config file, path: %s, error: %w", path, err)
			}
		}
		if cfg, doc, err = loadConfigFile(data, path, nodeDir(opts, res.ConfigFile), v, res); err != nil {
			return nil, err
		}
		res.defaultEviction = doc.Config.EvictionHard == nil
		dropGates(opts, res, cfg, path)
		if v.DefaultingChecksGates() {
			// Its defaulting sets the file's gates over a copy of those the
			// command line set.
			if err := gateError(v, overlay(flagGates.FeatureGates, cfg.FeatureGates), "failed to load kubelet config file: the kubelet panics while defaulting"); err != nil {
				return nil, err
			}
		}
		setAll(origins, leaves.paths, Origin{Kind: "default"})
		markKeys(origins, leaves, doc, cfg, Origin{Kind: "file", File: path})
	}

	if res.ConfigDir != "" {
		dir, err := onDisk(opts, res.ConfigDir, true)
		if err != nil {
			return nil, fmt.Errorf("failed to read kubelet dropin directory %q: %w", res.ConfigDir, err)
		}
		if env := v.DropinEnv(); env != "" {
			lookup := opts.LookupEnv
			if lookup == nil {
				lookup = os.LookupEnv
			}
			if _, ok := lookup(env); !ok {
				return nil, fmt.Errorf("flag %s specified but environment variable %s not set, cannot start kubelet", res.ConfigDir, env)
			}
		}
		if res.merger, err = mergerFor(v); err != nil {
			return nil, err
		}
		if cfg, err = applyDropins(cfg, dir, opts, res, origins, leaves); err != nil {
			return nil, fmt.Errorf("failed to merge kubelet configs: %w", err)
		}
		dropGates(opts, res, cfg, dir)
		if v.DefaultingChecksGates() && res.merger.defaultsMerged() {
			if err := gateError(v, overlay(flagGates.FeatureGates, cfg.FeatureGates), "failed to merge kubelet configs: the kubelet panics while defaulting the merged drop-ins"); err != nil {
				return nil, err
			}
		}
	}

	if res.ConfigFile != "" || res.ConfigDir != "" {
		before := cfg.DeepCopy()
		if err := applyResets(cfg, v, origins, res); err != nil {
			return nil, err
		}
		set, err := cl.Apply(cfg)
		if err != nil {
			return nil, fmt.Errorf("failed to precedence kubeletConfigFlag: %w", err)
		}
		dropGates(opts, nil, cfg, "")
		warnShadowed(res, origins, set, before, cl)
		warnShadowedGates(res, before, cl, doc)
		markFlags(origins, set, cl, opts.ArgSources)
		if err := gateError(v, overlay(flagGates.FeatureGates, cfg.FeatureGates), "failed to set feature gates from initial flags-based config"); err != nil {
			return nil, err
		}
	}
	res.Config = cfg
	res.Origins = origins
	attributeKeys(res, cl, opts.ArgSources, doc, res.dropins)
	return res, nil
}

// dropGates leaves out of cfg the gates opts.DropGate names, and records
// them in res (when not nil: a layer that brings new settings) as set where.
func dropGates(opts stack, res *Result, cfg *v1beta1.KubeletConfiguration, where string) {
	if opts.DropGate == nil {
		return
	}
	for _, name := range slices.Sorted(maps.Keys(cfg.FeatureGates)) {
		if !opts.DropGate(name) {
			continue
		}
		if res != nil {
			res.DroppedGates = append(res.DroppedGates, DroppedGate{Name: name, Value: cfg.FeatureGates[name], Where: where})
		}
		delete(cfg.FeatureGates, name)
	}
}

// applyResets sets the fields the kubelet resets when it registers its flags
// again over the loaded configuration, and warns when that loses a value.
func applyResets(cfg *v1beta1.KubeletConfiguration, v *schema.Version, origins map[string]Origin, res *Result) error {
	for path, raw := range v.RegisterResets() {
		f, ok := config.FieldByPath(cfg, path)
		if !ok {
			continue
		}
		zero := reflect.New(f.Type()).Elem()
		if string(raw) != "null" {
			if err := json.Unmarshal(raw, zero.Addr().Interface()); err != nil {
				return fmt.Errorf("reset of %s: %w", path, err)
			}
		}
		if !reflect.DeepEqual(f.Interface(), zero.Interface()) {
			res.Warnings = append(res.Warnings, setAt(warning.NoEffect, path, origins[path], "has no effect: kubelet %s resets it when it re-applies its command line over the config (only the flag sets it)", v.Minor))
			origins[path] = Origin{Kind: "default"}
		}
		f.Set(zero)
	}
	return nil
}

// setAt is a warning about field path, whose value came from o: placed on
// its file and line when a file set it.
func setAt(code, path string, o Origin, format string, args ...any) warning.Warning {
	w := warning.Warning{Code: code, Field: path, Message: fmt.Sprintf(format, args...)}
	if o.Kind == "file" || o.Kind == "dropin" {
		w.File, w.Line = o.File, o.Line
	} else {
		w.Message = "set by " + o.String() + ": " + w.Message
	}
	return w
}

// gateError is the kubelet's refusal of the feature gate settings, if any.
func gateError(v *schema.Version, set map[string]bool, what string) error {
	if errs := v.SetGates(set); len(errs) > 0 {
		return fmt.Errorf("%s: %s", what, strings.Join(errs, ", "))
	}
	return nil
}

// overlay is base with top's settings over it: the kubelet's feature gate
// keeps every setting it was given, and a later one wins.
func overlay(base, top map[string]bool) map[string]bool {
	out := make(map[string]bool, len(base)+len(top))
	for k, on := range base {
		out[k] = on
	}
	for k, on := range top {
		out[k] = on
	}
	return out
}

// onDisk is where a path the kubelet names is read: relative to its working
// directory, under the root of an offline node image (symbolic links
// resolved inside it, see nodefile.HostPath and HostDir).
func onDisk(opts stack, p string, isDir bool) (string, error) {
	if !filepath.IsAbs(p) && (opts.Dir != "" || opts.Root != "") {
		dir := opts.Dir
		if dir == "" {
			dir = "/" // a systemd service runs in /
		}
		slash := strings.HasSuffix(p, "/")
		if p = filepath.Join(dir, p); slash {
			p += "/"
		}
	}
	switch {
	case opts.Root == "":
		return p, nil
	case isDir:
		return nodefile.HostDir(opts.Root, p)
	}
	return nodefile.HostPath(opts.Root, p)
}

// nodeDir is the directory of a file as the kubelet sees it, against which
// relative paths in the file resolve.
func nodeDir(opts stack, p string) string {
	if !filepath.IsAbs(p) {
		dir := opts.Dir
		if dir == "" {
			if opts.Root != "" {
				dir = "/"
			} else {
				dir, _ = os.Getwd()
			}
		}
		p = filepath.Join(dir, p)
	}
	return filepath.Dir(p)
}

// loadConfigFile reads the --config file as the kubelet does: decoded
// leniently (unknown fields dropped: reported as warnings), defaulted, paths
// resolved against its directory dir. path names it. The document is the
// file as decoded.
func loadConfigFile(data []byte, path, dir string, v *schema.Version, res *Result) (*v1beta1.KubeletConfiguration, *config.Document, error) {
	doc, err := config.Decode(data, config.DecodeOptions{File: path, Version: v, AllowUnknownFields: true})
	if err != nil {
		return nil, nil, fmt.Errorf("failed to load kubelet config file, path: %s, error: %w", path, err)
	}
	for _, p := range doc.Problems {
		w := p.AsWarning()
		res.Warnings = append(res.Warnings, w)
		res.FileProblems = append(res.FileProblems, w)
	}
	return config.ResolvePaths(config.Default(doc.Config, v), v, dir), doc, nil
}

func applyDropins(cfg *v1beta1.KubeletConfiguration, dir string, opts stack, res *Result, origins map[string]Origin, leaves *leafSet) (*v1beta1.KubeletConfiguration, error) {
	files, err := List(dir)
	if err != nil {
		return nil, err
	}
	res.Warnings = append(res.Warnings, unread(dir)...)
	var ds []*Dropin
	root := nodefile.NewUnder(opts.Root)
	defer root.Close()
	res.root = opts.Root
	for _, f := range overlaid(dir, files, opts.dropins, opts.removed) {
		d := opts.reuse.readBefore(f, res)
		if d == nil {
			if d, err = read(root, f.name, dir, f.data, res.Version, res.merger); err != nil {
				return nil, err
			}
		}
		ds = append(ds, d)
		res.dropins = append(res.dropins, d)
		res.Dropins = append(res.Dropins, f.name)
		warnDropin(res, d)
	}
	return res.merger.mergeAttributed(cfg, ds, res, origins, leaves)
}

// readBefore is the drop-in f as r read it from disk, when r was read
// under the same root as the same version (nil when it was not).
func (r *Result) readBefore(f dropinFile, res *Result) *Dropin {
	if r == nil || f.data != nil || r.Version != res.Version || r.root != res.root {
		return nil
	}
	for _, d := range r.dropins {
		if d.Path == f.name && d.fromDisk {
			return d
		}
	}
	return nil
}

// warnDropin reports what the kubelet will silently do with a drop-in.
func warnDropin(res *Result, d *Dropin) {
	v := res.Version
	if d.Doc == nil {
		return
	}
	for _, p := range d.Doc.Problems {
		if lenient, ok := LenientDuplicate(p, v); ok {
			res.Warnings = append(res.Warnings, lenient.AsWarning())
			continue
		}
		w := p.AsWarning()
		w.Code, w.Message = cmp.Or(p.Code, warning.Dropped), p.Message+" (the kubelet drops it)"
		res.FileProblems = append(res.FileProblems, w)
		res.Warnings = append(res.Warnings, w)
	}
	for _, pf := range v.PathFields() {
		if pos, ok := d.Doc.Keys[pf]; ok {
			val := valueFold(d.JSON, pf)
			if s, _ := val.(string); s != "" && !filepath.IsAbs(s) {
				res.Warnings = append(res.Warnings, warning.Warning{Code: warning.RelativePath, File: d.Path, Line: pos.Line, Field: pf,
					Message: fmt.Sprintf("relative path %q in a drop-in is not resolved against the drop-in's directory (unlike in the --config file)", s)})
			}
		}
	}
	res.merger.warnDropin(res, d)
}

func warnShadowed(res *Result, origins map[string]Origin, set []string, before *v1beta1.KubeletConfiguration, cl *flags.CommandLine) {
	seen := map[string]bool{}
	for _, path := range set {
		if seen[path] {
			continue
		}
		seen[path] = true
		o := origins[path]
		if o.Kind != "dropin" && o.Kind != "file" {
			continue
		}
		flag := flagFor(cl, path)
		if path == "featureGates" {
			continue // merged gate by gate: warnShadowedGates
		}
		if reflect.TypeOf(leafValue(before, path)).Kind() == reflect.Map {
			res.Warnings = append(res.Warnings, setAt(warning.MapReplaced, path, o, "flag --%s replaces the whole map: keys set here and not in the flag are gone", flag))
		} else {
			res.Warnings = append(res.Warnings, setAt(warning.NoEffect, path, o, "has no effect: flag --%s overrides it", flag))
		}
	}
}

func flagFor(cl *flags.CommandLine, path string) string {
	for _, o := range cl.Occurrences {
		if o.Flag.Field == path {
			return o.Flag.Name
		}
	}
	return "?"
}

func markFlags(origins map[string]Origin, set []string, cl *flags.CommandLine, sources []string) {
	for _, path := range set {
		o := Origin{Kind: "flag", Flag: flagFor(cl, path)}
		for i := len(cl.Occurrences) - 1; i >= 0; i-- {
			if occ := cl.Occurrences[i]; occ.Flag.Field == path {
				if occ.Index >= 0 && occ.Index < len(sources) {
					o.From = sources[occ.Index]
				}
				break
			}
		}
		origins[path] = o
	}
}

// markKeys attributes to a file the leaves it sets, unless the kubelet
// replaced its zero value with the default.
func markKeys(origins map[string]Origin, leaves *leafSet, doc *config.Document, final *v1beta1.KubeletConfiguration, o Origin) {
	if doc == nil {
		return
	}
	for n, leaf := range leaves.paths {
		pos, ok := keyPos(doc, leaf)
		if !ok {
			continue
		}
		if fileVal, finalVal := leaves.value(doc.Config, n), leaves.value(final, n); isZeroValue(fileVal) && !reflect.DeepEqual(fileVal, finalVal) {
			continue // the kubelet defaulted the zero value the file wrote
		}
		o.Line = pos
		origins[leaf] = o
	}
}

func keyPos(doc *config.Document, leaf string) (int, bool) {
	if doc == nil {
		return 0, false
	}
	if p, ok := doc.Keys[leaf]; ok {
		return p.Line, true
	}
	return 0, false
}

// valueFold is the value a drop-in's JSON gives a path, keys in any case.
func valueFold(js []byte, path string) any {
	var cur any
	if json.Unmarshal(js, &cur) != nil {
		return nil
	}
	for _, part := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = nil
		for k, val := range m {
			if strings.EqualFold(k, part) {
				cur = val
			}
		}
	}
	return cur
}

// sameJSON compares a JSON value with a typed one by their JSON forms.
func sameJSON(raw any, typed any) bool {
	a, err1 := json.Marshal(raw)
	b, err2 := json.Marshal(typed)
	if err1 != nil || err2 != nil {
		return false
	}
	var x, y any
	_ = json.Unmarshal(a, &x)
	_ = json.Unmarshal(b, &y)
	return reflect.DeepEqual(x, y)
}

// keyPosFold finds the line of a key naming leaf in any case.
func keyPosFold(doc *config.Document, leaf string) (int, bool) {
	if pos, ok := keyPos(doc, leaf); ok || doc == nil {
		return pos, ok
	}
	for k, p := range doc.Keys {
		if strings.EqualFold(k, leaf) {
			return p.Line, true
		}
	}
	return 0, false
}

// foldedKeys finds a document's keys in any case, as keyPosFold does,
// without scanning every key for every lookup.
type foldedKeys struct {
	doc   *config.Document
	ascii map[string]int // lower-cased ASCII keys → line
	other []string       // keys with other letters (K and ſ fold to ASCII)
}

func foldKeys(doc *config.Document) *foldedKeys {
	f := &foldedKeys{doc: doc, ascii: map[string]int{}}
	if doc == nil {
		return f
	}
	for k, p := range doc.Keys {
		if isASCII(k) {
			f.ascii[strings.ToLower(k)] = p.Line
		} else {
			f.other = append(f.other, k)
		}
	}
	return f
}

// line is keyPosFold(doc, leaf); lower is strings.ToLower(leaf).
func (f *foldedKeys) line(leaf, lower string) (int, bool) {
	if pos, ok := keyPos(f.doc, leaf); ok || f.doc == nil {
		return pos, ok
	}
	if !isASCII(leaf) {
		return keyPosFold(f.doc, leaf)
	}
	if pos, ok := f.ascii[lower]; ok {
		return pos, true
	}
	for _, k := range f.other {
		if strings.EqualFold(k, leaf) {
			return f.doc.Keys[k].Line, true
		}
	}
	return 0, false
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func setAll(origins map[string]Origin, leaves []string, o Origin) {
	for _, l := range leaves {
		origins[l] = o
	}
}

// leafPaths lists the fields whose values are tracked: every field that is
// not an object, outside list elements.
func leafPaths(v *schema.Version) []string {
	return leavesOf(v).paths
}

// leafSet is a version's leaf paths, and each lower-cased.
type leafSet struct {
	paths, lower []string
	at           []config.FieldPath // the fields of paths
}

// leafSets holds each version's leaves once made (*schema.Version →
// *leafSet): every layering, and every drop-in merge, looks at them all.
var leafSets sync.Map

func leavesOf(v *schema.Version) *leafSet {
	if l, ok := leafSets.Load(v); ok {
		return l.(*leafSet)
	}
	l := &leafSet{}
	for _, f := range v.Fields() {
		if f.Type != "object" && !strings.Contains(f.Path, "[]") && !strings.Contains(f.Path, "{}") {
			at, _ := config.PathOf(f.Path)
			l.paths = append(l.paths, f.Path)
			l.lower = append(l.lower, strings.ToLower(f.Path))
			l.at = append(l.at, at)
		}
	}
	got, _ := leafSets.LoadOrStore(v, l)
	return got.(*leafSet)
}

// leafValue reads the value at a JSON path (nil when a parent is unset).
func leafValue(cfg *v1beta1.KubeletConfiguration, path string) any {
	if cfg == nil {
		return nil
	}
	v, ok := config.FieldByPath(cfg, path)
	if !ok {
		return nil
	}
	return v.Interface()
}

// value is leafValue of the set's leaf i.
func (l *leafSet) value(cfg *v1beta1.KubeletConfiguration, i int) any {
	if cfg == nil {
		return nil
	}
	v, ok := l.at[i].In(cfg)
	if !ok {
		return nil
	}
	return v.Interface()
}

func isZeroValue(x any) bool {
	return x == nil || reflect.ValueOf(x).IsZero()
}

// Entry is one field of the effective configuration with its origin.
type Entry struct {
	Path   string `json:"-"`
	Value  any    `json:"value"`
	Origin Origin `json:"origin"`
	// Keys are the origins of a map's keys.
	Keys map[string]Origin `json:"keys,omitempty"`
}

// Entries lists every field the effective configuration sets (as /configz
// would show it), in path order, each with its origin.
func (r *Result) Entries() ([]Entry, error) {
	m, err := config.ToMap(r.Config, r.Version)
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, leaf := range leafPaths(r.Version) {
		val, ok := lookupPath(m, leaf)
		if !ok {
			continue
		}
		out = append(out, r.runtimeEntry(Entry{Path: leaf, Value: val, Origin: r.Origins[leaf], Keys: r.KeyOrigins[leaf]}))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

func lookupPath(m map[string]any, path string) (any, bool) {
	var cur any = m
	for _, part := range strings.Split(path, ".") {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = mm[part]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// Running is the configuration as the started kubelet serves it on /configz:
// at start it fills in what it derives, such as the paths of the self-signed
// serving certificate it writes to --cert-dir when none is configured, the
// cgroup driver its runtime reports (from 1.35 on /configz), and the cpu
// reservations --reserved-cpus rewrites.
func (r *Result) Running() *v1beta1.KubeletConfiguration {
	out := r.Config.DeepCopy()
	bootstrap := out.ServerTLSBootstrap
	if !bootstrap && out.TLSCertFile == "" && out.TLSPrivateKeyFile == "" {
		certDir := ""
		if f, ok := r.Version.Flag("cert-dir"); ok {
			certDir = f.Default
		}
		for _, o := range r.Flags {
			if o.Flag.Name == "cert-dir" {
				certDir = o.Value
			}
		}
		out.TLSCertFile = filepath.Join(certDir, "kubelet.crt")
		out.TLSPrivateKeyFile = filepath.Join(certDir, "kubelet.key")
	}
	r.derived(out)
	return out
}
