package units

import (
	"bytes"
	"slices"
	"strings"

	"github.com/kubeletcfg/kubeletcfg/warning"
)

// longLineMax is systemd's LONG_LINE_MAX: the longest line, and the longest
// line with its continuations, a unit file may have.
const longLineMax = 1 << 20

// serviceSections are the sections systemd knows in a service unit.
var serviceSections = []string{"Unit", "Service", "Install"}

// assignment is one "Key=Value" of a unit file or drop-in.
type assignment struct {
	Section, Key, Value string
	File                string // node path
	Line                int    // first line of the assignment
}

// parseUnitFile splits unit file data into assignments the way systemd's
// config_parse() does (systemd.syntax(7)):
//
//   - lines end at "\n", "\r", "\r\n" or NUL; a UTF-8 byte order mark at the
//     start is skipped;
//   - a line whose first non-blank character is "#" or ";" is a comment,
//     even in the middle of a continued line;
//   - a line ending in an unescaped backslash continues on the next line,
//     the backslash becoming a space;
//   - "[Name]" starts a section; assignments before any section and in
//     unknown sections are ignored (warned about unless the section starts
//     with "X-");
//   - "Key=Value" with blanks around both trimmed; a line without "=" or
//     without a key is ignored with a warning.
//
// A malformed section header, a line that is not UTF-8 or too long makes
// systemd refuse the whole unit: that is an error.
func parseUnitFile(file string, data []byte) ([]assignment, []warning.Warning, error) {
	p := &unitParser{file: file}
	for lineNo := 1; len(data) > 0; lineNo++ {
		var line []byte
		line, data = nextLine(data)
		if err := p.physicalLine(lineNo, line); err != nil {
			return nil, nil, err
		}
	}
	if p.cont != nil {
		if err := p.logicalLine(string(p.cont)); err != nil {
			return nil, nil, err
		}
	}
	return p.out, p.warnings, nil
}

// nextLine returns the first line of data and the data after its end of
// line, as systemd's read_line() sees them: an end of line is a run of
// "\n", "\r" and NUL in which no kind repeats and nothing follows a NUL.
func nextLine(data []byte) (line, rest []byte) {
	i := bytes.IndexAny(data, "\n\r\x00")
	if i < 0 {
		return data, nil
	}
	line = data[:i]
	var seen int
	for ; i < len(data); i++ {
		kind := eolKind(data[i])
		if kind == 0 || seen&eolNUL != 0 || seen&kind != 0 {
			break
		}
		seen |= kind
	}
	return line, data[i:]
}

const (
	eolLF = 1 << iota
	eolCR
	eolNUL
)

func eolKind(c byte) int {
	switch c {
	case '\n':
		return eolLF
	case '\r':
		return eolCR
	case 0:
		return eolNUL
	}
	return 0
}

type unitParser struct {
	file      string
	cont      []byte // the logical line so far, when continued
	contLine  int    // where the continued line started
	line      int    // first line of the logical line being parsed
	bomSeen   bool
	section   string
	inSection bool // section is known
	ignored   bool // in an unknown section
	out       []assignment
	warnings  []warning.Warning
}

func (p *unitParser) physicalLine(lineNo int, line []byte) error {
	if len(line) > longLineMax {
		return errorAt(p.file, lineNo, "line too long")
	}
	if isCommentLine(line) {
		return nil
	}
	if !p.bomSeen {
		if rest, ok := bytes.CutPrefix(line, []byte("\xef\xbb\xbf")); ok {
			line, p.bomSeen = rest, true
		}
	}
	if p.cont == nil {
		p.contLine = lineNo
	}
	logical := append(p.cont, line...)
	if len(logical) > longLineMax {
		return errorAt(p.file, p.contLine, "continued line too long")
	}
	// Only the new part is scanned: the continuation so far ends in the
	// blank its backslash became, which escapes nothing, so the line's
	// escapes start afresh (systemd rescans the whole line, in quadratic time).
	if endsInEscape(line) {
		logical[len(logical)-1] = ' '
		p.cont = logical
		return nil
	}
	p.cont = nil
	return p.logicalLine(string(logical))
}

func isCommentLine(line []byte) bool {
	t := bytes.TrimLeft(line, whitespace)
	return len(t) > 0 && (t[0] == '#' || t[0] == ';')
}

// endsInEscape reports whether the line ends in a backslash that is not
// itself escaped.
func endsInEscape(line []byte) bool {
	escaped := false
	for _, c := range line {
		if escaped {
			escaped = false
		} else if c == '\\' {
			escaped = true
		}
	}
	return escaped
}

func (p *unitParser) logicalLine(l string) error {
	p.line = p.contLine
	l = strings.Trim(l, whitespace)
	if l == "" {
		return nil
	}
	if !utf8Valid(l) {
		return errorAt(p.file, p.line, "line is not valid UTF-8")
	}
	if l[0] == '[' {
		return p.sectionHeader(l)
	}
	if !p.inSection {
		if !p.ignored {
			p.warn("assignment outside of a section, ignoring")
		}
		return nil
	}
	key, value, ok := strings.Cut(l, "=")
	switch {
	case !ok:
		p.warn("missing '=', ignoring line")
	case key == "":
		p.warn("missing key name before '=', ignoring line")
	default:
		p.out = append(p.out, assignment{
			Section: p.section,
			Key:     strings.Trim(key, whitespace),
			Value:   strings.Trim(value, whitespace),
			File:    p.file,
			Line:    p.line,
		})
	}
	return nil
}

func (p *unitParser) sectionHeader(l string) error {
	if !strings.HasSuffix(l, "]") || len(l) < 2 {
		return errorAt(p.file, p.line, "invalid section header %q", l)
	}
	name := l[1 : len(l)-1]
	if !stringIsSafe(name) {
		return errorAt(p.file, p.line, "bad characters in section header %q", l)
	}
	if slices.Contains(serviceSections, name) {
		p.section, p.inSection, p.ignored = name, true, false
		return nil
	}
	if !strings.HasPrefix(name, "X-") {
		p.warn("unknown section %q, ignoring", name)
	}
	p.section, p.inSection, p.ignored = "", false, true
	return nil
}

func (p *unitParser) warn(format string, args ...any) {
	p.warnings = append(p.warnings, warnAt(p.file, p.line, format, args...))
}
