package why

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubeletcfg/kubeletcfg/node"
)

// fakeJournal is a journalctl stand-in: it prints, whatever it is asked,
// the records of the query kind the arguments show (the unit's newest
// records, the kubelet process's, systemd's). The real journalctl selects
// by the matches; the records here include what it would not select, to
// show that why selects again by journald's own fields.
type fakeJournal struct {
	newest, run, systemd []map[string]any
	// script replaces the whole program.
	script string
}

func (f fakeJournal) install(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	write := func(name string, recs []map[string]any) string {
		var b strings.Builder
		for _, r := range recs {
			line, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			b.Write(line)
			b.WriteByte('\n')
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	script := f.script
	if script == "" {
		script = fmt.Sprintf(`case "$*" in
*--reverse*) cat %s ;;
*_PID=1*) cat %s ;;
*) cat %s ;;
esac
`, write("newest", f.newest), write("systemd", f.systemd), write("run", f.run))
	}
	p := filepath.Join(dir, "journalctl")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

const inv = "0123456789abcdef0123456789abcdef"

func kubeletRec(pid int, msg string) map[string]any {
	return map[string]any{"_PID": fmt.Sprint(pid), "_COMM": "kubelet", "_SYSTEMD_UNIT": "kubelet.service",
		"_SYSTEMD_INVOCATION_ID": inv, "_BOOT_ID": "b", "MESSAGE": msg, "__REALTIME_TIMESTAMP": "1700000000000000"}
}

func systemdRec(msg string, extra ...string) map[string]any {
	r := map[string]any{"_PID": "1", "_COMM": "systemd", "UNIT": "kubelet.service", "_BOOT_ID": "b", "MESSAGE": msg, "__REALTIME_TIMESTAMP": "1700000001000000"}
	for i := 0; i+1 < len(extra); i += 2 {
		r[extra[i]] = extra[i+1]
	}
	return r
}

func explainJournal(t *testing.T, prog string, root string, opts Options) *Explanation {
	t.Helper()
	opts.Journalctl = prog
	opts.Setup = node.Source{Root: root, KubeletVersion: "1.37", VersionSet: true}
	x, err := Explain(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func TestJournal(t *testing.T) {
	failed := commandFailed(4242, "failed to parse kubelet flag: unknown flag: --no-such-flag")
	for _, tc := range []struct {
		name string
		j    fakeJournal
		want want
		exit string
	}{
		{
			name: "refusal: the kubelet's own words",
			j: fakeJournal{
				newest:  []map[string]any{kubeletRec(4242, failed)},
				run:     []map[string]any{kubeletRec(4242, failed)},
				systemd: []map[string]any{systemdRec("kubelet.service: Main process exited, code=exited, status=1/FAILURE", "EXIT_CODE", "exited", "EXIT_STATUS", "1")},
			},
			want: want{class: "flag-unknown", flag: "no-such-flag", value: "1", origin: "flag --no-such-flag (from /etc/default/kubelet:1 ($KUBELET_EXTRA_ARGS))"},
			exit: "exited, status=1/FAILURE",
		},
		{
			name: "forged lines are not the kubelet's",
			j: fakeJournal{
				// The newest record is another process of the unit (a
				// helper) and one outside it that names the unit.
				newest: []map[string]any{
					{"_PID": "77", "_COMM": "logger", "_SYSTEMD_UNIT": "session-1.scope", "UNIT": "kubelet.service", "MESSAGE": commandFailed(4242, "failed to run Kubelet: running with swap on is not supported")},
					kubeletRec(4242, "I1203 13:35:43.822523    4242 server.go:1] \"Kubelet version\" kubeletVersion=\"v1.37.2\""),
				},
				run: []map[string]any{
					kubeletRec(4242, failed),
					{"_PID": "77", "_COMM": "logger", "_SYSTEMD_UNIT": "session-1.scope", "MESSAGE": commandFailed(4242, "failed to run Kubelet: running with swap on is not supported")},
					{"_PID": "4243", "_COMM": "kubelet", "_SYSTEMD_UNIT": "kubelet.service", "MESSAGE": commandFailed(4243, "failed to run Kubelet: running with swap on is not supported")},
				},
				systemd: []map[string]any{{"_PID": "88", "UNIT": "kubelet.service", "MESSAGE": "kubelet.service: Main process exited, code=killed, status=9/KILL"}},
			},
			want: want{class: "flag-unknown", flag: "no-such-flag", value: "1", origin: "flag --no-such-flag (from /etc/default/kubelet:1 ($KUBELET_EXTRA_ARGS))"},
		},
		{
			name: "killed by a signal: not the configuration",
			j: fakeJournal{
				newest:  []map[string]any{kubeletRec(4242, klogLine('I', 4242, "server.go:1", "Started kubelet"))},
				run:     []map[string]any{kubeletRec(4242, klogLine('I', 4242, "server.go:1", "Started kubelet"))},
				systemd: []map[string]any{systemdRec("kubelet.service: Main process exited, code=killed, status=9/KILL", "MESSAGE_ID", msgProcessExit, "EXIT_CODE", "killed", "EXIT_STATUS", "9")},
			},
			want: want{class: "killed-signal", fix: []string{"not the kubelet's configuration"}},
			exit: "killed, status=9",
		},
		{
			name: "stopped by systemd",
			j: fakeJournal{
				newest: []map[string]any{kubeletRec(4242, klogLine('I', 4242, "server.go:1", "Started kubelet"))},
				run:    []map[string]any{kubeletRec(4242, klogLine('I', 4242, "server.go:1", "Started kubelet"))},
				systemd: []map[string]any{
					systemdRec("Stopping kubelet.service - kubelet...", "MESSAGE_ID", msgUnitStopping, "JOB_TYPE", "stop"),
					systemdRec("kubelet.service: Deactivated successfully."),
				},
			},
			want: want{class: "stopped", fix: []string{"systemctl start kubelet.service"}},
		},
		{
			name: "OOM",
			j: fakeJournal{
				newest: []map[string]any{kubeletRec(4242, klogLine('I', 4242, "server.go:1", "Started kubelet"))},
				run:    []map[string]any{kubeletRec(4242, klogLine('I', 4242, "server.go:1", "Started kubelet"))},
				systemd: []map[string]any{
					systemdRec("kubelet.service: A process of this unit has been killed by the OOM killer.", "MESSAGE_ID", msgOOM),
					systemdRec("kubelet.service: Main process exited, code=killed, status=9/KILL", "EXIT_CODE", "killed", "EXIT_STATUS", "9"),
				},
			},
			want: want{class: "killed-oom"},
		},
		{
			name: "a message that is not UTF-8",
			j: fakeJournal{
				newest: []map[string]any{kubeletRec(4242, failed)},
				run: []map[string]any{
					{"_PID": "4242", "_COMM": "kubelet", "_SYSTEMD_UNIT": "kubelet.service", "MESSAGE": []int{0xff, 0xfe, 'x', 0}},
					kubeletRec(4242, failed),
				},
			},
			want: want{class: "flag-unknown", flag: "no-such-flag", value: "1", origin: "flag --no-such-flag (from /etc/default/kubelet:1 ($KUBELET_EXTRA_ARGS))"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := tree{extraArgs: "--no-such-flag=1"}.write(t)
			// The image's journal: the fake reads none of it, but why
			// requires journal files under --root.
			jdir := filepath.Join(root, "var/log/journal/m")
			if err := os.MkdirAll(jdir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(jdir, "system.journal"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			x := explainJournal(t, tc.j.install(t), root, Options{})
			tc.want.check(t, x)
			if !x.Input.Trusted || x.Input.Kind != "journal" {
				t.Errorf("input %+v", x.Input)
			}
			if x.Process == nil || x.Process.PID != 4242 {
				t.Errorf("process %+v", x.Process)
			}
			if tc.exit != "" && x.Process.Exit != tc.exit {
				t.Errorf("exit %q, want %q", x.Process.Exit, tc.exit)
			}
		})
	}
}

// journalctl's output is bounded in bytes, in line length and in time.
func TestJournalBounds(t *testing.T) {
	root := tree{}.write(t)
	jdir := filepath.Join(root, "var/log/journal/m")
	_ = os.MkdirAll(jdir, 0o755)
	_ = os.WriteFile(filepath.Join(jdir, "system.journal"), nil, 0o644)
	rec, _ := json.Marshal(kubeletRec(4242, klogLine('I', 4242, "x.go:1", "noise")))
	endless := fakeJournal{script: fmt.Sprintf("yes '%s'\n", rec)}
	start := time.Now()
	x := explainJournal(t, endless.install(t), root, Options{MaxBytes: 4 << 20})
	if !x.Input.Truncated || x.Input.Bytes > 5<<20 {
		t.Errorf("endless output: %+v", x.Input)
	}
	if x.Class != "none" {
		t.Errorf("class %s", x.Class)
	}
	long := fakeJournal{script: fmt.Sprintf("head -c 3000000 /dev/zero | tr '\\0' 'a'; echo; echo '%s'\n", rec)}
	x = explainJournal(t, long.install(t), root, Options{})
	if x.Input.Skipped == 0 {
		t.Errorf("a 3 MB line: %+v", x.Input)
	}
	slow := fakeJournal{script: fmt.Sprintf("echo '%s'; exec sleep 60\n", rec)}
	t0 := time.Now()
	x = explainJournal(t, slow.install(t), root, Options{Timeout: time.Second})
	if d := time.Since(t0); d > 10*time.Second {
		t.Errorf("a journalctl that hangs took %s", d)
	}
	if !x.Input.Truncated {
		t.Errorf("a journalctl that hangs: %+v", x.Input)
	}
	t.Logf("all three in %s", time.Since(start))
}
