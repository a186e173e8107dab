package apply

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	sddbus "github.com/coreos/go-systemd/v22/dbus"
	godbus "github.com/godbus/dbus/v5"
)

// bootUnit is the unit that finishes, at boot, an apply a reboot
// interrupted: ordered before the kubelet's unit, it puts the old files
// back before the kubelet reads them.
const bootUnit = "kubeletcfg-recover.service"

// hasSystemd tells whether systemd runs this host (sd_booted(3)).
func hasSystemd() bool {
	st, err := os.Lstat("/run/systemd/system")
	return err == nil && st.IsDir()
}

// StartHostGuard starts the guard (self guardArgs...) where the host owns
// it: under systemd, as a transient service started over D-Bus — outside
// the caller's cgroup, so that stopping the unit or container the apply
// runs in leaves it running — and installs the boot-time recovery unit of
// kubeletUnit when it is missing. Without systemd it falls back to
// StartGuard: a detached process, which dies with the caller's cgroup.
func StartHostGuard(ctx context.Context, self string, guardArgs []string, dir, id, kubeletUnit string) error {
	if !hasSystemd() {
		return StartGuard(self, guardArgs, dir)
	}
	conn, err := sddbus.NewSystemConnectionContext(ctx)
	if err != nil {
		// systemd without its bus (a container): the weaker guard.
		return StartGuard(self, guardArgs, dir)
	}
	defer conn.Close()
	if err := installBootUnit(ctx, conn, self, dir, kubeletUnit); err != nil {
		return err
	}
	props := []sddbus.Property{
		sddbus.PropDescription("kubeletcfg guard of apply " + id),
		sddbus.PropExecStart(append([]string{self}, guardArgs...), false),
		// A kubelet its restart command starts stays when the guard ends.
		{Name: "KillMode", Value: godbus.MakeVariant("process")},
		{Name: "CollectMode", Value: godbus.MakeVariant("inactive-or-failed")},
	}
	done := make(chan string, 1)
	name := "kubeletcfg-guard-" + id + ".service"
	if _, err := conn.StartTransientUnitContext(ctx, name, "fail", props, done); err != nil {
		return fmt.Errorf("starting the guard %s: %w", name, err)
	}
	select {
	case r := <-done:
		if r != "done" {
			return fmt.Errorf("starting the guard %s: job %s", name, r)
		}
		return nil
	case <-time.After(30 * time.Second):
		return fmt.Errorf("starting the guard %s: no answer from systemd in 30s", name)
	}
}

// bootUnitText is the boot-time recovery unit for kubeletUnit.
func bootUnitText(self, dir, kubeletUnit string) string {
	return fmt.Sprintf(`# Written by kubeletcfg apply. At boot, before %[1]s starts, an apply a
# reboot interrupted (its journal in %[3]s, another boot ID) is undone
# when its files still hold what it wrote.
[Unit]
Description=kubeletcfg: undo an apply interrupted by a reboot
Before=%[1]s
After=local-fs.target
ConditionPathExists=%[3]s/journal.json

[Service]
Type=oneshot
ExecStart=%[2]s recover --boot --state-dir %[3]s

[Install]
WantedBy=%[1]s
`, kubeletUnit, self, dir)
}

// installBootUnit writes the boot-time recovery unit and enables it (a
// link in kubeletUnit's .wants), once; systemd reloads to see it.
func installBootUnit(ctx context.Context, conn *sddbus.Conn, self, dir, kubeletUnit string) error {
	if strings.ContainsAny(kubeletUnit, "/\n ") || strings.ContainsAny(self+dir, "\n%") {
		return fmt.Errorf("boot-time recovery unit: unusable names %q %q %q", kubeletUnit, self, dir)
	}
	const etc = "/etc/systemd/system"
	text := bootUnitText(self, dir, kubeletUnit)
	changed, err := WriteFile(filepath.Join(etc, bootUnit), []byte(text))
	if err != nil {
		return fmt.Errorf("boot-time recovery unit: %w", err)
	}
	wants := filepath.Join(etc, kubeletUnit+".wants")
	if err := os.MkdirAll(wants, 0o755); err != nil {
		return err
	}
	link := filepath.Join(wants, bootUnit)
	if target, err := os.Readlink(link); err != nil || target != filepath.Join(etc, bootUnit) {
		os.Remove(link)
		if err := os.Symlink(filepath.Join(etc, bootUnit), link); err != nil {
			return fmt.Errorf("enabling the boot-time recovery unit: %w", err)
		}
		changed = true
	}
	if changed {
		return conn.ReloadContext(ctx)
	}
	return nil
}
