package config

import (
	"encoding/json"
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
