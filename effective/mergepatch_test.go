package effective

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
)

// mergeSame checks that mergeInto gives what the kubelet's merge patch
// library gives for doc and the patches applied one after the other. It
// returns false when the library refuses them.
func mergeSame(t *testing.T, doc string, patches ...string) bool {
	t.Helper()
	want := []byte(doc)
	tree, err := decodeTree(want)
	if err != nil {
		return false
	}
	for _, p := range patches {
		var err error
		if want, err = jsonpatch.MergePatch(want, []byte(p)); err != nil {
			return false
		}
		patch, err := decodeTree([]byte(p))
		if err != nil {
			t.Fatalf("patch %s: the library takes it, decodeTree refuses it: %v", p, err)
		}
		mergeInto(tree, patch)
	}
	got, err := json.Marshal(tree)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(decodeAny(t, got), decodeAny(t, want)) {
		t.Errorf("%s with %q:\n got %s\nwant %s", doc, patches, got, want)
	}
	return true
}

// decodeAny decodes JSON with numbers as their text.
func decodeAny(t *testing.T, js []byte) any {
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return x
}

var mergeCases = [][]string{
	{`{"a":1,"b":{"c":2,"d":3}}`, `{"b":{"c":null,"e":[{"x":null}]}}`},
	{`{"a":1}`, `{"a":{"b":null,"c":{"d":null}}}`},                     // replaces a non-object: nulls pruned
	{`{"a":{"b":1}}`, `{"a":[{"b":null},null,[{"c":null}]]}`},          // a non-object over an object: kept
	{`{"a":null}`, `{"a":{"b":null,"c":1}}`},                           // over null: pruned
	{`{"a":1.0,"b":1e3,"c":12345678901234567890}`, `{"d":-0.0}`},       // numbers keep their text
	{`{"a":{"b":{"c":1}}}`, `{"a":{"b":null}}`, `{"a":{"b":{"c":2}}}`}, // series
	{`{"maxPods":1,"MaxPods":2}`, `{"maxpods":3,"MaxPods":null}`},
	{`{"a":"<&>\u00e9"}`, `{"b":"\ud83d\ude00"}`},
	{`{}`, `{"a":[]}`, `{"a":{}}`, `{"a":{"b":null}}`},
}

func TestMergeIntoIsTheKubeletsMergePatch(t *testing.T) {
	for _, c := range mergeCases {
		if !mergeSame(t, c[0], c[1:]...) {
			t.Errorf("%q: the library refuses the case", c)
		}
	}
}

func FuzzMergeInto(f *testing.F) {
	for _, c := range mergeCases {
		if len(c) == 2 {
			f.Add(c[0], c[1], `{}`)
		} else {
			f.Add(c[0], c[1], c[2])
		}
	}
	f.Fuzz(func(t *testing.T, doc, p1, p2 string) {
		for _, p := range []string{p1, p2} {
			var m map[string]json.RawMessage
			if json.Unmarshal([]byte(p), &m) != nil || m == nil {
				return // the kubelet's drop-ins are objects
			}
		}
		mergeSame(t, doc, p1, p2)
	})
}
