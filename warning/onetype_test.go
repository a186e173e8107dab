package warning

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestOneWarningType holds the module to one exported warning type: no
// other package exports a type named like a warning, and every exported
// field or method called Warnings (or Warning) hands on warning.Warning, so
// that callers match a warning by its code, never by its text.
func TestOneWarningType(t *testing.T) {
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "_build", "testdata", "node_modules", ".git":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		checked++
		inWarning := filepath.Dir(path) == "../warning"
		for _, decl := range f.Decls {
			switch decl := decl.(type) {
			case *ast.GenDecl:
				for _, spec := range decl.Specs {
					ts, ok := spec.(*ast.TypeSpec)
					if !ok {
						continue
					}
					if ts.Name.IsExported() && strings.HasSuffix(ts.Name.Name, "Warning") && !inWarning {
						t.Errorf("%s: type %s: the one warning type is warning.Warning", fset.Position(ts.Pos()), ts.Name.Name)
					}
					if st, ok := ts.Type.(*ast.StructType); ok {
						for _, field := range st.Fields.List {
							for _, name := range field.Names {
								checkWarnings(t, fset, name, field.Type, inWarning)
							}
						}
					}
				}
			case *ast.FuncDecl:
				if decl.Type.Results != nil && len(decl.Type.Results.List) == 1 {
					checkWarnings(t, fset, decl.Name, decl.Type.Results.List[0].Type, inWarning)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("read %d files of the module, want it whole", checked)
	}
}

// checkWarnings refuses an exported Warnings (or Warning) of another type
// than []warning.Warning (warning.Warning).
func checkWarnings(t *testing.T, fset *token.FileSet, name *ast.Ident, typ ast.Expr, inWarning bool) {
	t.Helper()
	if name.Name != "Warnings" && name.Name != "Warning" {
		return
	}
	want := "warning.Warning"
	if inWarning {
		want = "Warning"
	}
	if name.Name == "Warnings" {
		want = "[]" + want
	}
	if got := types(typ); got != want && !(name.Name == "Warning" && got == "bool") {
		t.Errorf("%s: %s is %s: hand on %s", fset.Position(name.Pos()), name.Name, got, want)
	}
}

// types renders a type expression as written.
func types(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return types(e.X) + "." + e.Sel.Name
	case *ast.ArrayType:
		return "[]" + types(e.Elt)
	case *ast.StarExpr:
		return "*" + types(e.X)
	case *ast.MapType:
		return "map[" + types(e.Key) + "]" + types(e.Value)
	}
	return "?"
}
