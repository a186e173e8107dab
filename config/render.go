package config

import (
	"bytes"
	"encoding/json"
	"fmt"

	"sigs.k8s.io/yaml"
)

// Render prints a v1beta1 configuration held as JSON, with apiVersion and
// kind, as YAML or indented JSON.
func Render(raw []byte, format string) ([]byte, error) {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	m["apiVersion"], m["kind"] = APIVersion, Kind
	switch format {
	case "json":
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetIndent("", "  ")
		err := enc.Encode(m)
		return b.Bytes(), err
	case "yaml", "":
		return yaml.Marshal(m)
	}
	return nil, fmt.Errorf("output format %q: must be yaml or json", format)
}
