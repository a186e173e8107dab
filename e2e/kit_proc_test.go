//go:build e2e

package e2e

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Every process the kit starts is ended by its PID, never by its name. The
// PIDs (with their start times, so that a reused PID is never taken for
// one) are also recorded in a file of the run: at the end of the run what
// is still alive of them is ended, and a run killed before its end (a
// timeout, kill -9) has its processes ended by the next run.

// daemon is a process the kit started and waits for.
type daemon struct {
	name, log string
	cmd       *exec.Cmd
	done      chan struct{}
	once      sync.Once
}

// startDaemon starts bin with its output in logPath (env nil: this
// process's environment).
func startDaemon(name, logPath string, env []string, bin string, args ...string) (*daemon, error) {
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer log.Close()
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr, cmd.Env = log, log, env
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s (%s): %w", name, bin, err)
	}
	record(cmd.Process.Pid)
	d := &daemon{name: name, log: logPath, cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(d.done) }()
	return d, nil
}

// startDaemonT starts a daemon that ends with the test (or sooner by stop).
func startDaemonT(t testing.TB, name, logPath string, env []string, bin string, args ...string) *daemon {
	t.Helper()
	d, err := startDaemon(name, logPath, env, bin, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.stop)
	return d
}

// stop ends the daemon: SIGTERM, SIGKILL after 10 s.
func (d *daemon) stop() {
	d.once.Do(func() {
		select {
		case <-d.done:
			return
		default:
		}
		_ = d.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-d.done:
		case <-time.After(10 * time.Second):
			_ = d.cmd.Process.Kill()
			<-d.done
		}
	})
}

func (d *daemon) pid() int { return d.cmd.Process.Pid }

func (d *daemon) exited() bool {
	select {
	case <-d.done:
		return true
	default:
		return false
	}
}

func (d *daemon) tail() string { return tailFile(d.log) }

// endPid ends a process the kit did not start itself (a kubelet a restart
// script started): SIGTERM, then SIGKILL after grace; it returns when the
// process is gone or a zombie (PID 1 here may not reap it).
func endPid(pid int, grace time.Duration) {
	if pid <= 0 || !running(pid) {
		return
	}
	_ = syscall.Kill(pid, syscall.SIGTERM)
	for end := time.Now().Add(grace); running(pid) && time.Now().Before(end); {
		time.Sleep(20 * time.Millisecond)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	for end := time.Now().Add(5 * time.Second); running(pid) && time.Now().Before(end); {
		time.Sleep(20 * time.Millisecond)
	}
}

// running says whether pid is a live process (not gone, not a zombie).
func running(pid int) bool {
	state, _, ok := procStat(pid)
	return ok && state != "Z" && state != "X"
}

// procStat reads a process's state and start time (in clock ticks since
// boot) from /proc/PID/stat.
func procStat(pid int) (state string, start int64, ok bool) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", 0, false
	}
	i := strings.LastIndexByte(string(raw), ')')
	if i < 0 {
		return "", 0, false
	}
	f := strings.Fields(string(raw[i+1:]))
	if len(f) < 20 {
		return "", 0, false
	}
	start, _ = strconv.ParseInt(f[19], 10, 64)
	return f[0], start, true
}

// readPid is the PID a pid file names (0 when none).
func readPid(path string) int {
	b, _ := os.ReadFile(path)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

var recordMu sync.Mutex

const runsDir = "/tmp/kubeletcfg-e2e-runs"

func recordPath(pid int) string { return filepath.Join(runsDir, strconv.Itoa(pid)) }

// openRecord starts the record of this run: this process and the run's
// directory.
func openRecord(dir string) error {
	if err := os.MkdirAll(runsDir, 0o755); err != nil {
		return err
	}
	_, start, _ := procStat(os.Getpid())
	return os.WriteFile(recordPath(os.Getpid()), fmt.Appendf(nil, "run %d %d %s\n", os.Getpid(), start, dir), 0o644)
}

func closeRecord() { os.Remove(recordPath(os.Getpid())) }

// record adds a process the run started.
func record(pid int) {
	_, start, ok := procStat(pid)
	if !ok {
		return
	}
	recordMu.Lock()
	defer recordMu.Unlock()
	f, err := os.OpenFile(recordPath(os.Getpid()), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "pid %d %d\n", pid, start)
}

// recordLine is the shell line a restart script uses to record the process
// it just started in the background.
func recordLine() string {
	return fmt.Sprintf(`echo "pid $! $(cut -d' ' -f22 /proc/$!/stat 2>/dev/null)" >>%s`, recordPath(os.Getpid()))
}

// endRecorded ends (SIGKILL) every process of a record that still runs with
// the start time recorded; it returns the run's directory.
func endRecorded(path string) (dir string) {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var kind string
		var pid int
		var start int64
		fields := strings.Fields(sc.Text())
		if len(fields) < 3 {
			continue
		}
		kind = fields[0]
		pid, _ = strconv.Atoi(fields[1])
		start, _ = strconv.ParseInt(fields[2], 10, 64)
		if kind == "run" && len(fields) > 3 {
			dir = fields[3]
			continue
		}
		if _, s, ok := procStat(pid); ok && s == start && running(pid) {
			fmt.Fprintf(os.Stderr, "e2e kit: ending process %d left running\n", pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	return dir
}

// endLeftovers ends what runs killed before their end left: their
// processes, mounts and directories (never those of a run still going).
func endLeftovers() {
	entries, _ := os.ReadDir(runsDir)
	for _, e := range entries {
		path := filepath.Join(runsDir, e.Name())
		head, _ := os.ReadFile(path)
		var pid int
		var start int64
		if _, err := fmt.Sscanf(string(head), "run %d %d", &pid, &start); err == nil {
			if _, s, ok := procStat(pid); ok && s == start {
				continue // that run is still going
			}
		}
		if dir := endRecorded(path); strings.HasPrefix(dir, os.TempDir()+"/kubeletcfg-e2e-run") {
			time.Sleep(300 * time.Millisecond)
			unmountUnder(dir)
			os.RemoveAll(dir)
		}
		os.Remove(path)
	}
}
