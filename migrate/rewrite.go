package migrate

import (
	"fmt"
	"path"
	"strings"

	"github.com/kubeletcfg/kubeletcfg/flags"
	"github.com/kubeletcfg/kubeletcfg/kubeadm"
	"github.com/kubeletcfg/kubeletcfg/nodefile"
	"github.com/kubeletcfg/kubeletcfg/units"
	"github.com/kubeletcfg/kubeletcfg/warning"
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
		flags      []string // the words that stay, each flag as --name=value
		changed    bool     // a word leaves it, or --config joins it
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
			if f, ok := r.flagAt(args, i); ok {
				g.flags = append(g.flags, f)
			}
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
		last.flags = append(last.flags, r.Flags[0])
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
		var next []byte
		var err error
		if isKubeadmFlagsEnv(g.file, g.name) {
			next, err = r.kubeadmFlagsEnv(content, g.file, g.line, g.flags)
		} else {
			next, err = setAssignment(content, g.file, g.name, g.line, g.words)
		}
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

// flagAt is the flag that starts at args[i] as --name=value: its long name,
// its value (the next word when it takes one, "true" for a bare boolean).
// ok is false for the value word of the flag before it.
func (r *Result) flagAt(args []string, i int) (string, bool) {
	v := r.version
	a := args[i]
	if i > 0 && r.takesNext(args, i-1) {
		return "", false
	}
	if !strings.HasPrefix(a, "-") {
		return a, true // a stray word, kept as it is
	}
	name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
	f, ok := v.Flag(strings.ReplaceAll(name, "_", "-"))
	if !ok && !strings.HasPrefix(a, "--") {
		for _, cand := range v.Flags() {
			if cand.Shorthand == name {
				f, ok = cand, true
			}
		}
	}
	if ok {
		name = f.Name
	}
	switch {
	case hasValue:
	case r.takesNext(args, i):
		value = args[i+1]
	default:
		value = "true"
	}
	return "--" + name + "=" + value, true
}

// takesNext tells whether the flag at args[i] takes args[i+1] as its value,
// as kept reads the command line.
func (r *Result) takesNext(args []string, i int) bool {
	a := args[i]
	if !strings.HasPrefix(a, "-") || strings.Contains(a, "=") || i+1 >= len(args) || strings.HasPrefix(args[i+1], "-") {
		return false
	}
	name := strings.ReplaceAll(strings.TrimLeft(a, "-"), "_", "-")
	f, ok := r.version.Flag(name)
	if !ok && !strings.HasPrefix(a, "--") {
		for _, cand := range r.version.Flags() {
			if cand.Shorthand == name {
				f, ok = cand, true
			}
		}
	}
	if ok {
		return f.Type != "bool" && f.NoOptDefVal == ""
	}
	return !flags.BoolSomewhere(name)
}

// isKubeadmFlagsEnv tells kubeadm's kubeadm-flags.env, which kubeadm itself
// reads back on upgrade.
func isKubeadmFlagsEnv(file, name string) bool {
	return path.Base(file) == "kubeadm-flags.env" && name == kubeadm.EnvVar
}

// kubeadmFlagsEnv is the new kubeadm-flags.env: the one assignment kubeadm's
// parser reads (the whole file is that assignment, every flag --name=value).
// A file that holds anything else is refused, naming the line; an assignment
// left without flags keeps --config, as kubeadm 1.32–1.34 and 1.35.0 fail on
// an empty value.
func (r *Result) kubeadmFlagsEnv(content []byte, file string, line int, flags []string) ([]byte, error) {
	for i, l := range strings.Split(string(content), "\n") {
		if t := strings.TrimSpace(l); t != "" && i+1 != line {
			return nil, fmt.Errorf("%s:%d: kubeadm reads this file as the single assignment of %s, and this line is something else: move it (to /etc/default/kubelet, for a variable the unit uses) before migrating", file, i+1, kubeadm.EnvVar)
		}
	}
	if len(flags) == 0 {
		flags = []string{r.Flags[0]}
		r.Warnings = append(r.Warnings, warning.At(warning.Other, file, line, "kept %s in %s, the same as the unit's: kubeadm 1.32–1.34 and 1.35.0 fail on an empty %s", r.Flags[0], kubeadm.EnvVar, kubeadm.EnvVar))
	}
	return kubeadm.FormatFlagsEnv(flags)
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
