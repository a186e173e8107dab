package config

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// The kubelet's YAML reader takes the first document and ignores the rest,
// even one that is not valid YAML: Decode warns about it.
func TestSecondDocumentIsAWarning(t *testing.T) {
	cases := []struct {
		body string
		warn bool
	}{
		{"---\nmaxPods: 3\n", true},
		{"---\nmaxPods: [\n", true},
		{"---\n", false}, // a trailing separator holds nothing
		{"", false},
	}
	for _, tc := range cases {
		data := []byte(header + tc.body)
		js, err := yaml.YAMLToJSON(data)
		if err != nil || strings.Contains(string(js), "maxPods") {
			t.Fatalf("%q: the kubelet's reader gives %s, %v", tc.body, js, err)
		}
		doc, err := Decode(data, DecodeOptions{File: "c.yaml"})
		if err != nil {
			t.Fatal(err)
		}
		warned := false
		for _, p := range doc.Problems {
			warned = warned || p.Warning && strings.Contains(p.Message, "second YAML document")
		}
		if warned != tc.warn || len(doc.Errors()) > 0 {
			t.Errorf("%q: problems %v, want a warning: %v", tc.body, doc.Problems, tc.warn)
		}
	}
}
