package effective

import (
	"reflect"
	"sort"
	"strings"

	"k8s.io/kubelet/config/v1beta1"

	"github.com/kubeletcfg/kubeletcfg/config"
	"github.com/kubeletcfg/kubeletcfg/flags"
	"github.com/kubeletcfg/kubeletcfg/schema"
	"github.com/kubeletcfg/kubeletcfg/warning"
)

// attributeKeys names, for every key of every map field, the layer that set
// it: featureGates and evictionHard are built a key at a time from the file,
// the drop-ins and the command line, so one origin for the whole map hides
// where a gate was turned on.
//
// A key comes from the last layer that names it with the value that resulted:
// the command line (one --feature-gates adds its gates; any other map flag
// replaces the whole map), then the drop-ins from last to first, then the
// --config file; failing those, from the defaults (or, in 1.28, from the
// drop-in that put the default back over the file's value).
func attributeKeys(res *Result, cl *flags.CommandLine, sources []string, fileDoc *config.Document, ds []*Dropin) {
	res.KeyOrigins = map[string]map[string]Origin{}
	base := Origin{Kind: "default"}
	if res.ConfigFile == "" {
		base = Origin{Kind: "flags-default"}
	}
	for _, f := range res.Version.Fields() {
		if !strings.HasPrefix(f.Type, "map[") || strings.ContainsAny(f.Path, "[]{}") {
			continue
		}
		final := reflect.ValueOf(leafValue(res.Config, f.Path))
		if !final.IsValid() || final.Kind() != reflect.Map || final.Len() == 0 {
			continue
		}
		fromFlags := flagKeys(res.Version, cl, f.Path, sources)
		keys := map[string]Origin{}
		for _, k := range final.MapKeys() {
			name := k.String()
			if o, ok := fromFlags[name]; ok {
				keys[name] = o
			} else {
				keys[name] = fileKey(res, fileDoc, ds, f.Path, name, final.MapIndex(k).Interface(), base)
			}
		}
		res.KeyOrigins[f.Path] = keys
	}
}

// fileKey is the origin of a map key that no flag set: the last drop-in, or
// the --config file, that names it with the value it has.
func fileKey(res *Result, fileDoc *config.Document, ds []*Dropin, path, name string, val any, base Origin) Origin {
	if o, ok := dropinKey(ds, path, name, val, res.merger); ok {
		return o
	}
	if fileDoc != nil {
		if pos, ok := fileDoc.Keys[path+"."+name]; ok {
			if sameMapValue(leafValue(fileDoc.Config, path), name, val) {
				return Origin{Kind: "file", File: fileDoc.File, Line: pos.Line}
			}
			if o, ok := resetBy(ds, path, res.merger); ok {
				return o
			}
		}
	}
	return base
}

// warnShadowedGates names the gates a file or drop-in sets that
// --feature-gates overrides: the flag merges gate by gate, so only those.
func warnShadowedGates(res *Result, before *v1beta1.KubeletConfiguration, cl *flags.CommandLine, fileDoc *config.Document) {
	flagged := flagKeys(res.Version, cl, "featureGates", nil)
	gates := make([]string, 0, len(flagged))
	for g := range flagged {
		gates = append(gates, g)
	}
	sort.Strings(gates)
	for _, g := range gates {
		old, ok := before.FeatureGates[g]
		if !ok {
			continue
		}
		if o := fileKey(res, fileDoc, res.dropins, "featureGates", g, old, Origin{}); o.Kind == "file" || o.Kind == "dropin" {
			res.Warnings = append(res.Warnings, setAt(warning.NoEffect, "featureGates."+g, o, "has no effect: flag --feature-gates overrides it"))
		}
	}
}

// flagKeys lists the keys the command line's flags for a map field set, each
// with the occurrence that set it last.
func flagKeys(v *schema.Version, cl *flags.CommandLine, path string, sources []string) map[string]Origin {
	out := map[string]Origin{}
	for _, occ := range cl.Occurrences {
		if occ.Flag.Field != path {
			continue
		}
		one := &v1beta1.KubeletConfiguration{}
		if _, err := (&flags.CommandLine{Version: v, Occurrences: []flags.Occurrence{occ}}).Apply(one); err != nil {
			continue
		}
		m := reflect.ValueOf(leafValue(one, path))
		if !m.IsValid() || m.Kind() != reflect.Map {
			continue
		}
		o := Origin{Kind: "flag", Flag: occ.Flag.Name}
		if occ.Index >= 0 && occ.Index < len(sources) {
			o.From = sources[occ.Index]
		}
		for _, k := range m.MapKeys() {
			out[k.String()] = o
		}
	}
	return out
}

// dropinKey finds the last drop-in that names a map key with the value that
// resulted. A merge-patch drop-in that sets the whole map to null ends the
// search: what the map holds after it was defaulted again or set later. ds
// are not empty only when merge is known.
func dropinKey(ds []*Dropin, path, key string, val any, merge merger) (Origin, bool) {
	for i := len(ds) - 1; i >= 0; i-- {
		d := ds[i]
		if d.Doc == nil {
			continue
		}
		m, named := valueFold(d.JSON, path).(map[string]any)
		if !named && merge.nullResetsMap() {
			if _, nulled := keyPosFold(d.Doc, path); nulled {
				return Origin{}, false
			}
		}
		if !named {
			continue
		}
		raw, ok := m[key]
		// 1.28 decodes a drop-in as a whole config file: null is the
		// value type's zero value.
		nullAsZero := raw == nil && merge.wholeFile() && isZeroValue(val)
		if !ok || (!sameJSON(raw, val) && !nullAsZero) {
			continue
		}
		for k, pos := range d.Doc.Keys {
			if len(k) == len(path)+1+len(key) && strings.EqualFold(k[:len(path)], path) && k[len(path)+1:] == key {
				return Origin{Kind: "dropin", File: d.Path, Line: pos.Line}, true
			}
		}
	}
	return Origin{}, false
}

func sameMapValue(m any, key string, val any) bool {
	mv := reflect.ValueOf(m)
	if !mv.IsValid() || mv.Kind() != reflect.Map {
		return false
	}
	got := mv.MapIndex(reflect.ValueOf(key).Convert(mv.Type().Key()))
	return got.IsValid() && reflect.DeepEqual(got.Interface(), val)
}

// resetBy names the drop-in that put a map's default back over the file's
// value: a 1.28 drop-in is defaulted as a whole config, so the last one that
// does not name the map.
func resetBy(ds []*Dropin, path string, m merger) (Origin, bool) {
	if m == nil || !m.wholeFile() {
		return Origin{}, false
	}
	for i := len(ds) - 1; i >= 0; i-- {
		if _, named := keyPosFold(ds[i].Doc, path); !named {
			return Origin{Kind: "dropin", File: ds[i].Path}, true
		}
	}
	return Origin{}, false
}
