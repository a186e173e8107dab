package units

import (
	"slices"
	"strings"
	"testing"
)

func TestSplitCommandLine(t *testing.T) {
	env := map[string]string{
		"ARGS":   `--a=1  --b 'c d' "e f"`,
		"ONE":    "x y",
		"EMPTY":  "",
		"QUOTE":  `"unbalanced quote`,
		"BSLASH": `a\ b c\`,
		"DOLLAR": "$HOME",
		"PCT":    "100%n",
	}
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"plain words", "/usr/bin/kubelet --v=2  --config /etc/k.yaml", []string{"/usr/bin/kubelet", "--v=2", "--config", "/etc/k.yaml"}},
		{"tabs and newlines separate", "/bin/k\ta\n b", []string{"/bin/k", "a", "b"}},
		{"double quotes group", `/bin/k "a b" c`, []string{"/bin/k", "a b", "c"}},
		{"single quotes group", `/bin/k 'a "b"'`, []string{"/bin/k", `a "b"`}},
		{"quotes inside a word", `/bin/k --x="a b"c 'd'e`, []string{"/bin/k", "--x=a bc", "de"}},
		{"empty quotes are an empty word", `/bin/k "" ''`, []string{"/bin/k", "", ""}},
		{"C escapes", `/bin/k \x41\102 \u00e9 "\t" \s \\ \"`, []string{"/bin/k", "AB", "é", "\t", " ", `\`, `"`}},
		{"unknown escape kept verbatim, space included", `/bin/k a\ b \$X`, []string{"/bin/k", `a\ b`, `\$X`}},
		{"escaped semicolon is an argument", `/bin/k \; a`, []string{"/bin/k", ";", "a"}},
		{"semicolon inside a word", `/bin/k a;b`, []string{"/bin/k", "a;b"}},
		{"whole-word $VAR is split", "/bin/k $ARGS z", []string{"/bin/k", "--a=1", "--b", "c d", "e f", "z"}},
		{"quoted $VAR is still split", `/bin/k "$ONE"`, []string{"/bin/k", "x", "y"}},
		{"${VAR} is one word", "/bin/k ${ARGS}", []string{"/bin/k", `--a=1  --b 'c d' "e f"`}},
		{"${VAR} inside a word", "/bin/k --x=${ONE}/y", []string{"/bin/k", "--x=x y/y"}},
		{"${A}${B} joined", "/bin/k ${ONE}${ONE}", []string{"/bin/k", "x yx y"}},
		{"$VAR inside a word stays", "/bin/k --x=$ONE", []string{"/bin/k", "--x=$ONE"}},
		{"$$ is a dollar", "/bin/k $$ONE a$$b $$", []string{"/bin/k", "$ONE", "a$b", "$"}},
		{"$$ before a brace", "/bin/k $${ONE}", []string{"/bin/k", "${ONE}"}},
		{"missing $VAR gives no word", "/bin/k $NOPE z", []string{"/bin/k", "z"}},
		{"missing ${VAR} is empty", "/bin/k ${NOPE} x${NOPE}y", []string{"/bin/k", "", "xy"}},
		{"empty $VAR gives no word", "/bin/k $EMPTY", []string{"/bin/k"}},
		{"empty ${VAR} gives an empty word", "/bin/k ${EMPTY}", []string{"/bin/k", ""}},
		{"lone $ is dropped", "/bin/k $ a", []string{"/bin/k", "a"}},
		{"invalid whole-word name is dropped", "/bin/k $1 $A-B", []string{"/bin/k"}},
		{"invalid ${name} is empty", "/bin/k x${A-B}y", []string{"/bin/k", "xy"}},
		{"${VAR:-default} is not supported", "/bin/k ${NOPE:-d} ${ONE:+d}", []string{"/bin/k", "${NOPE:-d}", "${ONE:+d}"}},
		{"unterminated ${ stays", "/bin/k ${ONE", []string{"/bin/k", "${ONE"}},
		{"unbalanced quote in a value is tolerated", "/bin/k $QUOTE", []string{"/bin/k", "unbalanced quote"}},
		{"backslash in a value escapes", "/bin/k $BSLASH", []string{"/bin/k", "a b", "c"}},
		{"values are not expanded again", "/bin/k $DOLLAR ${PCT}", []string{"/bin/k", "$HOME", "100%n"}},
		{"specifiers", "/bin/k %n %N %p %P %j %J %f %t %S %C %L %E %T %V %h %s %u %U %g %G %d %%", []string{
			"/bin/k", "kubelet.service", "kubelet", "kubelet", "kubelet", "kubelet", "kubelet", "/kubelet",
			"/run", "/var/lib", "/var/cache", "/var/log", "/etc", "/tmp", "/var/tmp", "/root", "/bin/bash",
			"root", "0", "root", "0", "/run/credentials/kubelet.service", "%"}},
		{"instance specifiers are empty", "/bin/k x%iy %I", []string{"/bin/k", "xy", ""}},
		{"specifiers inside quotes", `/bin/k "%n and %%n"`, []string{"/bin/k", "kubelet.service and %n"}},
		{"specifier in the executable", "/opt/%p/bin/%p", []string{"/opt/kubelet/bin/kubelet"}},
		{"percent before a non-letter stays", "/bin/k 100% %- %/", []string{"/bin/k", "100%", "%-", "%/"}},
		{"specifiers before variables", "/bin/k %%{ONE} $${ONE}", []string{"/bin/k", "%{ONE}", "${ONE}"}},
		{"- prefix", "-/bin/k a", []string{"/bin/k", "a"}},
		{"+ and ! prefixes", "+/bin/k a", []string{"/bin/k", "a"}},
		{"!! prefix", "!!/bin/k", []string{"/bin/k"}},
		{"@ sets argv[0]", "@/usr/bin/kubelet kubelet-node --v=2", []string{"kubelet-node", "--v=2"}},
		{": disables expansion", ":/bin/k $ONE ${ONE} $$", []string{"/bin/k", "$ONE", "${ONE}", "$$"}},
		{"all prefixes", "-@:+/bin/k argv0 $ONE", []string{"argv0", "$ONE"}},
		{"quoted executable", `"/bin/k" x`, []string{"/bin/k", "x"}},
		{"bare executable name", "kubelet --v=2", []string{"kubelet", "--v=2"}},
		{"executable path kept as written", "/usr//bin/./kubelet", []string{"/usr//bin/./kubelet"}},
		{"leading semicolon skipped", "; /bin/k a", []string{"/bin/k", "a"}},
		{"trailing semicolon", "/bin/k a ;", []string{"/bin/k", "a"}},
		{"trailing backslash kept", `/bin/k a\`, []string{"/bin/k", `a\`}},
		{"UTF-8 passes through", "/bin/k --node-labels=zöne=ä", []string{"/bin/k", "--node-labels=zöne=ä"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SplitCommandLine(tt.in, env)
			if err != nil {
				t.Fatalf("SplitCommandLine(%q): %v", tt.in, err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("SplitCommandLine(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestSplitCommandLineErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", "empty command line"},
		{"blank", "   ", "empty command line"},
		{"unbalanced double quote", `/bin/k "a b`, "unbalanced quoting"},
		{"unbalanced quote in the executable", `"/bin/k a`, "unbalanced quoting"},
		{"backslash at the end inside quotes", `/bin/k "a\`, "unbalanced quoting"},
		{"two commands", "/bin/a x ; /bin/b y", "2 commands"},
		{"unknown specifier", "/bin/k %Z", "unknown specifier %Z"},
		{"unknown specifier in the executable", "/bin/%Q", "unknown specifier %Q"},
		{"specifier that needs the node", "/bin/k %H", "needs the node's files"},
		{"machine ID needs the node", "/bin/k %m", "needs the node's files"},
		{"directory", "/usr/bin/ x", "specifies a directory"},
		{"relative path", "bin/kubelet", "neither a valid executable name nor an absolute path"},
		{"prefix only", "-", "empty executable path"},
		{"@ without argv[0]", "@/bin/k", "empty executable name or zeroeth argument"},
		{"bad prefix order", "+!/bin/k", "neither a valid executable name"},
		{"quote in the executable", `/bin/k\"x`, "special characters"},
		{"NUL byte", "/bin/k \x00", "NUL"},
		{"- prefix does not hide errors here", `-/bin/k "x`, "unbalanced quoting"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SplitCommandLine(tt.in, nil)
			if err == nil {
				t.Fatalf("SplitCommandLine(%q) = %q, want error containing %q", tt.in, got, tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("SplitCommandLine(%q) error %q, want it to contain %q", tt.in, err, tt.want)
			}
		})
	}
}

func TestParseExecValueSemicolons(t *testing.T) {
	sp := &specifiers{unit: "kubelet.service"}
	res, err := parseExecValue(`/bin/a 1 ; /bin/b "2 3" \; ; -/bin/c`, sp)
	if err != nil {
		t.Fatal(err)
	}
	var got [][]string
	for _, c := range res.cmds {
		got = append(got, c.Argv)
	}
	want := [][]string{{"/bin/a", "1"}, {"/bin/b", "2 3", ";"}, {"/bin/c"}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("commands %q, want %q", got, want)
	}
	if res.cmds[2].Prefix != "-" {
		t.Errorf("prefix of the third command %q, want -", res.cmds[2].Prefix)
	}
}

func TestParseExecValueIgnored(t *testing.T) {
	sp := &specifiers{unit: "kubelet.service"}
	tests := []struct {
		name, in string
		cmds     int
		dropped  string
	}{
		// A bad first word makes systemd ignore the rest of the line.
		{"bad first word", `"/bin/a`, 0, "unbalanced quoting"},
		{"bad first word after a command", `/bin/a ; "/bin/b`, 1, "unbalanced quoting"},
		// With "-", a bad command is ignored rather than fatal.
		{"- prefix with a bad word", `-/bin/a "x`, 0, `"-" prefix`},
		{"- prefix with an unknown specifier", `-/bin/a %Z`, 0, "unknown specifier"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := parseExecValue(tt.in, sp)
			if err != nil {
				t.Fatalf("parseExecValue(%q): %v", tt.in, err)
			}
			if len(res.cmds) != tt.cmds {
				t.Errorf("%d commands, want %d", len(res.cmds), tt.cmds)
			}
			if len(res.dropped) != 1 || !strings.Contains(res.dropped[0], tt.dropped) {
				t.Errorf("dropped %q, want one containing %q", res.dropped, tt.dropped)
			}
		})
	}
}

func TestExpandSources(t *testing.T) {
	cmd := command{Argv: []string{"/bin/k", "--lit", "$A", "--x=${B}", "${NOPE}"}, File: "/u", Line: 3}
	env := map[string]envVar{
		"A": {Value: "1 2", Src: Source{File: "/env", Line: 7}},
		"B": {Value: "b", Src: Source{File: "/d.conf", Line: 2}},
	}
	x := cmd.expand(env)
	want := []Source{
		{File: "/u", Line: 3},
		{File: "/u", Line: 3},
		{File: "/env", Line: 7, Var: "A"},
		{File: "/env", Line: 7, Var: "A"},
		{File: "/d.conf", Line: 2, Var: "B"},
		{File: "/u", Line: 3},
	}
	if !slices.Equal(x.Sources, want) {
		t.Errorf("sources\n got %+v\nwant %+v", x.Sources, want)
	}
	if len(x.Notes) != 1 || !strings.Contains(x.Notes[0], "NOPE is not set") {
		t.Errorf("notes %q, want one about NOPE", x.Notes)
	}
}
