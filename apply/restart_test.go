package apply

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// pidIn reads the process ID in file (0: none), and kills it when the test
// ends.
func pidIn(t *testing.T, file string) int {
	t.Helper()
	b, _ := os.ReadFile(file)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if pid > 0 {
		t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	}
	return pid
}

// pgrpOf is the process group of pid.
func pgrpOf(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	n, _ := strconv.Atoi(f[2])
	return n
}

// A restart command that starts the kubelet in the background without
// redirecting its output (nohup kubelet &) restarts it: the command's end is
// its end, and the kubelet lives on writing to what it inherited.
func TestRestartCommandNohupKubelet(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "kubelet.pid")
	// The "kubelet" writes to its inherited stdout all the time, as the
	// kubelet logs to stderr.
	cmd := `nohup sh -c 'while :; do echo I0101 tick; sleep 0.05; done' & echo $! > ` + pidFile
	c := &commandRestarter{command: cmd, pidFile: pidFile, timeout: 5 * time.Second}
	if err := c.Restart(context.Background()); err != nil {
		t.Errorf("a nohup-style restart command: %v", err)
	}
	pid := pidIn(t, pidFile)
	time.Sleep(1500 * time.Millisecond)
	if pid == 0 || !alive(pid) {
		t.Fatalf("the kubelet it started (pid %d) died once the restart was over", pid)
	}
}

// A restart command that outlasts its timeout is stopped, but the kubelet
// it started (the process in --pid-file) is not killed with it.
func TestRestartCommandTimeoutSparesTheKubelet(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "kubelet.pid")
	cmd := `sleep 30 </dev/null >/dev/null 2>&1 & echo $! > ` + pidFile + `; sleep 20 & sleep 20`
	c := &commandRestarter{command: cmd, pidFile: pidFile, timeout: time.Second}
	err := c.Restart(context.Background())
	if err == nil || !strings.Contains(err.Error(), "restart command") {
		t.Errorf("a restart command past its timeout: %v", err)
	}
	pid := pidIn(t, pidFile)
	time.Sleep(300 * time.Millisecond)
	if pid == 0 || !alive(pid) {
		t.Fatalf("the kubelet the command started (pid %d) was killed with it", pid)
	}
	pgrp := pgrpOf(pid)
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil || p == pid || !alive(p) {
			continue
		}
		if pgrpOf(p) == pgrp {
			t.Errorf("pid %d of the timed-out command still runs", p)
			syscall.Kill(p, syscall.SIGKILL)
		}
	}
}

// A restart command that returns before the new kubelet's PID is in
// --pid-file (a script that stops the kubelet, then starts it in the
// background) is waited for: the restart is over once a new PID is there.
func TestRestartWaitsForANewPID(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "kubelet.pid")
	old := startSleep(t)
	os.WriteFile(pidFile, []byte(strconv.Itoa(old.Pid)+"\n"), 0o600)
	cmd := `kill ` + strconv.Itoa(old.Pid) + `; rm -f ` + pidFile + `; (sleep 0.5; sleep 30 & echo $! > ` + pidFile + `) </dev/null >/dev/null 2>&1 &`
	c := &commandRestarter{command: cmd, pidFile: pidFile, timeout: 5 * time.Second}
	if err := c.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	st, err := c.State(context.Background())
	pidIn(t, pidFile)
	if err != nil || !st.Running || st.PID == old.Pid {
		t.Fatalf("right after the restart: %+v, %v; want the new kubelet", st, err)
	}
}

// The cause of a failure is only what the new kubelet logged since the
// restart, never an earlier kubelet's last error.
func TestWordsAreOnlyTheNewKubeletsLog(t *testing.T) {
	dir := t.TempDir()
	pidFile, log := filepath.Join(dir, "kubelet.pid"), filepath.Join(dir, "kubelet.log")
	os.WriteFile(log, []byte(`E1201 09:00:00.000000    4242 run.go:72] "command failed" err="an earlier kubelet's error"`+"\n"), 0o600)
	cmd := `sh -c 'exit 1' </dev/null >/dev/null 2>&1 & echo $! > ` + pidFile
	c := &commandRestarter{command: cmd, pidFile: pidFile, logFile: log, timeout: 5 * time.Second}
	if err := c.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	if words := strings.Join(c.Restarted().Lines, "\n"); strings.Contains(words, "earlier") {
		t.Errorf("the words of the new kubelet are an earlier kubelet's line: %q", words)
	}
	pid := pidIn(t, pidFile)
	f, _ := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`E1201 09:00:01.000000    ` + strconv.Itoa(pid) + ` run.go:72] "command failed" err="its own error"` + "\n")
	f.WriteString(`E1201 09:00:02.000000    ` + strconv.Itoa(pid+1) + ` run.go:72] "command failed" err="another process's"` + "\n")
	f.Close()
	r := c.Restarted()
	if words := strings.Join(r.Lines, "\n"); !strings.Contains(words, "its own error") || strings.Contains(words, "another process") || r.PID != pid {
		t.Errorf("the new kubelet's words (pid %d): %q", r.PID, words)
	}
}

// The command's output goes to a file that is kept: a failing command's
// error ends with it, escaped.
func TestRestartCommandOutputKept(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, restartLog)
	c := &commandRestarter{command: `printf 'no kubelet here\033[2J\n'; exit 3`, pidFile: filepath.Join(dir, "pid"), output: out, timeout: 5 * time.Second}
	err := c.Restart(context.Background())
	if err == nil || !strings.Contains(err.Error(), `no kubelet here\x1b[2J`) || strings.Contains(err.Error(), "\033") {
		t.Errorf("the failed command's error: %v", err)
	}
	if b, _ := os.ReadFile(out); !strings.Contains(string(b), "no kubelet here") {
		t.Errorf("%s holds %q", out, b)
	}
}
