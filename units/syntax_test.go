package units

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestParseUnitFile(t *testing.T) {
	type kv struct {
		Section, Key, Value string
		Line                int
	}
	tests := []struct {
		name     string
		in       string
		want     []kv
		warnings int
	}{
		{"sections and keys", "[Unit]\nDescription=k\n\n[Service]\nExecStart=/bin/k\n", []kv{
			{"Unit", "Description", "k", 2}, {"Service", "ExecStart", "/bin/k", 5}}, 0},
		{"blanks trimmed", "[Service]\n  Environment =  A=1  \n", []kv{{"Service", "Environment", "A=1", 2}}, 0},
		{"repeated keys kept in order", "[Service]\nExecStart=\nExecStart=/bin/k\n", []kv{
			{"Service", "ExecStart", "", 2}, {"Service", "ExecStart", "/bin/k", 3}}, 0},
		{"comments", "# c\n; c\n[Service]\n   # Environment=A=1\nType=simple\n", []kv{{"Service", "Type", "simple", 5}}, 0},
		{"continuation", "[Service]\nExecStart=/bin/k \\\n  --a \\\n--b\nType=simple\n", []kv{
			{"Service", "ExecStart", "/bin/k    --a  --b", 2}, {"Service", "Type", "simple", 5}}, 0},
		{"comment inside a continuation", "[Service]\nExecStart=/bin/k \\\n# comment\n ; other \\\n  --a\n", []kv{
			{"Service", "ExecStart", "/bin/k    --a", 2}}, 0},
		{"escaped backslash does not continue", "[Service]\nA=x\\\\\nB=y\n", []kv{
			{"Service", "A", `x\\`, 2}, {"Service", "B", "y", 3}}, 0},
		{"continuation at the end of the file", "[Service]\nA=x \\", []kv{{"Service", "A", "x", 2}}, 0},
		{"CRLF", "[Service]\r\nA=1\r\nB=2\r\n", []kv{{"Service", "A", "1", 2}, {"Service", "B", "2", 3}}, 0},
		{"CR alone", "[Service]\rA=1\r", []kv{{"Service", "A", "1", 2}}, 0},
		{"LF CR is one line end", "[Service]\n\rA=1\n\n\rB=2", []kv{{"Service", "A", "1", 2}, {"Service", "B", "2", 4}}, 0},
		{"NUL ends a line", "[Service]\x00A=1\x00\nB=2", []kv{{"Service", "A", "1", 2}, {"Service", "B", "2", 4}}, 0},
		{"byte order mark", "\xef\xbb\xbf[Service]\nA=1\n", []kv{{"Service", "A", "1", 2}}, 0},
		{"value with = and quotes", "[Service]\nEnvironment=\"A=1 2\" B=3\n", []kv{{"Service", "Environment", `"A=1 2" B=3`, 2}}, 0},
		{"assignment outside a section", "A=1\n[Service]\nB=2\n", []kv{{"Service", "B", "2", 3}}, 1},
		{"unknown section", "[Foo]\nA=1\n[Service]\nB=2\n", []kv{{"Service", "B", "2", 4}}, 1},
		{"X- section silently ignored", "[X-Vendor]\nA=1\n", nil, 0},
		{"missing =", "[Service]\nExecStart\nB=2\n", []kv{{"Service", "B", "2", 3}}, 1},
		{"missing key", "[Service]\n=x\n", nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, warnings, err := parseUnitFile("/u.service", []byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			var kvs []kv
			for _, a := range got {
				kvs = append(kvs, kv{a.Section, a.Key, a.Value, a.Line})
				if a.File != "/u.service" {
					t.Errorf("file %q", a.File)
				}
			}
			if !slices.Equal(kvs, tt.want) {
				t.Errorf("parseUnitFile(%q)\n got %+v\nwant %+v", tt.in, kvs, tt.want)
			}
			if len(warnings) != tt.warnings {
				t.Errorf("warnings %v, want %d", warnings, tt.warnings)
			}
		})
	}
}

func TestParseUnitFileErrors(t *testing.T) {
	tests := []struct {
		name, in string
		line     int
		want     string
	}{
		{"unterminated section", "[Service]\nA=1\n[Service\n", 3, "invalid section header"},
		{"section followed by text", "[Service] # c\n", 1, "invalid section header"},
		{"bad characters in a section", "[Ser\"vice]\n", 1, "bad characters"},
		{"invalid UTF-8", "[Service]\nA=\xff\n", 2, "not valid UTF-8"},
		{"noncharacter", "[Service]\nA=\uFFFF\n", 2, "not valid UTF-8"},
		{"line too long", "[Service]\nA=" + strings.Repeat("x", longLineMax) + "\n", 2, "too long"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := parseUnitFile("/u.service", []byte(tt.in))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v, want an *Error", err)
			}
			if e.File != "/u.service" || e.Line != tt.line || !strings.Contains(e.Msg, tt.want) {
				t.Errorf("error %q, want /u.service:%d: …%s…", err, tt.line, tt.want)
			}
		})
	}
}
