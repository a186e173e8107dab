package units

import (
	"errors"
	"fmt"
	"strings"
)

// command is one command line of ExecStart= as systemd keeps it after
// loading the unit: split into words, unquoted, unescaped and with
// specifiers resolved. Environment variables are expanded only when the
// command runs (see expand).
type command struct {
	Prefix string   // the prefix characters of the first word: - @ : + ! !!
	Path   string   // the executable
	Argv   []string // argv before variable expansion
	File   string   // where the command was written
	Line   int
}

// noEnvExpand reports the ":" prefix: no variable expansion.
func (c command) noEnvExpand() bool { return strings.Contains(c.Prefix, ":") }

// execParse is what one ExecStart= value yields.
type execParse struct {
	cmds []command
	// notes are warnings about accepted input (unknown escapes kept).
	notes []string
	// dropped says why systemd ignored (part of) the value: a bad first
	// word, or a bad command prefixed with "-".
	dropped []string
}

// parseExecValue parses the value of one ExecStart= assignment like
// systemd's config_parse_exec(): words are split at blanks, quotes group,
// C escapes are decoded, a lone ";" separates commands and "\;" is a
// literal ";" argument; specifiers are resolved in each word. The first
// word may carry the prefixes "-", "@", ":", "+", "!" and "!!"; with "@"
// the second word is argv[0]. An error is what makes systemd refuse to
// load the unit.
func parseExecValue(value string, sp *specifiers) (*execParse, error) {
	res := &execParse{}
	p := value
	for {
		first, rest, found, warn, err := extractWordWarn(p, exUnquote|exCUnescape)
		if err != nil {
			res.dropped = append(res.dropped, err.Error()+", ignoring")
			return res, nil
		}
		if warn != "" {
			res.notes = append(res.notes, warn)
		}
		if !found {
			return res, nil
		}
		if first == ";" {
			p = rest
			continue
		}
		cmd, rest, more, err := parseCommand(first, rest, sp, res)
		if err != nil {
			if !strings.Contains(cmd.Prefix, "-") {
				return nil, err
			}
			res.dropped = append(res.dropped, err.Error()+", ignoring (the command has the \"-\" prefix)")
			return res, nil
		}
		res.cmds = append(res.cmds, cmd)
		if !more {
			return res, nil
		}
		p = rest
	}
}

// parseCommand parses one command given its first word and the text after
// it. more reports a ";" after the command, after being what follows it.
func parseCommand(first, rest string, sp *specifiers, res *execParse) (cmd command, after string, more bool, err error) {
	prefix, sep := splitExecPrefix(first)
	cmd.Prefix = prefix
	exe := first[len(prefix):]
	if cmd.Path, err = sp.expand(exe); err != nil {
		return cmd, "", false, fmt.Errorf("resolving specifiers in %q: %w", exe, err)
	}
	if err := checkExecutable(cmd.Path); err != nil {
		return cmd, "", false, err
	}
	if !sep {
		cmd.Argv = append(cmd.Argv, cmd.Path)
	}
	cmd.Path = simplifyPath(cmd.Path)
	args, after, more, err := parseArgs(rest, sp, res)
	if err != nil {
		return cmd, "", false, err
	}
	cmd.Argv = append(cmd.Argv, args...)
	if len(cmd.Argv) == 0 {
		return cmd, "", false, errors.New("empty executable name or zeroeth argument")
	}
	return cmd, after, more, nil
}

// parseArgs parses the arguments of a command up to the end or a ";".
func parseArgs(rest string, sp *specifiers, res *execParse) (args []string, after string, more bool, err error) {
	for rest != "" {
		if isSeparator(rest, ";") {
			return args, rest[skipSpace(rest, 1):], true, nil
		}
		if isSeparator(rest, `\;`) {
			args = append(args, ";")
			rest = rest[skipSpace(rest, 2):]
			continue
		}
		w, r, found, warn, err := extractWordWarn(rest, exUnquote|exCUnescape)
		if err != nil {
			return nil, "", false, err
		}
		if warn != "" {
			res.notes = append(res.notes, warn)
		}
		if !found {
			break
		}
		resolved, err := sp.expand(w)
		if err != nil {
			return nil, "", false, fmt.Errorf("resolving specifiers in %q: %w", w, err)
		}
		args, rest = append(args, resolved), r
	}
	return args, "", false, nil
}

// isSeparator reports whether s starts with the token tok followed by a
// blank or the end.
func isSeparator(s, tok string) bool {
	return strings.HasPrefix(s, tok) && (len(s) == len(tok) || isSpace(s[len(tok)]))
}

// splitExecPrefix returns the prefix characters of the first word of a
// command line, and whether "@" (argv[0] given separately) is among them.
func splitExecPrefix(w string) (prefix string, separateArgv0 bool) {
	var ignore, noEnv, plus, bang, bangbang bool
	i := 0
loop:
	for ; i < len(w); i++ {
		switch c := w[i]; {
		case c == '-' && !ignore:
			ignore = true
		case c == '@' && !separateArgv0:
			separateArgv0 = true
		case c == ':' && !noEnv:
			noEnv = true
		case c == '+' && !plus && !bang && !bangbang:
			plus = true
		case c == '!' && !plus && !bang && !bangbang:
			bang = true
		case c == '!' && !plus && !bangbang:
			bang, bangbang = false, true
		default:
			break loop
		}
	}
	return w[:i], separateArgv0
}

// checkExecutable applies systemd's checks to the executable of a command.
func checkExecutable(p string) error {
	switch {
	case p == "":
		return errors.New("empty executable path in command line")
	case !stringIsSafe(p):
		return fmt.Errorf("executable name contains special characters: %q", p)
	case strings.HasSuffix(p, "/"):
		return fmt.Errorf("executable path specifies a directory: %s", p)
	case strings.HasPrefix(p, "/") && !pathValid(p):
		return fmt.Errorf("invalid executable path: %s", p)
	case !strings.HasPrefix(p, "/") && !filenameValid(p):
		return fmt.Errorf("neither a valid executable name nor an absolute path: %s", p)
	}
	return nil
}

const (
	pathMax = 4096
	nameMax = 255
)

func pathValid(p string) bool {
	if p == "" || len(p) >= pathMax {
		return false
	}
	for _, c := range strings.Split(p, "/") {
		if len(c) > nameMax {
			return false
		}
	}
	return true
}

func filenameValid(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.Contains(s, "/") && len(s) <= nameMax
}

// simplifyPath drops duplicate slashes, "." components and a trailing
// slash, as systemd's path_simplify() does; ".." is kept.
func simplifyPath(p string) string {
	if p == "" {
		return p
	}
	s := strings.Join(splitPath(p), "/")
	if strings.HasPrefix(p, "/") {
		return "/" + s
	}
	if s == "" {
		return "."
	}
	return s
}

// envVar is a variable of the service's environment and where it was set.
type envVar struct {
	Value string
	Src   Source
}

// expansion is a command line after variable expansion.
type expansion struct {
	Argv    []string
	Sources []Source // one for each element of Argv
	Notes   []string // unset or invalid variables referenced
}

// expand expands environment variables in the command's argv the way
// systemd does when it runs the command (unless the ":" prefix forbids):
//
//   - a word that is "$NAME" as a whole becomes the variable's value split
//     at blanks, quotes grouping and removed, zero or more words;
//   - "${NAME}" anywhere in a word is replaced by the value as it is;
//   - "$$" is "$"; "$NAME" inside a longer word and "${NAME:-x}" stay as
//     written;
//   - unset variables are empty.
func (c command) expand(env map[string]envVar) expansion {
	lit := Source{File: c.File, Line: c.Line}
	var x expansion
	for _, w := range c.Argv {
		if c.noEnvExpand() {
			x.add(w, lit)
			continue
		}
		if name, ok := wholeWordVar(w); ok {
			x.addSplit(name, env)
			continue
		}
		v, src, notes := replaceEnv(w, env)
		if src.Var == "" {
			src = lit
		}
		x.add(v, src)
		x.Notes = append(x.Notes, notes...)
	}
	return x
}

func (x *expansion) add(w string, src Source) {
	x.Argv = append(x.Argv, w)
	x.Sources = append(x.Sources, src)
}

func (x *expansion) addSplit(name string, env map[string]envVar) {
	v, ok := env[name]
	switch {
	case !validEnvName(name):
		x.Notes = append(x.Notes, fmt.Sprintf("invalid variable name %q: the word $%s is dropped", name, name))
	case !ok:
		x.Notes = append(x.Notes, fmt.Sprintf("variable %s is not set: the word $%s is dropped", name, name))
	default:
		src := v.Src
		src.Var = name
		for _, w := range splitValue(v.Value) {
			x.add(w, src)
		}
	}
}

// wholeWordVar reports a word that is a "$NAME" reference as a whole: a
// "$" not followed by "{" or "$". The name may be invalid or empty.
func wholeWordVar(w string) (string, bool) {
	if len(w) == 0 || w[0] != '$' {
		return "", false
	}
	if len(w) > 1 && (w[1] == '{' || w[1] == '$') {
		return "", false
	}
	return w[1:], true
}

// replaceEnv expands "${NAME}" and "$$" in a word. src is the source of the
// first variable that had a value.
func replaceEnv(w string, env map[string]envVar) (out string, src Source, notes []string) {
	if !strings.Contains(w, "$") {
		return w, Source{}, nil
	}
	var b strings.Builder
	start := 0 // start of the text not yet copied
	for i := 0; i < len(w); i++ {
		if w[i] != '$' || i+1 == len(w) {
			continue
		}
		switch w[i+1] {
		case '$':
			b.WriteString(w[start : i+1])
			start = i + 2
			i++
		case '{':
			end := strings.IndexAny(w[i+2:], ":}")
			if end < 0 {
				// Unterminated: the rest stays as written.
				i = len(w)
				continue
			}
			if w[i+2+end] == ':' {
				// "${NAME:…}" is not supported here: left as written,
				// scanning on after the ":".
				i += 2 + end
				continue
			}
			name := w[i+2 : i+2+end]
			b.WriteString(w[start:i])
			v, ok := env[name]
			switch {
			case !validEnvName(name):
				notes = append(notes, fmt.Sprintf("invalid variable name %q in ${%s}: it expands to nothing", name, name))
			case !ok:
				notes = append(notes, fmt.Sprintf("variable %s is not set: ${%s} expands to nothing", name, name))
			default:
				b.WriteString(v.Value)
				if src.Var == "" {
					src = v.Src
					src.Var = name
				}
			}
			start = i + 2 + end + 1
			i = start - 1
		}
	}
	b.WriteString(w[start:])
	return b.String(), src, notes
}

// SplitCommandLine splits and expands an ExecStart= value the way systemd
// does for kubelet.service, with env as the service's environment: quotes,
// C escapes, "$VAR" as a whole word split into words, "${VAR}" as part of
// one word, "$$", and the %-specifiers that do not need the node's files.
// The "-", "@", ":", "+" and "!" prefixes are honoured ("@" makes the second
// word argv[0]). The result is argv as the process receives it. It is an
// error if the value holds more or less than one command, or if systemd
// would refuse or ignore it.
func SplitCommandLine(s string, env map[string]string) ([]string, error) {
	cmd, err := parseOneCommand(s, &specifiers{unit: "kubelet.service"})
	if err != nil {
		return nil, err
	}
	vars := make(map[string]envVar, len(env))
	for k, v := range env {
		if i := strings.IndexByte(v, 0); i >= 0 {
			v = v[:i]
		}
		vars[k] = envVar{Value: v}
	}
	return cmd.expand(vars).Argv, nil
}

// parseOneCommand parses an ExecStart= value that must hold exactly one
// command, failing wherever systemd would ignore part of it.
func parseOneCommand(s string, sp *specifiers) (command, error) {
	if strings.IndexByte(s, 0) >= 0 {
		return command{}, errors.New("command line contains a NUL byte")
	}
	res, err := parseExecValue(s, sp)
	if err != nil {
		return command{}, err
	}
	if len(res.dropped) > 0 {
		return command{}, errors.New(res.dropped[0])
	}
	switch len(res.cmds) {
	case 0:
		return command{}, errors.New("empty command line")
	case 1:
		return res.cmds[0], nil
	}
	return command{}, fmt.Errorf("%d commands separated by \";\", expected one", len(res.cmds))
}
