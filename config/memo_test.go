package config

import (
	"reflect"
	"strings"
	"testing"
)

// TestDecodeTwiceGivesTheSameDocumentToChange: a document decoded again is
// the one decoded first, and each caller may change its own.
func TestDecodeTwiceGivesTheSameDocumentToChange(t *testing.T) {
	v := mustVersion(t, "1.37")
	data := []byte(header + "maxPods: 7\nmaxPods: 8\nfeatureGates:\n  A: true\n")
	opts := DecodeOptions{File: "memo.yaml", Version: v}
	first, err := Decode(data, opts)
	if err != nil {
		t.Fatal(err)
	}
	second, err := Decode(data, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(first, second) {
		t.Fatalf("decoded again: %+v, first %+v", second, first)
	}
	first.Config.MaxPods = 1
	first.Config.FeatureGates["A"] = false
	first.Problems[0].Message = "changed"
	third, _ := Decode(data, opts)
	if third.Config.MaxPods != 8 || !third.Config.FeatureGates["A"] || third.Problems[0].Message == "changed" {
		t.Errorf("a change to a decoded document reached the next: %+v", third)
	}
}

// TestDecodeRemembersByOptions: a document with an unknown field reads
// differently strictly and leniently; one without reads the same.
func TestDecodeRemembersByOptions(t *testing.T) {
	v := mustVersion(t, "1.37")
	unknown := []byte(header + "maxPods: 7\nnoSuchField: 1\n")
	strict, err := Decode(unknown, DecodeOptions{Version: v})
	if err != nil {
		t.Fatal(err)
	}
	lenient, err := Decode(unknown, DecodeOptions{Version: v, AllowUnknownFields: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(strict.Errors()) != 1 || len(lenient.Errors()) != 0 || len(lenient.Warnings()) != 1 {
		t.Errorf("unknown field: strict %v, lenient %v", strict.Problems, lenient.Problems)
	}
	known := []byte(header + "maxPods: 9\n")
	a, _ := Decode(known, DecodeOptions{Version: v})
	b, _ := Decode(known, DecodeOptions{Version: v, AllowUnknownFields: true})
	if !reflect.DeepEqual(a, b) || a.Config.MaxPods != 9 {
		t.Errorf("no unknown field: strict %+v, lenient %+v", a, b)
	}
	other, _ := Decode(known, DecodeOptions{Version: mustVersion(t, "1.31"), File: "x"})
	if other.File != "x" {
		t.Errorf("another version and name took the remembered document: %+v", other)
	}
}

// The same bytes under another name: remembered, and every problem names
// the file it was read as this time.
func TestDecodeRenamesARememberedDocument(t *testing.T) {
	v := mustVersion(t, "1.37")
	data := []byte(header + "maxPods: 7\nnoSuchField: 1\nmaxPods: 8\n")
	first, err := Decode(data, DecodeOptions{Version: v, File: "config.yaml", AllowUnknownFields: true})
	if err != nil {
		t.Fatal(err)
	}
	second, err := Decode(data, DecodeOptions{Version: v, File: "/var/lib/kubelet/config.yaml", AllowUnknownFields: true})
	if err != nil {
		t.Fatal(err)
	}
	if second.File != "/var/lib/kubelet/config.yaml" || len(second.Problems) != len(first.Problems) || len(first.Problems) < 2 {
		t.Fatalf("renamed: %q, %v; first %v", second.File, second.Problems, first.Problems)
	}
	for i, p := range second.Problems {
		if p.File != second.File || first.Problems[i].File != "config.yaml" || p.Message != first.Problems[i].Message {
			t.Errorf("problem %d: %+v (first read: %+v)", i, p, first.Problems[i])
		}
	}
	if again, _ := Decode(data, DecodeOptions{Version: v, File: "config.yaml", AllowUnknownFields: true}); again.Problems[0].File != "config.yaml" {
		t.Errorf("the remembered document took the other name: %+v", again.Problems)
	}
}

// TestDecodeForgetsBigFiles: a big document is not kept.
func TestDecodeForgetsBigFiles(t *testing.T) {
	v := mustVersion(t, "1.37")
	big := []byte(header + "# " + strings.Repeat("x", memoFile) + "\nmaxPods: 3\n")
	if _, err := Decode(big, DecodeOptions{Version: v}); err != nil {
		t.Fatal(err)
	}
	if _, ok := decoded.get(big, DecodeOptions{Version: v}); ok {
		t.Error("a document bigger than memoFile was kept")
	}
}
