package effective

import (
	"fmt"
	"reflect"
	"strings"

	"k8s.io/kubelet/config/v1beta1"

	"github.com/kubeletcfg/kubeletcfg/config"
	"github.com/kubeletcfg/kubeletcfg/schema"
	"github.com/kubeletcfg/kubeletcfg/warning"
)

// merger is one model of merging --config-dir drop-ins, as kubelet releases
// have had them; the schema's table says which one a version has
// (schema.MergeVariant). Everything that differs between the models is here.
type merger interface {
	// merge applies the drop-ins onto cfg. defaultEviction tells that cfg's
	// evictionHard is the kubelet's default (the --config file set none).
	// step, when not nil, is called after each drop-in with the
	// configuration the kubelet would have if that drop-in were the last.
	merge(cfg *v1beta1.KubeletConfiguration, ds []*Dropin, v *schema.Version, defaultEviction bool, step func(int, *v1beta1.KubeletConfiguration)) (*v1beta1.KubeletConfiguration, error)
	// mergeAttributed merges as merge does and records in origins which
	// drop-in each leaf comes from.
	mergeAttributed(cfg *v1beta1.KubeletConfiguration, ds []*Dropin, res *Result, origins map[string]Origin, leaves *leafSet) (*v1beta1.KubeletConfiguration, error)
	// checkTypeMeta refuses a drop-in whose apiVersion and kind the
	// kubelet refuses.
	checkTypeMeta(path, apiVersion, kind string) error
	// lenientDuplicate restates a drop-in's duplicate key when the kubelet
	// decodes drop-ins leniently (a warning, the last key wins).
	lenientDuplicate(p config.Problem, v *schema.Version) (config.Problem, bool)
	// warnDropin adds what the kubelet silently makes of a drop-in's keys
	// under this model.
	warnDropin(res *Result, d *Dropin)
	// defaultsMerged says the merged configuration goes through the v1beta1
	// defaulting again (which, in some versions, checks the feature gates).
	defaultsMerged() bool
	// wholeFile says each drop-in is read as a whole config file: a null is
	// the zero value, and what a drop-in does not name is reset to the
	// default.
	wholeFile() bool
	// nullResetsMap says a drop-in that sets a whole map to null deletes it
	// (it is defaulted again): what it held before is no longer there.
	nullResetsMap() bool
}

// mergers are the merge models by the name the schema's table gives them.
var mergers = map[schema.MergeVariant]merger{
	schema.LoadAndCopy:         loadAndCopy{},
	schema.InternalMergePatch:  internalMergePatch{},
	schema.VersionedMergePatch: versionedMergePatch{},
}

// mergerFor is the merge model of kubelet v.
func mergerFor(v *schema.Version) (merger, error) {
	m, ok := mergers[v.DropinMerge()]
	if !ok {
		return nil, fmt.Errorf("kubelet %s: unknown drop-in merge %q", v.Minor, v.DropinMerge())
	}
	return m, nil
}

// LenientDuplicate restates a drop-in's duplicate key for a version that
// loads drop-ins leniently (1.28 decodes each as a --config file): a warning,
// the last of the keys wins. ok is false for any other problem or version.
func LenientDuplicate(p config.Problem, v *schema.Version) (config.Problem, bool) {
	m, err := mergerFor(v)
	if err != nil {
		return p, false
	}
	return m.lenientDuplicate(p, v)
}

// mergePatch is what the two merge-patch models (1.29 on) share.
type mergePatch struct{}

func (mergePatch) lenientDuplicate(p config.Problem, _ *schema.Version) (config.Problem, bool) {
	return p, false
}

func (mergePatch) wholeFile() bool { return false }

// mergeNamed is the mergeAttributed of a merge patch model m.
func mergeNamed(m merger, cfg *v1beta1.KubeletConfiguration, ds []*Dropin, res *Result, origins map[string]Origin, leaves *leafSet) (*v1beta1.KubeletConfiguration, error) {
	out, err := m.merge(cfg, ds, res.Version, res.defaultEviction, nil)
	if err != nil {
		return nil, err
	}
	attributeNamed(cfg, out, ds, origins, leaves)
	return out, nil
}

// attributeNamed records the origins after a merge patch: a field comes
// from the last drop-in that names it; one that changed without being
// named was defaulted again (after a null) or follows another field.
func attributeNamed(cfg, out *v1beta1.KubeletConfiguration, ds []*Dropin, origins map[string]Origin, leaves *leafSet) {
	folded := make([]*foldedKeys, len(ds))
	// byLower lists, for each key lower-cased, the drop-ins that have it
	// (in order): the only ones a leaf can be found in, when no drop-in
	// has a key with other letters than ASCII.
	byLower, ascii := map[string][]int{}, true
	for i, d := range ds {
		folded[i] = foldKeys(d.Doc)
		ascii = ascii && len(folded[i].other) == 0
		for k := range folded[i].ascii {
			byLower[k] = append(byLower[k], i)
		}
	}
	all := make([]int, len(ds))
	for i := range all {
		all[i] = i
	}
	for n, leaf := range leaves.paths {
		lower := leaves.lower[n]
		named := false
		in := all
		if ascii && isASCII(leaf) {
			in = byLower[lower]
		}
		for j := len(in) - 1; j >= 0; j-- {
			i := in[j]
			// The merged JSON is decoded by encoding/json: keys match fields
			// in any case, but the exact key, when the configuration has
			// it, wins; a key in another case is the origin only when it
			// holds the value that resulted.
			if pos, ok := keyPos(ds[i].Doc, leaf); ok {
				origins[leaf] = Origin{Kind: "dropin", File: ds[i].Path, Line: pos}
				named = true
				break
			}
			if pos, ok := folded[i].line(leaf, lower); ok && sameJSON(valueFold(ds[i].JSON, leaf), leaves.value(out, n)) {
				origins[leaf] = Origin{Kind: "dropin", File: ds[i].Path, Line: pos}
				named = true
				break
			}
		}
		if !named && !reflect.DeepEqual(leaves.value(cfg, n), leaves.value(out, n)) {
			origins[leaf] = Origin{Kind: "default"}
		}
	}
}

// versionedMergePatch is the merge of 1.32 and newer: RFC 7386 merge patches
// onto the v1beta1 JSON of the configuration so far, one drop-in after the
// other; the result is decoded as encoding/json does (keys match in any case,
// the last match wins, unknown keys are dropped) and the v1beta1 defaults —
// not the eviction defaults of a --config file — are applied again.
type versionedMergePatch struct{ mergePatch }

func (versionedMergePatch) merge(cfg *v1beta1.KubeletConfiguration, ds []*Dropin, v *schema.Version, _ bool, step func(int, *v1beta1.KubeletConfiguration)) (*v1beta1.KubeletConfiguration, error) {
	// The configuration's JSON as a tree: its numbers, float64 here, print
	// as config.JSON prints them.
	doc, err := config.ToMap(cfg, v)
	if err != nil {
		return nil, err
	}
	for i, d := range ds {
		if err := patchTree(doc, d); err != nil {
			return nil, err
		}
		if step != nil {
			out, err := decodeVersioned(doc, v)
			if err != nil {
				return nil, err
			}
			step(i, out)
		}
	}
	return decodeVersioned(doc, v)
}

func (m versionedMergePatch) mergeAttributed(cfg *v1beta1.KubeletConfiguration, ds []*Dropin, res *Result, origins map[string]Origin, leaves *leafSet) (*v1beta1.KubeletConfiguration, error) {
	return mergeNamed(m, cfg, ds, res, origins, leaves)
}

func (versionedMergePatch) checkTypeMeta(path, apiVersion, kind string) error {
	if apiVersion != config.APIVersion || kind != config.Kind {
		return fmt.Errorf("failed to load kubelet dropin file, path: %s, unknown apiVersion/kind: %s, Kind=%s", path, apiVersion, kind)
	}
	return nil
}

func (versionedMergePatch) warnDropin(*Result, *Dropin) {}
func (versionedMergePatch) defaultsMerged() bool        { return true }
func (versionedMergePatch) nullResetsMap() bool         { return true }

// internalMergePatch is the merge of 1.29–1.31: the patches go onto the JSON
// of the kubelet's internal configuration, whose keys are Go field names, and
// the result is decoded into that same configuration. Drop-in keys never meet
// the base's keys, so the drop-ins merge among themselves (a later null
// deletes an earlier drop-in's value), then decode over the configuration:
// a key whose v1beta1 name differs from the Go field name (resolvConf) is
// lost, and maps gain keys instead of being replaced.
type internalMergePatch struct{ mergePatch }

func (internalMergePatch) merge(cfg *v1beta1.KubeletConfiguration, ds []*Dropin, v *schema.Version, _ bool, step func(int, *v1beta1.KubeletConfiguration)) (*v1beta1.KubeletConfiguration, error) {
	acc := jsonTree{}
	for i, d := range ds {
		if err := patchTree(acc, d); err != nil {
			return nil, err
		}
		if step != nil {
			out, err := decodeInternal(cfg, acc, v)
			if err != nil {
				return nil, err
			}
			step(i, out)
		}
	}
	return decodeInternal(cfg, acc, v)
}

func (m internalMergePatch) mergeAttributed(cfg *v1beta1.KubeletConfiguration, ds []*Dropin, res *Result, origins map[string]Origin, leaves *leafSet) (*v1beta1.KubeletConfiguration, error) {
	return mergeNamed(m, cfg, ds, res, origins, leaves)
}

func (internalMergePatch) checkTypeMeta(string, string, string) error { return nil }
func (internalMergePatch) defaultsMerged() bool                       { return false }
func (internalMergePatch) nullResetsMap() bool                        { return false }

// warnDropin names the keys the merge loses: it matches Go field names, and
// a key whose v1beta1 name is not one (in any case) matches nothing.
func (internalMergePatch) warnDropin(res *Result, d *Dropin) {
	t := reflect.TypeOf(v1beta1.KubeletConfiguration{})
	for key, pos := range d.Doc.Keys {
		if strings.Contains(key, ".") {
			continue
		}
		if f, ok := fieldFold(t, key); ok {
			tag := strings.Split(f.Tag.Get("json"), ",")[0]
			if !strings.EqualFold(tag, f.Name) {
				res.Warnings = append(res.Warnings, warning.Warning{Code: warning.Dropped, File: d.Path, Line: pos.Line, Field: key,
					Message: fmt.Sprintf("kubelet %s ignores this field in a drop-in (its merge matches Go field names, and this one is %s)", res.Version.Minor, f.Name)})
			}
		}
	}
}

// loadAndCopy is the merge of 1.28: each drop-in is loaded and defaulted
// like a --config file, then every non-zero field of it overrides the
// configuration so far. A drop-in therefore resets what it does not mention
// to the default, and cannot set a zero or false value.
//
// The kubelet gives a file without evictionHard its default map itself, not a
// copy, and the merge writes into maps in place: once a drop-in's thresholds
// are merged into that shared map, every later file without evictionHard
// "defaults" to them too.
type loadAndCopy struct{}

func (loadAndCopy) merge(cfg *v1beta1.KubeletConfiguration, ds []*Dropin, v *schema.Version, defaultEviction bool, step func(int, *v1beta1.KubeletConfiguration)) (*v1beta1.KubeletConfiguration, error) {
	out := cfg.DeepCopy()
	shared := config.Default(&v1beta1.KubeletConfiguration{}, v).EvictionHard
	if defaultEviction {
		for k, val := range out.EvictionHard {
			shared[k] = val
		}
		out.EvictionHard = shared
	}
	for i, d := range ds {
		doc, err := config.Decode(d.data, config.DecodeOptions{File: d.Path, Version: v, AllowUnknownFields: true})
		if err != nil {
			return nil, fmt.Errorf("failed to load kubelet dropin file, path: %s, error: %w", d.Path, err)
		}
		src := config.ResolvePaths(config.Default(doc.Config, v), v, d.dir)
		if doc.Config.EvictionHard == nil {
			src.EvictionHard = shared
		}
		override(reflect.ValueOf(out).Elem(), reflect.ValueOf(src).Elem())
		if step != nil {
			step(i, out.DeepCopy())
		}
	}
	return out, nil
}

// mergeAttributed attributes each change to the drop-in that made it: every
// drop-in rewrites whatever it has non-zero, defaults included.
func (m loadAndCopy) mergeAttributed(cfg *v1beta1.KubeletConfiguration, ds []*Dropin, res *Result, origins map[string]Origin, leaves *leafSet) (*v1beta1.KubeletConfiguration, error) {
	if len(ds) > 0 {
		res.Warnings = append(res.Warnings, warning.New(warning.DropinResets, "kubelet %s loads each drop-in as a whole config file: every field a drop-in does not set is reset to its default, and a drop-in cannot set a zero or false value", res.Version.Minor))
	}
	prev := cfg
	attribute := func(i int, next *v1beta1.KubeletConfiguration) {
		d := ds[i]
		for n, leaf := range leaves.paths {
			pos, inFile := keyPos(d.Doc, leaf)
			if inFile || !reflect.DeepEqual(leaves.value(prev, n), leaves.value(next, n)) {
				origins[leaf] = Origin{Kind: "dropin", File: d.Path, Line: pos}
			}
		}
		prev = next
	}
	return m.merge(cfg, ds, res.Version, res.defaultEviction, attribute)
}

func (loadAndCopy) checkTypeMeta(string, string, string) error { return nil }

func (loadAndCopy) lenientDuplicate(p config.Problem, v *schema.Version) (config.Problem, bool) {
	if !isDuplicate(p) {
		return p, false
	}
	p.Message = fmt.Sprintf("duplicate key (first at line %d); kubelet %s loads a drop-in as a --config file, decoding it leniently when strict decoding fails: this last one wins", p.FirstLine, v.Minor)
	p.Warning = true
	return p, true
}

func (loadAndCopy) warnDropin(*Result, *Dropin) {}
func (loadAndCopy) defaultsMerged() bool        { return false }
func (loadAndCopy) wholeFile() bool             { return true }
func (loadAndCopy) nullResetsMap() bool         { return false }
