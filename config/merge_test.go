package config

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// The kubelet reads its config with sigs.k8s.io/yaml: YAMLToJSON gives the
// values, and its strict pass (YAMLToJSONStrict) fails on a key set twice,
// merge keys included. Decode must expand merge keys the same way and check
// every key they bring in.
func TestMergeKeysAsTheKubeletsYAMLReader(t *testing.T) {
	const head = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
	cases := []struct {
		name, body string
		maxPods    int32
		problem    string // a problem naming this, "" for none
		line       int
	}{
		{"merge sets a field", "<<: {maxPods: 4}\n", 4, "", 0},
		{"unknown field in a merge", "<<: {maxPodz: 4}\n", 0, `unknown field "maxPodz" (did you mean "maxPods"?)`, 3},
		{"merge overrides a key set before", "maxPods: 5\n<<: {maxPods: 7}\n", 7, "set again by the YAML merge key at line 4 (first at line 3)", 4},
		{"key overrides a merge", "<<: {maxPods: 7}\nmaxPods: 5\n", 5, "duplicate key (first at line 3)", 4},
		{"first of a merged list wins", "<<: [{maxPods: 1}, {maxPods: 2}]\n", 1, "set again by the YAML merge key at line 3", 3},
		{"merged anchor", "x-anchors: &a {maxPods: 9}\n<<: *a\n", 9, `unknown field "x-anchors"`, 3},
		{"nested merge", "authentication:\n  <<: {anonymous: {enabled: true, bogus: 1}}\n", 0, `authentication.anonymous.bogus: unknown field "bogus"`, 4},
		{"merge in a map field", "evictionHard:\n  memory.available: 1Gi\n  <<: {memory.available: 2Gi}\n", 0, "evictionHard.memory.available: set again by the YAML merge key at line 5", 5},
		{"quoted << is a plain key", "'<<': {maxPods: 4}\n", 0, `unknown field "<<"`, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			data := []byte(head + tc.body)
			doc, err := Decode(data, DecodeOptions{File: "c.yaml"})
			if err != nil {
				t.Fatal(err)
			}
			if tc.maxPods != 0 && doc.Config.MaxPods != tc.maxPods {
				t.Errorf("maxPods %d, want %d (as the kubelet reads it)", doc.Config.MaxPods, tc.maxPods)
			}
			var all []string
			found := false
			for _, p := range doc.Problems {
				all = append(all, p.Error())
				if tc.problem != "" && strings.Contains(p.Error(), tc.problem) && p.Line == tc.line {
					found = true
				}
			}
			if tc.problem == "" && len(all) > 0 || tc.problem != "" && !found {
				t.Errorf("problems %q, want one at line %d with %q", all, tc.line, tc.problem)
			}
			_, strictErr := yaml.YAMLToJSONStrict(data)
			duplicate := strings.Contains(strings.Join(all, "\n"), "duplicate key") || strings.Contains(strings.Join(all, "\n"), "set again by")
			if (strictErr != nil) != duplicate {
				t.Errorf("the kubelet's strict YAML pass says %v; Decode's problems: %q", strictErr, all)
			}
		})
	}
}
