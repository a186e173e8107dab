package config

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// TestTypeMetaAsEncodingJSON holds Document.TypeMeta (read from the decoded
// value where it can) to encoding/json's reading of the printed JSON.
func TestTypeMetaAsEncodingJSON(t *testing.T) {
	for _, in := range []string{
		"apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: 10\n",
		"kind: KubeletConfiguration\n",
		"apiVersion: null\nkind: KubeletConfiguration\n",
		"apiVersion: 1\nkind: KubeletConfiguration\n",
		"apiVersion: [a]\nkind: K\n",
		"APIVersion: x\napiVersion: y\nkind: K\n",
		"ApiVersion: x\nKIND: K\n",
		"apiversion: x\nkind: K\nKind: L\n",
		"maxPods: 3\n",
		"{}\n",
		"kind: true\napiVersion: v\n",
	} {
		doc, err := Decode([]byte(in), DecodeOptions{File: "d.conf", AllowUnknownFields: true, AnyTypeMeta: true, NoTyped: true})
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if _, ok := doc.value.(map[string]any); !ok && in != "apiVersion: [a]\nkind: K\n" {
			t.Errorf("%q: decoded without its value: TypeMeta's own reading not tested", in)
		}
		var tm struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		wantErr := json.Unmarshal(doc.JSON, &tm)
		a, k, err := doc.TypeMeta()
		if a != tm.APIVersion || k != tm.Kind || (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
			t.Errorf("%q: TypeMeta() = %q, %q, %v; encoding/json: %q, %q, %v", in, a, k, err, tm.APIVersion, tm.Kind, wantErr)
		}
	}
}

// TestJSONTreeAsDecodeWithNumbers holds Document.JSONTree to encoding/json's
// decoding of the document's JSON with UseNumber.
func TestJSONTreeAsDecodeWithNumbers(t *testing.T) {
	trees := 0
	for _, in := range []string{
		"apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: 10\nimageGCHighThresholdPercent: 85\n",
		"a: 1.5\nb: -3\nc: 18446744073709551615\nd: 1e21\ne: 0.0000001\nf: 1.0\ng: 0x1F\nh: 017\n",
		"evictionHard:\n  memory.available: 100Mi\nl:\n- 1\n- two\n- 2.50\nn: null\nt: true\ns: \"a b\"\n",
		"x: 12345678901234567890123\ny: -0.0\nz: 3.\n",
		"{}\n",
	} {
		doc, err := Decode([]byte(in), DecodeOptions{File: "d.conf", AllowUnknownFields: true, AnyTypeMeta: true, NoTyped: true})
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		got, ok := doc.JSONTree()
		if !ok {
			t.Logf("no tree: %q", in)
			continue // encoding/json's decoding does
		}
		trees++
		dec := json.NewDecoder(bytes.NewReader(doc.JSON))
		dec.UseNumber()
		var want map[string]any
		if err := dec.Decode(&want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%q: JSONTree() = %#v\nencoding/json: %#v", in, got, want)
		}
		if again, _ := doc.JSONTree(); len(again) > 0 {
			for k := range got {
				delete(got, k)
			}
			if again2, _ := doc.JSONTree(); !reflect.DeepEqual(again2, want) {
				t.Errorf("%q: a tree changed by its caller changed the next one", in)
			}
		}
	}
	if trees < 3 {
		t.Errorf("%d documents decoded with their value, want 3: JSONTree not tested", trees)
	}
}
