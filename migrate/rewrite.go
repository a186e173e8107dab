package migrate

import (
	"fmt"
	"strings"

	"github.com/kubeletcfg/kubeletcfg/flags"
	"github.com/kubeletcfg/kubeletcfg/nodefile"
	"github.com/kubeletcfg/kubeletcfg/units"
)

// Rewrite returns the new content of the environment files the kubelet's
// command line came from (origins says where each word of args was
// written), so that they hold only the flags that remain, plus --config when
// the old command line had none. An assignment that keeps all its words is
// not touched. Paths are node paths, read under root. A
// word written in a unit itself, or an assignment that spans lines, cannot be
// rewritten safely: that is an error naming it.
func (r *Result) Rewrite(args []string, origins []units.Source, root string) (map[string][]byte, error) {
	if len(origins) != len(args) {
		return nil, fmt.Errorf("the command line's origins are not known")
	}
	keep, hasConfig := r.kept(args)
	type group struct {
		file, name string
		line       int
		words      []string
		changed    bool // a word leaves it, or --config joins it
	}
	var groups []*group
	byKey := map[string]*group{}
	for i, a := range args {
		o := origins[i]
		if o.Var == "" {
			if !keep[i] {
				return nil, fmt.Errorf("%s:%d: %q is written in the unit itself: move it (kubeletcfg rewrites environment files only)", o.File, o.Line, a)
			}
			continue
		}
		key := o.File + "\x00" + o.Var
		g, ok := byKey[key]
		if !ok {
			g = &group{file: o.File, name: o.Var, line: o.Line}
			byKey[key] = g
			groups = append(groups, g)
		}
		if keep[i] {
			g.words = append(g.words, a)
		} else {
			g.changed = true
		}
	}
	if !hasConfig {
		if len(groups) == 0 {
			return nil, fmt.Errorf("no environment file to add --config to")
		}
		last := groups[len(groups)-1]
		last.words = append(last.words, r.Flags[0]) // --config=PATH
		last.changed = true
	}
	out := map[string][]byte{}
	for _, g := range groups {
		if !g.changed {
			continue // left as written: it may be a unit's Environment= line
		}
		content, ok := out[g.file]
		if !ok {
			r, err := nodefile.OpenRoot(root)
			if err != nil {
				return nil, err
			}
			content, err = r.ReadFile(g.file, nodefile.EnvFile)
			r.Close()
			if err != nil {
				return nil, err
			}
		}
		next, err := setAssignment(content, g.file, g.name, g.line, g.words)
		if err != nil {
			return nil, err
		}
		out[g.file] = next
	}
	return out, nil
}

// kept tells, for each word of args, whether it stays on the command line,
// and whether the command line names a --config file.
func (r *Result) kept(args []string) (map[int]bool, bool) {
	v := r.version
	resets := v.RegisterResets()
	keep := map[int]bool{}
	hasConfig := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			keep[i] = true // a stray word: the parser refused these already
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		name = strings.ReplaceAll(name, "_", "-")
		f, ok := v.Flag(name)
		if !ok && !strings.HasPrefix(a, "--") {
			for _, cand := range v.Flags() {
				if cand.Shorthand == name {
					f, ok = cand, true
				}
			}
		}
		takesNext := !hasValue && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-")
		if ok {
			takesNext = takesNext && f.Type != "bool" && f.NoOptDefVal == ""
		} else {
			takesNext = takesNext && !flags.BoolSomewhere(name)
		}
		_, reset := resets[f.Field]
		stays := ok && (f.Field == "" || reset)
		if ok && f.Name == "config" {
			hasConfig = true
		}
		keep[i] = stays
		if takesNext {
			i++
			keep[i] = stays
		}
	}
	return keep, hasConfig
}

// setAssignment replaces the assignment of name on line (1-based) with the
// words, double-quoted.
func setAssignment(content []byte, file, name string, line int, words []string) ([]byte, error) {
	value := strings.Join(words, " ")
	if strings.ContainsAny(value, "\"\\$`'\n") {
		return nil, fmt.Errorf("%s: the flags for %s cannot be written safely (quote, backslash or $ in them)", file, name)
	}
	lines := strings.Split(string(content), "\n")
	if line < 1 || line > len(lines) {
		return nil, fmt.Errorf("%s:%d: no such line", file, line)
	}
	l := strings.TrimSpace(lines[line-1])
	if !strings.HasPrefix(l, name+"=") && !strings.HasPrefix(l, name+" =") {
		return nil, fmt.Errorf("%s:%d: expected the assignment of %s", file, line, name)
	}
	if strings.HasSuffix(l, "\\") {
		return nil, fmt.Errorf("%s:%d: %s spans several lines: rewrite it by hand", file, line, name)
	}
	lines[line-1] = fmt.Sprintf("%s=\"%s\"", name, value)
	return []byte(strings.Join(lines, "\n")), nil
}

// CommandLine is the kubelet's command line after the migration: the words
// that stay, and --config when the old one had none.
func (r *Result) CommandLine(args []string) []string {
	keep, hasConfig := r.kept(args)
	var out []string
	for i, a := range args {
		if keep[i] {
			out = append(out, a)
		}
	}
	if !hasConfig {
		out = append(out, r.Flags[0])
	}
	return out
}
