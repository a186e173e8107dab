//go:build schemagen

// Command schemagen is built against one release of k8s.io/kubernetes (see
// prepare.sh) and prints what that kubelet knows, by running the kubelet's own
// code: its flag set, its defaulting, its feature gates, its validation.
//
//	schemagen schema KUBELET_TYPES_GO > v1.NN.json
//	schemagen docs KUBELET_TYPES_GO > v1.NN.docs.json
//	schemagen verdicts CORPUS_DIR > verdicts.json
//	schemagen case FILE         (one corpus case; run in a fresh process)
//	schemagen scenarios DIR > effective.json
//	schemagen scenario DIR      (one scenario; run in a fresh process)
//	schemagen credprov DIR > credprov.json   (credprov.go)
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/component-base/featuregate"
	_ "k8s.io/component-base/logs/json/register"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	_ "k8s.io/kubernetes/cmd/kubelet/app"
	"k8s.io/kubernetes/cmd/kubelet/app/options"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	kubeletscheme "k8s.io/kubernetes/pkg/kubelet/apis/config/scheme"
	"k8s.io/kubernetes/pkg/kubelet/apis/config/validation"
	"k8s.io/kubernetes/pkg/kubelet/eviction"
	"k8s.io/kubernetes/pkg/kubelet/kubeletconfig/configfiles"
	utilfs "k8s.io/kubernetes/pkg/util/filesystem"
)

func main() {
	if len(os.Args) < 2 {
		fail("usage: schemagen schema|verdicts|case ARG")
	}
	var out any
	var err error
	switch os.Args[1] {
	case "schema":
		out, err = schema(os.Args[2])
	case "docs":
		// The descriptions, apart: only `explain` needs them.
		var sc *Schema
		if sc, err = schema(os.Args[2]); err == nil {
			out = docsOf(sc)
		}
	case "verdicts":
		out, err = verdicts(os.Args[2])
	case "case":
		out = runCase(os.Args[2])
	case "scenarios":
		out, err = scenarios(os.Args[2])
	case "scenario":
		out = runScenario(os.Args[2])
	case "credprov":
		out, err = credprov(os.Args[2])
	case "credprovcase":
		out = runCredCase(os.Args[2])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fail(err.Error())
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	if err := enc.Encode(out); err != nil {
		fail(err.Error())
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "schemagen:", msg)
	os.Exit(2)
}

type Schema struct {
	Fields        []Field           `json:"fields"`
	Defaults      json.RawMessage   `json:"defaults"`
	FlagsBaseline json.RawMessage   `json:"flagsBaseline"`
	GatedDefaults []GatedDefault    `json:"gatedDefaults,omitempty"`
	FeatureGates  []Gate            `json:"featureGates"`
	Flags         []Flag            `json:"flags"`
	Behaviour     map[string]string `json:"behaviour"`
	// PathFields are the fields whose relative paths the kubelet resolves
	// against the directory of the --config file.
	PathFields []string `json:"pathFields"`
	// RegisterResets are the fields that registering the kubelet's flags
	// over a configuration sets to a fixed value (a flag registered with a
	// literal default): the kubelet does that when it re-applies its flags
	// over a loaded --config, so the file's values of these are lost.
	RegisterResets map[string]json.RawMessage `json:"registerResets,omitempty"`
}

type Field struct {
	Path     string `json:"path"`
	Type     string `json:"type"`
	Pointer  bool   `json:"pointer,omitempty"`
	Doc      string `json:"-"`
	GoStruct string `json:"-"`
	GoName   string `json:"-"`
}

type GatedDefault struct {
	Gate    string          `json:"gate"`
	Enabled bool            `json:"enabled"`
	Values  json.RawMessage `json:"values"`
}

type Gate struct {
	Name    string `json:"name"`
	Default bool   `json:"default"`
	Stage   string `json:"stage"`
	Locked  bool   `json:"locked,omitempty"`
	// DependsOn lists the gates this one needs enabled (component-base
	// records dependencies from 1.35 on).
	DependsOn []string `json:"dependsOn,omitempty"`
}

type Flag struct {
	Name      string `json:"name"`
	Shorthand string `json:"shorthand,omitempty"`
	Type      string `json:"type"`
	// GoType is the flag value's Go type: it tells the syntaxes apart that
	// share a Type (mapStringString is k=v for some flags, k<v for others).
	GoType      string `json:"goType"`
	Default     string `json:"default"`
	NoOptDefVal string `json:"noOptDefVal,omitempty"`
	Deprecated  string `json:"deprecated,omitempty"`
	Hidden      bool   `json:"hidden,omitempty"`
	Field       string `json:"field,omitempty"`
	Usage       string `json:"-"`
}

func schema(typesGo string) (*Schema, error) {
	s := &Schema{Behaviour: map[string]string{}}
	s.Fields = fields(reflect.TypeOf(kubeletv1beta1.KubeletConfiguration{}), "")
	if err := addDocs(s.Fields, typesGo); err != nil {
		return nil, err
	}
	var err error
	if s.Defaults, err = fileDefaults(nil); err != nil {
		return nil, err
	}
	// The kubelet registers its flags over the baseline before it parses
	// them; registering can set fields too (see RegisterResets).
	base, err := options.NewKubeletConfiguration()
	if err != nil {
		return nil, err
	}
	options.AddKubeletConfigFlags(pflag.NewFlagSet("kubelet", pflag.ContinueOnError), base)
	if s.FlagsBaseline, err = versionedJSON(base); err != nil {
		return nil, err
	}
	if s.RegisterResets, err = registerResets(); err != nil {
		return nil, err
	}
	if s.GatedDefaults, err = gatedDefaults(typesGo, s.Defaults); err != nil {
		return nil, err
	}
	s.FeatureGates = gates()
	s.Flags, err = flags()
	if err != nil {
		return nil, err
	}
	if s.Behaviour, err = behaviour(); err != nil {
		return nil, err
	}
	if s.PathFields, err = pathFields(); err != nil {
		return nil, err
	}
	return s, nil
}

// behaviour reads, from the kubelet's own command code, the traits of this
// release that the rest of kubeletcfg needs to know.
func behaviour() (map[string]string, error) {
	src, err := os.ReadFile(filepath.Join(kubernetesDir(), "cmd/kubelet/app/server.go"))
	if err != nil {
		return nil, err
	}
	code := string(src)
	b := map[string]string{}
	if strings.Contains(code, `LookupEnv("KUBELET_CONFIG_DROPIN_DIR_ALPHA")`) {
		b["dropinEnv"] = "KUBELET_CONFIG_DROPIN_DIR_ALPHA"
	}
	merge := code[strings.Index(code, "func mergeKubeletConfigurations"):]
	merge = merge[:strings.Index(merge, "\n}\n")]
	switch {
	case !strings.Contains(merge, "MergePatch("):
		b["dropinMerge"] = "load-and-copy"
	case strings.Contains(merge, "To_v1beta1_KubeletConfiguration"):
		b["dropinMerge"] = "versioned-merge-patch"
	default:
		b["dropinMerge"] = "internal-merge-patch"
	}
	defaults, err := os.ReadFile(filepath.Join(kubernetesDir(), "pkg/kubelet/apis/config/v1beta1/defaults.go"))
	if err != nil {
		return nil, err
	}
	if strings.Contains(string(defaults), "SetFromMap(obj.FeatureGates)") {
		b["defaultingChecksGates"] = "true"
	}
	if _, ok := reflect.TypeOf(kubeletconfig.KubeletConfiguration{}).FieldByName("MergeDefaultEvictionSettings"); ok {
		b["mergeDefaultEvictionSettings"] = "true"
	}
	for _, more := range []func() (map[string]string, error){runtimeBehaviour, credprovBehaviour} {
		extra, err := more()
		if err != nil {
			return nil, err
		}
		for k, v := range extra {
			b[k] = v
		}
	}
	return b, nil
}

// fields lists every JSON path of the v1beta1 type, leaves and objects alike.
func fields(t reflect.Type, prefix string) []Field {
	var out []Field
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		tag := strings.Split(sf.Tag.Get("json"), ",")[0]
		if sf.Anonymous && sf.Type.Kind() == reflect.Struct && sf.Type != typeMetaType {
			out = append(out, fields(sf.Type, prefix)...) // inlined
			continue
		}
		if sf.Anonymous || tag == "-" || tag == "" {
			continue
		}
		path := tag
		if prefix != "" {
			path = prefix + "." + tag
		}
		ft := sf.Type
		ptr := false
		if ft.Kind() == reflect.Pointer {
			ptr = true
			ft = ft.Elem()
		}
		f := Field{Path: path, Type: typeName(ft), Pointer: ptr, GoStruct: t.Name(), GoName: sf.Name}
		out = append(out, f)
		switch {
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct && !isLeaf(ft.Elem()):
			out = append(out, fields(ft.Elem(), path+"[]")...)
		case ft.Kind() == reflect.Map && ft.Elem().Kind() == reflect.Struct && !isLeaf(ft.Elem()):
			out = append(out, fields(ft.Elem(), path+"{}")...)
		case isLeaf(ft):
		case ft.Kind() == reflect.Struct:
			out = append(out, fields(ft, path)...)
		}
	}
	return out
}

var (
	typeMetaType = reflect.TypeOf(metav1.TypeMeta{})
	durationType = reflect.TypeOf(metav1.Duration{})
	marshalerT   = reflect.TypeOf((*json.Marshaler)(nil)).Elem()
)

func isLeaf(t reflect.Type) bool {
	if t == durationType || t.Implements(marshalerT) || reflect.PointerTo(t).Implements(marshalerT) {
		return true
	}
	return t.Kind() != reflect.Struct
}

func typeName(t reflect.Type) string {
	switch {
	case t == durationType:
		return "duration"
	case t.Kind() == reflect.Slice:
		return "[]" + typeName(t.Elem())
	case t.Kind() == reflect.Map:
		return "map[" + typeName(t.Key()) + "]" + typeName(t.Elem())
	case t.Kind() == reflect.Pointer:
		return typeName(t.Elem())
	case t.Kind() == reflect.Struct && isLeaf(t):
		return t.Name()
	case t.Kind() == reflect.Struct:
		return "object"
	}
	return t.Kind().String()
}

// addDocs reads the doc comment of each field from the v1beta1 types source.
func addDocs(fs []Field, typesGo string) error {
	src, err := os.ReadFile(typesGo)
	if err != nil {
		return err
	}
	docs := structDocs(string(src))
	for i := range fs {
		fs[i].Doc = docs[fs[i].GoStruct+"."+fs[i].GoName]
	}
	return nil
}

var (
	typeLine  = regexp.MustCompile(`^type (\w+) struct \{`)
	fieldLine = regexp.MustCompile(`^\t(\w+) +[^ ]+.*json:"`)
)

// structDocs maps "Struct.Field" to the comment block above the field.
func structDocs(src string) map[string]string {
	docs := map[string]string{}
	cur := ""
	var comment []string
	for _, line := range strings.Split(src, "\n") {
		if m := typeLine.FindStringSubmatch(line); m != nil {
			cur, comment = m[1], nil
			continue
		}
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "//"):
			c := strings.TrimSpace(strings.TrimPrefix(trimmed, "//"))
			if !strings.HasPrefix(c, "+") {
				comment = append(comment, c)
			}
		case cur != "" && fieldLine.MatchString(line):
			name := fieldLine.FindStringSubmatch(line)[1]
			docs[cur+"."+name] = strings.TrimSpace(strings.Join(comment, " "))
			comment = nil
		default:
			comment = nil
		}
	}
	return docs
}

// fileDefaults is what the kubelet makes of a --config file holding extra (or
// nothing but apiVersion and kind): its loader, then the eviction defaults the
// kubelet adds after loading.
func fileDefaults(extra map[string]any) (json.RawMessage, error) {
	doc := map[string]any{"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration"}
	for k, v := range extra {
		doc[k] = v
	}
	data, _ := json.Marshal(doc)
	kc, err := loadFile(data)
	if err != nil {
		return nil, err
	}
	return versionedJSON(kc)
}

func loadFile(data []byte) (*kubeletconfig.KubeletConfiguration, error) {
	dir, err := os.MkdirTemp("", "schemagen")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return nil, err
	}
	return loadPath(path)
}

// loadPath loads a --config file as the kubelet does.
func loadPath(path string) (*kubeletconfig.KubeletConfiguration, error) {
	loader, err := configfiles.NewFsLoader(&utilfs.DefaultFs{}, path)
	if err != nil {
		return nil, err
	}
	// Load takes a context from 1.34 on.
	m := reflect.ValueOf(loader).MethodByName("Load")
	var args []reflect.Value
	if m.Type().NumIn() == 1 {
		args = []reflect.Value{reflect.ValueOf(context.Background())}
	}
	res := m.Call(args)
	if e := res[1].Interface(); e != nil {
		return nil, e.(error)
	}
	kc := res[0].Interface().(*kubeletconfig.KubeletConfiguration)
	addEvictionDefaults(kc)
	return kc, nil
}

// addEvictionDefaults mirrors what the kubelet does right after loading its
// --config file (cmd/kubelet/app loadConfigFile).
func addEvictionDefaults(kc *kubeletconfig.KubeletConfiguration) {
	if kc.EvictionHard == nil {
		kc.EvictionHard = eviction.DefaultEvictionHard
		return
	}
	merge := reflect.ValueOf(kc).Elem().FieldByName("MergeDefaultEvictionSettings")
	if merge.IsValid() && merge.Bool() {
		for k, v := range eviction.DefaultEvictionHard {
			if _, ok := kc.EvictionHard[k]; !ok {
				kc.EvictionHard[k] = v
			}
		}
	}
}

func versionedJSON(kc *kubeletconfig.KubeletConfiguration) (json.RawMessage, error) {
	scheme, _, err := kubeletscheme.NewSchemeAndCodecs()
	if err != nil {
		return nil, err
	}
	v := &kubeletv1beta1.KubeletConfiguration{}
	if err := scheme.Convert(kc, v, nil); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

var gateRef = regexp.MustCompile(`features\.(\w+)`)

// gatedDefaults finds the gates the v1beta1 defaulting code consults and
// records which defaults change when such a gate is flipped from its default.
func gatedDefaults(typesGo string, base json.RawMessage) ([]GatedDefault, error) {
	src, err := os.ReadFile(filepath.Join(kubernetesDir(), "pkg/kubelet/apis/config/v1beta1/defaults.go"))
	if err != nil {
		return nil, err
	}
	all := utilfeature.DefaultMutableFeatureGate.GetAll()
	seen := map[string]bool{}
	var out []GatedDefault
	for _, m := range gateRef.FindAllStringSubmatch(string(src), -1) {
		name := m[1]
		spec, ok := all[featuregate.Feature(name)]
		if seen[name] || !ok || spec.LockToDefault {
			continue
		}
		seen[name] = true
		flipped, err := fileDefaults(map[string]any{"featureGates": map[string]bool{name: !spec.Default}})
		if err != nil {
			return nil, err
		}
		diff, err := topLevelDiff(base, flipped)
		if err != nil {
			return nil, err
		}
		delete(diff, "featureGates")
		if len(diff) == 0 {
			continue
		}
		vals, _ := json.Marshal(diff)
		out = append(out, GatedDefault{Gate: name, Enabled: !spec.Default, Values: vals})
	}
	return out, nil
}

func topLevelDiff(a, b json.RawMessage) (map[string]json.RawMessage, error) {
	var ma, mb map[string]json.RawMessage
	if err := json.Unmarshal(a, &ma); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &mb); err != nil {
		return nil, err
	}
	diff := map[string]json.RawMessage{}
	for k, v := range mb {
		if !bytes.Equal(ma[k], v) {
			diff[k] = v
		}
	}
	for k := range ma {
		if _, ok := mb[k]; !ok {
			diff[k] = json.RawMessage("null")
		}
	}
	return diff, nil
}

func kubernetesDir() string {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "k8s.io/kubernetes").Output()
	if err != nil {
		fail("go list k8s.io/kubernetes: " + err.Error())
	}
	return strings.TrimSpace(string(out))
}

func gates() []Gate {
	deps := map[string][]string{}
	if m := reflect.ValueOf(utilfeature.DefaultMutableFeatureGate).MethodByName("Dependencies"); m.IsValid() {
		iter := m.Call(nil)[0].MapRange()
		for iter.Next() {
			for i := 0; i < iter.Value().Len(); i++ {
				deps[iter.Key().String()] = append(deps[iter.Key().String()], iter.Value().Index(i).String())
			}
		}
	}
	var out []Gate
	for name, spec := range utilfeature.DefaultMutableFeatureGate.GetAll() {
		stage := string(spec.PreRelease)
		if stage == "" {
			stage = "GA"
		}
		d := deps[string(name)]
		sort.Strings(d)
		out = append(out, Gate{Name: string(name), Default: spec.Default, Stage: stage, Locked: spec.LockToDefault, DependsOn: d})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// flags builds the kubelet's command-line flag set the way NewKubeletCommand
// does and finds, by address, the configuration field each flag writes.
func flags() ([]Flag, error) {
	fs := pflag.NewFlagSet("kubelet", pflag.ContinueOnError)
	fs.SetNormalizeFunc(cliflag.WordSepNormalizeFunc)
	kf := options.NewKubeletFlags()
	kc, err := options.NewKubeletConfiguration()
	if err != nil {
		return nil, err
	}
	kf.AddFlags(fs)
	options.AddKubeletConfigFlags(fs, kc)
	options.AddGlobalFlags(fs)
	fs.BoolP("help", "h", false, "help for kubelet")

	addrs := map[uintptr][]target{}
	collect(reflect.ValueOf(kc).Elem(), "", addrs)
	jsonPaths := goToJSONPaths(reflect.TypeOf(kubeletv1beta1.KubeletConfiguration{}), "", "")

	var out []Flag
	var unmapped []string
	fs.VisitAll(func(f *pflag.Flag) {
		fl := Flag{Name: f.Name, Shorthand: f.Shorthand, Type: f.Value.Type(), GoType: fmt.Sprintf("%T", f.Value), Default: f.DefValue,
			NoOptDefVal: f.NoOptDefVal, Deprecated: f.Deprecated, Hidden: f.Hidden, Usage: f.Usage}
		if goPath := match(reflect.ValueOf(f.Value), addrs); goPath != "" {
			// A flag may write inside a leaf type (logging.flushFrequency's
			// inner Duration): the field is the nearest path v1beta1 has.
			for _, ok := jsonPaths[goPath]; !ok && strings.Contains(goPath, "."); _, ok = jsonPaths[goPath] {
				goPath = goPath[:strings.LastIndex(goPath, ".")]
			}
			if jp, ok := jsonPaths[goPath]; ok {
				fl.Field = jp
			} else {
				unmapped = append(unmapped, f.Name+"->"+goPath)
			}
		}
		out = append(out, fl)
	})
	if len(unmapped) > 0 {
		return nil, fmt.Errorf("flags whose field has no v1beta1 path: %v", unmapped)
	}
	return out, nil
}

func pathFields() ([]string, error) {
	kc := &kubeletconfig.KubeletConfiguration{}
	addrs := map[uintptr][]target{}
	collect(reflect.ValueOf(kc).Elem(), "", addrs)
	jsonPaths := goToJSONPaths(reflect.TypeOf(kubeletv1beta1.KubeletConfiguration{}), "", "")
	var out []string
	for _, p := range kubeletconfig.KubeletConfigurationPathRefs(kc) {
		goPath := match(reflect.ValueOf(p), addrs)
		jp, ok := jsonPaths[goPath]
		if !ok {
			return nil, fmt.Errorf("path field %q has no v1beta1 path", goPath)
		}
		out = append(out, jp)
	}
	sort.Strings(out)
	return out, nil
}

type target struct {
	path string
	typ  reflect.Type
}

func collect(v reflect.Value, prefix string, addrs map[uintptr][]target) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		fv := v.Field(i)
		if sf.Anonymous && fv.Kind() == reflect.Struct && sf.IsExported() {
			collect(fv, prefix, addrs) // inlined
			continue
		}
		if !sf.IsExported() || sf.Anonymous {
			continue
		}
		path := sf.Name
		if prefix != "" {
			path = prefix + "." + sf.Name
		}
		addrs[fv.Addr().Pointer()] = append(addrs[fv.Addr().Pointer()], target{path, fv.Type()})
		if fv.Type() == durationType {
			inner := fv.Field(0)
			addrs[inner.Addr().Pointer()] = append(addrs[inner.Addr().Pointer()], target{path, inner.Type()})
			continue
		}
		if fv.Kind() == reflect.Struct {
			collect(fv, path, addrs)
		}
	}
}

// match finds the config field a flag value points at: the value itself, or a
// pointer held in its fields (map and slice flag types wrap the target).
func match(v reflect.Value, addrs map[uintptr][]target) string {
	var cands []reflect.Value
	if v.Kind() == reflect.Interface {
		v = v.Elem()
	}
	holder := v
	if v.Kind() == reflect.Pointer && !v.IsNil() {
		cands = append(cands, v)
		holder = v.Elem()
	}
	if holder.Kind() == reflect.Struct {
		for i := 0; i < holder.NumField(); i++ {
			if f := holder.Field(i); f.Kind() == reflect.Pointer && !f.IsNil() {
				cands = append(cands, f)
			}
		}
	}
	best := ""
	for _, c := range cands {
		for _, t := range addrs[c.Pointer()] {
			et := c.Type().Elem()
			if et == t.typ || (et.Kind() == t.typ.Kind() && et.Kind() != reflect.Struct) || (et.ConvertibleTo(t.typ) && et.Kind() != reflect.Struct) {
				if len(t.path) > len(best) {
					best = t.path
				}
			}
		}
	}
	return best
}

func goToJSONPaths(t reflect.Type, goPrefix, jsonPrefix string) map[string]string {
	out := map[string]string{}
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		tag := strings.Split(sf.Tag.Get("json"), ",")[0]
		if sf.Anonymous && sf.Type.Kind() == reflect.Struct && sf.Type != typeMetaType {
			for k, v := range goToJSONPaths(sf.Type, goPrefix, jsonPrefix) {
				out[k] = v
			}
			continue
		}
		if sf.Anonymous || tag == "" || tag == "-" {
			continue
		}
		gp, jp := sf.Name, tag
		if goPrefix != "" {
			gp, jp = goPrefix+"."+sf.Name, jsonPrefix+"."+tag
		}
		out[gp] = jp
		ft := sf.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct && !isLeaf(ft) {
			for k, v := range goToJSONPaths(ft, gp, jp) {
				out[k] = v
			}
		}
	}
	return out
}

// Verdict is what the kubelet makes of one corpus case used as its --config.
type Verdict struct {
	// Stage is where the kubelet stopped: "load" (decoding, defaulting),
	// "gates" (feature gates from the file), "validate", or "" when the
	// configuration passes.
	Stage     string          `json:"stage,omitempty"`
	Panic     bool            `json:"panic,omitempty"`
	Errors    []string        `json:"errors,omitempty"`
	Effective json.RawMessage `json:"effective,omitempty"`
}

// CorpusDir stands for the corpus directory in verdicts, so that paths the
// kubelet resolved against it compare on any machine.
const CorpusDir = "$CORPUS"

func verdicts(dir string) (map[string]Verdict, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	out := map[string]Verdict{}
	for _, f := range files {
		// Each case runs in its own process: the kubelet's feature gate is
		// process-global and cannot be reset.
		cmd := exec.Command(self, "case", f)
		cmd.Stderr = os.Stderr
		data, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("%s: %v", f, err)
		}
		data = bytes.ReplaceAll(data, []byte(dir), []byte(CorpusDir))
		var v Verdict
		if err := json.Unmarshal(data, &v); err != nil {
			return nil, fmt.Errorf("%s: %v", f, err)
		}
		out[filepath.Base(f)] = v
	}
	return out, nil
}

func runCase(file string) (v Verdict) {
	stage := "load"
	defer func() {
		if r := recover(); r != nil {
			v = Verdict{Stage: stage, Panic: true, Errors: []string{fmt.Sprint(r)}}
		}
	}()
	kc, err := loadPath(file)
	if err != nil {
		return Verdict{Stage: stage, Errors: []string{err.Error()}}
	}
	stage = "gates"
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(kc.FeatureGates); err != nil {
		return Verdict{Stage: stage, Errors: []string{err.Error()}}
	}
	stage = "validate"
	eff, _ := versionedJSON(kc)
	if err := validation.ValidateKubeletConfiguration(kc, utilfeature.DefaultFeatureGate); err != nil {
		return Verdict{Stage: stage, Errors: splitAggregate(err), Effective: eff}
	}
	return Verdict{Effective: eff}
}

func splitAggregate(err error) []string {
	type aggregate interface{ Errors() []error }
	if agg, ok := err.(aggregate); ok {
		var out []string
		for _, e := range agg.Errors() {
			out = append(out, splitAggregate(e)...)
		}
		sort.Strings(out)
		return out
	}
	return []string{err.Error()}
}

// Effective is what the kubelet makes of a whole setup: its command line,
// --config file and --config-dir drop-ins. Validation holds the errors of
// the kubelet's validation of the effective configuration, which it refuses
// to start with.
type Effective struct {
	Error      string          `json:"error,omitempty"`
	Panic      bool            `json:"panic,omitempty"`
	Effective  json.RawMessage `json:"effective,omitempty"`
	Validation []string        `json:"validation,omitempty"`
}

// scenarios runs every subdirectory of dir as a scenario, each in its own
// process. A scenario holds "args" (one kubelet argument per line, paths
// relative to the scenario), optionally "env" (KEY=VALUE lines for the
// kubelet's environment), and the files the arguments name.
func scenarios(dir string) (map[string]Effective, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	b, err := behaviour()
	if err != nil {
		return nil, err
	}
	env := b["dropinEnv"]
	out := map[string]Effective{}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		sdir := filepath.Join(dir, e.Name())
		cmd := exec.Command(self, "scenario", sdir)
		cmd.Dir = sdir
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "SCHEMAGEN_DROPIN_ENV=" + env}
		if extra, err := os.ReadFile(filepath.Join(sdir, "env")); err == nil {
			for _, l := range strings.Split(strings.TrimSpace(string(extra)), "\n") {
				if l != "" {
					cmd.Env = append(cmd.Env, l)
				}
			}
		}
		cmd.Stderr = io.Discard
		data, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("%s: %v", sdir, err)
		}
		data = bytes.ReplaceAll(data, []byte(sdir), []byte("$SCENARIO"))
		var eff Effective
		if err := json.Unmarshal(data, &eff); err != nil {
			return nil, fmt.Errorf("%s: %v", sdir, err)
		}
		out[e.Name()] = eff
	}
	return out, nil
}

// runScenario follows the kubelet command's start-up up to its effective
// configuration and its validation, calling the kubelet's own functions at
// every step.
func runScenario(dir string) (eff Effective) {
	defer func() {
		if r := recover(); r != nil {
			eff = Effective{Panic: true, Error: fmt.Sprint(r)}
		}
	}()
	raw, err := os.ReadFile(filepath.Join(dir, "args"))
	if err != nil {
		fail(err.Error())
	}
	var args []string
	for _, l := range strings.Split(strings.TrimRight(string(raw), "\n"), "\n") {
		if l != "" {
			args = append(args, l)
		}
	}
	fs := pflag.NewFlagSet("kubelet", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SetNormalizeFunc(cliflag.WordSepNormalizeFunc)
	kf := options.NewKubeletFlags()
	kc, err := options.NewKubeletConfiguration()
	if err != nil {
		fail(err.Error())
	}
	kf.AddFlags(fs)
	options.AddKubeletConfigFlags(fs, kc)
	options.AddGlobalFlags(fs)
	fs.BoolP("help", "h", false, "help for kubelet")
	if err := fs.Parse(args); err != nil {
		return Effective{Error: "failed to parse kubelet flag: " + err.Error()}
	}
	if rest := fs.Args(); len(rest) > 0 {
		return Effective{Error: "unknown command " + rest[0]}
	}
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(kc.FeatureGates); err != nil {
		return Effective{Error: "failed to set feature gates from initial flags-based config: " + err.Error()}
	}
	if err := options.ValidateKubeletFlags(kf); err != nil {
		return Effective{Error: "failed to validate kubelet flags: " + err.Error()}
	}
	if kf.KubeletConfigFile != "" {
		if kc, err = kubeletLoadConfigFile(kf.KubeletConfigFile); err != nil {
			return Effective{Error: "failed to load kubelet config file: " + err.Error()}
		}
	}
	if dropins := kf.KubeletDropinConfigDirectory; dropins != "" {
		if env := os.Getenv("SCHEMAGEN_DROPIN_ENV"); env != "" {
			if _, ok := os.LookupEnv(env); !ok {
				return Effective{Error: "environment variable " + env + " not set"}
			}
		}
		if err := kubeletMergeDropins(kc, dropins); err != nil {
			return Effective{Error: "failed to merge kubelet configs: " + err.Error()}
		}
	}
	if kf.KubeletConfigFile != "" || kf.KubeletDropinConfigDirectory != "" {
		if err := appKubeletConfigFlagPrecedence(kc, args); err != nil {
			return Effective{Error: "failed to precedence kubeletConfigFlag: " + err.Error()}
		}
		if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(kc.FeatureGates); err != nil {
			return Effective{Error: "failed to set feature gates from initial flags-based config: " + err.Error()}
		}
	}
	out, err := versionedJSON(kc)
	if err != nil {
		return Effective{Error: "convert: " + err.Error()}
	}
	if err := validation.ValidateKubeletConfiguration(kc, utilfeature.DefaultFeatureGate); err != nil {
		return Effective{Effective: out, Validation: splitAggregate(err)}
	}
	return Effective{Effective: out}
}

// Docs are the field descriptions and flag usages of a release.
type Docs struct {
	Fields map[string]string `json:"fields"`
	Flags  map[string]string `json:"flags"`
}

func docsOf(s *Schema) Docs {
	d := Docs{Fields: map[string]string{}, Flags: map[string]string{}}
	for _, f := range s.Fields {
		if f.Doc != "" {
			d.Fields[f.Path] = f.Doc
		}
	}
	for _, f := range s.Flags {
		d.Flags[f.Name] = f.Usage
	}
	return d
}

// registerResets finds the fields that registering the config flags changes:
// every scalar field is given an unusual value first, and the fields whose
// value registration replaces are the ones reset.
func registerResets() (map[string]json.RawMessage, error) {
	kc, err := options.NewKubeletConfiguration()
	if err != nil {
		return nil, err
	}
	perturb(reflect.ValueOf(kc).Elem())
	before := kc.DeepCopy()
	options.AddKubeletConfigFlags(pflag.NewFlagSet("kubelet", pflag.ContinueOnError), kc)
	var changed []string
	diffScalars(reflect.ValueOf(before).Elem(), reflect.ValueOf(kc).Elem(), "", &changed)
	jsonPaths := goToJSONPaths(reflect.TypeOf(kubeletv1beta1.KubeletConfiguration{}), "", "")
	after, err := versionedJSON(kc)
	if err != nil {
		return nil, err
	}
	var afterMap map[string]any
	if err := json.Unmarshal(after, &afterMap); err != nil {
		return nil, err
	}
	out := map[string]json.RawMessage{}
	for _, goPath := range changed {
		for _, ok := jsonPaths[goPath]; !ok && strings.Contains(goPath, "."); _, ok = jsonPaths[goPath] {
			goPath = goPath[:strings.LastIndex(goPath, ".")]
		}
		jp, ok := jsonPaths[goPath]
		if !ok {
			return nil, fmt.Errorf("reset field %q has no v1beta1 path", goPath)
		}
		var cur any = afterMap
		for _, part := range strings.Split(jp, ".") {
			if m, ok := cur.(map[string]any); ok {
				cur = m[part]
			} else {
				cur = nil
			}
		}
		raw, _ := json.Marshal(cur)
		out[jp] = raw
	}
	return out, nil
}

// perturb gives every scalar field a value no flag registration uses.
func perturb(v reflect.Value) {
	for i := 0; i < v.NumField(); i++ {
		if !v.Type().Field(i).IsExported() {
			continue
		}
		f := v.Field(i)
		switch f.Kind() {
		case reflect.Bool:
			f.SetBool(!f.Bool())
		case reflect.String:
			f.SetString(f.String() + "-perturbed")
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			f.SetInt(f.Int() + 3)
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			f.SetUint(f.Uint() + 3)
		case reflect.Float32, reflect.Float64:
			f.SetFloat(f.Float() + 0.5)
		case reflect.Struct:
			perturb(f)
		}
	}
}

func diffScalars(a, b reflect.Value, prefix string, out *[]string) {
	for i := 0; i < a.NumField(); i++ {
		sf := a.Type().Field(i)
		if !sf.IsExported() {
			continue
		}
		path := sf.Name
		if sf.Anonymous {
			path = prefix
		} else if prefix != "" {
			path = prefix + "." + sf.Name
		}
		fa, fb := a.Field(i), b.Field(i)
		switch fa.Kind() {
		case reflect.Struct:
			diffScalars(fa, fb, path, out)
		case reflect.Bool, reflect.String, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
			if !reflect.DeepEqual(fa.Interface(), fb.Interface()) {
				*out = append(*out, path)
			}
		}
	}
}
