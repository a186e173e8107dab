package units

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/kubeletcfg/kubeletcfg/nodefile"
)

// EnvLine is one assignment of an environment file, in file order.
type EnvLine struct {
	Key, Value string
	Line       int // line on which the assignment starts
	// Ignored says why systemd drops this assignment ("" when it is used),
	// e.g. for "export FOO=bar", whose key "export FOO" is not a valid name.
	Ignored string
}

// ReadEnvFile reads one environment file in the syntax of systemd's
// EnvironmentFile= (see parseEnvFile) and returns the variables it sets,
// later assignments overriding earlier ones, and all its assignments in
// order, including those systemd ignores. It follows current systemd; see
// ReadEnvFileVersion for older ones.
func ReadEnvFile(path string) (map[string]string, []EnvLine, error) {
	return ReadEnvFileVersion(path, 0)
}

// ReadEnvFileVersion is ReadEnvFile for the given systemd version (as
// SystemdVersion finds it; 0 for current). Before systemd 254 a comment
// line ending in a backslash also comments out the next line.
func ReadEnvFileVersion(path string, systemdVersion int) (map[string]string, []EnvLine, error) {
	data, err := nodefile.ReadFile(path, nodefile.EnvFile)
	if err != nil {
		return nil, nil, &Error{File: path, Msg: "reading environment file", Err: err}
	}
	lines, err := parseEnvFileVersion(path, data, systemdVersion)
	if err != nil {
		return nil, nil, err
	}
	return envMap(lines), lines, nil
}

// envMap returns the variables that the used lines set.
func envMap(lines []EnvLine) map[string]string {
	m := map[string]string{}
	for _, l := range lines {
		if l.Ignored == "" {
			m[l.Key] = l.Value
		}
	}
	return m
}

// parseEnvFile parses environment file data the way systemd's
// load_env_file() does (systemd ≥ 254; see parseEnvFileVersion):
//
//   - KEY=VALUE assignments, one a line; blanks around the key and "=" and
//     at both ends of an unquoted value are dropped; lines without "=" are
//     ignored; a line starting with "#" or ";" is a comment (a backslash at
//     its end does not continue it).
//   - An unquoted value keeps inner blanks and quotes verbatim, "#" included;
//     a backslash takes the next character literally and a backslash at the
//     end of a line continues the value on the next line.
//   - '…' keeps everything verbatim up to the next "'"; "…" decodes \" \\ \`
//     and \$, drops a backslash-newline, and keeps other backslashes. Quoted
//     parts may span lines; text right after a closing quote is appended.
//   - Both "\n" and "\r" end lines; data after a NUL byte is not read.
//
// Assignments whose key is not a valid variable name ("export FOO" among
// them) are returned with Ignored set, as systemd ignores them. Invalid
// UTF-8 makes systemd reject the whole file, and is an error here.
func parseEnvFile(name string, data []byte) ([]EnvLine, error) {
	return parseEnvFileVersion(name, data, 0)
}

// commentContinuationDropped is the systemd version from which a comment
// line ending in a backslash no longer continues onto the next line.
const commentContinuationDropped = 254

// parseEnvFileVersion is parseEnvFile for a systemd version (0: current).
func parseEnvFileVersion(name string, data []byte, systemdVersion int) ([]EnvLine, error) {
	if i := bytes.IndexByte(data, 0); i >= 0 {
		data = data[:i]
	}
	p := &envParser{name: name, line: 1}
	p.commentContinues = systemdVersion > 0 && systemdVersion < commentContinuationDropped
	for i, c := range data {
		if err := p.step(c); err != nil {
			return nil, err
		}
		if c == '\n' || (c == '\r' && (i+1 == len(data) || data[i+1] != '\n')) {
			p.line++
		}
	}
	if err := p.finish(); err != nil {
		return nil, err
	}
	return p.out, nil
}

type envState int

const (
	stPreKey envState = iota
	stKey
	stPreValue
	stValue
	stValueEscape
	stSingleQuote
	stDoubleQuote
	stDoubleQuoteEscape
	stComment
	stCommentEscape
)

// envParser is the state machine of systemd's env-file parser.
type envParser struct {
	name             string
	line             int
	state            envState
	commentContinues bool // systemd < 254

	keyLine   int
	key       []byte
	keyTrim   int // start of the key's trailing blanks, -1 if none
	value     []byte
	valueTrim int // start of the value's trailing blanks, -1 if none

	out []EnvLine
}

func isNewline(c byte) bool { return c == '\n' || c == '\r' }

func (p *envParser) step(c byte) error {
	switch p.state {
	case stPreKey:
		p.preKey(c)
	case stKey:
		p.inKey(c)
	case stPreValue:
		return p.preValue(c)
	case stValue:
		return p.inValue(c)
	case stValueEscape:
		p.state = stValue
		if !isNewline(c) {
			p.value = append(p.value, c)
		}
	case stSingleQuote:
		p.singleQuote(c)
	case stDoubleQuote:
		p.doubleQuote(c)
	case stDoubleQuoteEscape:
		p.doubleQuoteEscape(c)
	case stComment:
		p.comment(c)
	case stCommentEscape:
		p.state = stComment
		if isNewline(c) && !p.commentContinues {
			p.state = stPreKey
		}
	}
	return nil
}

func (p *envParser) preKey(c byte) {
	switch {
	case c == '#' || c == ';':
		p.state = stComment
	case !isSpace(c):
		p.state = stKey
		p.keyLine = p.line
		p.key = append(p.key[:0], c)
		p.keyTrim = -1
	}
}

func (p *envParser) inKey(c byte) {
	switch {
	case isNewline(c):
		// A line without "=": ignored.
		p.state = stPreKey
	case c == '=':
		p.state = stPreValue
		p.value = p.value[:0]
		p.valueTrim = -1
	default:
		p.keyTrim = trackBlank(p.keyTrim, len(p.key), c)
		p.key = append(p.key, c)
	}
}

// trackBlank updates the start of a trailing run of blanks before c is
// appended at index n.
func trackBlank(trim, n int, c byte) int {
	if !isSpace(c) {
		return -1
	}
	if trim < 0 {
		return n
	}
	return trim
}

func (p *envParser) preValue(c byte) error {
	switch {
	case isNewline(c):
		p.state = stPreKey
		return p.push(false)
	case c == '\'':
		p.state = stSingleQuote
	case c == '"':
		p.state = stDoubleQuote
	case c == '\\':
		p.state = stValueEscape
	case !isSpace(c):
		p.state = stValue
		p.value = append(p.value, c)
	}
	return nil
}

func (p *envParser) inValue(c byte) error {
	switch {
	case isNewline(c):
		p.state = stPreKey
		return p.push(true)
	case c == '\\':
		p.state = stValueEscape
		p.valueTrim = -1
	default:
		p.valueTrim = trackBlank(p.valueTrim, len(p.value), c)
		p.value = append(p.value, c)
	}
	return nil
}

func (p *envParser) singleQuote(c byte) {
	if c == '\'' {
		p.state = stPreValue
		return
	}
	p.value = append(p.value, c)
}

func (p *envParser) doubleQuote(c byte) {
	switch c {
	case '"':
		p.state = stPreValue
	case '\\':
		p.state = stDoubleQuoteEscape
	default:
		p.value = append(p.value, c)
	}
}

func (p *envParser) doubleQuoteEscape(c byte) {
	p.state = stDoubleQuote
	switch {
	case strings.IndexByte("\"\\`$", c) >= 0:
		p.value = append(p.value, c)
	case c != '\n':
		p.value = append(p.value, '\\', c)
	}
}

func (p *envParser) comment(c byte) {
	switch {
	case c == '\\':
		p.state = stCommentEscape
	case isNewline(c):
		p.state = stPreKey
	}
}

// finish handles the end of the data: an assignment in progress counts,
// even inside an unterminated quote.
func (p *envParser) finish() error {
	switch p.state {
	case stPreValue, stValueEscape, stSingleQuote, stDoubleQuote, stDoubleQuoteEscape:
		return p.push(false)
	case stValue:
		return p.push(true)
	}
	return nil
}

// push records the assignment just read. trimValue drops the value's
// trailing blanks, as systemd does for an unquoted value.
func (p *envParser) push(trimValue bool) error {
	key := p.key
	if p.keyTrim >= 0 {
		key = key[:p.keyTrim]
	}
	value := p.value
	if trimValue && p.valueTrim >= 0 {
		value = value[:p.valueTrim]
	}
	l := EnvLine{Key: string(key), Value: string(value), Line: p.keyLine}
	if !utf8Valid(l.Key) {
		return errorAt(p.name, l.Line, "invalid UTF-8 in key %q", l.Key)
	}
	if !utf8Valid(l.Value) {
		return errorAt(p.name, l.Line, "invalid UTF-8 in the value of %s", l.Key)
	}
	l.Ignored = ignoredReason(l.Key)
	p.out = append(p.out, l)
	return nil
}

// ignoredReason says why systemd ignores an assignment to key, or "".
func ignoredReason(key string) string {
	if validEnvName(key) {
		return ""
	}
	if rest, ok := strings.CutPrefix(key, "export"); ok && rest != "" && isSpace(rest[0]) {
		return fmt.Sprintf("invalid variable name %q: systemd does not understand \"export\"", key)
	}
	return fmt.Sprintf("invalid variable name %q", key)
}

// ReadNodeEnvFile is ReadEnvFile for node path p of the node under root ("" for
// the running node), read inside the root and for the node's systemd version.
func ReadNodeEnvFile(root, p string) (map[string]string, []EnvLine, error) {
	n, err := openNode(root)
	if err != nil {
		return nil, nil, err
	}
	defer n.Close()
	data, err := n.ReadFile(p, nodefile.EnvFile)
	if err != nil {
		return nil, nil, &Error{File: p, Msg: "reading environment file", Err: err}
	}
	lines, err := parseEnvFileVersion(p, data, n.systemdVersion())
	if err != nil {
		return nil, nil, err
	}
	return envMap(lines), lines, nil
}
