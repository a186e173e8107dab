// Command legacyflags reads the flag registrations in the kubelet source of
// old releases (before the ones in schema/releases.txt) and writes the flags
// that no supported release has any more: their type (so "--flag value" reads
// right), the last release that had them and the deprecation notice it gave.
// With -gates-out it also writes the feature gates of those releases, each
// as the last release that had it declared it.
//
//	go run ./hack/legacyflags -out schema/data/legacy-flags.json -gates-out schema/data/legacy-gates.json v1.27.16 v1.26.15 ...
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// LegacyFlag is a kubelet flag of an old release.
type LegacyFlag struct {
	Type       string `json:"type"` // bool, or the kind of value it takes
	LastIn     string `json:"lastIn"`
	Deprecated string `json:"deprecated,omitempty"`
}

// The files where old kubelets register flags.
var sources = []string{
	"cmd/kubelet/app/options/options.go",
	"cmd/kubelet/app/options/container_runtime.go",
	"cmd/kubelet/app/options/osflags_others.go",
	"cmd/kubelet/app/options/globalflags.go",
	"cmd/kubelet/app/options/globalflags_linux.go",
	"cmd/kubelet/app/options/globalflags_providers.go",
	"pkg/kubelet/config/flags.go",
}

func main() {
	out := flag.String("out", "schema/data/legacy-flags.json", "output file")
	gatesOut := flag.String("gates-out", "", "also write the feature gates of the releases here")
	flag.Parse()
	all := map[string]LegacyFlag{}
	allGates := map[string]LegacyGate{}
	// Newest first: the last release that had a flag names it.
	for _, release := range flag.Args() {
		dir, err := moduleDir(release)
		if err != nil {
			fail(err)
		}
		found := map[string]LegacyFlag{}
		for _, src := range sources {
			if err := scan(filepath.Join(dir, src), found); err != nil {
				fail(err)
			}
		}
		if err := klogFlags(release, dir, found); err != nil {
			fail(err)
		}
		for name, f := range found {
			if _, seen := all[name]; !seen {
				f.LastIn = strings.TrimPrefix(release, "v")
				all[name] = f
			}
		}
		gates := map[string]LegacyGate{}
		if err := scanGates(dir, gates); err != nil {
			fail(err)
		}
		for name, g := range gates {
			if _, seen := allGates[name]; !seen {
				g.LastIn = strings.TrimPrefix(release, "v")
				allGates[name] = g
			}
		}
	}
	if *gatesOut != "" {
		data, err := json.MarshalIndent(sortedGates(allGates), "", " ")
		if err != nil {
			fail(err)
		}
		if err := os.WriteFile(*gatesOut, append(data, '\n'), 0o644); err != nil {
			fail(err)
		}
	}
	data, err := json.MarshalIndent(sorted(all), "", " ")
	if err != nil {
		fail(err)
	}
	if err := os.WriteFile(*out, append(data, '\n'), 0o644); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "legacyflags:", err)
	os.Exit(2)
}

func moduleDir(release string) (string, error) {
	return moduleDirOf("k8s.io/kubernetes@" + release)
}

// varTypes maps pflag registration methods to the type of their value.
var varTypes = map[string]string{
	"BoolVar": "bool", "BoolVarP": "bool", "Bool": "bool",
	"StringVar": "string", "StringVarP": "string", "String": "string",
	"Int32Var": "int32", "Int64Var": "int64", "IntVar": "int", "Uint64Var": "uint64", "Float64Var": "float64", "Float32Var": "float32",
	"DurationVar": "duration", "StringSliceVar": "stringSlice", "StringArrayVar": "stringArray", "IPVar": "ip",
}

// scan records every flag a source file registers. A file missing from a
// release is skipped.
func scan(path string, found map[string]LegacyFlag) error {
	f, err := parseSource(path)
	if f == nil || err != nil {
		return err
	}
	deprecated := map[string]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		method := sel.Sel.Name
		switch {
		case method == "MarkDeprecated" && len(call.Args) == 2:
			if name, ok := stringLit(call.Args[0]); ok {
				msg, _ := stringLit(call.Args[1])
				deprecated[name] = msg
			}
		case varTypes[method] != "" || method == "Var" || method == "VarP":
			if name, ok := flagName(method, call.Args); ok {
				t := varTypes[method]
				if t == "" {
					t = "value"
				}
				found[name] = LegacyFlag{Type: t}
			}
		case method == "register" || method == "registerDeprecated" || method == "pflagRegister":
			// globalflags.go: register(global, local, "name") takes a flag of
			// a library's flag set by name; its type is not in this file.
			if len(call.Args) >= 3 {
				if name, ok := stringLit(call.Args[2]); ok {
					name = strings.ReplaceAll(name, "_", "-")
					if _, ok := found[name]; !ok {
						found[name] = LegacyFlag{Type: "value"}
					}
				}
			}
		}
		return true
	})
	for name, msg := range deprecated {
		if f, ok := found[name]; ok {
			f.Deprecated = msg
			found[name] = f
		}
	}
	return nil
}

// parseSource parses a Go source file of a release; nil, nil when the
// release does not have it.
func parseSource(path string) (*ast.File, error) {
	src, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	f, err := parser.ParseFile(token.NewFileSet(), path, src, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return f, nil
}

// flagName finds the name argument of a registration call: the first string
// literal among its arguments (Var's value comes first, StringVar's pointer).
func flagName(method string, args []ast.Expr) (string, bool) {
	for _, a := range args {
		if s, ok := stringLit(a); ok && s != "" && !strings.Contains(s, " ") {
			return s, true
		}
	}
	return "", false
}

func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

// klogFlags adds klog's flags for releases whose kubelet exposed them: those
// whose component-base logging package registers all of klog's flags
// (klog.InitFlags), read from the klog version the release requires.
func klogFlags(release, dir string, found map[string]LegacyFlag) error {
	cb, err := moduleDirOf("k8s.io/component-base@v0." + strings.TrimPrefix(release, "v1."))
	if err != nil {
		return nil // releases before component-base: their klog flags are covered by later ones
	}
	logs, err := os.ReadFile(filepath.Join(cb, "logs", "logs.go"))
	if err != nil || !strings.Contains(string(logs), "klog.InitFlags(packageFlags)") {
		return nil
	}
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return err
	}
	version := ""
	for _, line := range strings.Split(string(gomod), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "k8s.io/klog/v2" && strings.HasPrefix(f[1], "v") {
			version = f[1]
		}
	}
	if version == "" {
		return fmt.Errorf("%s: go.mod names no k8s.io/klog/v2", release)
	}
	klog, err := moduleDirOf("k8s.io/klog/v2@" + version)
	if err != nil {
		return err
	}
	flags := map[string]LegacyFlag{}
	if err := scan(filepath.Join(klog, "klog.go"), flags); err != nil {
		return err
	}
	notice := deprecationNotice(string(logs))
	for name, f := range flags {
		name = strings.ReplaceAll(name, "_", "-")
		if _, ok := found[name]; !ok {
			f.Deprecated = notice
			found[name] = f
		}
	}
	return nil
}

// deprecationNotice is the notice component-base's logging package gives the
// klog flags it deprecates (its constant "deprecated"), if it has one.
func deprecationNotice(src string) string {
	for _, line := range strings.Split(src, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "const deprecated = "); ok {
			if s, err := strconv.Unquote(rest); err == nil {
				return s
			}
		}
	}
	return ""
}

func moduleDirOf(modAtVersion string) (string, error) {
	out, err := exec.Command("go", "mod", "download", "-json", modAtVersion).Output()
	if err != nil {
		return "", fmt.Errorf("download %s: %v", modAtVersion, err)
	}
	var m struct{ Dir string }
	if err := json.Unmarshal(out, &m); err != nil {
		return "", err
	}
	return m.Dir, nil
}

type entry struct {
	Name string `json:"name"`
	LegacyFlag
}

func sorted(m map[string]LegacyFlag) []entry {
	var out []entry
	for k, v := range m {
		out = append(out, entry{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
