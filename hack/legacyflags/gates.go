package main

import (
	"go/ast"
	"path/filepath"
	"sort"
)

// LegacyGate is a feature gate of an old release, as its last release
// declared it.
type LegacyGate struct {
	Name    string `json:"name"`
	LastIn  string `json:"lastIn"`
	Default bool   `json:"default"`
	Stage   string `json:"stage"`
	Locked  bool   `json:"locked,omitempty"`
}

// gatesFile is where every old release declares the gates of its
// components, the kubelet's among them.
const gatesFile = "pkg/features/kube_features.go"

// stages maps featuregate's prerelease constants to the names the schema
// data uses.
var stages = map[string]string{"GA": "GA", "Beta": "BETA", "Alpha": "ALPHA", "Deprecated": "DEPRECATED"}

// scanGates reads the gate specs of a release's feature table. A release
// without the file is skipped.
func scanGates(dir string, found map[string]LegacyGate) error {
	f, err := parseSource(filepath.Join(dir, gatesFile))
	if f == nil || err != nil {
		return err
	}
	consts := map[string]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		if vs, ok := n.(*ast.ValueSpec); ok && len(vs.Names) == 1 && len(vs.Values) == 1 {
			if s, ok := stringLit(vs.Values[0]); ok {
				consts[vs.Names[0].Name] = s
			}
		}
		return true
	})
	ast.Inspect(f, func(n ast.Node) bool {
		kv, ok := n.(*ast.KeyValueExpr)
		if !ok {
			return true
		}
		spec, ok := kv.Value.(*ast.CompositeLit)
		if !ok {
			return true
		}
		var name string
		switch k := kv.Key.(type) {
		case *ast.Ident:
			name = consts[k.Name]
		case *ast.SelectorExpr: // another package's gate, named as its constant
			name = k.Sel.Name
		}
		if name == "" {
			return true
		}
		g := LegacyGate{Name: name, Stage: "GA"}
		isSpec := false
		for _, e := range spec.Elts {
			field, ok := e.(*ast.KeyValueExpr)
			if !ok {
				continue
			}
			key, _ := field.Key.(*ast.Ident)
			if key == nil {
				continue
			}
			switch key.Name {
			case "Default":
				isSpec = true
				g.Default = identIs(field.Value, "true")
			case "LockToDefault":
				g.Locked = identIs(field.Value, "true")
			case "PreRelease":
				if sel, ok := field.Value.(*ast.SelectorExpr); ok && stages[sel.Sel.Name] != "" {
					g.Stage = stages[sel.Sel.Name]
				}
			}
		}
		if isSpec {
			found[name] = g
		}
		return false
	})
	return nil
}

func identIs(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

func sortedGates(all map[string]LegacyGate) []LegacyGate {
	out := make([]LegacyGate, 0, len(all))
	for _, g := range all {
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
