package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubeletcfg/kubeletcfg/internal/reftest"
)

// TestDefaultsMatchKubelet holds Default to what each kubelet version's own
// loader and defaulting produce for every corpus case it loads.
func TestDefaultsMatchKubelet(t *testing.T) {
	for _, v := range reftest.Validate.Versions() {
		refs := reftest.Validate.Load(t, v)
		checked := 0
		for _, name := range reftest.Names(refs) {
			ref := refs[name]
			if len(ref.Effective) == 0 {
				continue // the kubelet stopped before it had a configuration
			}
			checked++
			t.Run(v.Minor+"/"+name, func(t *testing.T) {
				path := reftest.Validate.Path(v, name)
				data, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				doc, err := Decode(data, DecodeOptions{File: path, Version: v, AllowUnknownFields: true})
				if err != nil {
					t.Fatalf("the kubelet loads it, kubeletcfg does not: %v", err)
				}
				got, err := JSON(ResolvePaths(Default(doc.Config, v), v, filepath.Dir(path)), v)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(reftest.AsMap(t, ref.Effective), reftest.AsMap(t, got)); diff != "" {
					t.Errorf("effective configuration differs from kubelet %s's (-kubelet +kubeletcfg):\n%s", v.Minor, diff)
				}
			})
		}
		if checked == 0 {
			t.Errorf("kubelet %s: no reference case with an effective configuration", v.Minor)
		}
	}
}

// TestEmbeddedDefaultsAreTheEmptyFile checks that the embedded defaults equal
// the kubelet's effective configuration for a file that sets nothing.
func TestEmbeddedDefaultsAreTheEmptyFile(t *testing.T) {
	for _, v := range reftest.Validate.Versions() {
		ref, ok := reftest.Validate.Load(t, v)["defaults-empty.yaml"]
		if !ok {
			t.Fatalf("kubelet %s: no reference for defaults-empty.yaml", v.Minor)
		}
		if diff := cmp.Diff(reftest.AsMap(t, ref.Effective), reftest.AsMap(t, v.Defaults())); diff != "" {
			t.Errorf("kubelet %s defaults (-kubelet +embedded):\n%s", v.Minor, diff)
		}
	}
}
