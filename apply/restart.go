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
)

// Restarter restarts the kubelet and tells which process runs it.
type Restarter interface {
	// Restart restarts the kubelet and returns when the restart is done.
	Restart(ctx context.Context) error
	// State reports the kubelet's process. An error means it could not be
	// told (the watch never reads that as alive).
	State(ctx context.Context) (Proc, error)
	// Cause is the kubelet's own last words since the restart, if found.
	Cause(since time.Time) string
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

// NewRestarter picks the command when one is given, else systemd's unit.
func NewRestarter(command, pidFile, logFile, unit string, timeout time.Duration) Restarter {
	return newRestarter(command, pidFile, logFile, unit, timeout)
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
	timeout                   time.Duration
	// started is told the restart command's process group once it runs,
	// so that no later restart starts while it still does.
	started func(pgid int) error
}

// Cause reads the kubelet's log file, when one was named.
func (c *commandRestarter) Cause(time.Time) string {
	if c.logFile == "" {
		return ""
	}
	b, err := readTail(c.logFile, 64<<10)
	if err != nil {
		return ""
	}
	return lastFailure(string(b))
}

// Restart runs the command in a process group of its own; when it times
// out, the whole group is killed, so nothing of it runs on unseen.
func (c *commandRestarter) Restart(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	cmd := exec.Command("sh", "-c", c.command)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = time.Second // do not wait on pipes a started kubelet may hold
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("restart command: %w", err)
	}
	if c.started != nil {
		if err := c.started(cmd.Process.Pid); err != nil {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			_ = cmd.Wait()
			return err
		}
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("restart command failed: %v: %s", err, strings.TrimSpace(out.String()))
		}
		return nil
	case <-ctx.Done():
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		return fmt.Errorf("restart command: %w after %s (its process group was killed)", ctx.Err(), c.timeout)
	}
}

func (c *commandRestarter) State(context.Context) (Proc, error) {
	b, err := os.ReadFile(c.pidFile)
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

// Cause reads the unit's journal since the restart.
func (s *systemdRestarter) Cause(since time.Time) string {
	out, err := exec.Command("journalctl", "-u", s.unit, "--since", since.Format("2006-01-02 15:04:05"), "-o", "cat", "--no-pager", "-n", "200").Output()
	if err != nil {
		return ""
	}
	return lastFailure(string(out))
}

// readTail reads at most the last n bytes of a file.
func readTail(path string, n int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	off := max(st.Size()-n, 0)
	b := make([]byte, st.Size()-off)
	nr, _ := f.ReadAt(b, off)
	return b[:nr], nil
}

// lastFailure picks the kubelet's fatal line from its log: "command failed"
// (the error it exits with), else the last error line or panic.
func lastFailure(log string) string {
	lines := strings.Split(strings.TrimSpace(log), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], "command failed") || strings.HasPrefix(lines[i], "panic:") {
			return trimLine(lines[i])
		}
	}
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], "E") && len(lines[i]) > 1 && lines[i][1] >= '0' && lines[i][1] <= '9' {
			return trimLine(lines[i])
		}
	}
	return ""
}

func trimLine(l string) string {
	l = strings.TrimSpace(l)
	if len(l) > 400 {
		l = l[:400] + "…"
	}
	return l
}
