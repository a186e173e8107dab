package config

import (
	"bytes"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	yamlv3 "go.yaml.in/yaml/v3"
)

// The kubelet reads a configuration file with sigs.k8s.io/yaml: go-yaml v2
// reads the YAML (YAML 1.1: yes is true, 0777 is octal) into Go values and
// encoding/json prints them. Decode parses every file with go-yaml v3 for
// the positions of its keys anyway; parsing it a second time with v2 took
// as long again. kubeletJSON makes the same JSON from the v3 tree, resolving
// each plain scalar by v2's rules, for documents made only of what both
// parsers read alike: mappings, lists, plain and quoted scalars. Anything
// else (anchors, aliases, merge keys, tags, block scalars, keys that are not
// strings, tabs, carriage returns, directives, numbers JSON has no form for)
// takes v2's own reading. Tests hold the two equal.

// kubeletJSON is sigs.k8s.io/yaml's YAMLToJSON of data, whose first
// document's top node is top, and the Go values it prints; false when data
// is not plain enough.
func kubeletJSON(data []byte, top *yamlv3.Node) ([]byte, any, bool) {
	if !plainText(data) {
		return nil, nil, false
	}
	v, ok := jsonValue(top)
	if !ok {
		return nil, nil, false
	}
	js, ok := appendJSON(make([]byte, 0, len(data)), v)
	return js, v, ok
}

// appendJSON appends v, a value jsonValue made (mappings, lists, strings,
// numbers, booleans, nil), as encoding/json's Marshal prints it: keys in
// order, numbers in its forms, strings escaped as it escapes them (HTML's
// <, > and & included). False for a value it would refuse (a float that is
// not finite) or one jsonValue does not make.
func appendJSON(b []byte, v any) ([]byte, bool) {
	ok := true
	switch x := v.(type) {
	case nil:
		b = append(b, "null"...)
	case bool:
		b = strconv.AppendBool(b, x)
	case string:
		b = appendQuoted(b, x)
	case int:
		b = strconv.AppendInt(b, int64(x), 10)
	case uint64:
		b = strconv.AppendUint(b, x, 10)
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return b, false
		}
		// Decimal, with an exponent only for very small or large values,
		// and no leading zero in a one-digit exponent (1e-7, not 1e-07).
		form := byte('f')
		if a := math.Abs(x); a != 0 && (a < 1e-6 || a >= 1e21) {
			form = 'e'
		}
		b = strconv.AppendFloat(b, x, form, -1, 64)
		if n := len(b); form == 'e' && n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b = append(b[:n-2], b[n-1])
		}
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			if b, ok = appendJSON(b, e); !ok {
				return b, false
			}
		}
		b = append(b, ']')
	case map[string]any:
		b = append(b, '{')
		for i, k := range slices.Sorted(maps.Keys(x)) {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(appendQuoted(b, k), ':')
			if b, ok = appendJSON(b, x[k]); !ok {
				return b, false
			}
		}
		b = append(b, '}')
	default:
		return b, false
	}
	return b, true
}

const hexDigits = "0123456789abcdef"

// appendQuoted appends s as a JSON string the way encoding/json writes one:
// quote, backslash and the usual control characters by their short
// escapes, other control characters and <, > and & as \u00XX, a byte that
// is not UTF-8 as \ufffd, U+2028 and U+2029 escaped; the rest as it is.
func appendQuoted(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			switch {
			case r == utf8.RuneError && size == 1:
				b = append(b, `\ufffd`...)
			case r == '\u2028' || r == '\u2029':
				b = append(b, `\u202`...)
				b = append(b, hexDigits[r&0xf])
			default:
				b = append(b, s[i:i+size]...)
			}
			i += size
			continue
		}
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		case '<', '>', '&':
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		default:
			if c < 0x20 {
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			} else {
				b = append(b, c)
			}
		}
		i++
	}
	return append(b, '"')
}

// plainText refuses the bytes where the two parsers might part: tabs and
// carriage returns (white space rules), directives, byte order marks, text
// that is not UTF-8, and any "!" (v3 takes the non-specific tag "!" in for
// an implicit one: "! 1" is the string "1" to v2, an int to v3's tree).
func plainText(data []byte) bool {
	if bytes.IndexAny(data, "\t\r!") >= 0 || !utf8.Valid(data) || bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) {
		return false
	}
	return len(data) == 0 || data[0] != '%' && !bytes.Contains(data, []byte("\n%"))
}

// special are the styles that take v2's own reading.
const special = yamlv3.TaggedStyle | yamlv3.LiteralStyle | yamlv3.FoldedStyle

func jsonValue(n *yamlv3.Node) (any, bool) {
	if n.Anchor != "" || n.Style&special != 0 {
		return nil, false
	}
	switch n.Kind {
	case yamlv3.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yamlv3.ScalarNode || k.Anchor != "" || k.Style&special != 0 {
				return nil, false
			}
			key := k.Value
			if k.Style&(yamlv3.SingleQuotedStyle|yamlv3.DoubleQuotedStyle) == 0 {
				if key == "<<" {
					return nil, false // a merge key
				}
				if r, ok := resolvePlain(key); !ok || r != any(key) {
					return nil, false // a key that is not a string
				}
			}
			val, ok := jsonValue(n.Content[i+1])
			if !ok {
				return nil, false
			}
			m[key] = val // the last of duplicate keys wins, as in v2
		}
		return m, true
	case yamlv3.SequenceNode:
		out := make([]any, len(n.Content))
		for i, e := range n.Content {
			v, ok := jsonValue(e)
			if !ok {
				return nil, false
			}
			out[i] = v
		}
		return out, true
	case yamlv3.ScalarNode:
		if n.Style&(yamlv3.SingleQuotedStyle|yamlv3.DoubleQuotedStyle) != 0 {
			return n.Value, true
		}
		return resolvePlain(n.Value)
	}
	return nil, false
}

// yaml11Words are the plain scalars go-yaml v2 reads as booleans and nulls
// (its floats .inf and .nan have no JSON form).
var yaml11Words = map[string]any{
	"y": true, "Y": true, "yes": true, "Yes": true, "YES": true,
	"true": true, "True": true, "TRUE": true,
	"on": true, "On": true, "ON": true,
	"n": false, "N": false, "no": false, "No": false, "NO": false,
	"false": false, "False": false, "FALSE": false,
	"off": false, "Off": false, "OFF": false,
	"": nil, "~": nil, "null": nil, "Null": nil, "NULL": nil,
}

// resolvePlain is the Go value go-yaml v2 decodes a plain scalar into an
// interface{} as: a boolean, nil, an int, a uint64, a float64, else the
// string (a timestamp too: v2 keeps its text there). false for a value
// YAMLToJSON cannot print, or the merge key.
func resolvePlain(s string) (any, bool) {
	if s == "" {
		return nil, true
	}
	c := s[0]
	switch {
	case c == '+' || c == '-' || c >= '0' && c <= '9' || c == '.' || strings.IndexByte("yYnNtTfFoO~", c) >= 0:
	default:
		return s, true // no hint: a string
	}
	if v, ok := yaml11Words[s]; ok {
		return v, true
	}
	switch s {
	case ".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF":
		return nil, false
	}
	switch {
	case c == '.':
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return finite(f)
		}
	case c == '+' || c == '-' || c >= '0' && c <= '9':
		if isTimestamp(s) {
			return s, true
		}
		plain := strings.ReplaceAll(s, "_", "")
		if i, err := strconv.ParseInt(plain, 0, 64); err == nil {
			return int(i), true
		}
		if u, err := strconv.ParseUint(plain, 0, 64); err == nil {
			return u, true
		}
		if yamlFloat(plain) {
			if f, err := strconv.ParseFloat(plain, 64); err == nil {
				return finite(f)
			}
		}
		if rest, ok := strings.CutPrefix(plain, "0b"); ok {
			if i, err := strconv.ParseInt(rest, 2, 64); err == nil {
				return int(i), true
			}
			if u, err := strconv.ParseUint(rest, 2, 64); err == nil {
				return u, true
			}
		} else if rest, ok := strings.CutPrefix(plain, "-0b"); ok {
			if i, err := strconv.ParseInt("-"+rest, 2, 64); err == nil {
				return int(i), true
			}
		}
	}
	return s, true
}

func finite(f float64) (any, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, false
	}
	return f, true
}

// yamlFloat matches go-yaml v2's float form:
// ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$
func yamlFloat(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	} else {
		if digits() == 0 {
			return false
		}
		if i < len(s) && s[i] == '.' {
			i++
			digits()
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

// timestampForms are the forms go-yaml v2 reads a timestamp in.
var timestampForms = []string{
	"2006-1-2T15:4:5.999999999Z07:00",
	"2006-1-2t15:4:5.999999999Z07:00",
	"2006-1-2 15:4:5.999999999",
	"2006-1-2",
}

func isTimestamp(s string) bool {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i != 4 || i == len(s) || s[i] != '-' {
		return false
	}
	for _, f := range timestampForms {
		if _, err := time.Parse(f, s); err == nil {
			return true
		}
	}
	return false
}
