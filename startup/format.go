package startup

import (
	"regexp"
	"strconv"
	"strings"
)

// pattern is one of the kubelet's format strings turned into a regular
// expression that finds it in what the kubelet printed: each verb captures
// what it printed, literal text must appear as it is.
type pattern struct {
	format string
	re     *regexp.Regexp
	// literal is how much fixed text the format has: a longer one is a more
	// specific match.
	literal int
	// leadingVerb: the format starts with a verb (its fixed text starts
	// after what the verb printed).
	leadingVerb bool
}

// compileFormat turns a Go format string into a pattern. %q captures a
// quoted string, %d a number, every other verb (%s, %v, %w, %+v, %T...)
// the shortest text that lets the rest match (the last one, all to the end
// of the message).
func compileFormat(format string) (*pattern, error) {
	return compileFormatLast(format, `(.*)`)
}

// compileFormatLast is compileFormat with the last verb's expression given
// (for a format found many times in one message: it must stop).
func compileFormatLast(format, last string) (*pattern, error) {
	var b strings.Builder
	b.WriteString("(?s)")
	literal := 0
	lastVerb := lastVerbAt(format)
	for i := 0; i < len(format); {
		c := format[i]
		if c != '%' {
			j := i
			for j < len(format) && format[j] != '%' {
				j++
			}
			b.WriteString(regexp.QuoteMeta(format[i:j]))
			literal += j - i
			i = j
			continue
		}
		if i+1 < len(format) && format[i+1] == '%' {
			b.WriteString("%")
			literal++
			i += 2
			continue
		}
		// flags, width, precision, then the verb
		j := i + 1
		for j < len(format) && strings.IndexByte("+-# 0123456789.[]*", format[j]) >= 0 {
			j++
		}
		if j >= len(format) {
			b.WriteString(regexp.QuoteMeta(format[i:]))
			break
		}
		verb := format[j]
		switch {
		case verb == 'q':
			b.WriteString(`("(?:[^"\\]|\\.)*"|` + "`[^`]*`" + `|'(?:[^'\\]|\\.)*')`)
		case verb == 'd':
			b.WriteString(`(-?[0-9]+)`)
		case i == 0:
			// What a leading verb prints is a name: the text before it
			// is the errors that wrap this one.
			b.WriteString(`([^\s\[\],]+)`)
		case i == lastVerb:
			b.WriteString(last)
		default:
			b.WriteString(`(.*?)`)
		}
		i = j + 1
	}
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, err
	}
	lead := strings.HasPrefix(format, "%") && !strings.HasPrefix(format, "%%")
	return &pattern{format: format, re: re, literal: literal, leadingVerb: lead}, nil
}

// lastVerbAt is the index of the last verb's % in format, or -1.
func lastVerbAt(format string) int {
	last := -1
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		if i+1 < len(format) && format[i+1] == '%' {
			i++
			continue
		}
		last = i
	}
	return last
}

// match finds the pattern in s and returns what its verbs printed (quoted
// strings unquoted), or nil.
func (p *pattern) match(s string) []string {
	m := p.re.FindStringSubmatch(s)
	if m == nil {
		return nil
	}
	out := make([]string, len(m)-1)
	for i, g := range m[1:] {
		out[i] = balanced(unquote(g))
	}
	return out
}

// balanced cuts what a verb printed as a Go slice ("[a b]") at its closing
// bracket: a greedy last verb also took what followed it in a list of
// errors.
func balanced(s string) string {
	if !strings.HasPrefix(s, "[") {
		return s
	}
	depth := 0
	for i, c := range s {
		switch c {
		case '[':
			depth++
		case ']':
			depth--
			if depth == 0 {
				return s[:i+1]
			}
		}
	}
	return s
}

// unquote undoes %q's quoting, leaving anything else as it is.
func unquote(s string) string {
	if len(s) < 2 {
		return s
	}
	switch {
	case s[0] == '"' && s[len(s)-1] == '"':
		if u, err := strconv.Unquote(s); err == nil {
			return u
		}
	case s[0] == '`' && s[len(s)-1] == '`':
		return s[1 : len(s)-1]
	}
	return s
}

// verbs counts a format's verbs.
func verbs(format string) int {
	n := 0
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		if i+1 < len(format) && format[i+1] == '%' {
			i++
			continue
		}
		n++
	}
	return n
}
