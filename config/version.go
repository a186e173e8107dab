package config

import (
	"encoding/json"
	"reflect"
	"strings"

	"k8s.io/kubelet/config/v1beta1"

	"github.com/kubeletcfg/kubeletcfg/schema"
)

// prune drops from a JSON object every key that kubelet v does not know, as
// the kubelet's own decoding does, so the typed config holds only v's fields.
func prune(obj map[string]any, v *schema.Version) {
	pruneAt(obj, "", childIndex(v))
}

func pruneAt(obj map[string]any, path string, idx map[string]map[string]schema.Field) {
	known := idx[path]
	for k, val := range obj {
		if path == "" && (k == "apiVersion" || k == "kind") {
			continue
		}
		f, ok := known[k]
		if !ok {
			delete(obj, k)
			continue
		}
		child := join(path, k)
		switch x := val.(type) {
		case map[string]any:
			if f.Type == "object" {
				pruneAt(x, child, idx)
			}
		case []any:
			if strings.HasPrefix(f.Type, "[]") && idx[child+"[]"] != nil {
				for _, item := range x {
					if m, ok := item.(map[string]any); ok {
						pruneAt(m, child+"[]", idx)
					}
				}
			}
		}
	}
}

// PruneTree is a configuration's JSON tree without the keys kubelet v has no
// field for, keys matched to fields as encoding/json matches them (the exact
// name, else the name in another case): decoded into the newest types, it
// gives what decoding obj into v's gives. Unlike Prune it changes no value
// that stays (an empty list stays empty, which the kubelet's defaulting
// tells from none). obj is not changed: what changes is copied.
func PruneTree(obj map[string]any, v *schema.Version) map[string]any {
	out, _ := pruneTree(obj, "", childIndex(v))
	return out
}

func pruneTree(obj map[string]any, path string, idx map[string]map[string]schema.Field) (map[string]any, bool) {
	known := idx[path]
	var out map[string]any // obj's copy, once something changes
	set := func(k string, val any, drop bool) {
		if out == nil {
			out = make(map[string]any, len(obj))
			for k, v := range obj {
				out[k] = v
			}
		}
		if drop {
			delete(out, k)
		} else {
			out[k] = val
		}
	}
	for k, val := range obj {
		if path == "" && (k == "apiVersion" || k == "kind") {
			continue
		}
		name, f, ok := knownFold(known, k)
		if !ok {
			set(k, nil, true)
			continue
		}
		child := join(path, name)
		switch x := val.(type) {
		case map[string]any:
			if f.Type == "object" {
				if m, changed := pruneTree(x, child, idx); changed {
					set(k, m, false)
				}
			}
		case []any:
			if strings.HasPrefix(f.Type, "[]") && idx[child+"[]"] != nil {
				var items []any
				for i, item := range x {
					m, ok := item.(map[string]any)
					if !ok {
						continue
					}
					if pm, changed := pruneTree(m, child+"[]", idx); changed {
						if items == nil {
							items = append([]any(nil), x...)
						}
						items[i] = pm
					}
				}
				if items != nil {
					set(k, items, false)
				}
			}
		}
	}
	if out == nil {
		return obj, false
	}
	return out, true
}

// knownFold is the known field key names, as encoding/json finds it (the
// exact name, else the one in another case).
func knownFold(known map[string]schema.Field, key string) (string, schema.Field, bool) {
	if f, ok := known[key]; ok {
		return key, f, true
	}
	for name, f := range known {
		if strings.EqualFold(name, key) {
			return name, f, true
		}
	}
	return "", schema.Field{}, false
}

// JSON renders cfg as kubelet v would serve it on /configz: v1beta1 JSON with
// only the fields v has.
func JSON(cfg *v1beta1.KubeletConfiguration, v *schema.Version) ([]byte, error) {
	m, err := ToMap(cfg, v)
	if err != nil {
		return nil, err
	}
	return json.Marshal(m)
}

// ToMap is JSON as a generic map.
func ToMap(cfg *v1beta1.KubeletConfiguration, v *schema.Version) (map[string]any, error) {
	m, err := toMap(cfg, false)
	if err != nil {
		return nil, err
	}
	prune(m, v)
	// The kubelet serves the converted object, which carries no type meta.
	delete(m, "apiVersion")
	delete(m, "kind")
	return m, nil
}

// Prune returns cfg without the fields kubelet v does not have.
func Prune(cfg *v1beta1.KubeletConfiguration, v *schema.Version) (*v1beta1.KubeletConfiguration, error) {
	m, err := ToMap(cfg, v)
	if err != nil {
		return nil, err
	}
	if out, ok := decodeValue(m); ok {
		return out, nil
	}
	js, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	out := &v1beta1.KubeletConfiguration{}
	return out, json.Unmarshal(js, out)
}

// toMap is cfg as JSON read back into a map: walked (jsonOf) where it can
// be, else (or when slow) printed and read.
func toMap(cfg *v1beta1.KubeletConfiguration, slow bool) (map[string]any, error) {
	if cfg != nil && !slow {
		if m, ok := jsonOf(reflect.ValueOf(cfg).Elem()); ok {
			return m.(map[string]any), nil
		}
	}
	raw, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	return m, nil
}
