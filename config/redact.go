package config

import (
	"encoding/json"

	"k8s.io/kubelet/config/v1beta1"

	"github.com/kubeletcfg/kubeletcfg/schema"
)

// Redacted stands for a secret value in what kubeletcfg prints.
const Redacted = "(redacted)"

// secretFields are the fields whose values are secrets: the HTTP headers
// the kubelet sends to its static pod URL (staticPodURLHeader,
// --manifest-url-header) carry tokens. What kubeletcfg prints, writes as
// JSON or keeps as metadata shows their header names only; the files
// themselves, and the copies a rollback restores, keep them whole.
var secretFields = map[string]bool{"staticPodURLHeader": true}

// Secret says whether the field at path holds a secret.
func Secret(path string) bool { return secretFields[path] }

// RedactValue is the value x of the field at path as it may be shown: for
// a secret field, each header keeps its name and each of its values is
// Redacted.
func RedactValue(path string, x any) any {
	if !secretFields[path] || x == nil {
		return x
	}
	m, ok := x.(map[string]any)
	if !ok {
		return Redacted
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		vs, ok := v.([]any)
		if !ok {
			out[k] = Redacted
			continue
		}
		r := make([]any, len(vs))
		for i := range vs {
			r[i] = Redacted
		}
		out[k] = r
	}
	return out
}

// RedactMap redacts the secret fields of a configuration rendered by ToMap,
// in place.
func RedactMap(m map[string]any) map[string]any {
	for path := range secretFields {
		if v, ok := m[path]; ok {
			m[path] = RedactValue(path, v)
		}
	}
	return m
}

// RedactedJSON is JSON with the secret fields redacted: for printing.
func RedactedJSON(cfg *v1beta1.KubeletConfiguration, v *schema.Version) ([]byte, error) {
	m, err := ToMap(cfg, v)
	if err != nil {
		return nil, err
	}
	return json.Marshal(RedactMap(m))
}
