// Package effective layers a kubelet's configuration the way a kubelet version
// does — defaults, the --config file, the --config-dir drop-ins, the command
// line on top — into the effective configuration, and remembers where every
// value came from.
package effective

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"k8s.io/kubelet/config/v1beta1"

	"github.com/kubeletcfg/kubeletcfg/config"
	"github.com/kubeletcfg/kubeletcfg/nodefile"
	"github.com/kubeletcfg/kubeletcfg/schema"
	"github.com/kubeletcfg/kubeletcfg/warning"
)

// Dropin is one drop-in file as the kubelet reads it.
type Dropin struct {
	// Path names the file in messages and origins: its path, or for a
	// drop-in laid over the directory (Input.Dropins), the file it was
	// given as.
	Path string
	// dir is the directory the kubelet finds it in.
	dir string
	// data is the file's content.
	data []byte
	// JSON is the file as the kubelet converts it (YAML 1.1, numbers stay numbers).
	JSON []byte
	// Doc is kubeletcfg's strict reading of the file, for positions and
	// warnings; nil when the file does not decode.
	Doc *config.Document
	// fromDisk: the file was read from the node (not laid over it).
	fromDisk bool
}

// List returns the files of a drop-in directory that the kubelet reads, in its
// order: a depth-first walk in byte order per directory, names ending in
// exactly ".conf", symlinked directories not entered.
func List(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || filepath.Ext(d.Name()) != ".conf" {
			return nil
		}
		files = append(files, path)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("failed to walk through kubelet dropin directory %q: %w", dir, err)
	}
	return files, nil
}

// unread says what the kubelet's walk of a --config-dir passes over without
// a word: the directory itself when it is a symbolic link named without a
// trailing slash, and files not named *.conf (10.yaml, 30.CONF).
func unread(dir string) []warning.Warning {
	if fi, err := os.Lstat(dir); err == nil && fi.Mode()&fs.ModeSymlink != 0 && !strings.HasSuffix(dir, "/") {
		return []warning.Warning{warning.At(warning.DropinSkipped, dir, 0, "--config-dir is a symbolic link: the kubelet reads no drop-in through it unless it ends in a slash")}
	}
	var out []warning.Warning
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(d.Name()) != ".conf" {
			out = append(out, warning.At(warning.DropinSkipped, path, 0, "not named *.conf: the kubelet does not read it as a drop-in"))
		}
		return nil
	})
	return out
}

// read loads a drop-in as the kubelet whose merge model is m does before
// merging it: the file at path, or, when data is not nil, data named path
// found in dir. The file is read through root (the image's root, under
// --root): a drop-in that is a link resolves inside the image, never to a
// file of this host.
func read(root *nodefile.Under, path, dir string, data []byte, v *schema.Version, m merger) (*Dropin, error) {
	fromDisk := data == nil
	if data == nil {
		var err error
		if data, err = root.ReadFile(path, nodefile.Config); err != nil {
			return nil, fmt.Errorf("failed to load kubelet dropin file, path: %s, error: %w", path, err)
		}
		dir = filepath.Dir(path)
	}
	if len(data) == 0 {
		return nil, fmt.Errorf("failed to load kubelet dropin file, path: %s, error: kubelet config file %q was empty", path, path)
	}
	// One reading gives the kubelet's JSON and kubeletcfg's positions. From
	// 1.29 on the kubelet decodes drop-ins strictly, so a duplicate key is
	// fatal; 1.28 loads a drop-in as a --config file, falling back to
	// lenient decoding, where the last of duplicate keys wins.
	doc, err := config.Decode(data, config.DecodeOptions{File: path, Version: v, AllowUnknownFields: true, AnyTypeMeta: true, NoTyped: true})
	if err != nil {
		return nil, fmt.Errorf("failed to load kubelet dropin file, path: %s, error: %w", path, err)
	}
	for _, p := range doc.Errors() {
		if _, lenient := m.lenientDuplicate(p, v); isDuplicate(p) && !lenient {
			return nil, fmt.Errorf("failed to load kubelet dropin file, path: %s, error: %w", path, p)
		}
	}
	apiVersion, kind, err := doc.TypeMeta()
	if err != nil {
		return nil, fmt.Errorf("failed to load kubelet dropin file, path: %s, error: %w", path, err)
	}
	if apiVersion == "" || kind == "" {
		return nil, fmt.Errorf("failed to load kubelet dropin file, path: %s, no apiVersion/kind", path)
	}
	if err := m.checkTypeMeta(path, apiVersion, kind); err != nil {
		return nil, err
	}
	return &Dropin{Path: path, dir: dir, data: data, JSON: doc.JSON, Doc: doc, fromDisk: fromDisk}, nil
}

func isDuplicate(p config.Problem) bool { return p.Code == warning.DuplicateKey }

// patchTree merges a drop-in onto doc (a fresh decoding of the drop-in: doc
// takes its values and later patches change them in place).
func patchTree(doc jsonTree, d *Dropin) error {
	if d.Doc != nil {
		if patch, ok := d.Doc.JSONTree(); ok {
			mergeInto(doc, patch)
			return nil
		}
	}
	patch, err := decodeTree(d.JSON)
	if err != nil {
		return fmt.Errorf("failed to merge drop-in and current config: %w", err)
	}
	mergeInto(doc, patch)
	return nil
}

func decodeVersioned(doc jsonTree, v *schema.Version) (*v1beta1.KubeletConfiguration, error) {
	out, err := decodeMerged(config.PruneTree(doc, v))
	if err != nil {
		return nil, err
	}
	return config.DefaultVersioned(out, v), nil
}

// decodeMerged is encoding/json's decoding of the merged JSON, set from
// the tree itself where config.DecodeValue can.
func decodeMerged(doc jsonTree) (*v1beta1.KubeletConfiguration, error) {
	if out, ok := config.DecodeValue(doc); ok {
		return out, nil
	}
	js, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	out := &v1beta1.KubeletConfiguration{}
	if err := json.Unmarshal(js, out); err != nil {
		return nil, fmt.Errorf("failed to unmarshal merged JSON into kubelet configuration: %w", err)
	}
	return out, nil
}

// decodeInternal decodes the merged drop-ins over the configuration as the
// kubelet's json.Unmarshal into its internal configuration does.
func decodeInternal(cfg *v1beta1.KubeletConfiguration, acc jsonTree, v *schema.Version) (*v1beta1.KubeletConfiguration, error) {
	merged, err := json.Marshal(acc)
	if err != nil {
		return nil, err
	}
	var p map[string]any
	if err := json.Unmarshal(merged, &p); err != nil {
		return nil, fmt.Errorf("failed to merge drop-in and current config: %w", err)
	}
	stripNulls(p)
	keepInternalNames(p, reflect.TypeOf(v1beta1.KubeletConfiguration{}))
	js, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	out := cfg.DeepCopy()
	dec := json.NewDecoder(bytes.NewReader(js))
	if err := dec.Decode(out); err != nil {
		return nil, fmt.Errorf("failed to unmarshal merged JSON into kubelet configuration: %w", err)
	}
	return config.Prune(out, v)
}

func stripNulls(m map[string]any) {
	for k, val := range m {
		switch x := val.(type) {
		case nil:
			delete(m, k)
		case map[string]any:
			stripNulls(x)
		}
	}
}

// keepInternalNames drops the keys that match no internal field: those whose
// v1beta1 JSON name is not the Go field name in another case.
func keepInternalNames(m map[string]any, t reflect.Type) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return
	}
	for k, val := range m {
		f, ok := fieldFold(t, k)
		if !ok {
			continue // unknown anyway: encoding/json drops it
		}
		tag := strings.Split(f.Tag.Get("json"), ",")[0]
		if !strings.EqualFold(tag, f.Name) && !isForeignType(f.Type) {
			delete(m, k)
			continue
		}
		if sub, ok := val.(map[string]any); ok && !isForeignType(f.Type) {
			keepInternalNames(sub, f.Type)
		}
	}
}

// isForeignType tells types defined outside the kubelet's config API (logging,
// tracing, core types): the internal configuration uses them with their JSON
// tags, so their keys are not Go field names.
func isForeignType(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	return t.PkgPath() != "" && t.PkgPath() != reflect.TypeOf(v1beta1.KubeletConfiguration{}).PkgPath()
}

func fieldFold(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := strings.Split(f.Tag.Get("json"), ",")[0]
		if tag == "" && !f.Anonymous {
			tag = f.Name
		}
		if strings.EqualFold(tag, key) {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// override copies every non-empty value of src over dst, maps key by key, as
// the kubelet 1.28's deep merge with override does on its internal types
// (which have plain values where v1beta1 has pointers).
func override(dst, src reflect.Value) {
	switch {
	case src.Kind() == reflect.Pointer:
		if src.IsNil() || isEmpty(src.Elem()) {
			return
		}
		if dst.IsNil() {
			dst.Set(reflect.New(dst.Type().Elem()))
		}
		override(dst.Elem(), src.Elem())
	case src.Kind() == reflect.Struct && config.IsNested(src.Type()):
		for i := 0; i < src.NumField(); i++ {
			if src.Type().Field(i).IsExported() {
				override(dst.Field(i), src.Field(i))
			}
		}
	case src.Kind() == reflect.Map:
		if src.Len() == 0 {
			return
		}
		if dst.IsNil() {
			dst.Set(reflect.MakeMap(dst.Type()))
		}
		for _, k := range src.MapKeys() {
			dst.SetMapIndex(k, src.MapIndex(k))
		}
	case !isEmpty(src):
		dst.Set(src)
	}
}

func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Slice, reflect.Map:
		return v.Len() == 0
	}
	return v.IsZero()
}

var errNoEnv = errors.New("environment variable not set")
