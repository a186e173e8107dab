package units

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseEnvFile(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []EnvLine // Ignored is only compared for being empty or not
	}{
		{"simple", "A=1\nB=two words\n", []EnvLine{{Key: "A", Value: "1", Line: 1}, {Key: "B", Value: "two words", Line: 2}}},
		{"blanks around key, = and value", "  A \t=  1  \n", []EnvLine{{Key: "A", Value: "1", Line: 1}}},
		{"inner blanks kept", "A=a   b\n", []EnvLine{{Key: "A", Value: "a   b", Line: 1}}},
		{"no newline at the end", "A=1", []EnvLine{{Key: "A", Value: "1", Line: 1}}},
		{"empty value", "A=\nB=  \n", []EnvLine{{Key: "A", Line: 1}, {Key: "B", Line: 2}}},
		{"empty quotes", "A=\"\"\nB=''", []EnvLine{{Key: "A", Line: 1}, {Key: "B", Line: 2}}},
		{"comments", "# A=1\n; B=2\n   # C=3\nD=4\n", []EnvLine{{Key: "D", Value: "4", Line: 4}}},
		{"hash in a value is not a comment", "A=x # y\n", []EnvLine{{Key: "A", Value: "x # y", Line: 1}}},
		{"line without = ignored", "garbage line\nA=1\n", []EnvLine{{Key: "A", Value: "1", Line: 2}}},
		{"double quotes", `A="x  y"` + "\n", []EnvLine{{Key: "A", Value: "x  y", Line: 1}}},
		{"double quote escapes", `A="q\"b\\c\$d` + "\\`" + `e\n\x"`, []EnvLine{{Key: "A", Value: `q"b\c$d` + "`" + `e\n\x`, Line: 1}}},
		{"single quotes are verbatim", `A='x "y" $z \n \'` + "\n", []EnvLine{{Key: "A", Value: `x "y" $z \n \`, Line: 1}}},
		{"quotes in an unquoted value are kept", `A=a"b c"'d'` + "\n", []EnvLine{{Key: "A", Value: `a"b c"'d'`, Line: 1}}},
		{"text after a closing quote is appended", `A="a" "b"c 'd'` + "\n", []EnvLine{{Key: "A", Value: `abc 'd'`, Line: 1}}},
		{"comment after quotes is part of the value", `A="a"  # note` + "\n", []EnvLine{{Key: "A", Value: "a# note", Line: 1}}},
		{"blanks after a closing quote dropped", "A='a '  \n", []EnvLine{{Key: "A", Value: "a ", Line: 1}}},
		{"unquoted backslash escapes", `A=a\ \"b\\c\$` + "\n", []EnvLine{{Key: "A", Value: `a "b\c$`, Line: 1}}},
		{"escaped trailing blank kept", "A=a\\ \n", []EnvLine{{Key: "A", Value: "a ", Line: 1}}},
		{"backslash first", `A=\"q\"` + "\n", []EnvLine{{Key: "A", Value: `"q"`, Line: 1}}},
		{"continuation", "A=one \\\ntwo\nB=3\n", []EnvLine{{Key: "A", Value: "one two", Line: 1}, {Key: "B", Value: "3", Line: 3}}},
		{"continuation in double quotes", "A=\"one \\\n  two\"\n", []EnvLine{{Key: "A", Value: "one   two", Line: 1}}},
		{"newline in double quotes", "A=\"one\ntwo\"\nB=1", []EnvLine{{Key: "A", Value: "one\ntwo", Line: 1}, {Key: "B", Value: "1", Line: 3}}},
		{"newline in single quotes", "A='one\ntwo'\n", []EnvLine{{Key: "A", Value: "one\ntwo", Line: 1}}},
		{"comment ending in a backslash does not continue (v254+)", "# c \\\nA=1\n", []EnvLine{{Key: "A", Value: "1", Line: 2}}},
		{"CRLF", "A=1\r\nB=\"2\"\r\n", []EnvLine{{Key: "A", Value: "1", Line: 1}, {Key: "B", Value: "2", Line: 2}}},
		{"CR alone ends a line", "A=1\rB=2\r", []EnvLine{{Key: "A", Value: "1", Line: 1}, {Key: "B", Value: "2", Line: 2}}},
		{"CR kept in double quotes", "A=\"1\r\"\n", []EnvLine{{Key: "A", Value: "1\r", Line: 1}}},
		{"unterminated quote at the end", `A="open`, []EnvLine{{Key: "A", Value: "open", Line: 1}}},
		{"backslash at the end", `A=x\`, []EnvLine{{Key: "A", Value: "x", Line: 1}}},
		{"duplicate keys both listed", "A=1\nA=2\n", []EnvLine{{Key: "A", Value: "1", Line: 1}, {Key: "A", Value: "2", Line: 2}}},
		{"data after NUL not read", "A=1\nB=2\x00\nC=3\n", []EnvLine{{Key: "A", Value: "1", Line: 1}, {Key: "B", Value: "2", Line: 2}}},
		{"export is ignored", "export A=1\n", []EnvLine{{Key: "export A", Value: "1", Line: 1, Ignored: "x"}}},
		{"invalid names ignored", "1A=1\nA-B=2\nA B=3\n", []EnvLine{
			{Key: "1A", Value: "1", Line: 1, Ignored: "x"},
			{Key: "A-B", Value: "2", Line: 2, Ignored: "x"},
			{Key: "A B", Value: "3", Line: 3, Ignored: "x"}}},
		{"leading = belongs to the key", "=A=1\n=B\n", []EnvLine{{Key: "=A", Value: "1", Line: 1, Ignored: "x"}}},
		{"UTF-8 value", "A=zöne\n", []EnvLine{{Key: "A", Value: "zöne", Line: 1}}},
		{"empty file", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseEnvFile("/etc/default/kubelet", []byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(got, tt.want, sameEnvLine) {
				t.Errorf("parseEnvFile(%q)\n got %+v\nwant %+v", tt.in, got, tt.want)
			}
		})
	}
}

func sameEnvLine(a, b EnvLine) bool {
	return a.Key == b.Key && a.Value == b.Value && a.Line == b.Line && (a.Ignored == "") == (b.Ignored == "")
}

func TestParseEnvFileCommentContinuationBefore254(t *testing.T) {
	data := []byte("# c \\\nA=1\nB=2\n")
	for version, want := range map[int][]string{0: {"A", "B"}, 254: {"A", "B"}, 253: {"B"}, 219: {"B"}} {
		lines, err := parseEnvFileVersion("f", data, version)
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, l := range lines {
			keys = append(keys, l.Key)
		}
		if !slices.Equal(keys, want) {
			t.Errorf("systemd %d: keys %q, want %q", version, keys, want)
		}
	}
}

func TestParseEnvFileExportReason(t *testing.T) {
	got, err := parseEnvFile("f", []byte("export KUBELET_EXTRA_ARGS=--v=2\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !strings.Contains(got[0].Ignored, `does not understand "export"`) {
		t.Errorf("got %+v, want the export line ignored with a reason", got)
	}
}

func TestParseEnvFileInvalidUTF8(t *testing.T) {
	for _, in := range []string{"A=1\nB=\xff\n", "A=1\n\xffB=1\n", "A=1\nB='\uFFFE'"} {
		_, err := parseEnvFile("/etc/default/kubelet", []byte(in))
		var e *Error
		if !errors.As(err, &e) || e.File != "/etc/default/kubelet" || e.Line != 2 {
			t.Errorf("parseEnvFile(%q) error %v, want an *Error at /etc/default/kubelet:2", in, err)
		}
	}
}

func TestReadEnvFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kubelet")
	data := "# kubelet flags\nKUBELET_EXTRA_ARGS=\"--node-ip=10.0.0.5 --v=2\"\nexport FOO=bar\nKUBELET_EXTRA_ARGS=--v=3\n"
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	env, lines, err := ReadEnvFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(env) != 1 || env["KUBELET_EXTRA_ARGS"] != "--v=3" {
		t.Errorf("env %q, want only KUBELET_EXTRA_ARGS=--v=3", env)
	}
	if len(lines) != 3 || lines[1].Ignored == "" || lines[2].Line != 4 {
		t.Errorf("lines %+v", lines)
	}
	if _, _, err := ReadEnvFile(path + ".missing"); err == nil || !strings.Contains(err.Error(), path+".missing") {
		t.Errorf("missing file: error %v, want one naming the file", err)
	}
}
