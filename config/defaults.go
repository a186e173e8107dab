package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubelet/config/v1beta1"

	"github.com/kubeletcfg/kubeletcfg/schema"
)

// Default returns a copy of cfg with the defaults kubelet v applies to a
// --config file: its v1beta1 defaulting, then the eviction defaults it adds
// after loading. cfg must hold only fields v knows (Decode sees to that).
func Default(cfg *v1beta1.KubeletConfiguration, v *schema.Version) *v1beta1.KubeletConfiguration {
	out, def := defaulted(cfg, v, true)
	if cfg.EvictionHard != nil && v.MergesDefaultEvictionSettings() &&
		cfg.MergeDefaultEvictionSettings != nil && *cfg.MergeDefaultEvictionSettings {
		for k, val := range def.EvictionHard {
			if _, ok := out.EvictionHard[k]; !ok {
				out.EvictionHard[k] = val
			}
		}
	}
	return out
}

// DefaultVersioned applies only the v1beta1 defaulting of kubelet v, as the
// kubelet does after merging drop-ins: no eviction defaults.
func DefaultVersioned(cfg *v1beta1.KubeletConfiguration, v *schema.Version) *v1beta1.KubeletConfiguration {
	out, _ := defaulted(cfg, v, false)
	return out
}

func defaulted(cfg *v1beta1.KubeletConfiguration, v *schema.Version, eviction bool) (*v1beta1.KubeletConfiguration, *v1beta1.KubeletConfiguration) {
	def, err := cachedDefaults(v, cfg.FeatureGates)
	if err != nil {
		// The embedded defaults are generated from the kubelet's own output and
		// decode by construction; failing here is a build defect.
		panic(err)
	}
	if !eviction {
		def.EvictionHard = nil
	}
	out := cfg.DeepCopy()
	fill(reflect.ValueOf(out).Elem(), reflect.ValueOf(def).Elem())
	dependentDefaults(out, cfg)
	return out, def
}

// FlagsBaseline is the configuration kubelet v starts from without --config.
func FlagsBaseline(v *schema.Version) *v1beta1.KubeletConfiguration {
	cfg, err := decodeJSON(v.FlagsBaseline())
	if err != nil {
		panic(fmt.Sprintf("embedded flags baseline of kubelet %s: %v", v.Minor, err))
	}
	return cfg
}

// decodedDefaults caches defaultsFor's result per version and set of gated
// defaults that apply: decoding them is most of the cost of defaulting.
var decodedDefaults sync.Map

type defaultsKey struct {
	v       *schema.Version
	applies string // per gated default, "1" when it applies
}

// cachedDefaults is defaultsFor of the version's defaults, a copy of the
// cached decoding.
func cachedDefaults(v *schema.Version, gates map[string]bool) (*v1beta1.KubeletConfiguration, error) {
	applies := make([]byte, 0, len(v.GatedDefaults()))
	for _, gd := range v.GatedDefaults() {
		applies = append(applies, '0')
		if v.GateEnabled(gd.Gate, gates) == gd.Enabled {
			applies[len(applies)-1] = '1'
		}
	}
	key := defaultsKey{v, string(applies)}
	if def, ok := decodedDefaults.Load(key); ok {
		return def.(*v1beta1.KubeletConfiguration).DeepCopy(), nil
	}
	def, err := defaultsFor(v, v.Defaults(), gates)
	if err != nil {
		return nil, err
	}
	decodedDefaults.Store(key, def)
	return def.DeepCopy(), nil
}

// defaultsFor decodes a version's defaults with the gate-dependent ones that
// apply under the given feature gates.
func defaultsFor(v *schema.Version, base json.RawMessage, gates map[string]bool) (*v1beta1.KubeletConfiguration, error) {
	if !slices.ContainsFunc(v.GatedDefaults(), func(gd schema.GatedDefault) bool { return v.GateEnabled(gd.Gate, gates) == gd.Enabled }) {
		return decodeJSON(base)
	}
	return mergedDefaults(v, base, gates)
}

// mergedDefaults lays the gated defaults that apply over the base ones, key
// by key, and decodes the result.
func mergedDefaults(v *schema.Version, base json.RawMessage, gates map[string]bool) (*v1beta1.KubeletConfiguration, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(base, &m); err != nil {
		return nil, err
	}
	for _, gd := range v.GatedDefaults() {
		if v.GateEnabled(gd.Gate, gates) != gd.Enabled {
			continue
		}
		var vals map[string]json.RawMessage
		if err := json.Unmarshal(gd.Values, &vals); err != nil {
			return nil, err
		}
		for k, val := range vals {
			if string(val) == "null" {
				delete(m, k)
			} else {
				m[k] = val
			}
		}
	}
	merged, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return decodeJSON(merged)
}

// DecodeJSON is encoding/json's decoding of a KubeletConfiguration, by way
// of setJSON where it can (numbers kept as written).
func DecodeJSON(js []byte) (*v1beta1.KubeletConfiguration, error) { return decodeJSON(js) }

func decodeJSON(js []byte) (*v1beta1.KubeletConfiguration, error) {
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	var m any
	if dec.Decode(&m) == nil && !dec.More() {
		if cfg, ok := decodeValue(m); ok {
			return cfg, nil
		}
	}
	cfg := &v1beta1.KubeletConfiguration{}
	return cfg, json.Unmarshal(js, cfg)
}

var durationType = reflect.TypeOf(metav1.Duration{})

// fill sets every unset field of dst from def. Unset is what the kubelet's
// v1beta1 defaulting tests: a nil pointer, map or slice, or a zero value of a
// field that is not a pointer. Nested structs are filled field by field.
func fill(dst, def reflect.Value) {
	for i := 0; i < dst.NumField(); i++ {
		if !dst.Type().Field(i).IsExported() {
			continue
		}
		d, s := dst.Field(i), def.Field(i)
		switch {
		case d.Kind() == reflect.Pointer && d.IsNil():
			d.Set(s)
		case d.Kind() == reflect.Pointer && IsNested(d.Type().Elem()) && !s.IsNil():
			fill(d.Elem(), s.Elem())
		case d.Kind() == reflect.Struct && IsNested(d.Type()):
			fill(d, s)
		case d.IsZero():
			d.Set(s) // def is decoded afresh for every call: sharing is safe
		}
	}
}

// IsNested tells structs made of fields of their own, as opposed to leaf
// values (durations, quantities and other types with their own JSON form).
func IsNested(t reflect.Type) bool {
	if t.Kind() != reflect.Struct || t == durationType {
		return false
	}
	if n, ok := nested.Load(t); ok {
		return n.(bool)
	}
	n := !reflect.PointerTo(t).Implements(jsonUnmarshaler)
	nested.Store(t, n)
	return n
}

// nested caches IsNested by type: it is asked for every field of every
// configuration defaulted.
var nested sync.Map

var jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()

// dependentDefaults are the defaults the kubelet derives from other fields.
func dependentDefaults(out, in *v1beta1.KubeletConfiguration) {
	// nodeStatusReportFrequency follows an explicitly set nodeStatusUpdateFrequency.
	if in.NodeStatusReportFrequency.Duration == 0 && in.NodeStatusUpdateFrequency.Duration != 0 {
		out.NodeStatusReportFrequency = in.NodeStatusUpdateFrequency
	}
	// serializeImagePulls is false when maxParallelImagePulls allows parallel pulls.
	if in.SerializeImagePulls == nil && in.MaxParallelImagePulls != nil && *in.MaxParallelImagePulls >= 2 {
		f := false
		out.SerializeImagePulls = &f
	}
}

// DefaultsOf is what kubelet v runs for a configuration that sets only what
// the defaults of cfg depend on (its feature gates, and the fields
// dependentDefaults reads), those fields left at their own defaults: a field
// of a running cfg equal to its value here is one cfg's config need not set.
func DefaultsOf(cfg *v1beta1.KubeletConfiguration, v *schema.Version) *v1beta1.KubeletConfiguration {
	seed := &v1beta1.KubeletConfiguration{FeatureGates: cfg.FeatureGates,
		NodeStatusUpdateFrequency: cfg.NodeStatusUpdateFrequency, MaxParallelImagePulls: cfg.MaxParallelImagePulls}
	out := Default(seed, v)
	bare := Default(&v1beta1.KubeletConfiguration{}, v)
	out.FeatureGates, out.NodeStatusUpdateFrequency, out.MaxParallelImagePulls = bare.FeatureGates, bare.NodeStatusUpdateFrequency, bare.MaxParallelImagePulls
	return out
}

// ResolvePaths returns cfg with the relative paths of the fields kubelet v
// resolves made absolute against dir, the directory of the --config file.
func ResolvePaths(cfg *v1beta1.KubeletConfiguration, v *schema.Version, dir string) *v1beta1.KubeletConfiguration {
	out := cfg.DeepCopy()
	for _, path := range v.PathFields() {
		if p := stringField(out, path); p != nil && *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(dir, *p)
		}
	}
	return out
}

// stringField finds the string field at a JSON path of the config.
func stringField(cfg *v1beta1.KubeletConfiguration, path string) *string {
	cur, ok := FieldByPath(cfg, path)
	if !ok || cur.Kind() != reflect.String || !cur.CanAddr() {
		return nil
	}
	return cur.Addr().Interface().(*string)
}

// FieldByPath finds the field at a JSON path ("authentication.webhook.enabled");
// false when it or a pointer on the way is unset.
func FieldByPath(cfg *v1beta1.KubeletConfiguration, path string) (reflect.Value, bool) {
	return fieldAt(cfg, path, false)
}

// SettableField finds the field at a JSON path, allocating the unset
// pointers on the way so that it can be set.
func SettableField(cfg *v1beta1.KubeletConfiguration, path string) (reflect.Value, bool) {
	return fieldAt(cfg, path, true)
}

// A FieldPath is a JSON path of the configuration resolved to the struct
// fields that lead to it: for reading one path of many configurations
// without looking it up each time.
type FieldPath struct {
	steps [][]int
	ok    bool
}

// PathOf resolves a JSON path; false when no field has it (the FieldPath
// then finds nothing).
func PathOf(path string) (FieldPath, bool) {
	steps, ok := indexPath(path)
	return FieldPath{steps, ok}, ok
}

// In is FieldByPath(cfg, the path).
func (p FieldPath) In(cfg *v1beta1.KubeletConfiguration) (reflect.Value, bool) {
	if !p.ok {
		return reflect.Value{}, false
	}
	return walkSteps(cfg, p.steps, false)
}

func fieldAt(cfg *v1beta1.KubeletConfiguration, path string, alloc bool) (reflect.Value, bool) {
	steps, ok := indexPath(path)
	if !ok {
		return reflect.Value{}, false
	}
	return walkSteps(cfg, steps, alloc)
}

func walkSteps(cfg *v1beta1.KubeletConfiguration, steps [][]int, alloc bool) (reflect.Value, bool) {
	cur := reflect.ValueOf(cfg).Elem()
	for _, step := range steps {
		for cur.Kind() == reflect.Pointer {
			if cur.IsNil() {
				if !alloc {
					return reflect.Value{}, false
				}
				cur.Set(reflect.New(cur.Type().Elem()))
			}
			cur = cur.Elem()
		}
		cur = cur.FieldByIndex(step)
	}
	return cur, true
}

// indexPaths caches, per JSON path, the struct field indexes that lead to it
// (reading struct tags on every lookup is slow).
var indexPaths sync.Map

func indexPath(path string) ([][]int, bool) {
	if steps, ok := indexPaths.Load(path); ok {
		return steps.([][]int), steps.([][]int) != nil
	}
	var steps [][]int
	t := reflect.TypeOf(v1beta1.KubeletConfiguration{})
	for _, part := range strings.Split(path, ".") {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		idx, ok := fieldIndexByJSONName(t, part)
		if !ok {
			indexPaths.Store(path, [][]int(nil))
			return nil, false
		}
		steps = append(steps, idx)
		t = t.FieldByIndex(idx).Type
	}
	indexPaths.Store(path, steps)
	return steps, true
}

func fieldIndexByJSONName(t reflect.Type, name string) ([]int, bool) {
	idx, ok := jsonIndex(t)[name]
	return idx, ok
}

// jsonIndexes caches, per struct type, jsonIndex's map.
var jsonIndexes sync.Map

// jsonIndex maps the JSON names of a struct type's fields to their indexes,
// the fields of an untagged embedded struct included: the first field with a
// name wins, in field order.
func jsonIndex(t reflect.Type) map[string][]int {
	if m, ok := jsonIndexes.Load(t); ok {
		return m.(map[string][]int)
	}
	m := map[string][]int{}
	if t.Kind() == reflect.Struct {
		for i := 0; i < t.NumField(); i++ {
			tag, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
			if _, seen := m[tag]; !seen {
				m[tag] = []int{i}
			}
			if t.Field(i).Anonymous && tag == "" {
				for name, sub := range jsonIndex(t.Field(i).Type) {
					if _, seen := m[name]; !seen {
						m[name] = append([]int{i}, sub...)
					}
				}
			}
		}
	}
	jsonIndexes.Store(t, m)
	return m
}
