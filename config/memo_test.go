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
