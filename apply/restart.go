package apply

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	sddbus "github.com/coreos/go-systemd/v22/dbus"

	"github.com/kubeletcfg/kubeletcfg/why"
)

// Restarter restarts the kubelet and tells which process runs it.
type Restarter interface {
	// Restart restarts the kubelet and returns when the restart is done.
	Restart(ctx context.Context) error
	// State reports the kubelet's process. An error means it could not be
	// told (the watch never reads that as alive).
	State(ctx context.Context) (Proc, error)
	// Restarted names the kubelet's process since the last restart and
	// where its words are (only its own: the PID in --pid-file, the
	// unit's main process): why.Cause explains a failure from them.
	Restarted() why.Restarted
}

// Proc is the kubelet's process as a restarter sees it.
type Proc struct {
	PID int `json:"pid,omitempty"`
	// InvocationID and Restarts are systemd's: a unit restarted by
	// Restart= keeps its InvocationID but counts NRestarts up.
	InvocationID string `json:"invocationID,omitempty"`
	Restarts     uint32 `json:"restarts,omitempty"`
	Running      bool   `json:"running"`
	// Why it is not running.
	Why string `json:"why,omitempty"`
}

// same tells whether p and q are the same start of the kubelet.
func (p Proc) same(q Proc) bool {
	return p.PID == q.PID && p.InvocationID == q.InvocationID && p.Restarts == q.Restarts
}

func (p Proc) String() string {
	s := "pid " + strconv.Itoa(p.PID)
	if p.InvocationID != "" {
		s += fmt.Sprintf(", invocation %.8s, %d restarts", p.InvocationID, p.Restarts)
	}
	return s
}

func newRestarter(command, pidFile, logFile, unit string, timeout time.Duration) Restarter {
	if command != "" {
		return &commandRestarter{command: command, pidFile: pidFile, logFile: logFile, timeout: timeout}
	}
	if unit == "" {
		unit = "kubelet.service"
	}
	return &systemdRestarter{unit: unit, timeout: timeout}
}

// commandRestarter runs a shell command given on kubeletcfg's command line
// (never one read from a file); the PID file names the kubelet's process.
type commandRestarter struct {
	command, pidFile, logFile string
	// output is the file the command's output goes to, kept for the
	// report and emptied at each restart ("": /dev/null). Never a pipe: a
	// kubelet the command starts in the background inherits it, and would
	// die of SIGPIPE once the pipe is closed.
	output  string
	timeout time.Duration
	// started is told the restart command's process group once it runs,
	// so that no later restart starts while it still does.
	started func(pgid int) error
	// logFrom is where the kubelet's log ended when the restart began:
	// what comes after is the new kubelet's.
	logFrom int64
}

// restartLog is the file of the state directory a restart command's
// output goes to.
const restartLog = "restart-command.log"

// Restarted is the kubelet in --pid-file and what it logged since the
// restart, when a log file was named.
func (c *commandRestarter) Restarted() why.Restarted {
	r := why.Restarted{PID: c.pid()}
	if c.logFile != "" {
		r.Lines = strings.Split(strings.TrimRight(c.logged(), "\n"), "\n")
	}
	return r
}

// logged is what the kubelet named in --pid-file logged since the restart
// began: the log file from where it ended then (all of it, if it was
// rotated since), bounded to its last 64 KiB, without the lines whose klog
// header names another process.
func (c *commandRestarter) logged() string {
	if c.logFile == "" {
		return ""
	}
	b, err := readFrom(c.logFile, c.logFrom, 64<<10)
	if err != nil {
		return ""
	}
	return linesOf(string(b), c.pid())
}

// Restart runs the command in a process group of its own, its output to a
// file and its input from /dev/null, and waits until it has ended and a
// new process ID is in --pid-file (a script that starts the kubelet in the
// background returns before). When it outlasts the timeout, every process
// of its group is stopped but the kubelet in --pid-file.
func (c *commandRestarter) Restart(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	before := c.pid()
	c.logFrom = fileSize(c.logFile)
	out, err := c.openOutput()
	if err != nil {
		return fmt.Errorf("restart command: its output file: %w", err)
	}
	cmd := exec.Command("sh", "-c", c.command)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stdout, cmd.Stderr = out, out // a file: nothing to copy, nothing to wait on
	err = cmd.Start()
	out.Close()
	if err != nil {
		return fmt.Errorf("restart command: %w", err)
	}
	pgid := cmd.Process.Pid
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	if c.started != nil {
		if err := c.started(pgid); err != nil {
			c.stopGroup(pgid, done)
			return err
		}
	}
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("restart command failed: %v%s", err, c.outputTail())
		}
	case <-ctx.Done():
		spared := c.stopGroup(pgid, done)
		return fmt.Errorf("restart command: still running after %s: its processes were stopped%s%s", c.timeout, spared, c.outputTail())
	}
	return c.waitNewPID(ctx, before)
}

// openOutput opens the file the command's output goes to.
func (c *commandRestarter) openOutput() (*os.File, error) {
	if c.output == "" {
		return os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	}
	return openOwned(c.output, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_APPEND, 0o600)
}

// outputTail is the end of the command's output, for an error.
func (c *commandRestarter) outputTail() string {
	if c.output == "" {
		return ""
	}
	b, err := readFrom(c.output, 0, 2<<10)
	if err != nil || len(strings.TrimSpace(string(b))) == 0 {
		return ""
	}
	return fmt.Sprintf("; its output (%s) ends: %q", c.output, strings.TrimSpace(string(b)))
}

// waitNewPID waits until --pid-file names another process than before.
func (c *commandRestarter) waitNewPID(ctx context.Context, before int) error {
	for {
		if pid := c.pid(); pid > 0 && pid != before {
			return nil
		}
		select {
		case <-ctx.Done():
			still := "no process ID"
			if before > 0 && c.pid() == before {
				still = fmt.Sprintf("still %d, the kubelet from before", before)
			}
			return fmt.Errorf("the restart command ended, but --pid-file %s names no new kubelet within %s (%s)", c.pidFile, c.timeout, still)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// stopGroup kills every process of the group pgid except the kubelet in
// --pid-file and its children, until none is left (a few rounds: a
// process may fork meanwhile). It says what it spared.
func (c *commandRestarter) stopGroup(pgid int, done <-chan error) string {
	spared := ""
	for range 20 {
		keep := c.pid()
		procs := processes()
		var victims []int
		for pid, p := range procs {
			if p.pgrp != pgid {
				continue
			}
			if keep > 0 && descends(procs, pid, keep) {
				spared = fmt.Sprintf(" but the kubelet in --pid-file (pid %d), left running", keep)
				continue
			}
			victims = append(victims, pid)
		}
		if len(victims) == 0 {
			break
		}
		for _, pid := range victims {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The command's own process is reaped, unless it is the kubelet (it
	// ran exec kubelet): that one is left to run.
	select {
	case <-done:
	case <-time.After(time.Second):
	}
	return spared
}

// proc is what /proc/PID/stat says of a process's family.
type proc struct{ ppid, pgrp int }

// processes reads the parent and group of every process.
func processes() map[int]proc {
	out := map[int]proc{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 3 || f[0] == "Z" {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		pgrp, _ := strconv.Atoi(f[2])
		out[pid] = proc{ppid: ppid, pgrp: pgrp}
	}
	return out
}

// descends says whether pid is ancestor or one of its descendants.
func descends(procs map[int]proc, pid, ancestor int) bool {
	for range 64 {
		if pid == ancestor {
			return true
		}
		p, ok := procs[pid]
		if !ok || p.ppid <= 1 {
			return false
		}
		pid = p.ppid
	}
	return false
}

// pid is the process ID in --pid-file (0: none).
func (c *commandRestarter) pid() int {
	b, err := readFrom(c.pidFile, 0, 64)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

func (c *commandRestarter) State(context.Context) (Proc, error) {
	b, err := readFrom(c.pidFile, 0, 64)
	if err != nil {
		return Proc{}, fmt.Errorf("--pid-file: %w", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return Proc{}, fmt.Errorf("--pid-file %s: no process ID in %q", c.pidFile, strings.TrimSpace(string(b)))
	}
	p := Proc{PID: pid, Running: alive(pid)}
	if !p.Running {
		p.Why = fmt.Sprintf("(pid %d) exited", pid)
	}
	return p, nil
}

// alive tells whether pid exists and is not a zombie.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(stat), ')')
	return !(i > 0 && i+2 < len(stat) && stat[i+2] == 'Z')
}

// systemdRestarter restarts a unit over systemd's D-Bus API and reads the
// unit's state from it.
type systemdRestarter struct {
	unit    string
	timeout time.Duration
	conn    *sddbus.Conn
	// restartedAt is when the last restart began, mainPID the unit's last
	// main process seen since (ExecMainPID: it stays once the process has
	// exited): the cause is what that process logged.
	restartedAt time.Time
	mainPID     uint32
	// invocation is the unit's invocation of that process, code and
	// status how it ended (ExecMainCode, ExecMainStatus).
	invocation   string
	code, status string
}

func (s *systemdRestarter) connect(ctx context.Context) (*sddbus.Conn, error) {
	if s.conn != nil && s.conn.Connected() {
		return s.conn, nil
	}
	conn, err := sddbus.NewSystemConnectionContext(ctx)
	if err != nil {
		return nil, fmt.Errorf("systemd's D-Bus: %w (or give --restart-command)", err)
	}
	s.conn = conn
	return conn, nil
}

func (s *systemdRestarter) Restart(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	conn, err := s.connect(ctx)
	if err != nil {
		return err
	}
	s.restartedAt, s.mainPID, s.invocation, s.code, s.status = time.Now(), 0, "", "", ""
	done := make(chan string, 1)
	// systemd runs one job at a time on a unit: an earlier restart still
	// running is replaced, never run beside this one.
	if _, err := conn.RestartUnitContext(ctx, s.unit, "replace", done); err != nil {
		return fmt.Errorf("restart %s: %w", s.unit, err)
	}
	select {
	case result := <-done:
		// "done" only means started; the watch decides whether it stays up.
		if result != "done" {
			return fmt.Errorf("restart %s: job %s", s.unit, result)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("restart %s: %w after %s", s.unit, ctx.Err(), s.timeout)
	}
}

func (s *systemdRestarter) State(ctx context.Context) (Proc, error) {
	conn, err := s.connect(ctx)
	if err != nil {
		return Proc{}, err
	}
	props, err := conn.GetUnitTypePropertiesContext(ctx, s.unit, "Service")
	if err != nil {
		return Proc{}, fmt.Errorf("%s: %w", s.unit, err)
	}
	unitProps, err := conn.GetUnitPropertiesContext(ctx, s.unit)
	if err != nil {
		return Proc{}, fmt.Errorf("%s: %w", s.unit, err)
	}
	pid, _ := props["MainPID"].(uint32)
	restarts, _ := props["NRestarts"].(uint32)
	status, _ := props["ExecMainStatus"].(int32)
	inv, _ := unitProps["InvocationID"].([]byte)
	if exec, _ := props["ExecMainPID"].(uint32); exec != 0 && !s.restartedAt.IsZero() {
		s.mainPID, s.invocation = exec, fmt.Sprintf("%x", inv)
		s.code, s.status = "", ""
		if exited, _ := props["ExecMainExitTimestampMonotonic"].(uint64); exited != 0 {
			code, _ := props["ExecMainCode"].(int32)
			s.code, s.status = exitCode(code), strconv.Itoa(int(status))
		}
	}
	state, _ := unitProps["ActiveState"].(string)
	sub, _ := unitProps["SubState"].(string)
	p := Proc{PID: int(pid), InvocationID: fmt.Sprintf("%x", inv), Restarts: restarts, Running: true}
	switch {
	case state != "active" || sub == "auto-restart":
		p.Running, p.Why = false, fmt.Sprintf("%s is %s/%s (main process exit status %d)", s.unit, state, sub, status)
	case pid == 0:
		p.Running, p.Why = false, fmt.Sprintf("%s has no main process", s.unit)
	}
	return p, nil
}

// Restarted is the unit's main process since the restart (its journal
// records: journald's own fields select them) and how it ended, when it
// has.
func (s *systemdRestarter) Restarted() why.Restarted {
	return why.Restarted{Unit: s.unit, PID: int(s.mainPID), Invocation: s.invocation, Code: s.code, Status: s.status}
}

// exitCode is systemd's ExecMainCode (a CLD_* code of waitid) in words.
func exitCode(code int32) string {
	switch code {
	case 1:
		return "exited"
	case 2:
		return "killed"
	case 3:
		return "dumped"
	}
	return ""
}

// fileSize is the size of path (0 when it cannot be told).
func fileSize(path string) int64 {
	if path == "" {
		return 0
	}
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}

// readFrom reads path from offset off (from 0 when the file is shorter
// now: rotated or truncated), at most the last n bytes of that.
func readFrom(path string, off, n int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w", path, ErrNotRegular)
	}
	if st.Size() < off {
		off = 0
	}
	off = max(off, st.Size()-n)
	b := make([]byte, st.Size()-off)
	nr, _ := f.ReadAt(b, off)
	return b[:nr], nil
}

// linesOf keeps the lines of a kubelet log that are not another
// process's: a klog header ("E0101 10:00:00.000000   1234 file.go:1]")
// names its process; lines without one are kept.
func linesOf(log string, pid int) string {
	if pid <= 0 {
		return log
	}
	var out []string
	for _, l := range strings.Split(log, "\n") {
		if p, ok := klogPID(l); ok && p != pid {
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// klogPID is the process ID of a klog header line.
func klogPID(l string) (int, bool) {
	if len(l) < 2 || !strings.ContainsRune("IWEF", rune(l[0])) || l[1] < '0' || l[1] > '9' {
		return 0, false
	}
	f := strings.Fields(l)
	if len(f) < 4 || len(f[0]) != 5 || !strings.Contains(f[1], ":") || !strings.HasSuffix(f[3], "]") {
		return 0, false
	}
	pid, err := strconv.Atoi(f[2])
	return pid, err == nil
}
