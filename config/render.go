package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"

	yamlv2 "go.yaml.in/yaml/v2"
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
		return YAML(m)
	}
	return nil, fmt.Errorf("output format %q: must be yaml or json", format)
}

// YAML prints a value decoded from JSON (maps, lists, strings, float64
// numbers, booleans, nulls) exactly as sigs.k8s.io/yaml's Marshal does —
// which prints it as JSON and reads that back as YAML 1.1 before printing —
// without the round trip: a whole number is the integer YAML would read,
// any other number the float it is. Anything else (a whole number beyond
// what an int64 holds, a value of another Go type) takes the round trip.
func YAML(v any) ([]byte, error) {
	if m, ok := v.(map[string]any); ok {
		if conv, ok := yamlValue(m); ok {
			return yamlv2.Marshal(conv)
		}
	}
	return yaml.Marshal(v)
}

// yamlValue is v with its whole numbers as ints, and whether v holds only
// what YAML prints as the round trip would. v is not changed.
func yamlValue(v any) (any, bool) {
	switch x := v.(type) {
	case map[string]any, []any:
		return copyTree(x, yamlValue)
	case float64:
		return wholeNumber(x)
	case string, bool, nil:
		return x, true
	}
	return nil, false
}

// wholeNumber is what YAML reads from the JSON of f: the int when f is
// whole, else f. false when f is whole beyond an int64's range (encoding/json
// prints those from 1e21 on with an exponent, which YAML reads as a float)
// or not finite: the round trip decides those.
func wholeNumber(f float64) (any, bool) {
	switch {
	case math.IsInf(f, 0) || math.IsNaN(f):
		return nil, false
	case f != math.Trunc(f):
		return f, true
	case math.Abs(f) >= 1<<62:
		return nil, false
	}
	return int(f), true
}
