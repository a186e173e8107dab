package apply

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	sddbus "github.com/coreos/go-systemd/v22/dbus"
)

// restarter restarts the kubelet and tells whether the process it started
// is still there.
type restarter interface {
	// Restart restarts the kubelet and returns when the restart is done.
	Restart(ctx context.Context) error
	// State reports the kubelet's main process, and whether it is gone.
	State(ctx context.Context) (pid int, gone bool, why string)
	// Cause is the kubelet's own last words since the restart, if found.
	Cause(since time.Time) string
}

// newRestarter picks the command when one is given, else systemd's unit.
func newRestarter(command, pidFile, logFile, unit string, timeout time.Duration) restarter {
	if command != "" {
		return &commandRestarter{command: command, pidFile: pidFile, logFile: logFile, timeout: timeout}
	}
	if unit == "" {
		unit = "kubelet.service"
	}
	return &systemdRestarter{unit: unit}
}

// commandRestarter runs a shell command; an optional PID file names the
// kubelet's process.
type commandRestarter struct {
	command, pidFile, logFile string
	timeout                   time.Duration
}

// Cause reads the kubelet's log file, when one was named.
func (c *commandRestarter) Cause(time.Time) string {
	if c.logFile == "" {
		return ""
	}
	b, err := os.ReadFile(c.logFile)
	if err != nil {
		return ""
	}
	return lastFailure(string(b))
}

func (c *commandRestarter) Restart(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", c.command)
	cmd.WaitDelay = time.Second // do not wait on pipes a started kubelet may hold
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("restart command failed: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

func (c *commandRestarter) State(context.Context) (int, bool, string) {
	if c.pidFile == "" {
		return 0, false, ""
	}
	b, err := os.ReadFile(c.pidFile)
	if err != nil {
		return 0, false, ""
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0, false, ""
	}
	// Signal 0 checks existence; a zombie counts as gone.
	if err := syscall.Kill(pid, 0); err != nil {
		return pid, true, "exited"
	}
	if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		if i := strings.LastIndexByte(string(stat), ')'); i > 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
			return pid, true, "exited"
		}
	}
	return pid, false, ""
}

// systemdRestarter restarts a unit over systemd's D-Bus API and reads the
// unit's state from it.
type systemdRestarter struct{ unit string }

func (s *systemdRestarter) Restart(ctx context.Context) error {
	conn, err := sddbus.NewSystemConnectionContext(ctx)
	if err != nil {
		return fmt.Errorf("systemd's D-Bus: %w (or give --restart-command)", err)
	}
	defer conn.Close()
	done := make(chan string, 1)
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
		return fmt.Errorf("restart %s: %w", s.unit, ctx.Err())
	}
}

func (s *systemdRestarter) State(ctx context.Context) (int, bool, string) {
	conn, err := sddbus.NewSystemConnectionContext(ctx)
	if err != nil {
		return 0, false, ""
	}
	defer conn.Close()
	props, err := conn.GetUnitTypePropertiesContext(ctx, s.unit, "Service")
	if err != nil {
		return 0, false, ""
	}
	unitProps, err := conn.GetUnitPropertiesContext(ctx, s.unit)
	if err != nil {
		return 0, false, ""
	}
	pid, _ := props["MainPID"].(uint32)
	status, _ := props["ExecMainStatus"].(int32)
	state, _ := unitProps["ActiveState"].(string)
	sub, _ := unitProps["SubState"].(string)
	switch {
	case state == "failed" || state == "inactive" || state == "deactivating" || sub == "auto-restart":
		return int(pid), true, fmt.Sprintf("%s is %s/%s (main process exit status %d)", s.unit, state, sub, status)
	case pid == 0:
		return 0, true, fmt.Sprintf("%s has no main process", s.unit)
	}
	return int(pid), false, ""
}

// Cause reads the unit's journal since the restart.
func (s *systemdRestarter) Cause(since time.Time) string {
	out, err := exec.Command("journalctl", "-u", s.unit, "--since", since.Format("2006-01-02 15:04:05"), "-o", "cat", "--no-pager").Output()
	if err != nil {
		return ""
	}
	return lastFailure(string(out))
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
