package config

import (
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
)

// A kubelet configuration file is nearly always plain block YAML: keys and
// values one to a line, nested by indentation, lists of "- " items,
// comments. go-yaml v3 parses a 7-line drop-in in ~20 µs and ~100
// allocations; a run reads a config file and its drop-ins, often twenty.
// parseBlock builds the tree go-yaml v3 would build for documents made only
// of that (the kinds, styles, values, lines and columns Decode reads), and
// gives up (false) on anything else — flow collections but {} and [],
// multi-line or escaped scalars, anchors, tags, block scalars, complex keys,
// document markers — which go-yaml v3 then parses. Tests and FuzzDecode hold
// the trees equal.

// parseBlock parses data (a file of a few KiB: a bigger one is go-yaml's)
// into a document node, or false.
func parseBlock(data []byte) (*yamlv3.Node, bool) {
	if len(data) > memoFile || !plainText(data) || !ascii(data) {
		return nil, false // go-yaml counts columns in characters, refuses control characters
	}
	p := &blockParser{}
	for i, text := range strings.Split(string(data), "\n") {
		indent := len(text) - len(strings.TrimLeft(text, " "))
		rest := text[indent:]
		if rest == "" || rest[0] == '#' {
			continue // blank, or a comment
		}
		if strings.HasPrefix(text, "---") || strings.HasPrefix(text, "...") {
			return nil, false
		}
		p.lines = append(p.lines, blockLine{no: i + 1, indent: indent, text: text})
	}
	if len(p.lines) == 0 || p.lines[0].indent != 0 {
		return nil, false
	}
	top, ok := p.block(0)
	if !ok || p.next != len(p.lines) {
		return nil, false
	}
	return &yamlv3.Node{Kind: yamlv3.DocumentNode, Line: top.Line, Column: top.Column, Content: []*yamlv3.Node{top}}, true
}

type blockLine struct {
	no, indent int
	text       string
}

type blockParser struct {
	lines []blockLine
	next  int
}

// block parses the mapping or list whose lines start at column indent.
func (p *blockParser) block(indent int) (*yamlv3.Node, bool) {
	l := p.lines[p.next]
	if l.indent != indent {
		return nil, false
	}
	if isItem(l.text[indent:]) {
		return p.list(indent)
	}
	return p.mapping(indent, indent)
}

// ascii says data is printable ASCII and line breaks only.
func ascii(data []byte) bool {
	for _, c := range data {
		if (c < 0x20 || c >= 0x7f) && c != '\n' {
			return false
		}
	}
	return true
}

func isItem(s string) bool { return s == "-" || strings.HasPrefix(s, "- ") }

// mapping parses "key: value" lines at column indent; the first may start
// at column from, after a list item's "- " (at indent all the same).
func (p *blockParser) mapping(indent, from int) (*yamlv3.Node, bool) {
	m := &yamlv3.Node{Kind: yamlv3.MappingNode, Line: p.lines[p.next].no, Column: from + 1}
	first := true
	for p.next < len(p.lines) {
		l := p.lines[p.next]
		start := indent
		if first {
			start = from
		} else if l.indent != indent {
			break
		}
		first = false
		text := l.text[start:]
		if isItem(text) {
			return nil, false
		}
		key, rest, ok := scalar(text, true)
		if !ok || key.Value == "<<" && key.Style == 0 {
			return nil, false
		}
		key.Line, key.Column = l.no, start+1
		if !strings.HasPrefix(rest, ":") || len(rest) > 1 && rest[1] != ' ' {
			return nil, false
		}
		colon := len(l.text) - len(rest)
		rest = strings.TrimLeft(rest[1:], " ")
		p.next++
		var val *yamlv3.Node
		if rest != "" && rest[0] != '#' {
			col := len(l.text) - len(rest) + 1
			v, after, ok := scalar(rest, false)
			if !ok || !comment(after) {
				return nil, false
			}
			v.Line, v.Column = l.no, col
			val = v
		} else if p.next < len(p.lines) && (p.lines[p.next].indent > indent ||
			p.lines[p.next].indent == indent && isItem(p.lines[p.next].text[indent:])) {
			v, ok := p.block(p.lines[p.next].indent)
			if !ok {
				return nil, false
			}
			val = v
		} else {
			// "key:" and nothing under it: an empty value where the colon
			// ends, as go-yaml reads it.
			// "key:" and nothing under it: an empty value, placed by
			// go-yaml just after the colon.
			val = &yamlv3.Node{Kind: yamlv3.ScalarNode, Line: l.no, Column: colon + 2}
		}
		m.Content = append(m.Content, key, val)
	}
	return m, true
}

// list parses "- item" lines at column indent.
func (p *blockParser) list(indent int) (*yamlv3.Node, bool) {
	s := &yamlv3.Node{Kind: yamlv3.SequenceNode, Line: p.lines[p.next].no, Column: indent + 1}
	for p.next < len(p.lines) {
		l := p.lines[p.next]
		if l.indent != indent || !isItem(l.text[indent:]) {
			break
		}
		rest := strings.TrimLeft(l.text[indent+1:], " ")
		col := len(l.text) - len(rest)
		switch {
		case rest == "" || rest[0] == '#':
			return nil, false // an item on the lines below, or empty
		case isItem(rest):
			return nil, false // a list in a list item
		case isKey(rest):
			v, ok := p.mapping(col, col)
			if !ok {
				return nil, false
			}
			s.Content = append(s.Content, v)
		default:
			v, after, ok := scalar(rest, false)
			if !ok || !comment(after) {
				return nil, false
			}
			v.Line, v.Column = l.no, col+1
			s.Content = append(s.Content, v)
			p.next++
		}
	}
	return s, true
}

// isKey says s starts with a key and its colon.
func isKey(s string) bool {
	_, rest, ok := scalar(s, true)
	return ok && strings.HasPrefix(rest, ":") && (len(rest) == 1 || rest[1] == ' ')
}

// comment says s is nothing but white space and a comment.
func comment(s string) bool {
	s = strings.TrimLeft(s, " ")
	return s == "" || s[0] == '#'
}

// scalar reads a plain or quoted scalar at the start of s (a key when key
// is set: it ends at ": ") and returns it and what follows; false for what
// parseBlock leaves to go-yaml.
func scalar(s string, key bool) (*yamlv3.Node, string, bool) {
	if s == "" {
		return nil, "", false
	}
	switch s[0] {
	case '\'':
		var b strings.Builder
		for i := 1; i < len(s); i++ {
			if s[i] != '\'' {
				b.WriteByte(s[i])
				continue
			}
			if i+1 < len(s) && s[i+1] == '\'' {
				b.WriteByte('\'')
				i++
				continue
			}
			return &yamlv3.Node{Kind: yamlv3.ScalarNode, Style: yamlv3.SingleQuotedStyle, Value: b.String()}, afterQuote(s[i+1:], key), true
		}
		return nil, "", false
	case '"':
		end := strings.IndexByte(s[1:], '"')
		if end < 0 || strings.IndexByte(s[1:end+1], '\\') >= 0 {
			return nil, "", false
		}
		return &yamlv3.Node{Kind: yamlv3.ScalarNode, Style: yamlv3.DoubleQuotedStyle, Value: s[1 : end+1]}, afterQuote(s[end+2:], key), true
	case '{', '[':
		if !key && (strings.HasPrefix(s, "{}") || strings.HasPrefix(s, "[]")) {
			kind := yamlv3.MappingNode
			if s[0] == '[' {
				kind = yamlv3.SequenceNode
			}
			return &yamlv3.Node{Kind: kind, Style: yamlv3.FlowStyle}, s[2:], true
		}
		return nil, "", false
	}
	if !plainStart(s) {
		return nil, "", false
	}
	// A plain scalar ends at ": " (or a last ':'), or at " #".
	end := len(s)
	for i := 0; i < len(s); i++ {
		if s[i] == ':' && (i+1 == len(s) || s[i+1] == ' ') {
			if !key {
				return nil, "", false // "a: b: c"
			}
			end = i
			break
		}
		if s[i] == '#' && i > 0 && s[i-1] == ' ' {
			end = i
			break
		}
		if strings.IndexByte(",[]{}", s[i]) >= 0 {
			return nil, "", false // flow indicators: left to go-yaml
		}
	}
	v := strings.TrimRight(s[:end], " ")
	if v == "" {
		return nil, "", false
	}
	return &yamlv3.Node{Kind: yamlv3.ScalarNode, Value: v}, s[len(v):], true
}

// afterQuote is what follows a quoted scalar: a key's colon, or white space
// and a comment; "\x00" (never accepted) for anything else.
func afterQuote(rest string, key bool) string {
	if key && strings.HasPrefix(rest, ":") {
		return rest
	}
	if comment(rest) {
		return rest
	}
	return "\x00"
}

// plainStart says a plain scalar may start s: not an indicator (a "-", "?"
// or ":" only before a character that is not a space).
func plainStart(s string) bool {
	switch s[0] {
	case '#', ',', '[', ']', '{', '}', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
		return false
	case '-', '?', ':':
		return len(s) > 1 && s[1] != ' '
	}
	return true
}
