package config

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubeletcfg/kubeletcfg/schema"
)

// reference is what the real kubelet made of one corpus case
// (hack/schemagen, testdata/reference/verdicts-v1.NN.json).
type reference struct {
	Stage     string          `json:"stage"`
	Panic     bool            `json:"panic"`
	Errors    []string        `json:"errors"`
	Effective json.RawMessage `json:"effective"`
}

const corpusDir = "../testdata/validate"

func loadReferences(t *testing.T, v *schema.Version) map[string]reference {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("../testdata/reference", "verdicts-v"+v.Minor+".json"))
	if err != nil {
		t.Fatalf("reference verdicts for kubelet %s: %v (run make schema)", v.Minor, err)
	}
	abs, err := filepath.Abs(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	// The generator wrote "$CORPUS" for the corpus directory.
	raw = bytes.ReplaceAll(raw, []byte("$CORPUS"), []byte(abs))
	refs := map[string]reference{}
	if err := json.Unmarshal(raw, &refs); err != nil {
		t.Fatal(err)
	}
	return refs
}

// TestDefaultsMatchKubelet holds Default to what each kubelet version's own
// loader and defaulting produce for every corpus case it loads.
func TestDefaultsMatchKubelet(t *testing.T) {
	for _, v := range schema.Versions() {
		refs := loadReferences(t, v)
		names := make([]string, 0, len(refs))
		for n := range refs {
			names = append(names, n)
		}
		sort.Strings(names)
		checked := 0
		for _, name := range names {
			ref := refs[name]
			if len(ref.Effective) == 0 {
				continue // the kubelet stopped before it had a configuration
			}
			checked++
			t.Run(v.Minor+"/"+name, func(t *testing.T) {
				path, _ := filepath.Abs(filepath.Join(corpusDir, name))
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
				if diff := cmp.Diff(asMap(t, ref.Effective), asMap(t, got)); diff != "" {
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
	for _, v := range schema.Versions() {
		ref, ok := loadReferences(t, v)["defaults-empty.yaml"]
		if !ok {
			t.Fatalf("kubelet %s: no reference for defaults-empty.yaml", v.Minor)
		}
		if diff := cmp.Diff(asMap(t, ref.Effective), asMap(t, v.Defaults())); diff != "" {
			t.Errorf("kubelet %s defaults (-kubelet +embedded):\n%s", v.Minor, diff)
		}
	}
}

func asMap(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%v: %s", err, strings.TrimSpace(string(raw)))
	}
	return m
}
