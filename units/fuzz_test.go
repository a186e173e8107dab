package units

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// quoteExecWord quotes a word so that systemd's ExecStart= parsing gives
// it back unchanged; withDollar also protects it from variable expansion.
func quoteExecWord(w string, withDollar bool) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(w); i++ {
		switch c := w[i]; {
		case c == '\\' || c == '"':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '%':
			b.WriteString("%%")
		case c == '$' && withDollar:
			b.WriteString("$$")
		case c < ' ' || c == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

var fuzzEnv = map[string]string{"A": "1 2", "B": `"x y" z\`, "E": "", "P": "%n $A"}

func FuzzSplitCommandLine(f *testing.F) {
	for _, s := range []string{
		"/usr/bin/kubelet $KUBELET_KUBECONFIG_ARGS $KUBELET_CONFIG_ARGS $KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS",
		`-@/bin/k "a b" 'c' \x41 %n $A ${B}x $$ \; ;`,
		`/bin/k "$A" ${A:-x} $1 %Z %`, `:/bin/k $A`, `kubelet "unbalanced`, `/bin/k \u00e9\U0001F600\777`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		argv, err := SplitCommandLine(s, fuzzEnv)
		sp := &specifiers{unit: "kubelet.service"}
		cmd, perr := parseOneCommand(s, sp)
		if (err == nil) != (perr == nil) {
			t.Fatalf("SplitCommandLine error %v, parseOneCommand error %v", err, perr)
		}
		if perr != nil {
			return
		}
		checkLoadStable(t, cmd, sp)
		if len(argv) > 0 {
			checkArgvStable(t, argv)
		}
	})
}

// checkLoadStable: writing a parsed command back and parsing it again
// gives the same command.
func checkLoadStable(t *testing.T, cmd command, sp *specifiers) {
	exe, rest := cmd.Path, cmd.Argv
	if !strings.Contains(cmd.Prefix, "@") {
		exe, rest = rest[0], rest[1:]
	}
	if p, _ := splitExecPrefix(cmd.Prefix + exe); p != cmd.Prefix || cmd.Prefix+exe == ";" {
		// The executable came from a specifier ("%i!x", "%i;") and cannot
		// be written literally: "!" would be a prefix, ";" a separator.
		return
	}
	words := []string{quoteExecWord(cmd.Prefix+exe, false)}
	for _, w := range rest {
		words = append(words, quoteExecWord(w, false))
	}
	line := strings.Join(words, " ")
	again, err := parseOneCommand(line, sp)
	if err != nil {
		t.Fatalf("re-parsing %q: %v", line, err)
	}
	if again.Prefix != cmd.Prefix || again.Path != cmd.Path || !slices.Equal(again.Argv, cmd.Argv) {
		t.Fatalf("not stable:\n first %+v\n again %+v (from %q)", cmd, again, line)
	}
}

// checkArgvStable: any argv SplitCommandLine returns can be written as a
// command line that gives it back.
func checkArgvStable(t *testing.T, argv []string) {
	words := []string{"@/bin/true"}
	for _, w := range argv {
		words = append(words, quoteExecWord(w, true))
	}
	line := strings.Join(words, " ")
	again, err := SplitCommandLine(line, nil)
	if err != nil {
		t.Fatalf("SplitCommandLine(%q): %v", line, err)
	}
	if !slices.Equal(again, argv) {
		t.Fatalf("argv not stable: %q gives %q, want %q", line, again, argv)
	}
}

// quoteEnvValue writes a value in double quotes for an environment file.
func quoteEnvValue(v string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(v); i++ {
		if strings.IndexByte("\"\\`$", v[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(v[i])
	}
	b.WriteByte('"')
	return b.String()
}

func FuzzReadEnvFile(f *testing.F) {
	f.Add([]byte("A=1\nB=\"x y\"\n# c\nexport C=2\nD='q'r \\\n s\n"))
	f.Add([]byte("A=\"multi\nline\" B\n=x\r\n;c \\\nE=\\\"\n"))
	addSeedFiles(f, "testdata/nodes/*/etc/default/*", "testdata/nodes/*/etc/sysconfig/*",
		"testdata/nodes/*/var/lib/kubelet/*", "testdata/nodes/*/etc/kubernetes/*")
	f.Fuzz(func(t *testing.T, data []byte) {
		lines, err := parseEnvFile("f", data)
		if err != nil {
			return
		}
		for _, l := range lines {
			if l.Line < 1 || l.Line > strings.Count(string(data), "\n")+strings.Count(string(data), "\r")+1 {
				t.Fatalf("line number %d out of range", l.Line)
			}
		}
		env := envMap(lines)
		var b strings.Builder
		for _, k := range slices.Sorted(maps.Keys(env)) {
			fmt.Fprintf(&b, "%s=%s\n", k, quoteEnvValue(env[k]))
		}
		again, err := parseEnvFile("f", []byte(b.String()))
		if err != nil {
			t.Fatalf("re-parsing %q: %v", b.String(), err)
		}
		if got := envMap(again); !maps.Equal(got, env) {
			t.Fatalf("not stable: %q\n gives %q\n want %q", b.String(), got, env)
		}
	})
}

func FuzzUnitFile(f *testing.F) {
	f.Add([]byte("[Service]\nExecStart=/bin/k \\\n# c\n  $A\nEnvironment=\"A=1 2\"\n[X-Y]\nZ"))
	f.Add([]byte("\xef\xbb\xbf[Unit]\r\nA=1\x00[Service]\nExecStart=\nExecStart=-@/bin/k x ; /bin/y\nUnsetEnvironment=A B=1\n"))
	addSeedFiles(f, "testdata/nodes/*/*/systemd/system/kubelet.service", "testdata/nodes/*/*/*/systemd/system/kubelet.service",
		"testdata/nodes/*/*/systemd/system/kubelet.service.d/*", "testdata/nodes/*/*/*/systemd/system/kubelet.service.d/*")
	f.Fuzz(func(t *testing.T, data []byte) {
		assigns, _, err := parseUnitFile("/u.service", data)
		if err != nil {
			return
		}
		checkUnitStable(t, assigns)
		// Evaluating the service must not panic either.
		sp := &specifiers{unit: "kubelet.service"}
		cfg := newServiceConfig()
		for _, a := range assigns {
			if cfg.apply(a, sp) != nil {
				return
			}
		}
		if cmd, err := cfg.mainCommand("kubelet.service", "/u.service"); err == nil {
			cmd.expand(cfg.Env)
		}
	})
}

// checkUnitStable: writing the assignments back and parsing them again
// gives the same assignments.
func checkUnitStable(t *testing.T, assigns []assignment) {
	var b strings.Builder
	section := ""
	for _, a := range assigns {
		if strings.HasPrefix(a.Key, "#") || strings.HasPrefix(a.Key, ";") {
			return // only possible right after a byte order mark
		}
		if a.Section != section {
			section = a.Section
			fmt.Fprintf(&b, "[%s]\n", section)
		}
		line := a.Key + "=" + a.Value
		if endsInEscape([]byte(line)) {
			line += " " // keeps a final backslash from continuing the line
		}
		b.WriteString(line + "\n")
	}
	again, _, err := parseUnitFile("/u.service", []byte(b.String()))
	if err != nil {
		t.Fatalf("re-parsing %q: %v", b.String(), err)
	}
	same := func(x, y assignment) bool { return x.Section == y.Section && x.Key == y.Key && x.Value == y.Value }
	if !slices.EqualFunc(again, assigns, same) {
		t.Fatalf("not stable:\n first %+v\n again %+v", assigns, again)
	}
}

func addSeedFiles(f *testing.F, patterns ...string) {
	for _, p := range patterns {
		files, _ := filepath.Glob(p)
		for _, file := range files {
			if data, err := os.ReadFile(file); err == nil {
				f.Add(data)
			}
		}
	}
}
