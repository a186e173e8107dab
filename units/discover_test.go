package units

import (
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// makeTree creates a node tree: file name → content; a content of
// "-> target" makes a symbolic link instead.
func makeTree(t testing.TB, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	writeTree(t, root, files)
	return root
}

// writeTree writes files (as makeTree) under root.
func writeTree(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		if target, ok := strings.CutPrefix(content, "-> "); ok {
			err = os.Symlink(target, p)
		} else {
			err = os.WriteFile(p, []byte(content), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

const (
	usrUnit = "usr/lib/systemd/system/kubelet.service"
	usrD    = "usr/lib/systemd/system/kubelet.service.d/"
	etcD    = "etc/systemd/system/kubelet.service.d/"
	runD    = "run/systemd/system/kubelet.service.d/"
	plain   = "[Service]\nExecStart=/usr/bin/kubelet $ARGS\n"
)

func discover(t *testing.T, files map[string]string) *Service {
	t.Helper()
	s, err := Discover(makeTree(t, files))
	if err != nil {
		t.Fatalf("Discover: %v", err)
	}
	return s
}

func TestDropinPrecedence(t *testing.T) {
	s := discover(t, map[string]string{
		usrUnit:               plain,
		usrD + "10-a.conf":    "[Service]\nEnvironment=A=usr\n",
		etcD + "10-a.conf":    "[Service]\nEnvironment=A=etc\n",
		runD + "10-a.conf":    "[Service]\nEnvironment=A=run\n",
		runD + "20-b.conf":    "[Service]\nEnvironment=A=run20 B=run20\n",
		usrD + "05-c.conf":    "[Service]\nEnvironment=A=usr05 C=usr05\n",
		etcD + "30-d.conf":    "[Service]\nEnvironment=D=etc30\n",
		"etc/x/whatever":      "",
		etcD + "README":       "not a drop-in",
		etcD + ".hidden.conf": "[Service]\nEnvironment=H=1\n",
		etcD + "40.conf.bak":  "[Service]\nEnvironment=H=2\n",
		etcD + "dir.conf/x":   "a directory is not a drop-in",
	})
	wantDropins := []string{
		"/usr/lib/systemd/system/kubelet.service.d/05-c.conf",
		"/etc/systemd/system/kubelet.service.d/10-a.conf",
		"/run/systemd/system/kubelet.service.d/20-b.conf",
		"/etc/systemd/system/kubelet.service.d/30-d.conf",
	}
	if !slices.Equal(s.Dropins, wantDropins) {
		t.Errorf("Dropins\n got %q\nwant %q", s.Dropins, wantDropins)
	}
	// 20-b.conf comes after 10-a.conf by name, although /etc has priority.
	wantEnv := map[string]string{"A": "run20", "B": "run20", "C": "usr05", "D": "etc30"}
	if !maps.Equal(s.Env, wantEnv) {
		t.Errorf("Env %q, want %q", s.Env, wantEnv)
	}
	if s.EnvSources["A"] != (Source{File: "/run/systemd/system/kubelet.service.d/20-b.conf", Line: 2}) {
		t.Errorf("EnvSources[A] = %+v", s.EnvSources["A"])
	}
}

func TestDropinMasking(t *testing.T) {
	s := discover(t, map[string]string{
		usrUnit:            plain,
		usrD + "10-a.conf": "[Service]\nEnvironment=A=usr\n",
		etcD + "10-a.conf": "-> /dev/null",
		usrD + "20-b.conf": "[Service]\nEnvironment=B=usr\n",
		runD + "20-b.conf": "",
		usrD + "30-c.conf": "[Service]\nEnvironment=C=usr\n",
	})
	if want := []string{"/usr/lib/systemd/system/kubelet.service.d/30-c.conf"}; !slices.Equal(s.Dropins, want) {
		t.Errorf("Dropins %q, want %q", s.Dropins, want)
	}
	wantMasked := []string{"/etc/systemd/system/kubelet.service.d/10-a.conf", "/run/systemd/system/kubelet.service.d/20-b.conf"}
	if !slices.Equal(s.Masked, wantMasked) {
		t.Errorf("Masked %q, want %q", s.Masked, wantMasked)
	}
	if want := map[string]string{"C": "usr"}; !maps.Equal(s.Env, want) {
		t.Errorf("Env %q, want %q", s.Env, want)
	}
}

func TestTopLevelServiceDropins(t *testing.T) {
	s := discover(t, map[string]string{
		usrUnit: plain,
		"etc/systemd/system/service.d/10-all.conf": "[Service]\nEnvironment=ALL=1 X=top\n",
		"etc/systemd/system/service.d/20-x.conf":   "[Service]\nEnvironment=X=top20\n",
		usrD + "20-x.conf":                         "[Service]\nEnvironment=X=kubelet20\n",
	})
	// Of the same name, the unit's own drop-in wins over the top-level one,
	// whatever the directories.
	want := []string{"/etc/systemd/system/service.d/10-all.conf", "/usr/lib/systemd/system/kubelet.service.d/20-x.conf"}
	if !slices.Equal(s.Dropins, want) {
		t.Errorf("Dropins %q, want %q", s.Dropins, want)
	}
	if s.Env["X"] != "kubelet20" || s.Env["ALL"] != "1" {
		t.Errorf("Env %q", s.Env)
	}
}

func TestUnitPrecedenceAndMasking(t *testing.T) {
	t.Run("etc overrides run overrides usr", func(t *testing.T) {
		s := discover(t, map[string]string{
			usrUnit:                                  "[Service]\nExecStart=/usr/bin/kubelet --from=usr\n",
			"run/systemd/system/kubelet.service":     "[Service]\nExecStart=/usr/bin/kubelet --from=run\n",
			"etc/systemd/system/kubelet.service":     "[Service]\nExecStart=/usr/bin/kubelet --from=etc\n",
			"lib/systemd/system/kubelet.service":     "[Service]\nExecStart=/usr/bin/kubelet --from=lib\n",
			"usr/local/lib/systemd/system/x.service": "",
		})
		if s.Unit != "/etc/systemd/system/kubelet.service" || !slices.Equal(s.Exec, []string{"/usr/bin/kubelet", "--from=etc"}) {
			t.Errorf("Unit %s Exec %q", s.Unit, s.Exec)
		}
	})
	t.Run("usr/lib before lib", func(t *testing.T) {
		s := discover(t, map[string]string{
			"lib/systemd/system/kubelet.service": "[Service]\nExecStart=/usr/bin/kubelet --from=lib\n",
			usrUnit:                              "[Service]\nExecStart=/usr/bin/kubelet --from=usr\n",
		})
		if s.Unit != "/usr/lib/systemd/system/kubelet.service" {
			t.Errorf("Unit %s", s.Unit)
		}
	})
	for name, files := range map[string]map[string]string{
		"linked to /dev/null":            {usrUnit: plain, "etc/systemd/system/kubelet.service": "-> /dev/null"},
		"linked to /dev/null relatively": {usrUnit: plain, "etc/systemd/system/kubelet.service": "-> ../../../dev/null"},
		"empty":                          {usrUnit: plain, "run/systemd/system/kubelet.service": ""},
	} {
		t.Run("masked "+name, func(t *testing.T) {
			_, err := Discover(makeTree(t, files))
			var e *Error
			if !errors.As(err, &e) || !strings.Contains(e.Msg, "masked") || !strings.HasSuffix(e.File, "/kubelet.service") {
				t.Errorf("error %v, want the unit masked", err)
			}
		})
	}
	t.Run("dangling link skipped", func(t *testing.T) {
		s := discover(t, map[string]string{usrUnit: plain, "etc/systemd/system/kubelet.service": "-> /nowhere.service"})
		if s.Unit != "/usr/lib/systemd/system/kubelet.service" {
			t.Errorf("Unit %s", s.Unit)
		}
	})
}

func TestUnitNotFound(t *testing.T) {
	_, err := Discover(makeTree(t, map[string]string{"etc/hostname": "node1\n"}))
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("error %v, want not found", err)
	}
	for _, dir := range []string{"/etc/systemd/system", "/run/systemd/system", "/usr/lib/systemd/system", "/lib/systemd/system"} {
		if !strings.Contains(err.Error(), dir) {
			t.Errorf("error %q does not name %s", err, dir)
		}
	}
}

func TestSymlinksStayInsideRoot(t *testing.T) {
	outer := t.TempDir()
	if err := os.WriteFile(filepath.Join(outer, "secret.env"), []byte("SECRET=leaked\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(outer, "node")
	files := map[string]string{
		// An absolute link is resolved inside the root.
		"etc/systemd/system/kubelet.service": "-> /opt/units/kubelet.service",
		"opt/units/kubelet.service": "[Service]\nEnvironmentFile=-/etc/escape.env\nEnvironmentFile=/etc/abs.env\n" +
			"ExecStart=/usr/bin/kubelet $SECRET $OK\n",
		// Relative links cannot climb out of the root either.
		"etc/escape.env":  "-> ../../../../../../../secret.env",
		"etc/abs.env":     "-> /data/kubelet.env",
		"data":            "-> ../../../../srv",
		"srv/kubelet.env": "OK=inside\n",
	}
	writeTree(t, root, files)
	s, err := Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	if s.Unit != "/etc/systemd/system/kubelet.service" || s.UnitTarget != "/opt/units/kubelet.service" {
		t.Errorf("Unit %s UnitTarget %s", s.Unit, s.UnitTarget)
	}
	if want := []string{"/usr/bin/kubelet", "inside"}; !slices.Equal(s.Exec, want) {
		t.Errorf("Exec %q, want %q", s.Exec, want)
	}
	if want := []string{"/etc/abs.env"}; !slices.Equal(s.EnvFiles, want) {
		t.Errorf("EnvFiles %q, want %q", s.EnvFiles, want)
	}
}

func TestSymlinkLoop(t *testing.T) {
	_, err := Discover(makeTree(t, map[string]string{
		"etc/systemd/system/kubelet.service": "-> /etc/systemd/system/kubelet.service",
		usrUnit:                              plain,
	}))
	if err == nil || !strings.Contains(err.Error(), "too many levels of symbolic links") {
		t.Errorf("error %v, want a symlink loop", err)
	}
}

func TestAliasDropins(t *testing.T) {
	s := discover(t, map[string]string{
		"etc/systemd/system/kubelet.service":                  "-> /usr/lib/systemd/system/k8s-node.service",
		"usr/lib/systemd/system/k8s-node.service":             plain,
		"usr/lib/systemd/system/k8s-node.service.d/a.conf":    "[Service]\nEnvironment=ARGS=--alias\n",
		"usr/lib/systemd/system/kubelet.service.d/other.conf": "[Service]\nEnvironment=B=1\n",
	})
	if want := []string{"/usr/bin/kubelet", "--alias"}; !slices.Equal(s.Exec, want) || s.Env["B"] != "1" {
		t.Errorf("Exec %q Env %q", s.Exec, s.Env)
	}
}

func TestExecStartReset(t *testing.T) {
	s := discover(t, map[string]string{
		usrUnit:                 "[Service]\nExecStart=/usr/bin/kubelet --old\n",
		etcD + "10-a.conf":      "[Service]\nExecStart=\nExecStart=/usr/local/bin/kubelet --new\n",
		"usr/local/bin/kubelet": "",
	})
	if want := []string{"/usr/local/bin/kubelet", "--new"}; !slices.Equal(s.Exec, want) {
		t.Errorf("Exec %q, want %q", s.Exec, want)
	}
	if s.ExecStart != (Source{File: "/etc/systemd/system/kubelet.service.d/10-a.conf", Line: 3}) {
		t.Errorf("ExecStart %+v", s.ExecStart)
	}
	if s.Path != "/usr/local/bin/kubelet" || len(s.Warnings) != 0 {
		t.Errorf("Path %s, warnings %v", s.Path, s.Warnings)
	}
}

func TestMultipleExecStart(t *testing.T) {
	_, err := Discover(makeTree(t, map[string]string{
		usrUnit:            "[Service]\nExecStart=/usr/bin/kubelet --old\n",
		etcD + "10-a.conf": "[Service]\n# forgot the reset\nExecStart=/usr/bin/kubelet --new\n",
	}))
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v, want an *Error", err)
	}
	if e.File != "/etc/systemd/system/kubelet.service.d/10-a.conf" || e.Line != 3 {
		t.Errorf("error at %s:%d, want the drop-in's ExecStart=", e.File, e.Line)
	}
	for _, want := range []string{"more than one ExecStart=", "/usr/lib/systemd/system/kubelet.service:2", "Type=oneshot", `empty "ExecStart="`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

func TestExecStartErrors(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		file  string
		line  int
		want  string
	}{
		{"no ExecStart", map[string]string{usrUnit: "[Service]\nType=simple\n"}, "/" + usrUnit, 0, "no ExecStart="},
		{"reset leaves none", map[string]string{usrUnit: plain, etcD + "a.conf": "[Service]\nExecStart=\n"}, "/" + usrUnit, 0, "no ExecStart="},
		{"oneshot with two", map[string]string{usrUnit: "[Service]\nType=oneshot\nExecStart=/bin/a\nExecStart=/bin/b\n"}, "/" + usrUnit, 4, "Type=oneshot"},
		{"semicolon makes two", map[string]string{usrUnit: "[Service]\nExecStart=/bin/a ; /bin/b\n"}, "/" + usrUnit, 2, "more than one ExecStart="},
		{"unbalanced quoting", map[string]string{usrUnit: "[Service]\nExecStart=/bin/a \"b\n"}, "/" + usrUnit, 2, "unbalanced quoting"},
		{"unknown specifier", map[string]string{usrUnit: "[Service]\nExecStart=/bin/a %Z\n"}, "/" + usrUnit, 2, "unknown specifier"},
		{"relative path", map[string]string{usrUnit: "[Service]\nExecStart=bin/kubelet\n"}, "/" + usrUnit, 2, "absolute path"},
		{"empty after expansion", map[string]string{usrUnit: "[Service]\nExecStart=@/bin/kubelet $NOPE\n"}, "/" + usrUnit, 2, "empty after variable expansion"},
		{"bad section header", map[string]string{usrUnit: "[Service\nExecStart=/bin/a\n"}, "/" + usrUnit, 1, "invalid section header"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Discover(makeTree(t, tt.files))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v, want an *Error", err)
			}
			if e.File != tt.file || e.Line != tt.line || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want %s:%d: …%s…", err, tt.file, tt.line, tt.want)
			}
		})
	}
}

func TestExecStartIgnoredLines(t *testing.T) {
	// A bad first word, or a bad command with "-", only makes systemd ignore
	// that ExecStart= line.
	s := discover(t, map[string]string{
		usrUnit: "[Service]\nExecStart=/usr/bin/kubelet --ok\nExecStart=\"/bin/broken\nExecStart=-/bin/x %Z\n",
	})
	if want := []string{"/usr/bin/kubelet", "--ok"}; !slices.Equal(s.Exec, want) {
		t.Errorf("Exec %q, want %q", s.Exec, want)
	}
	if len(s.Warnings) != 3 { // two ignored lines, and /usr/bin/kubelet missing
		t.Errorf("warnings %v", s.Warnings)
	}
}

func TestEnvironmentFiles(t *testing.T) {
	t.Run("optional missing is left out", func(t *testing.T) {
		s := discover(t, map[string]string{
			usrUnit:               "[Service]\nEnvironmentFile=-/etc/default/nope\nEnvironmentFile=-/etc/default/kubelet\nExecStart=/usr/bin/kubelet $ARGS\n",
			"etc/default/kubelet": "ARGS=--v=2\n",
		})
		if want := []string{"/etc/default/kubelet"}; !slices.Equal(s.EnvFiles, want) {
			t.Errorf("EnvFiles %q, want %q", s.EnvFiles, want)
		}
		if len(s.Warnings) != 1 { // only the missing kubelet binary
			t.Errorf("warnings %v", s.Warnings)
		}
	})
	t.Run("required missing is an error", func(t *testing.T) {
		_, err := Discover(makeTree(t, map[string]string{
			usrUnit: "[Service]\nExecStart=/usr/bin/kubelet\nEnvironmentFile=/etc/sysconfig/kubelet\n",
		}))
		var e *Error
		if !errors.As(err, &e) || e.File != "/"+usrUnit || e.Line != 3 || !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("error %v, want not found at the EnvironmentFile= line", err)
		}
		if !strings.Contains(err.Error(), "/etc/sysconfig/kubelet") {
			t.Errorf("error %q does not name the file", err)
		}
	})
	t.Run("required unreadable is an error, optional is skipped", func(t *testing.T) {
		files := map[string]string{
			usrUnit:           "[Service]\nExecStart=/usr/bin/kubelet\nEnvironmentFile=-/etc/bad.env\n",
			"etc/bad.env":     "A=\xff\n",
			"usr/bin/kubelet": "",
		}
		s := discover(t, files)
		if len(s.EnvFiles) != 0 || len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0].Message, "invalid UTF-8") {
			t.Errorf("EnvFiles %q warnings %v", s.EnvFiles, s.Warnings)
		}
		files[usrUnit] = "[Service]\nExecStart=/usr/bin/kubelet\nEnvironmentFile=/etc/bad.env\n"
		_, err := Discover(makeTree(t, files))
		if err == nil || !strings.Contains(err.Error(), "/etc/bad.env:1: invalid UTF-8") {
			t.Errorf("error %v, want the bad line named", err)
		}
	})
	t.Run("glob", func(t *testing.T) {
		s := discover(t, map[string]string{
			usrUnit:                     "[Service]\nEnvironmentFile=/etc/kubelet.d/*.env\nExecStart=/usr/bin/kubelet $A $B\n",
			"etc/kubelet.d/20-b.env":    "B=2\nA=from-b\n",
			"etc/kubelet.d/10-a.env":    "A=1\n",
			"etc/kubelet.d/.hidden.env": "A=hidden\n",
			"etc/kubelet.d/x.conf":      "A=conf\n",
		})
		if want := []string{"/etc/kubelet.d/10-a.env", "/etc/kubelet.d/20-b.env"}; !slices.Equal(s.EnvFiles, want) {
			t.Errorf("EnvFiles %q, want %q", s.EnvFiles, want)
		}
		if want := []string{"/usr/bin/kubelet", "from-b", "2"}; !slices.Equal(s.Exec, want) {
			t.Errorf("Exec %q, want %q", s.Exec, want)
		}
	})
	t.Run("glob without match", func(t *testing.T) {
		_, err := Discover(makeTree(t, map[string]string{
			usrUnit: "[Service]\nEnvironmentFile=/etc/kubelet.d/*.env\nExecStart=/usr/bin/kubelet\n",
		}))
		if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("error %v, want not found", err)
		}
	})
	t.Run("reset and invalid paths", func(t *testing.T) {
		s := discover(t, map[string]string{
			usrUnit: "[Service]\nEnvironmentFile=/etc/missing\nEnvironmentFile=\n" +
				"EnvironmentFile=relative/path\nEnvironmentFile=\"/etc/quoted\"\nEnvironmentFile=/etc/../etc/x\n" +
				"EnvironmentFile=/etc//default/./kubelet\nExecStart=/usr/bin/kubelet $A\n",
			"etc/default/kubelet": "A=1\n",
		})
		if want := []string{"/etc/default/kubelet"}; !slices.Equal(s.EnvFiles, want) {
			t.Errorf("EnvFiles %q, want %q", s.EnvFiles, want)
		}
		if len(s.Warnings) != 4 { // three bad paths, missing binary
			t.Errorf("warnings %v", s.Warnings)
		}
	})
	t.Run("export lines are ignored with a warning", func(t *testing.T) {
		s := discover(t, map[string]string{
			usrUnit:               "[Service]\nEnvironmentFile=/etc/default/kubelet\nExecStart=/usr/bin/kubelet $KUBELET_EXTRA_ARGS\n",
			"etc/default/kubelet": "export KUBELET_EXTRA_ARGS=--v=2\n",
			"usr/bin/kubelet":     "",
		})
		if len(s.Exec) != 1 || len(s.Env) != 0 {
			t.Errorf("Exec %q Env %q", s.Exec, s.Env)
		}
		if len(s.Warnings) != 2 || s.Warnings[0].File != "/etc/default/kubelet" || s.Warnings[0].Line != 1 {
			t.Errorf("warnings %v", s.Warnings)
		}
	})
}

func TestEnvironmentAssignments(t *testing.T) {
	s := discover(t, map[string]string{
		usrUnit: "[Service]\n" +
			`Environment="A=1 2" B=3 'C=x y' D="q r" E=a\x20b` + "\n" +
			`Environment=F G=1 H` + "\n" +
			`Environment=$HOME=x I=$HOME J=%n` + "\n" +
			`Environment=K=1 L="unbalanced` + "\n" +
			"ExecStart=/usr/bin/kubelet\n",
	})
	want := map[string]string{
		"A": "1 2", "B": "3", "C": "x y", "D": "q r", "E": "a b",
		"G": "1", "I": "$HOME", "J": "kubelet.service", "K": "1",
	}
	if !maps.Equal(s.Env, want) {
		t.Errorf("Env\n got %q\nwant %q", s.Env, want)
	}
	// F, H, $HOME=x and the unbalanced word; and the missing binary.
	if len(s.Warnings) != 5 {
		t.Errorf("warnings %v", s.Warnings)
	}
}

func TestEnvironmentOverrideOrder(t *testing.T) {
	s := discover(t, map[string]string{
		usrUnit: "[Service]\nEnvironment=X=unit Y=unit Z=unit R=unit\nEnvironmentFile=/etc/one.env\n" +
			"EnvironmentFile=/etc/two.env\nExecStart=/usr/bin/kubelet\n",
		etcD + "10.conf": "[Service]\nEnvironment=X=dropin Y=dropin\n",
		etcD + "20.conf": "[Service]\nEnvironment=\nEnvironment=R=after-reset W=dropin\n",
		"etc/one.env":    "X=one\nZ=one\n",
		"etc/two.env":    "X=two\n",
	})
	// Environment files override Environment= wherever it was set; the
	// later file wins; an empty Environment= forgets what came before.
	want := map[string]string{"X": "two", "Z": "one", "R": "after-reset", "W": "dropin"}
	if !maps.Equal(s.Env, want) {
		t.Errorf("Env\n got %q\nwant %q", s.Env, want)
	}
	if s.EnvSources["X"] != (Source{File: "/etc/two.env", Line: 1}) || s.EnvSources["Z"] != (Source{File: "/etc/one.env", Line: 2}) {
		t.Errorf("EnvSources %+v", s.EnvSources)
	}
}

func TestUnsetEnvironment(t *testing.T) {
	s := discover(t, map[string]string{
		usrUnit: "[Service]\nEnvironment=A=1 B=2 C=3 D=4\nUnsetEnvironment=A C=wrong D=4\nExecStart=/usr/bin/kubelet $A ${B} $C $D\n",
	})
	if want := map[string]string{"B": "2", "C": "3"}; !maps.Equal(s.Env, want) {
		t.Errorf("Env %q, want %q", s.Env, want)
	}
	if want := []string{"/usr/bin/kubelet", "2", "3"}; !slices.Equal(s.Exec, want) {
		t.Errorf("Exec %q, want %q", s.Exec, want)
	}
}

func TestExecutableAndPrefixes(t *testing.T) {
	t.Run("bare name searched", func(t *testing.T) {
		s := discover(t, map[string]string{usrUnit: "[Service]\nExecStart=kubelet --v=2\n", "usr/bin/kubelet": ""})
		if s.Path != "/usr/bin/kubelet" || !slices.Equal(s.Exec, []string{"kubelet", "--v=2"}) || len(s.Warnings) != 0 {
			t.Errorf("Path %s Exec %q warnings %v", s.Path, s.Exec, s.Warnings)
		}
	})
	t.Run("ExecSearchPath", func(t *testing.T) {
		s := discover(t, map[string]string{
			usrUnit: "[Service]\nExecSearchPath=/opt/bin:/usr/bin\nExecStart=kubelet\n", "usr/bin/kubelet": "", "opt/bin/kubelet": "",
		})
		if s.Path != "/opt/bin/kubelet" {
			t.Errorf("Path %s", s.Path)
		}
	})
	t.Run("@ sets argv[0]", func(t *testing.T) {
		s := discover(t, map[string]string{usrUnit: "[Service]\nExecStart=-@/usr/bin/kubelet kubelet-x $ARGS\nEnvironment=ARGS=--v=2\n", "usr/bin/kubelet": ""})
		if s.Path != "/usr/bin/kubelet" || s.Prefix != "-@" || !slices.Equal(s.Exec, []string{"kubelet-x", "--v=2"}) {
			t.Errorf("Path %s Prefix %q Exec %q", s.Path, s.Prefix, s.Exec)
		}
		if len(s.Sources) != 1 || s.Sources[0].Var != "ARGS" {
			t.Errorf("Sources %+v", s.Sources)
		}
	})
	t.Run("missing binary warned", func(t *testing.T) {
		s := discover(t, map[string]string{usrUnit: plain})
		if len(s.Warnings) != 2 || !strings.Contains(s.Warnings[1].Message, "not found") { // $ARGS unset, binary missing
			t.Errorf("warnings %v", s.Warnings)
		}
	})
}

func TestNodeSpecifiers(t *testing.T) {
	files := map[string]string{
		usrUnit:           "[Service]\nExecStart=/usr/bin/kubelet --hostname-override=%H --short=%l --id=%m --os=%o-%w --unit=%y --dir=%Y\n",
		"etc/hostname":    "# comment\nnode1.example.com\n",
		"etc/machine-id":  "0123456789abcdef0123456789abcdef\n",
		"etc/os-release":  "ID=debian\nVERSION_ID=\"12\"\n",
		"usr/bin/kubelet": "",
	}
	s := discover(t, files)
	want := []string{"/usr/bin/kubelet", "--hostname-override=node1.example.com", "--short=node1",
		"--id=0123456789abcdef0123456789abcdef", "--os=debian-12",
		"--unit=/usr/lib/systemd/system/kubelet.service", "--dir=/usr/lib/systemd/system"}
	if !slices.Equal(s.Exec, want) {
		t.Errorf("Exec\n got %q\nwant %q", s.Exec, want)
	}
	files[usrUnit] = "[Service]\nExecStart=/usr/bin/kubelet %s\n"
	if s := discover(t, files); !slices.Equal(s.Exec, []string{"/usr/bin/kubelet", "/bin/sh"}) {
		t.Errorf("%%s without /bin/bash on the node: Exec %q", s.Exec)
	}
	files["bin/bash"] = ""
	if s := discover(t, files); !slices.Equal(s.Exec, []string{"/usr/bin/kubelet", "/bin/bash"}) {
		t.Errorf("%%s with /bin/bash on the node: Exec %q", s.Exec)
	}
	files[usrUnit] = "[Service]\nExecStart=/usr/bin/kubelet --boot=%b\n"
	_, err := Discover(makeTree(t, files))
	if err == nil || !strings.Contains(err.Error(), "only known on the running node") {
		t.Errorf("error %v, want %%b unavailable offline", err)
	}
}

func TestSystemdVersionRules(t *testing.T) {
	files := map[string]string{
		usrUnit:               "[Service]\nEnvironmentFile=/etc/default/kubelet\nExecStart=/usr/bin/kubelet $A $B\n",
		"etc/default/kubelet": "# extra flags \\\nA=--a\nB=--b\n",
		"usr/bin/kubelet":     "",
		"usr/lib/x86_64-linux-gnu/systemd/libsystemd-shared-252.so": "",
	}
	s := discover(t, files)
	if s.SystemdVersion != 252 || !slices.Equal(s.Exec, []string{"/usr/bin/kubelet", "--b"}) {
		t.Errorf("systemd %d: Exec %q", s.SystemdVersion, s.Exec)
	}
	delete(files, "usr/lib/x86_64-linux-gnu/systemd/libsystemd-shared-252.so")
	files["usr/lib/systemd/libsystemd-shared-255.so"] = ""
	s = discover(t, files)
	if s.SystemdVersion != 255 || !slices.Equal(s.Exec, []string{"/usr/bin/kubelet", "--a", "--b"}) {
		t.Errorf("systemd %d: Exec %q", s.SystemdVersion, s.Exec)
	}
}

func TestSharedLibraryVersion(t *testing.T) {
	for name, want := range map[string]int{
		"libsystemd-shared-252.so":           252,
		"libsystemd-shared-256.11-1.fc41.so": 256,
		"libsystemd-shared-.so":              0,
		"libsystemd-shared-abc.so":           0,
	} {
		if got := sharedLibraryVersion(name); got != want {
			t.Errorf("sharedLibraryVersion(%s) = %d, want %d", name, got, want)
		}
	}
	root := makeTree(t, map[string]string{
		"usr/lib64/systemd/libsystemd-shared-239.so": "",
		"usr/lib64/systemd/libsystemd-shared-252.so": "",
	})
	if got := SystemdVersion(root); got != 252 {
		t.Errorf("SystemdVersion = %d, want 252", got)
	}
	if got := SystemdVersion(t.TempDir()); got != 0 {
		t.Errorf("SystemdVersion of an empty tree = %d, want 0", got)
	}
}

func TestFromUnit(t *testing.T) {
	root := makeTree(t, map[string]string{
		"srv/kubelet.service":                         "[Service]\nExecStart=/usr/bin/kubelet $ARGS\n",
		"etc/systemd/system/kubelet.service.d/a.conf": "[Service]\nEnvironment=ARGS=--dropin\n",
		"srv/kubelet-custom.service":                  "[Service]\nExecStart=/usr/bin/kubelet --custom %N\n",
	})
	s, err := FromUnit(root, "/srv/kubelet.service")
	if err != nil {
		t.Fatal(err)
	}
	if s.Unit != "/srv/kubelet.service" || !slices.Equal(s.Exec, []string{"/usr/bin/kubelet", "--dropin"}) {
		t.Errorf("Unit %s Exec %q", s.Unit, s.Exec)
	}
	s, err = FromUnit(root, "srv/kubelet-custom.service")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Dropins) != 0 || !slices.Equal(s.Exec, []string{"/usr/bin/kubelet", "--custom", "kubelet-custom"}) {
		t.Errorf("Dropins %q Exec %q", s.Dropins, s.Exec)
	}
	for path, want := range map[string]string{
		"/srv/missing.service": "no such file",
		"/srv/kubelet.conf":    "must end in .service",
	} {
		if _, err := FromUnit(root, path); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), path) {
			t.Errorf("FromUnit(%s) error %v, want %q", path, err, want)
		}
	}
}

func TestDiscoverLiveRoot(t *testing.T) {
	// The machine running the tests may or may not have a kubelet; either
	// way the live root must be readable.
	s, err := Discover("")
	var e *Error
	switch {
	case err == nil:
		if s.Unit == "" || len(s.Exec) == 0 {
			t.Errorf("Service %+v", s)
		}
	case !errors.Is(err, fs.ErrNotExist) && !errors.As(err, &e):
		t.Errorf("Discover(\"\"): %v", err)
	}
}

func TestDropinNameVariants(t *testing.T) {
	tests := map[string][]string{
		"kubelet.service":      {"kubelet.service"},
		"foo-bar-baz.service":  {"foo-bar-baz.service", "foo-bar-.service", "foo-.service"},
		"foo@inst.service":     {"foo@inst.service", "foo@.service"},
		"k8s-node@a-b.service": {"k8s-node@a-b.service", "k8s-node@.service", "k8s-.service"},
		"-lead.service":        {"-lead.service"},
		"trail-.service":       {"trail-.service"},
	}
	for name, want := range tests {
		if got := dropinNameVariants(name); !slices.Equal(got, want) {
			t.Errorf("dropinNameVariants(%s) = %q, want %q", name, got, want)
		}
	}
}
