// Package warning holds the one shape of a warning every command prints on
// stderr and puts in its JSON output: something the kubelet (or systemd)
// drops or ignores without a word, said with a code a program can match and
// the place it was written.
package warning

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Warning is something the kubelet or systemd would ignore or drop.
type Warning struct {
	Code    string `json:"code"` // stable, e.g. "systemd-ignored", "unknown-field"
	Message string `json:"message"`
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
	Field   string `json:"field,omitempty"`
}

// Codes of warnings. A code says what happened, not where.
const (
	SystemdIgnored  = "systemd-ignored"  // a unit or environment file line systemd ignores
	VariableUnused  = "variable-unused"  // an environment file whose variables reach no kubelet flag
	DocumentIgnored = "document-ignored" // a YAML document after the first, which the kubelet never reads
	DropinSkipped   = "dropin-skipped"   // a file in --config-dir that is not a *.conf drop-in
	Dropped         = "dropped"          // a value the kubelet drops (unknown or removed field, ...)
	UnknownField    = "unknown-field"    // a field the version does not have: the kubelet ignores it in a --config file
	DuplicateKey    = "duplicate-key"    // a key set twice: the last wins in a --config file, a drop-in is refused
	MoreProblems    = "more-problems"    // the count of problems not reported one by one
	MergeKey        = "merge-key"        // a YAML merge key that overrides a key
	NoEffect        = "no-effect"        // a setting something else overrides
	Deprecated      = "deprecated"       // a deprecated flag or field
	BelongsInFile   = "belongs-in-file"  // flags deprecated because their field belongs in the config file
	MapReplaced     = "map-replaced"     // a map flag that replaces a whole map a file set
	RelativePath    = "relative-path"    // a relative path the kubelet does not resolve against its file
	DropinResets    = "dropin-resets"    // drop-ins loaded as whole files: each resets what it does not set
	KeptAsFlag      = "kept-as-flag"     // a value only a flag can hold, kept on the command line
	LegacyDefault   = "legacy-default"   // a legacy flags-only default written out that weakens the node
	FailsCheck      = "fails-check"      // a written value that fails a CIS check
	MadeSecure      = "made-secure"      // a secure value written instead of a legacy default
	Unknowable      = "unknowable"       // what only the running node can tell
	NotFound        = "not-found"        // a file the setup names that is not there
	StartRefused    = "start-refused"    // what makes the kubelet exit once started: its runtime, its credential provider configuration
	RuntimeNote     = "runtime-note"     // what the container runtime's configuration holds that the reader should know
	Other           = "other"            // anything else
)

// String renders file:line:column: field: message.
func (w Warning) String() string {
	var b strings.Builder
	if w.File != "" {
		b.WriteString(w.File)
		if w.Line > 0 {
			fmt.Fprintf(&b, ":%d", w.Line)
			if w.Column > 0 {
				fmt.Fprintf(&b, ":%d", w.Column)
			}
		}
		b.WriteString(": ")
	}
	if w.Field != "" {
		b.WriteString(w.Field + ": ")
	}
	b.WriteString(w.Message)
	return b.String()
}

// At builds a warning for a place in a file.
func At(code, file string, line int, format string, args ...any) Warning {
	return Warning{Code: code, File: file, Line: line, Message: fmt.Sprintf(format, args...)}
}

// New builds a warning that names no file.
func New(code, format string, args ...any) Warning {
	return Warning{Code: code, Message: fmt.Sprintf(format, args...)}
}

// MaxPrinted is how many warnings Print writes before it sums up the rest.
const MaxPrinted = 200

// Print writes one "warning: ..." line per warning, the first MaxPrinted of
// them, then how many more there are.
func Print(out io.Writer, ws []Warning) {
	for i, w := range ws {
		if i == MaxPrinted {
			fmt.Fprintf(out, "warning: and %d more warnings\n", len(ws)-i)
			return
		}
		fmt.Fprintf(out, "warning: %s\n", Truncate(w.String(), maxLine))
	}
}

// maxLine bounds one printed line: a hostile file can hold a megabyte-long
// argument, and echoing it whole helps nobody.
const maxLine = 2000

// Truncate shortens s to about n bytes, saying how much was left out.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return fmt.Sprintf("%s… (%d more bytes)", s[:n], len(s)-n)
}
