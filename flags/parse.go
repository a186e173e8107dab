// Package flags reads a kubelet command line the way a kubelet version's flag
// parser reads it, and applies the flags that have a config field onto a
// KubeletConfiguration with the kubelet's own semantics (a map flag replaces
// the whole map, --feature-gates merges gate by gate, the last one wins).
package flags

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/spf13/pflag"

	"github.com/kubeletcfg/kubeletcfg/config"
	"github.com/kubeletcfg/kubeletcfg/schema"
	"github.com/kubeletcfg/kubeletcfg/warning"
)

// Occurrence is one flag as written on the command line.
type Occurrence struct {
	Flag  schema.Flag // the kubelet's flag (normalized name)
	Value string      // the value as the parser hands it to the flag
	Index int         // position of the flag's word in the arguments
}

// CommandLine is a parsed kubelet command line.
type CommandLine struct {
	Version     *schema.Version
	Occurrences []Occurrence
}

// Error is a command line the kubelet would refuse.
type Error struct {
	Arg    string // the offending word
	Index  int    // its position, -1 when unknown
	Reason string
}

func (e *Error) Error() string {
	if e.Arg == "" {
		return e.Reason
	}
	return fmt.Sprintf("%q: %s", e.Arg, e.Reason)
}

// Parse reads args (one argument per word, as the kubelet receives them) for
// kubelet v. A run parses the same command line several times (audit,
// apply's two layerings): it is parsed once, each caller getting its own
// copy.
func Parse(args []string, v *schema.Version) (*CommandLine, error) {
	key, keep := parsedKey(args, v)
	if keep {
		parsesMu.Lock()
		cl, ok := parses[key]
		parsesMu.Unlock()
		if ok {
			return cl.clone(), nil
		}
	}
	cl, err := parseArgs(args, v)
	if err != nil || !keep {
		return cl, err
	}
	parsesMu.Lock()
	if len(parses) >= 64 {
		clear(parses)
	}
	parses[key] = cl
	parsesMu.Unlock()
	return cl.clone(), nil
}

var (
	parsesMu sync.Mutex
	parses   = map[string]*CommandLine{}
)

// parsedKey is what a parse is remembered by: the version and the words,
// each after its length; false for command lines too long to keep.
func parsedKey(args []string, v *schema.Version) (string, bool) {
	var b strings.Builder
	b.WriteString(v.Minor)
	for _, a := range args {
		if b.Len()+len(a) > 64<<10 {
			return "", false
		}
		b.WriteString("\x00")
		b.WriteString(strconv.Itoa(len(a)))
		b.WriteString(":")
		b.WriteString(a)
	}
	return b.String(), true
}

func (cl *CommandLine) clone() *CommandLine {
	return &CommandLine{Version: cl.Version, Occurrences: slices.Clone(cl.Occurrences)}
}

func parseArgs(args []string, v *schema.Version) (*CommandLine, error) {
	for i, a := range args {
		if err := checkDashes(a, i); err != nil {
			return nil, err
		}
	}
	cl := &CommandLine{Version: v}
	fs := pflag.NewFlagSet("kubelet", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		return pflag.NormalizedName(strings.ReplaceAll(name, "_", "-"))
	})
	fs.Usage = func() {}
	for _, f := range v.Flags() {
		rec := &recorder{flag: f, cl: cl}
		fl := fs.VarPF(rec, f.Name, f.Shorthand, "")
		fl.NoOptDefVal = f.NoOptDefVal
		if f.Type == "bool" && fl.NoOptDefVal == "" {
			fl.NoOptDefVal = "true"
		}
	}
	if err := fs.Parse(args); err != nil {
		return nil, parseError(err, args, v)
	}
	if rest := fs.Args(); len(rest) > 0 {
		idx := indexOf(args, rest[0])
		reason := "the kubelet takes no positional arguments and refuses to start (\"unknown command\")"
		if idx > 0 && strings.HasPrefix(args[idx-1], "-") && !strings.Contains(args[idx-1], "=") {
			reason += fmt.Sprintf("; %s is a boolean flag: write %s=%s", args[idx-1], args[idx-1], rest[0])
		}
		return nil, &Error{Arg: rest[0], Index: idx, Reason: reason}
	}
	for i := range cl.Occurrences {
		cl.Occurrences[i].Index = -1
	}
	locate(cl.Occurrences, args)
	return cl, nil
}

// recorder stands in for a kubelet flag value: it checks the syntax the
// kubelet's value type accepts and records the value in order.
type recorder struct {
	flag schema.Flag
	cl   *CommandLine
	last string
}

func (r *recorder) String() string { return r.last }
func (r *recorder) Type() string   { return r.flag.Type }
func (r *recorder) Set(s string) error {
	if err := checkSyntax(r.flag, s); err != nil {
		return err
	}
	r.last = s
	r.cl.Occurrences = append(r.cl.Occurrences, Occurrence{Flag: r.flag, Value: s})
	return nil
}

// checkDashes refuses look-alike dashes pasted from web pages.
func checkDashes(a string, i int) error {
	r, _ := utf8.DecodeRuneInString(a)
	switch r {
	case '\u2014', '\u2013', '\u2012', '\u2212', '\u2010', '\u2011', '\uFE63', '\uFF0D':
		return &Error{Arg: a, Index: i, Reason: fmt.Sprintf("starts with %U, not an ASCII '-': pasted from a web page? The kubelet reads this as a positional argument and refuses to start", r)}
	}
	return nil
}

func parseError(err error, args []string, v *schema.Version) error {
	msg := err.Error()
	const unknown = "unknown flag: --"
	if i := strings.Index(msg, unknown); i >= 0 {
		name := strings.ReplaceAll(msg[i+len(unknown):], "_", "-")
		return &Error{Arg: "--" + name, Index: indexOfFlag(args, name), Reason: unknownFlagReason(name, v)}
	}
	if strings.HasPrefix(msg, "unknown shorthand flag") {
		return &Error{Index: -1, Reason: msg}
	}
	return &Error{Index: -1, Reason: msg}
}

func unknownFlagReason(name string, v *schema.Version) string {
	if removed := schema.FlagRemovedIn(name); removed != "" && v.AtLeast(removed) {
		return fmt.Sprintf("kubelet %s has no such flag: it was removed in %s; the kubelet refuses to start (\"unknown flag\")", v.Minor, removed)
	}
	if old, ok := schema.Legacy(name); ok {
		why := ""
		if old.Deprecated != "" {
			why = fmt.Sprintf(" (its notice then: %q)", old.Deprecated)
		}
		return fmt.Sprintf("kubelet %s has no such flag: the last kubelet with it was %s%s; the kubelet refuses to start (\"unknown flag\")", v.Minor, old.LastIn, why)
	}
	for _, other := range schema.Versions() {
		if _, ok := other.Flag(name); ok {
			return fmt.Sprintf("kubelet %s has no such flag (kubelet %s has it); the kubelet refuses to start (\"unknown flag\")", v.Minor, other.Minor)
		}
	}
	var names []string
	for _, f := range v.Flags() {
		names = append(names, f.Name)
	}
	hint := ""
	if s := config.Closest(name, names); s != "" {
		hint = fmt.Sprintf(" (did you mean --%s?)", s)
	}
	return fmt.Sprintf("kubelet %s has no such flag%s; the kubelet refuses to start (\"unknown flag\")", v.Minor, hint)
}

func indexOf(args []string, word string) int {
	for i, a := range args {
		if a == word {
			return i
		}
	}
	return -1
}

func indexOfFlag(args []string, name string) int {
	for i, a := range args {
		n := strings.TrimLeft(a, "-")
		n, _, _ = strings.Cut(n, "=")
		if strings.ReplaceAll(n, "_", "-") == name && strings.HasPrefix(a, "-") {
			return i
		}
	}
	return -1
}

// locate finds the argument index of each occurrence, in order.
func locate(occ []Occurrence, args []string) {
	next := 0
	for i := range occ {
		for j := next; j < len(args); j++ {
			a := args[j]
			if !strings.HasPrefix(a, "-") {
				continue
			}
			n := strings.TrimLeft(a, "-")
			n, _, _ = strings.Cut(n, "=")
			n = strings.ReplaceAll(n, "_", "-")
			if n == occ[i].Flag.Name || (occ[i].Flag.Shorthand != "" && strings.HasPrefix(n, occ[i].Flag.Shorthand) && !strings.HasPrefix(a, "--")) {
				occ[i].Index = j
				next = j + 1
				break
			}
		}
	}
}

// Value returns the value of the last occurrence of a flag, if any.
func (c *CommandLine) Value(name string) (string, bool) {
	for i := len(c.Occurrences) - 1; i >= 0; i-- {
		if c.Occurrences[i].Flag.Name == name {
			return c.Occurrences[i].Value, true
		}
	}
	return "", false
}

// Deprecations are the deprecated flags of the command line, each once
// with the kubelet's notice; the many deprecated only because their field
// belongs in the config file are named together (warning.BelongsInFile).
func (c *CommandLine) Deprecations() []warning.Warning {
	var out []warning.Warning
	var movable []string
	seen := map[string]bool{}
	for _, o := range c.Occurrences {
		if o.Flag.Deprecated == "" || seen[o.Flag.Name] {
			continue
		}
		seen[o.Flag.Name] = true
		if o.Flag.BelongsInConfigFile() {
			movable = append(movable, "--"+o.Flag.Name)
		} else {
			out = append(out, warning.New(warning.Deprecated, "--%s is deprecated: %s", o.Flag.Name, o.Flag.Deprecated))
		}
	}
	if len(movable) > 0 {
		out = append(out, warning.New(warning.BelongsInFile, "%s: deprecated as flags, these belong in the config file (kubeletcfg migrate moves them)", strings.Join(movable, ", ")))
	}
	return out
}

// Remaining returns the occurrences of flags that have no config field.
func (c *CommandLine) Remaining() []Occurrence {
	var out []Occurrence
	for _, o := range c.Occurrences {
		if o.Flag.Field == "" {
			out = append(out, o)
		}
	}
	return out
}
