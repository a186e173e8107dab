//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestApplyUnderSystemd runs kubeletcfg apply in the Debian tree booted
// with systemd-nspawn, the kubelet a systemd service on containerd 2 with
// the systemd cgroup driver: the restart goes through systemd's D-Bus API
// and the watch reads the unit. A good change ends healthy; one the kubelet
// refuses at start is rolled back.
func TestApplyUnderSystemd(t *testing.T) {
	s := useSystemdNode(t, systemdOptions{})
	minor, base, in := s.Minor, s.Base, s.in
	inside := func(args ...string) (int, string) { return s.inside(t, args...) }
	if got := configzField(t, "cgroupDriver"); got != "systemd" {
		t.Errorf("the kubelet on containerd 2 with runc's SystemdCgroup runs the %v cgroup driver, want systemd", got)
	}

	applyIn := func(file string) (int, string) {
		return inside("/usr/local/bin/kubeletcfg", "apply", "--skip-preflight", "--node", s.Name, "-f", file, "--kubelet-version", minor,
			"--stable-for", "2s", "--health-timeout", "30s")
	}
	write(t, in("/root/good.yaml"), base+"failCgroupV1: false\nmaxPods: 111\n")
	if code, out := applyIn("/root/good.yaml"); code != 0 || !strings.Contains(out, "applied") {
		t.Fatalf("good change under systemd: exit %d\n%s", code, out)
	}
	if got := configzMaxPods(t); got != 111 {
		t.Errorf("after the good change /configz maxPods = %v, want 111", got)
	}
	// Valid for kubeletcfg without host facts; the kubelet refuses it at
	// start on this cgroup v1 host and systemd restarts it in a loop.
	write(t, in("/root/bad.yaml"), base+"failCgroupV1: true\nmaxPods: 122\n")
	start := time.Now()
	code, out := applyIn("/root/bad.yaml")
	if code != 3 {
		t.Fatalf("fatal change under systemd: exit %d, want 3\n%s", code, out)
	}
	if !strings.Contains(out, "cgroup v1") {
		t.Errorf("the rollback under systemd does not report the kubelet's error from its journal:\n%s", out)
	}
	// Explained from the unit's journal (the records of its main process
	// since the restart): the field and the node's file and line.
	if want := fmt.Sprintf("failCgroupV1=true from /var/lib/kubelet/config.yaml:%d; fix: ", strings.Count(base, "\n")+1); !strings.Contains(out, want) {
		t.Errorf("the rollback under systemd does not explain the kubelet's error (%q):\n%s", want, out)
	}
	t.Logf("under systemd: fatal change rolled back in %s: %s", time.Since(start).Round(time.Millisecond), progressLine(out, "unhealthy"))
	waitHealthyAt(t, func() string { return "" })
	if got := configzMaxPods(t); got != 111 {
		t.Errorf("after the rollback under systemd /configz maxPods = %v, want 111", got)
	}

	// kubeletcfg killed right after the write: its guard restores the old
	// file and restarts the unit over D-Bus.
	write(t, in("/root/killed.yaml"), base+"failCgroupV1: false\nmaxPods: 133\n")
	code, out = inside("env", "KUBELETCFG_FAILPOINT=after-write", "/usr/local/bin/kubeletcfg", "apply", "--node", s.Name,
		"-f", "/root/killed.yaml", "--kubelet-version", minor, "--stable-for", "2s")
	if code != 137 && code != -1 {
		t.Fatalf("apply with the failpoint was not killed: exit %d\n%s", code, out)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		b, _ := os.ReadFile(in("/var/lib/kubelet/config.yaml"))
		_, journal := os.Stat(in("/var/lib/kubeletcfg/journal.json"))
		if strings.Contains(string(b), "maxPods: 111") && journal != nil {
			break
		}
		if time.Now().After(deadline) {
			guard, _ := os.ReadFile(in("/var/lib/kubeletcfg/guard.log"))
			t.Fatalf("under systemd, after kubeletcfg died the old file was not restored:\n%s\nguard:\n%s", b, guard)
		}
	}
	waitHealthyAt(t, func() string { return "" })
	if got := configzMaxPods(t); got != 111 {
		t.Errorf("after the guard under systemd /configz maxPods = %v, want 111", got)
	}

	// The guard is a unit of its own: stopping the unit apply runs in (which
	// kills apply, hung after its write) leaves the guard, which restores.
	write(t, in("/root/hung.yaml"), base+"failCgroupV1: false\nmaxPods: 144\n")
	if code, out := inside("systemd-run", "--unit=kubeletcfg-e2e-apply", "--setenv=KUBELETCFG_HANGPOINT=after-write",
		"/usr/local/bin/kubeletcfg", "apply", "--node", s.Name, "-f", "/root/hung.yaml", "--kubelet-version", minor, "--stable-for", "2s"); code != 0 {
		t.Fatalf("systemd-run apply: exit %d\n%s", code, out)
	}
	waitFile(t, in("/var/lib/kubelet/config.yaml"), "maxPods: 144", 30*time.Second)
	if _, out := inside("systemctl", "list-units", "--no-legend", "kubeletcfg-guard-*"); !strings.Contains(out, "kubeletcfg-guard-") {
		t.Fatalf("no guard unit while apply runs:\n%s", out)
	}
	if code, out := inside("systemctl", "stop", "kubeletcfg-e2e-apply"); code != 0 {
		t.Fatalf("stopping the unit apply runs in: exit %d\n%s", code, out)
	}
	stopped := time.Now()
	waitFile(t, in("/var/lib/kubelet/config.yaml"), "maxPods: 111", 30*time.Second)
	waitGone(t, in("/var/lib/kubeletcfg/journal.json"), 30*time.Second)
	waitHealthyAt(t, func() string {
		_, out := inside("journalctl", "-u", "kubeletcfg-guard-*", "--no-pager", "-n", "30")
		return out
	})
	if got := configzMaxPods(t); got != 111 {
		t.Errorf("after the apply's unit stopped and its guard restored, /configz maxPods = %v, want 111", got)
	}
	t.Logf("under systemd: the unit apply ran in stopped; its guard restored the old file and the kubelet is healthy %s later", time.Since(stopped).Round(time.Millisecond))

	// A reboot between the write and the confirmation (the tree killed, as
	// by a power cut): at the next boot kubeletcfg-recover.service puts the
	// old file back before the kubelet starts.
	write(t, in("/root/reboot.yaml"), base+"failCgroupV1: false\nmaxPods: 155\n")
	if code, out := inside("systemd-run", "--unit=kubeletcfg-e2e-apply2", "--setenv=KUBELETCFG_HANGPOINT=after-write",
		"/usr/local/bin/kubeletcfg", "apply", "--node", s.Name, "-f", "/root/reboot.yaml", "--kubelet-version", minor, "--stable-for", "2s", "--health-timeout", "60s"); code != 0 {
		t.Fatalf("systemd-run apply: exit %d\n%s", code, out)
	}
	waitFile(t, in("/var/lib/kubelet/config.yaml"), "maxPods: 155", 30*time.Second)
	s.powerCut(t)
	if _, err := os.Stat(in("/var/lib/kubeletcfg/journal.json")); err != nil {
		t.Fatalf("no journal after the power cut: %v", err)
	}
	s.boot(t)
	waitHealthyAt(t, func() string { _, out := inside("journalctl", "-b", "--no-pager", "-n", "60"); return out })
	if b, _ := os.ReadFile(in("/var/lib/kubelet/config.yaml")); !strings.Contains(string(b), "maxPods: 111") {
		t.Errorf("after the reboot the config file holds:\n%s", b)
	}
	if got := configzMaxPods(t); got != 111 {
		t.Errorf("after the reboot /configz maxPods = %v, want 111", got)
	}
	_, restarts := inside("systemctl", "show", "kubelet", "-p", "NRestarts", "--value")
	_, order := inside("sh", "-c", "systemctl show kubeletcfg-recover -p ExecMainExitTimestampMonotonic --value; systemctl show kubelet -p ExecMainStartTimestampMonotonic --value")
	times := strings.Fields(order)
	if len(times) != 2 || strings.TrimSpace(restarts) != "0" {
		t.Errorf("after the reboot: kubelet NRestarts %q, recovery and kubelet start %q", restarts, order)
	} else if a, _ := strconv.ParseInt(times[0], 10, 64); a == 0 || a > mustInt(times[1]) {
		t.Errorf("the recovery ended at %s, after the kubelet started at %s", times[0], times[1])
	}
	if _, err := os.Stat(in("/var/lib/kubeletcfg/journal.json")); err == nil {
		t.Error("the journal stays after the boot-time recovery")
	}
	_, rec := inside("journalctl", "-b", "-u", "kubeletcfg-recover", "-o", "cat", "--no-pager")
	t.Logf("under systemd: power cut between write and confirmation; at the next boot, before the kubelet started:\n%s", strings.TrimSpace(rec))
}
