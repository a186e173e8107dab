package config

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kubeletcfg/kubeletcfg/schema"
)

// TestYAMLAsSigsYAML holds YAML to sigs.k8s.io/yaml's Marshal (what the
// output was made with before): every version's defaults and flags-only
// baseline, and values whose printing is delicate.
func TestYAMLAsSigsYAML(t *testing.T) {
	var docs []string
	for _, v := range schema.Versions() {
		docs = append(docs, string(v.Defaults()), string(v.FlagsBaseline()))
	}
	docs = append(docs,
		`{"a": ["yes", "no", "on", "off", "y", "n", "true", "null", "~", "", " x", "x ", "a: b", "- x", "#x", "0777", "0x1f", "1.0", "1e3", ".inf", "-.inf", ".nan", "2001-12-14", "a\nb", "tab\there", "é", "\u0000", "{}", "[]", "'", "\"", "100Mi", "500m", "10%"]}`,
		`{"10": 1, "2": 2, "a10": 3, "a2": 4, "A": 5, "_": 6, "": 7, "b-1": 8, "b.1": 9, "1.5": 10, "true": 11, "null": 12}`,
		`{"n": [0, -0, 1, -1, 1.5, -2.25, 0.1, 1e-7, 1e20, 1e21, 9007199254740993, 4611686018427387903, 4611686018427387904, 9.3e18, 123456789.125, 3.0]}`,
		`{"empty": {}, "list": [], "nulls": [null, {"a": null}], "deep": [{"b": [{"c": {"d": [1, "x", true, false, null]}}]}], "t": true, "f": false}`,
		`{"evictionHard": {"memory.available": "100Mi", "nodefs.available": "10%"}, "featureGates": {"AllAlpha": false, "Zeta": true, "alpha": true}, "maxPods": 110, "podPidsLimit": -1, "cpuCFSQuotaPeriod": "100ms"}`,
	)
	for _, doc := range docs {
		var want, got map[string]any
		if err := json.Unmarshal([]byte(doc), &want); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(doc), &got); err != nil {
			t.Fatal(err)
		}
		w, err := yaml.Marshal(want)
		if err != nil {
			t.Fatal(err)
		}
		g, err := YAML(got)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("YAML changed its input %.80s", doc)
		}
		if string(g) != string(w) {
			t.Errorf("YAML of %.80s:\n%s\nsigs.k8s.io/yaml:\n%s", doc, g, w)
		}
	}
}

func TestWholeNumber(t *testing.T) {
	for _, c := range []struct {
		f    float64
		want any
		ok   bool
	}{{0, 0, true}, {-3, -3, true}, {1.5, 1.5, true}, {1 << 62, nil, false}, {-(1 << 62), nil, false}, {math.Inf(1), nil, false}, {math.NaN(), nil, false}, {1<<62 - 1024, 1<<62 - 1024, true}} {
		got, ok := wholeNumber(c.f)
		if ok != c.ok || got != c.want {
			t.Errorf("wholeNumber(%v) = %v, %v; want %v, %v", c.f, got, ok, c.want, c.ok)
		}
	}
}
