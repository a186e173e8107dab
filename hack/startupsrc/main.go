// Command startupsrc reads the kubelet's start-up messages out of the source
// of every release in schema/releases.txt and writes them to
// schema/data/startup.json: for each probe of the start-up table (package
// startup), the string literal that contains the probe's text in the
// package the probe names, with the file and line it stands on. A probe a
// release has no words for is left out of that release.
//
//	go run ./hack/startupsrc [-out schema/data/startup.json] [-releases schema/releases.txt]
//
// It downloads (through the Go module proxy, as `go mod download`) the
// k8s.io/kubernetes release and the few modules the words live in, at the
// versions that release's go.mod requires; it builds nothing.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/kubeletcfg/kubeletcfg/schema"
	"github.com/kubeletcfg/kubeletcfg/startup"
)

func main() {
	out := flag.String("out", "schema/data/startup.json", "output file")
	releasesFile := flag.String("releases", "schema/releases.txt", "the releases to read")
	flag.Parse()
	releases, err := readReleases(*releasesFile)
	if err != nil {
		fail(err)
	}
	all := map[string]schema.StartupData{}
	for _, r := range releases {
		fmt.Fprintf(os.Stderr, "startupsrc: %s\n", r.release)
		data, err := readRelease(r.release)
		if err != nil {
			fail(fmt.Errorf("%s: %w", r.release, err))
		}
		all[r.minor] = data
	}
	data, err := json.MarshalIndent(all, "", " ")
	if err != nil {
		fail(err)
	}
	if err := os.WriteFile(*out, append(data, '\n'), 0o644); err != nil {
		fail(err)
	}
}

type release struct{ minor, release string }

func readReleases(path string) ([]release, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []release
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.Fields(line)
		if len(parts) < 2 {
			return nil, fmt.Errorf("%s: %q: want MINOR RELEASE", path, line)
		}
		out = append(out, release{parts[0], parts[1]})
	}
	return out, sc.Err()
}

// module is a downloaded module: its path@version and directory.
type module struct{ id, dir string }

func readRelease(rel string) (schema.StartupData, error) {
	var data schema.StartupData
	k8s, goMod, err := download("k8s.io/kubernetes", rel)
	if err != nil {
		return data, err
	}
	requires, err := requirements(goMod)
	if err != nil {
		return data, err
	}
	staging := "v0." + strings.TrimPrefix(rel, "v1.")
	modules := map[string]*module{"": k8s}
	modDir := func(path string) (*module, error) {
		if m, ok := modules[path]; ok {
			return m, nil
		}
		ver, ok := requires[path]
		switch {
		case strings.HasPrefix(path, "k8s.io/") && ok:
			ver = staging // a staging module: replaced by its published release
		case !ok:
			modules[path] = nil // the release does not use it
			return nil, nil
		}
		m, _, err := download(path, ver)
		if err != nil {
			return nil, err
		}
		modules[path] = m
		return m, nil
	}
	out := map[string][]schema.StartupWord{}
	for _, p := range startup.Probes() {
		for _, loc := range p.In {
			m, err := modDir(loc.Module)
			if err != nil {
				return data, err
			}
			if m == nil {
				continue
			}
			words, err := scanDir(m, loc.Dir, p.Text)
			if err != nil {
				return data, err
			}
			if len(words) > 0 {
				out[p.Text] = words
				break
			}
		}
	}
	data.Words = out
	for _, dir := range []string{"cmd/kubelet", "pkg/kubelet"} {
		exits, err := scanExits(k8s, dir)
		if err != nil {
			return data, err
		}
		data.Exits = append(data.Exits, exits...)
	}
	return data, nil
}

// download fetches a module with the go command and returns it and its
// go.mod file.
func download(path, version string) (*module, string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", path+"@"+version)
	cmd.Stderr = os.Stderr
	raw, err := cmd.Output()
	if err != nil {
		return nil, "", fmt.Errorf("go mod download %s@%s: %w", path, version, err)
	}
	var info struct{ Dir, GoMod, Error string }
	if err := json.Unmarshal(raw, &info); err != nil {
		return nil, "", err
	}
	if info.Error != "" || info.Dir == "" {
		return nil, "", fmt.Errorf("go mod download %s@%s: %s", path, version, info.Error)
	}
	return &module{id: path + "@" + version, dir: info.Dir}, info.GoMod, nil
}

// requirements reads the required versions of a go.mod file.
func requirements(goMod string) (map[string]string, error) {
	data, err := os.ReadFile(goMod)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	inBlock := false
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if i := strings.Index(line, "//"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		switch {
		case line == "require (":
			inBlock = true
			continue
		case inBlock && line == ")":
			inBlock = false
			continue
		case strings.HasPrefix(line, "require "):
			line = strings.TrimPrefix(line, "require ")
		case !inBlock:
			continue
		}
		if f := strings.Fields(line); len(f) == 2 {
			out[f[0]] = f[1]
		}
	}
	return out, nil
}

// scanDir finds the string literals of a package (Linux build, no tests)
// that contain text.
func scanDir(m *module, dir, text string) ([]schema.StartupWord, error) {
	full := filepath.Join(m.dir, dir)
	entries, err := os.ReadDir(full)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []schema.StartupWord
	seen := map[string]bool{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		if ok, err := linux.MatchFile(full, name); err != nil || !ok {
			continue
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, filepath.Join(full, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			expr, ok := n.(ast.Expr)
			if !ok {
				return true
			}
			s, ok := constString(expr)
			if !ok {
				return true
			}
			if strings.Contains(s, text) && !seen[s] {
				seen[s] = true
				pos := fset.Position(expr.Pos())
				out = append(out, schema.StartupWord{Format: s, Source: fmt.Sprintf("%s/%s:%d", m.id, filepath.ToSlash(filepath.Join(dir, name)), pos.Line)})
			}
			return false // a literal's parts are not looked at again
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Format < out[j].Format })
	return out, nil
}

// constString folds a string literal or a + of them.
func constString(e ast.Expr) (string, bool) {
	switch x := e.(type) {
	case *ast.BasicLit:
		if x.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(x.Value)
		return s, err == nil
	case *ast.BinaryExpr:
		if x.Op != token.ADD {
			return "", false
		}
		l, ok := constString(x.X)
		if !ok {
			return "", false
		}
		r, ok := constString(x.Y)
		return l + r, ok
	case *ast.ParenExpr:
		return constString(x.X)
	}
	return "", false
}

// scanExits finds, in every package under dir, the messages the kubelet
// logs right before it exits: a logger's Error(err, "msg") (or klog's
// ErrorS) directly followed by os.Exit.
func scanExits(m *module, dir string) ([]schema.StartupWord, error) {
	var out []schema.StartupWord
	seen := map[string]bool{}
	root := filepath.Join(m.dir, dir)
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if name == "testdata" || name == "testing" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		if ok, err := linux.MatchFile(filepath.Dir(path), name); err != nil || !ok {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(m.dir, path)
		ast.Inspect(f, func(n ast.Node) bool {
			block, ok := n.(*ast.BlockStmt)
			if !ok {
				return true
			}
			for i := 1; i < len(block.List); i++ {
				if !isCall(block.List[i], "os", "Exit") {
					continue
				}
				msg, pos, ok := loggedError(block.List[i-1])
				if !ok || seen[msg] {
					continue
				}
				seen[msg] = true
				out = append(out, schema.StartupWord{Format: msg, Source: fmt.Sprintf("%s/%s:%d", m.id, filepath.ToSlash(rel), fset.Position(pos).Line)})
			}
			return true
		})
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Format < out[j].Format })
	return out, err
}

// isCall tells a statement that calls pkg.fn(...).
func isCall(s ast.Stmt, pkg, fn string) bool {
	es, ok := s.(*ast.ExprStmt)
	if !ok {
		return false
	}
	call, ok := es.X.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != fn {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == pkg
}

// loggedError reads the message of a statement that logs an error:
// X.Error(err, "msg", ...) or X.ErrorS(err, "msg", ...).
func loggedError(s ast.Stmt) (string, token.Pos, bool) {
	es, ok := s.(*ast.ExprStmt)
	if !ok {
		return "", 0, false
	}
	call, ok := es.X.(*ast.CallExpr)
	if !ok || len(call.Args) < 2 {
		return "", 0, false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || (sel.Sel.Name != "Error" && sel.Sel.Name != "ErrorS") {
		return "", 0, false
	}
	msg, ok := constString(call.Args[1])
	return msg, call.Pos(), ok
}

// linux is the build the kubelet ships for: the files it compiles.
var linux = build.Context{GOOS: "linux", GOARCH: "amd64", Compiler: "gc", CgoEnabled: true}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "startupsrc:", err)
	os.Exit(2)
}
