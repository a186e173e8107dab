package kubeadm

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/kubeletcfg/kubeletcfg/warning"
)

// EnvVar is the one variable kubeadm-flags.env holds.
const EnvVar = "KUBELET_KUBEADM_ARGS"

// FlagsEnvFile is where kubeadm writes the node's kubelet flags.
const FlagsEnvFile = "/var/lib/kubelet/kubeadm-flags.env"

// Arg is one flag as kubeadm's argument parser keeps it.
type Arg struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

func (a Arg) String() string { return "--" + a.Name + "=" + a.Value }

// FlagsEnv is kubeadm-flags.env as kubeadm reads it on upgrade.
type FlagsEnv struct {
	// Args are the flags kubeadm keeps, sorted by name then value as
	// kubeadm sorts them (and writes them back when it rewrites the file).
	Args     []Arg             `json:"args"`
	Warnings []warning.Warning `json:"warnings,omitempty"`
}

// ErrNoFlags is an empty KUBELET_KUBEADM_ARGS where the kubeadm release fails
// on one.
var ErrNoFlags = errors.New("no flags found")

// ParseFlagsEnv reads kubeadm-flags.env the way kubeadm r does
// (phases/kubelet/flags.go ReadKubeletDynamicEnvFile, then
// util.ArgumentsFromCommand): the whole trimmed file must start with
// KUBELET_KUBEADM_ARGS=, the rest (double quotes trimmed from both ends) is
// split on blanks, a word without "=" takes the next word as its value, and
// only "--name=value" words are kept. An error is what makes kubeadm fail.
func ParseFlagsEnv(data []byte, file string, r *Release) (*FlagsEnv, error) {
	content := strings.TrimSpace(string(data))
	out := &FlagsEnv{}
	prefix := EnvVar + "="
	if !strings.HasPrefix(content, prefix) {
		first, _, _ := strings.Cut(content, "\n")
		return nil, fmt.Errorf("%s:%d: kubeadm %s refuses the file: it must start with %q (kubeadm reads the whole file as that one assignment), not %q",
			file, lineOf(data, content), r.Minor, prefix, warning.Truncate(first, 80))
	}
	flags := strings.Trim(strings.TrimPrefix(content, prefix), `"`)
	if i := strings.IndexByte(flags, '\n'); i >= 0 {
		out.Warnings = append(out.Warnings, warning.At(warning.Other, file, lineOf(data, flags[i+1:]),
			"kubeadm reads the rest of the file as part of %s: the words after the first line become flags (and the last flag of the first line keeps its closing quote)", EnvVar))
	}
	words := strings.Fields(flags)
	if len(words) == 0 {
		if r.EnvEmptyFails {
			return nil, fmt.Errorf("%s: kubeadm %s fails on it: %w in %s (kubernetes/kubeadm#3279)", file, r.Minor, ErrNoFlags, EnvVar)
		}
		return out, nil
	}
	var joined []string
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case strings.Contains(w, "="):
			joined = append(joined, w)
		case i+1 < len(words):
			if strings.HasPrefix(words[i+1], "-") {
				out.Warnings = append(out.Warnings, warning.At(warning.Other, file, lineOf(data, w),
					"kubeadm joins %q and the next word into %q: write every flag as --name=value", w, w+"="+words[i+1]))
			}
			joined = append(joined, w+"="+words[i+1])
			i++
		default:
			out.Warnings = append(out.Warnings, warning.At(warning.Dropped, file, lineOf(data, w),
				"kubeadm drops %q: the last word has no value (write every flag as --name=value)", w))
		}
	}
	for i, w := range joined {
		name, value, ok := strings.Cut(strings.TrimPrefix(w, "--"), "=")
		if !strings.HasPrefix(w, "--") || !ok || name == "" {
			if i != 0 { // kubeadm takes a bad first word for the program's name and skips it silently
				out.Warnings = append(out.Warnings, warning.At(warning.Dropped, file, lineOf(data, w),
					"kubeadm skips %q: a flag must read --name=value", w))
			} else {
				out.Warnings = append(out.Warnings, warning.At(warning.Dropped, file, lineOf(data, w),
					"kubeadm skips %q without a word (it takes a first word that is not --name=value for a program's name)", w))
			}
			continue
		}
		out.Args = append(out.Args, Arg{Name: name, Value: value})
	}
	sort.SliceStable(out.Args, func(i, j int) bool {
		if out.Args[i].Name == out.Args[j].Name {
			return out.Args[i].Value < out.Args[j].Value
		}
		return out.Args[i].Name < out.Args[j].Name
	})
	for i := 1; i < len(out.Args); i++ {
		if out.Args[i].Name == out.Args[i-1].Name {
			out.Warnings = append(out.Warnings, warning.At(warning.Other, file, 0,
				"--%s is given more than once: the kubelet takes the last, and kubeadm, when it rewrites the file, sorts them by value (the last is then %q)",
				out.Args[i].Name, lastValue(out.Args, out.Args[i].Name)))
			for i+1 < len(out.Args) && out.Args[i+1].Name == out.Args[i].Name {
				i++
			}
		}
	}
	return out, nil
}

func lastValue(args []Arg, name string) string {
	v := ""
	for _, a := range args {
		if a.Name == name {
			v = a.Value
		}
	}
	return v
}

// lineOf is the 1-based line of the first occurrence of s in data, 0 when s
// is not found.
func lineOf(data []byte, s string) int {
	if s == "" {
		return 0
	}
	i := strings.Index(string(data), s)
	if i < 0 {
		return 0
	}
	return strings.Count(string(data[:i]), "\n") + 1
}

// FormatFlagsEnv writes kubeadm-flags.env in the one form every kubeadm
// release reads back unchanged and systemd splits into the same words: a
// single KUBELET_KUBEADM_ARGS="…" line, every flag as --name=value, no
// comment, no other assignment. No flags is an error: kubeadm 1.32–1.34 (and
// 1.35.0) fail on an empty value when they read the file.
func FormatFlagsEnv(flags []string) ([]byte, error) {
	if len(flags) == 0 {
		return nil, fmt.Errorf("%s would be empty: kubeadm 1.32–1.34 and 1.35.0 fail on it (%w)", EnvVar, ErrNoFlags)
	}
	for _, f := range flags {
		name, _, ok := strings.Cut(strings.TrimPrefix(f, "--"), "=")
		if !strings.HasPrefix(f, "--") || !ok || name == "" {
			return nil, fmt.Errorf("%q: kubeadm-flags.env takes every flag as --name=value (kubeadm joins a word without \"=\" with the next one)", f)
		}
		if i := strings.IndexFunc(f, unsafeInEnv); i >= 0 {
			return nil, fmt.Errorf("%q: %q cannot be written in kubeadm-flags.env (kubeadm and systemd split on blanks; quotes, backslashes and $ change the value)", f, f[i:i+1])
		}
	}
	return []byte(EnvVar + `="` + strings.Join(flags, " ") + "\"\n"), nil
}

func unsafeInEnv(r rune) bool {
	return r <= ' ' || r == 0x7f || strings.ContainsRune("\"'\\$`", r)
}
