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
