package units

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// whitespace is the separator set systemd splits words on.
const whitespace = " \t\n\r"

func isSpace(c byte) bool { return strings.IndexByte(whitespace, c) >= 0 }

// extractFlags select the variant of systemd's word splitting.
type extractFlags uint8

const (
	// exUnquote honours '…' and "…" anywhere in a word and removes them.
	exUnquote extractFlags = 1 << iota
	// exCUnescape decodes C escapes (\n, \x41, \u00e9 …) after a backslash;
	// without it a backslash just takes the next character literally.
	exCUnescape
	// exRelax accepts an unterminated quote or a trailing backslash.
	exRelax
	// exUnescapeRelax keeps an invalid escape sequence verbatim instead of
	// failing.
	exUnescapeRelax
)

// errBadWord is what systemd reports as EINVAL: an unbalanced quote, an
// invalid escape or a trailing backslash.
var errBadWord = errors.New("invalid quoting or escaping")

// extractWord returns the first whitespace-separated word of s and what
// follows it, with leading separators of the rest skipped, as systemd's
// extract_first_word() does. found is false when s holds no more words.
func extractWord(s string, flags extractFlags) (word, rest string, found bool, err error) {
	i := skipSpace(s, 0)
	if i == len(s) {
		return "", "", false, nil
	}
	var b strings.Builder
	var quote byte
	for i < len(s) {
		c := s[i]
		switch {
		case c == '\\':
			n, err := unescapeAt(&b, s, i+1, quote, flags)
			if err != nil {
				return "", "", false, err
			}
			i = n
		case quote != 0 && c == quote:
			quote = 0
			i++
		case quote != 0:
			b.WriteByte(c)
			i++
		case (c == '\'' || c == '"') && flags&exUnquote != 0:
			quote = c
			i++
		case isSpace(c):
			return b.String(), s[skipSpace(s, i):], true, nil
		default:
			b.WriteByte(c)
			i++
		}
	}
	if quote != 0 && flags&exRelax == 0 {
		return "", "", false, errBadWord
	}
	return b.String(), "", true, nil
}

func skipSpace(s string, i int) int {
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	return i
}

// unescapeAt handles the text after a backslash at s[i-1] and returns the
// index after the escape.
func unescapeAt(b *strings.Builder, s string, i int, quote byte, flags extractFlags) (int, error) {
	if i == len(s) {
		// A trailing backslash.
		if flags&exUnescapeRelax != 0 && (quote == 0 || flags&exRelax != 0) {
			b.WriteByte('\\')
			return i, nil
		}
		if flags&exRelax != 0 {
			return i, nil
		}
		return 0, errBadWord
	}
	if flags&exCUnescape == 0 {
		b.WriteByte(s[i])
		return i + 1, nil
	}
	if v, n, eightBit, ok := cunescapeOne(s[i:]); ok {
		if eightBit {
			b.WriteByte(byte(v))
		} else {
			b.WriteRune(rune(v))
		}
		return i + n, nil
	}
	if flags&exUnescapeRelax != 0 {
		b.WriteByte('\\')
		b.WriteByte(s[i])
		return i + 1, nil
	}
	return 0, errBadWord
}

// cunescapeOne decodes one C escape sequence, s being the text after the
// backslash. eightBit means v is a raw byte rather than a code point.
func cunescapeOne(s string) (v uint32, n int, eightBit, ok bool) {
	if c, simple := simpleEscapes[s[0]]; simple {
		return uint32(c), 1, false, true
	}
	switch s[0] {
	case 'x':
		v, ok = parseDigits(s[1:], 2, 16)
		return v, 3, true, ok && v != 0
	case 'u':
		v, ok = parseDigits(s[1:], 4, 16)
		return v, 5, false, ok && v != 0 && !isSurrogate(v)
	case 'U':
		v, ok = parseDigits(s[1:], 8, 16)
		return v, 9, false, ok && v != 0 && unicharValid(v)
	case '0', '1', '2', '3', '4', '5', '6', '7':
		v, ok = parseDigits(s, 3, 8)
		return v, 3, true, ok && v != 0 && v <= 255
	}
	return 0, 0, false, false
}

var simpleEscapes = map[byte]byte{
	'a': '\a', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t', 'v': '\v',
	'\\': '\\', '"': '"', '\'': '\'', 's': ' ',
}

// parseDigits reads exactly n digits of the base from the start of s.
func parseDigits(s string, n int, base uint32) (uint32, bool) {
	if len(s) < n {
		return 0, false
	}
	var v uint32
	for i := range n {
		d, ok := digitValue(s[i])
		if !ok || d >= base {
			return 0, false
		}
		v = v*base + d
	}
	return v, true
}

func digitValue(c byte) (uint32, bool) {
	switch {
	case c >= '0' && c <= '9':
		return uint32(c - '0'), true
	case c >= 'a' && c <= 'f':
		return uint32(c-'a') + 10, true
	case c >= 'A' && c <= 'F':
		return uint32(c-'A') + 10, true
	}
	return 0, false
}

func isSurrogate(c uint32) bool { return c >= 0xd800 && c <= 0xdfff }

// unicharValid is systemd's unichar_is_valid(): a Unicode scalar value that
// is not a noncharacter.
func unicharValid(c uint32) bool {
	switch {
	case c >= 0x110000, isSurrogate(c):
		return false
	case c >= 0xfdd0 && c <= 0xfdef, c&0xfffe == 0xfffe:
		return false
	}
	return true
}

// utf8Valid is systemd's utf8_is_valid(): well-formed UTF-8 without
// noncharacters.
func utf8Valid(s string) bool {
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		if r == utf8.RuneError && size <= 1 {
			return false
		}
		if !unicharValid(uint32(r)) {
			return false
		}
		s = s[size:]
	}
	return true
}

// extractWordWarn is systemd's extract_first_word_and_warn(): on failure it
// retries keeping invalid escapes verbatim, and says so in warn. A failure
// after that is unbalanced quoting.
func extractWordWarn(s string, flags extractFlags) (word, rest string, found bool, warn string, err error) {
	word, rest, found, err = extractWord(s, flags)
	if err == nil || flags&exUnescapeRelax != 0 {
		return word, rest, found, "", err
	}
	word, rest, found, err = extractWord(s, flags|exUnescapeRelax)
	if err != nil {
		return "", "", false, "", fmt.Errorf("unbalanced quoting in %q", s)
	}
	return word, rest, found, fmt.Sprintf("ignoring unknown escape sequences: %q", word), nil
}

// splitValue splits the value of a variable used as a whole word "$VAR" on
// a command line: whitespace separates words, quotes group and are removed,
// a backslash takes the next character literally, and unbalanced quotes are
// tolerated.
func splitValue(v string) []string {
	var words []string
	for {
		w, rest, found, _ := extractWord(v, exUnquote|exRelax)
		if !found {
			return words
		}
		words = append(words, w)
		v = rest
	}
}

// validEnvName reports whether s may name an environment variable:
// letters, digits and "_", not starting with a digit.
func validEnvName(s string) bool {
	if s == "" || (s[0] >= '0' && s[0] <= '9') {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
			return false
		}
	}
	return true
}

// validEnvAssignment reports whether s is NAME=VALUE with a valid name and
// a UTF-8 clean value.
func validEnvAssignment(s string) bool {
	name, value, ok := strings.Cut(s, "=")
	return ok && validEnvName(name) && utf8Valid(value)
}

// stringIsSafe is systemd's string_is_safe(): no control characters, no
// quotes, no backslash.
func stringIsSafe(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < ' ' || c == 0x7f || c == '"' || c == '\'' || c == '\\' {
			return false
		}
	}
	return true
}
