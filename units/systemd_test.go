package units

import (
	"bufio"
	"bytes"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// These tests compare the parsers with the real systemd where it is
// installed (no running systemd needed):
//
//   - `systemd-analyze verify` with debug logging dumps the unit as systemd
//     loaded it: each command line of ExecStartPre= (same parser as
//     ExecStart=) and each Environment= variable;
//   - systemd's environment.d generator reads env files with the same
//     parser as EnvironmentFile= and prints what it read.
//
// Variable expansion in ExecStart= happens only when systemd runs the
// command, which needs a running service manager; it is not covered here.

const xcheckUnit = "kubeletcfg-xcheck.service"

// runVerify loads a unit file with systemd-analyze and returns its dump.
func runVerify(t *testing.T, unit string) (string, error) {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, xcheckUnit)
	if err := os.WriteFile(file, []byte(unit), 0o644); err != nil {
		t.Fatal(err)
	}
	return runAnalyze(t, dir, nil, file)
}

// runAnalyze runs systemd-analyze verify with debug logging, which dumps
// the units it loaded.
func runAnalyze(t *testing.T, dir string, env []string, unit string) (string, error) {
	t.Helper()
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze not installed")
	}
	cmd := exec.Command(analyze, "verify", "--man=no", unit)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "SYSTEMD_LOG_LEVEL=debug", "SYSTEMD_LOG_COLOR=0"}, env...)
	// The dump goes to standard output, the log to standard error; kept
	// apart so that log lines cannot cut dump lines.
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	return stdout.String() + "\n" + stderr.String(), err
}

// dumpSection returns the lines of the unit's dump.
func dumpSection(t *testing.T, out string) []string {
	t.Helper()
	return dumpSectionOf(t, out, xcheckUnit)
}

func dumpSectionOf(t *testing.T, out, unit string) []string {
	t.Helper()
	_, dump, ok := strings.Cut(out, "-> Unit "+unit+":")
	if !ok {
		t.Fatalf("no unit dump in systemd-analyze output:\n%s", out)
	}
	return strings.Split(dump, "\n")
}

// TestSystemdDropins lets systemd find the unit and drop-ins in a node tree
// (SYSTEMD_UNIT_PATH set to the tree's directories) and compares.
func TestSystemdDropins(t *testing.T) {
	env := func(tag string) string { return "[Service]\nEnvironment=LAST=" + tag + " " + tag + "=1\n" }
	root := makeTree(t, map[string]string{
		usrUnit:                                    "[Service]\nExecStart=/bin/true\n",
		"run/systemd/system/kubelet.service":       "[Service]\nExecStart=/bin/true\nEnvironment=FROM=run\n",
		usrD + "05-c.conf":                         env("usr05"),
		usrD + "10-a.conf":                         env("usr10"),
		etcD + "10-a.conf":                         env("etc10"),
		runD + "20-b.conf":                         env("run20"),
		usrD + "30-d.conf":                         env("usr30"),
		etcD + "30-d.conf":                         "-> /dev/null",
		usrD + "40-e.conf":                         env("usr40"),
		runD + "40-e.conf":                         "",
		"etc/systemd/system/service.d/20-x.conf":   env("etcsvc20"),
		usrD + "20-x.conf":                         env("usr20x"),
		"usr/lib/systemd/system/service.d/15.conf": env("usrsvc15"),
		etcD + ".hidden.conf":                      env("hidden"),
		etcD + "50.conf.d/x":                       "",
	})
	var dirs []string
	for _, d := range unitSearchPath {
		dirs = append(dirs, filepath.Join(root, d))
	}
	out, _ := runAnalyze(t, root, []string{"SYSTEMD_UNIT_PATH=" + strings.Join(dirs, ":")}, kubeletUnit)
	var fragment string
	var dropins []string
	gotEnv := map[string]string{}
	for _, l := range dumpSectionOf(t, out, kubeletUnit) {
		l = strings.TrimSpace(l)
		if v, ok := strings.CutPrefix(l, "Fragment Path: "); ok {
			fragment = strings.TrimPrefix(v, root)
		}
		if v, ok := strings.CutPrefix(l, "DropIn Path: "); ok {
			dropins = append(dropins, strings.TrimPrefix(v, root))
		}
		if kv, ok := strings.CutPrefix(l, "Environment: "); ok {
			k, v, _ := strings.Cut(kv, "=")
			gotEnv[k] = v
		}
	}
	s, err := Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	// systemd lists masking drop-ins too (they are empty); we keep them apart.
	ours := append(slices.Clone(s.Dropins), s.Masked...)
	slices.SortFunc(ours, func(a, b string) int { return strings.Compare(filepath.Base(a), filepath.Base(b)) })
	if fragment != s.Unit || !slices.Equal(dropins, ours) {
		t.Errorf("systemd: unit %s drop-ins %q\n     we: unit %s drop-ins %q", fragment, dropins, s.Unit, ours)
	}
	if !maps.Equal(gotEnv, s.Env) {
		t.Errorf("systemd Env %q\n     we Env %q", gotEnv, s.Env)
	}
}

func TestSystemdExecStartSplitting(t *testing.T) {
	lines := []string{
		`/bin/echo a  b`,
		`/bin/echo "a b" 'c d' x"y z"w 'a "b"'`,
		`/bin/echo "" ''`,
		`/bin/echo \x41\102 \u00e9 "\t" \s \\ \" \U0001F600`,
		`/bin/echo a\ b \$X \q x\x4g`,
		`/bin/echo \; a;b ; /bin/echo second ; ; /bin/echo third`,
		`/bin/echo $ARGS "$ONE" ${ARGS} --x=$ONE $$ $1 ${A:-b}`,
		`/bin/echo %n %N %p %P %j %J %f %i %I %t %S %C %L %E %T %V %h %s %u %U %g %G %%`,
		`/bin/echo x%iy 100% %- %/ "%n and %%n"`,
		`-@/bin/echo argv0 x`,
		`:/bin/echo $X`,
		`+/bin/echo plus`,
		`!!/bin/echo bang`,
		`/usr//bin/./echo path`,
		`/bin/echo zöne \xff`,
		`"/bin/echo unbalanced first word, ignored`,
		`-/bin/echo "ignored with the - prefix`,
	}
	var unit strings.Builder
	unit.WriteString("[Service]\nExecStart=/bin/true\n")
	var want [][]string
	sp := &specifiers{unit: xcheckUnit}
	for _, l := range lines {
		fmt.Fprintf(&unit, "ExecStartPre=%s\n", l)
		res, err := parseExecValue(l, sp)
		if err != nil {
			t.Fatalf("parseExecValue(%q): %v", l, err)
		}
		for _, c := range res.cmds {
			want = append(want, c.Argv)
		}
	}
	if len(want) != 17 {
		t.Fatalf("we found %d commands, want 17", len(want))
	}
	out, _ := runVerify(t, unit.String())
	if got := dumpedCommands(t, out, "ExecStartPre"); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("systemd and we disagree:\nsystemd %q\n     we %q", got, want)
	}
}

func TestSystemdUnitSyntax(t *testing.T) {
	unit := "\xef\xbb\xbf[Unit]\nDescription=x\n[X-Vendor]\nExecStartPre=/bin/echo vendor\n[Service]\n" +
		"ExecStart=/bin/true\n" +
		"ExecStartPre=/bin/echo a \\\n# comment\n  ; other \\\n b\n" +
		"ExecStartPre=/bin/echo c\\\\\\\\\n" +
		"ExecStartPre=/bin/echo d\rExecStartPre=/bin/echo e\r\n" +
		"ExecStartPre=/bin/echo f\x00ExecStartPre=/bin/echo g\n\r" +
		"Bogus line\n=x\n  ExecStartPre  =  /bin/echo  h  \n" +
		"ExecStartPre=/bin/echo i \\"
	assigns, _, err := parseUnitFile("/u", []byte(unit))
	if err != nil {
		t.Fatal(err)
	}
	var want [][]string
	sp := &specifiers{unit: xcheckUnit}
	for _, a := range assigns {
		if a.Section == "Service" && a.Key == "ExecStartPre" {
			res, err := parseExecValue(a.Value, sp)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range res.cmds {
				want = append(want, c.Argv)
			}
		}
	}
	if len(want) != 8 {
		t.Fatalf("we found %d commands, want 8", len(want))
	}
	out, _ := runVerify(t, unit)
	if got := dumpedCommands(t, out, "ExecStartPre"); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("systemd and we disagree:\nsystemd %q\n     we %q", got, want)
	}
}

// dumpedCommands returns the command lines of one Exec*= setting in the
// unit dump.
func dumpedCommands(t *testing.T, out, setting string) [][]string {
	t.Helper()
	var cmds [][]string
	in := false
	for _, l := range dumpSection(t, out) {
		l = strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(l, "-> "):
			in = l == "-> "+setting+":"
		case in && strings.HasPrefix(l, "Command Line: "):
			argv, err := splitDumpedCommand(strings.TrimPrefix(l, "Command Line: "))
			if err != nil {
				t.Fatalf("dumped command %q: %v", l, err)
			}
			cmds = append(cmds, argv)
		}
	}
	return cmds
}

func TestSystemdRefusesBadExecStart(t *testing.T) {
	for _, l := range []string{`/bin/echo "unbalanced`, `/bin/echo %Z`, `bin/echo`, `/bin/echo/ x`, `@/bin/echo`} {
		t.Run(l, func(t *testing.T) {
			out, err := runVerify(t, "[Service]\nExecStart="+l+"\n")
			if err == nil || !strings.Contains(out, "bad unit file setting") {
				t.Fatalf("systemd accepted %q:\n%s", l, out)
			}
			if _, err := parseExecValue(l, &specifiers{unit: xcheckUnit}); err == nil {
				t.Errorf("systemd refuses %q, we accept it", l)
			}
		})
	}
}

func TestSystemdEnvironment(t *testing.T) {
	lines := []string{
		`"A=1 2" B=3 'C=x y' D="q r" E=a\x20b`,
		`F G=1 H`,
		`$HOME=x I=$HOME J=%n K=%%`,
		`L=é "M=a\"b" N= O=a=b`,
		`P=1 Q="unbalanced`,
		`R=1 S=\q T=2`,
		`G=override`,
	}
	var unit strings.Builder
	unit.WriteString("[Service]\nExecStart=/bin/true\n")
	want := map[string]string{}
	sp := &specifiers{unit: xcheckUnit}
	for _, l := range lines {
		fmt.Fprintf(&unit, "Environment=%s\n", l)
		for _, kv := range parseEnvironmentValue(l, sp, func(string, ...any) {}) {
			k, v, _ := strings.Cut(kv, "=")
			want[k] = v
		}
	}
	out, _ := runVerify(t, unit.String())
	got := map[string]string{}
	for _, l := range dumpSection(t, out) {
		if kv, ok := strings.CutPrefix(strings.TrimSpace(l), "Environment: "); ok {
			k, v, _ := strings.Cut(kv, "=")
			got[k] = v
		}
	}
	if !maps.Equal(got, want) {
		t.Errorf("systemd and we disagree:\nsystemd %q\n     we %q", got, want)
	}
}

// splitDumpedCommand splits a command line as systemd prints it: words
// separated by spaces, in double quotes with C escapes when they hold
// special characters.
func splitDumpedCommand(s string) ([]string, error) {
	var words []string
	for s = strings.TrimLeft(s, " "); s != ""; s = strings.TrimLeft(s, " ") {
		if s[0] != '"' {
			w, rest, _ := strings.Cut(s, " ")
			words, s = append(words, w), rest
			continue
		}
		w, rest, err := unquoteDumped(s[1:])
		if err != nil {
			return nil, err
		}
		words, s = append(words, w), rest
	}
	return words, nil
}

func unquoteDumped(s string) (word, rest string, err error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			return b.String(), s[i+1:], nil
		case c != '\\':
			b.WriteByte(c)
		case i+1 == len(s):
			return "", "", fmt.Errorf("backslash at the end of %q", s)
		case strings.IndexByte("\"\\$`", s[i+1]) >= 0:
			b.WriteByte(s[i+1])
			i++
		case s[i+1] >= '0' && s[i+1] <= '7':
			v, ok := parseDigits(s[i+1:], 3, 8)
			if !ok {
				return "", "", fmt.Errorf("bad octal escape in %q", s)
			}
			b.WriteByte(byte(v))
			i += 3
		default:
			e, ok := simpleEscapes[s[i+1]]
			if !ok {
				return "", "", fmt.Errorf("unknown escape in %q", s)
			}
			b.WriteByte(e)
			i++
		}
	}
	return "", "", fmt.Errorf("unterminated quote in %q", s)
}

// envGenerator is systemd's environment.d generator, which parses files
// with the env-file parser and prints the variables they set.
func envGenerator(t *testing.T) string {
	for _, p := range []string{
		"/usr/lib/systemd/user-environment-generators/30-systemd-environment-d-generator",
		"/lib/systemd/user-environment-generators/30-systemd-environment-d-generator",
	} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Skip("systemd's environment.d generator not installed")
	return ""
}

// runEnvGenerator returns what the generator prints for an env file (and
// the files of the host's environment.d directories).
func runEnvGenerator(t *testing.T, gen string, data []byte) map[string]string {
	t.Helper()
	dir := t.TempDir()
	if data != nil {
		if err := os.MkdirAll(filepath.Join(dir, "environment.d"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "environment.d", "zz-kubeletcfg.conf"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(gen)
	cmd.Env = []string{"XDG_CONFIG_HOME=" + dir, "PATH=/usr/bin:/bin"}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v", gen, err)
	}
	env := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), "=")
		if strings.HasPrefix(v, `"`) {
			var rest string
			if v, rest, err = unquoteDumped(v[1:]); err != nil || rest != "" {
				t.Fatalf("generator output %q: %v", sc.Text(), err)
			}
		}
		env[k] = v
	}
	return env
}

// hostSystemdVersion asks systemd-analyze for the installed version.
func hostSystemdVersion(t *testing.T) int {
	out, err := exec.Command("systemd-analyze", "--version").Output()
	if err != nil {
		t.Skip("systemd-analyze not installed")
	}
	var v int
	if _, err := fmt.Sscanf(string(out), "systemd %d", &v); err != nil {
		t.Fatalf("systemd-analyze --version printed %q", out)
	}
	if got := SystemdVersion("/"); got != v {
		t.Errorf("SystemdVersion(/) = %d, systemd-analyze says %d", got, v)
	}
	return v
}

func TestSystemdEnvFileParsing(t *testing.T) {
	gen := envGenerator(t)
	version := hostSystemdVersion(t)
	baseline := runEnvGenerator(t, gen, nil)
	// The generator also expands $VAR in values and skips empty values;
	// the inputs avoid both.
	files := []string{
		"A=1\nB=two words\n  C \t=  3  \n",
		"# A=1\n; B=2\n   # C=3\nD=4 # not a comment\n",
		"E=\"x  y\"\nF='x \"y\" \\n \\'\nG=a\"b c\"'d'\n",
		"H=\"q\\\"b\\\\c\\`e\\n\\x\"\n",
		"I=\"a\" \"b\"c 'd'\nJ=\"a\"  # note\nK='a '  \n",
		"L=a\\ \\\"b\\\\c\nM=a\\ \nN=\\\"q\\\"\n",
		"O=one \\\ntwo\nP=\"one \\\n  two\"\nQ=\"multi\nline\"\n",
		"# comment \\\nR=1\n",
		"S=1\r\nT=\"2\"\r\nU=3\rV=4\r",
		"W=\"open",
		"X=x\\",
		"export Y=1\n1Z=2\nZ-Z=3\nZ Z=4\n=ZZ=5\nAA=6\n",
		"AB=1\nAB=2\n",
		"AC=zöne\n",
	}
	for i, f := range files {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			lines, err := parseEnvFileVersion("f", []byte(f), version)
			if err != nil {
				t.Fatal(err)
			}
			want := maps.Clone(baseline)
			for k, v := range envMap(lines) {
				if v != "" {
					want[k] = v
				}
			}
			if got := runEnvGenerator(t, gen, []byte(f)); !maps.Equal(got, want) {
				t.Errorf("file %q:\nsystemd %q\n     we %q", f, got, want)
			}
		})
	}
}

// TestSystemdNodes lets systemd load the unit of each node tree under
// testdata and compares what it read before running anything: unit file,
// drop-ins, Environment=, EnvironmentFile= and the ExecStart= words.
func TestSystemdNodes(t *testing.T) {
	nodes, err := os.ReadDir("testdata/nodes")
	if err != nil {
		t.Fatal(err)
	}
	for _, node := range nodes {
		if node.Name() == "masked" {
			continue
		}
		t.Run(node.Name(), func(t *testing.T) {
			root, err := filepath.Abs(filepath.Join("testdata/nodes", node.Name()))
			if err != nil {
				t.Fatal(err)
			}
			var dirs []string
			for _, d := range unitSearchPath {
				dirs = append(dirs, filepath.Join(root, d))
			}
			out, _ := runAnalyze(t, root, []string{"SYSTEMD_UNIT_PATH=" + strings.Join(dirs, ":")}, kubeletUnit)
			got := readDump(t, out, root)
			want := ourDump(t, root)
			if !slices.Equal(got, want) {
				t.Errorf("systemd and we disagree:\nsystemd %q\n     we %q", got, want)
			}
		})
	}
}

// readDump picks from systemd's dump of kubelet.service the lines that
// ourDump makes too.
func readDump(t *testing.T, out, root string) []string {
	var lines []string
	inStart := false
	for _, l := range dumpSectionOf(t, out, kubeletUnit) {
		l = strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(l, "-> "):
			inStart = l == "-> ExecStart:"
		case strings.HasPrefix(l, "Fragment Path: "), strings.HasPrefix(l, "DropIn Path: "):
			k, v, _ := strings.Cut(l, ": ")
			lines = append(lines, k+": "+strings.TrimPrefix(v, root))
		case strings.HasPrefix(l, "Environment: "), strings.HasPrefix(l, "EnvironmentFile: "):
			lines = append(lines, l)
		case inStart && strings.HasPrefix(l, "Command Line: "):
			argv, err := splitDumpedCommand(strings.TrimPrefix(l, "Command Line: "))
			if err != nil {
				t.Fatal(err)
			}
			lines = append(lines, fmt.Sprintf("ExecStart: %q", argv))
		}
	}
	slices.Sort(lines)
	return lines
}

// ourDump describes what we read from the node in readDump's terms.
func ourDump(t *testing.T, root string) []string {
	s, err := Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	n, err := openNode(root)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	cfg, err := n.readConfig(kubeletUnit, s.Unit, s.Dropins)
	if err != nil {
		t.Fatal(err)
	}
	lines := []string{"Fragment Path: " + s.Unit}
	for _, d := range append(slices.Clone(s.Dropins), s.Masked...) {
		lines = append(lines, "DropIn Path: "+d)
	}
	for k, v := range cfg.Env {
		lines = append(lines, "Environment: "+k+"="+v.Value)
	}
	for _, f := range cfg.EnvFiles {
		prefix := ""
		if f.Optional {
			prefix = "-"
		}
		lines = append(lines, "EnvironmentFile: "+prefix+f.Pattern)
	}
	for _, c := range cfg.Exec {
		lines = append(lines, fmt.Sprintf("ExecStart: %q", c.Argv))
	}
	slices.Sort(lines)
	return lines
}
