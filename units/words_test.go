package units

import (
	"errors"
	"slices"
	"testing"
)

func TestExtractWord(t *testing.T) {
	tests := []struct {
		in    string
		flags extractFlags
		word  string
		rest  string
		found bool
		err   bool
	}{
		{"  a b", exUnquote, "a", "b", true, false},
		{"a   ", exUnquote, "a", "", true, false},
		{"   ", exUnquote, "", "", false, false},
		{`"a b"c d`, exUnquote, "a bc", "d", true, false},
		{`'a\'b'`, exUnquote, "a'b", "", true, false},
		{`"a b" `, 0, `"a`, `b" `, true, false},
		{`"a`, exUnquote, "", "", false, true},
		{`"a`, exUnquote | exRelax, "a", "", true, false},
		{`a\`, exUnquote, "", "", false, true},
		{`a\`, exUnquote | exRelax, "a", "", true, false},
		{`a\`, exUnquote | exUnescapeRelax, `a\`, "", true, false},
		{`"a\`, exUnquote | exUnescapeRelax, "", "", false, true},
		{`\n`, exUnquote, "n", "", true, false},
		{`\n`, exUnquote | exCUnescape, "\n", "", true, false},
		{`\q`, exUnquote | exCUnescape, "", "", false, true},
		{`\q`, exUnquote | exCUnescape | exUnescapeRelax, `\q`, "", true, false},
		{`\x00`, exCUnescape | exUnescapeRelax, `\x00`, "", true, false},
		{`\000`, exCUnescape | exUnescapeRelax, `\000`, "", true, false},
		{`\777`, exCUnescape | exUnescapeRelax, `\777`, "", true, false},
		{`\101`, exCUnescape, "A", "", true, false},
		{`\xff`, exCUnescape, "\xff", "", true, false},
		{`\ud800`, exCUnescape | exUnescapeRelax, `\ud800`, "", true, false},
		{`\U0001F600`, exCUnescape, "😀", "", true, false},
		{`\U0000FFFE`, exCUnescape | exUnescapeRelax, `\U0000FFFE`, "", true, false},
		{`\uFFFE`, exCUnescape, "\uFFFE", "", true, false},
	}
	for _, tt := range tests {
		word, rest, found, err := extractWord(tt.in, tt.flags)
		if (err != nil) != tt.err {
			t.Errorf("extractWord(%q, %b) error %v, want error %v", tt.in, tt.flags, err, tt.err)
			continue
		}
		if err != nil {
			if !errors.Is(err, errBadWord) {
				t.Errorf("extractWord(%q) error %v, want errBadWord", tt.in, err)
			}
			continue
		}
		if word != tt.word || rest != tt.rest || found != tt.found {
			t.Errorf("extractWord(%q, %b) = %q, %q, %v; want %q, %q, %v", tt.in, tt.flags, word, rest, found, tt.word, tt.rest, tt.found)
		}
	}
}

func TestSplitValue(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"   ", nil},
		{"a  b\tc\n", []string{"a", "b", "c"}},
		{`--x="a b" 'c'`, []string{"--x=a b", "c"}},
		{`a\ b \"c\"`, []string{"a b", `"c"`}},
		{`\n`, []string{"n"}},
		{`"open`, []string{"open"}},
		{`x\`, []string{"x"}},
		{`''`, []string{""}},
	}
	for _, tt := range tests {
		if got := splitValue(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("splitValue(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestValidEnvName(t *testing.T) {
	for _, s := range []string{"A", "_", "a_1", "KUBELET_EXTRA_ARGS"} {
		if !validEnvName(s) {
			t.Errorf("validEnvName(%q) = false", s)
		}
	}
	for _, s := range []string{"", "1A", "A-B", "export A", "A.B", "Ä"} {
		if validEnvName(s) {
			t.Errorf("validEnvName(%q) = true", s)
		}
	}
}

func TestUTF8Valid(t *testing.T) {
	for _, s := range []string{"", "abc", "zöne", "😀", "\uFFFD"} {
		if !utf8Valid(s) {
			t.Errorf("utf8Valid(%q) = false", s)
		}
	}
	for _, s := range []string{"\xff", "a\xc3", "\xed\xa0\x80", "\uFFFE", "\uFDD0", "\U0010FFFF"} {
		if utf8Valid(s) {
			t.Errorf("utf8Valid(%q) = true", s)
		}
	}
}
