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
}

// newRestarter picks the command when one is given, else systemd's unit.
func newRestarter(command, pidFile, unit string, timeout time.Duration) restarter {
	if command != "" {
		return &commandRestarter{command: command, pidFile: pidFile, timeout: timeout}
	}
	if unit == "" {
		unit = "kubelet.service"
	}
	return &systemdRestarter{unit: unit}
}

// commandRestarter runs a shell command; an optional PID file names the
// kubelet's process.
type commandRestarter struct {
	command, pidFile string
	timeout          time.Duration
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
