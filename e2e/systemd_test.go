//go:build e2e

package e2e

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestApplyUnderSystemd boots a Debian tree with systemd in systemd-nspawn,
// with the kubelet as a systemd service, and runs kubeletcfg apply inside it:
// the restart goes through systemd's D-Bus API and the watch reads the unit.
// A good change ends healthy; one the kubelet refuses at start is rolled back.
func TestApplyUnderSystemd(t *testing.T) {
	rootfs := os.Getenv("NSPAWN_ROOTFS")
	kubelet := os.Getenv("KUBELET_BIN")
	minor := os.Getenv("KUBELET_VERSION")
	if rootfs == "" || kubelet == "" {
		t.Fatal("NSPAWN_ROOTFS and KUBELET_BIN are not set: run make e2e")
	}
	requireNoKubelet(t)
	defer saveSysctls(t)()
	bin := filepath.Join(t.TempDir(), "kubeletcfg")
	if out, err := exec.Command("go", "build", "-tags", "failpoints", "-o", bin, "../cmd/kubeletcfg").CombinedOutput(); err != nil {
		t.Fatalf("build kubeletcfg: %v\n%s", err, out)
	}
	base := `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
containerRuntimeEndpoint: unix:///run/containerd/containerd.sock
cgroupDriver: cgroupfs
cgroupsPerQOS: false
enforceNodeAllocatable: []
authentication:
  anonymous:
    enabled: true
  webhook:
    enabled: false
authorization:
  mode: AlwaysAllow
`
	in := func(p string) string { return filepath.Join(rootfs, p) }
	write(t, in("/var/lib/kubelet/config.yaml"), base+"failCgroupV1: false\nmaxPods: 100\n")
	write(t, in("/etc/containerd/config.toml"), "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\"]\n  restrict_oom_score_adj = true\n")
	write(t, in("/etc/systemd/system/kubelet.service"), `[Unit]
Description=kubelet
After=containerd.service
[Service]
ExecStart=/usr/local/bin/kubelet --config=/var/lib/kubelet/config.yaml
Restart=always
RestartSec=2
[Install]
WantedBy=multi-user.target
`)
	write(t, in("/etc/hostname"), "kcnode\n")
	write(t, in("/etc/hosts"), "127.0.0.1 localhost kcnode\n")
	os.Remove(in("/etc/systemd/system/multi-user.target.wants/kubelet.service"))
	if err := os.Symlink("/etc/systemd/system/kubelet.service", in("/etc/systemd/system/multi-user.target.wants/kubelet.service")); err != nil {
		t.Fatal(err)
	}
	for _, stale := range []string{"/var/lib/kubelet/config.yaml.bak.*", "/var/lib/kubelet/.kubeletcfg*", "/var/lib/kubeletcfg",
		"/etc/systemd/system/kubeletcfg-recover.service", "/etc/systemd/system/kubelet.service.wants"} {
		matches, _ := filepath.Glob(in(stale))
		for _, m := range matches {
			os.RemoveAll(m)
		}
	}

	tree := bootTree(t, rootfs, kubelet, bin)
	defer func() { tree.stop(false) }()
	inside := func(args ...string) (int, string) { return tree.inside(t, args...) }
	waitHealthyAt(t, func() string { _, out := inside("journalctl", "-u", "kubelet", "--no-pager", "-n", "30"); return out })

	applyIn := func(file string) (int, string) {
		return inside("/usr/local/bin/kubeletcfg", "apply", "--node", "kcnode", "-f", file, "--kubelet-version", minor,
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
	t.Logf("under systemd: fatal change rolled back in %s: %s", time.Since(start).Round(time.Millisecond), progressLine(out, "unhealthy"))
	waitHealthyAt(t, func() string { return "" })
	if got := configzMaxPods(t); got != 111 {
		t.Errorf("after the rollback under systemd /configz maxPods = %v, want 111", got)
	}

	// kubeletcfg killed right after the write: its guard restores the old
	// file and restarts the unit over D-Bus.
	write(t, in("/root/killed.yaml"), base+"failCgroupV1: false\nmaxPods: 133\n")
	code, out = inside("env", "KUBELETCFG_FAILPOINT=after-write", "/usr/local/bin/kubeletcfg", "apply", "--node", "kcnode",
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
		"/usr/local/bin/kubeletcfg", "apply", "--node", "kcnode", "-f", "/root/hung.yaml", "--kubelet-version", minor, "--stable-for", "2s"); code != 0 {
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
		"/usr/local/bin/kubeletcfg", "apply", "--node", "kcnode", "-f", "/root/reboot.yaml", "--kubelet-version", minor, "--stable-for", "2s", "--health-timeout", "60s"); code != 0 {
		t.Fatalf("systemd-run apply: exit %d\n%s", code, out)
	}
	waitFile(t, in("/var/lib/kubelet/config.yaml"), "maxPods: 155", 30*time.Second)
	tree.stop(true)
	if _, err := os.Stat(in("/var/lib/kubeletcfg/journal.json")); err != nil {
		t.Fatalf("no journal after the power cut: %v", err)
	}
	tree = bootTree(t, rootfs, kubelet, bin)
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

func mustInt(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// waitFile waits until the file at p contains s.
func waitFile(t *testing.T, p, s string, d time.Duration) {
	t.Helper()
	for end := time.Now().Add(d); ; time.Sleep(50 * time.Millisecond) {
		if b, _ := os.ReadFile(p); strings.Contains(string(b), s) {
			return
		}
		if time.Now().After(end) {
			b, _ := os.ReadFile(p)
			t.Fatalf("%s does not hold %q after %s:\n%s", p, s, d, b)
		}
	}
}

// waitGone waits until nothing is at p.
func waitGone(t *testing.T, p string, d time.Duration) {
	t.Helper()
	for end := time.Now().Add(d); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Lstat(p); err != nil {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("%s is still there after %s", p, d)
		}
	}
}

// nspawnTree is a booted systemd-nspawn container of the e2e rootfs.
type nspawnTree struct {
	boot *exec.Cmd
	init int
	done chan error
}

// bootTree boots rootfs with the kubelet and kubeletcfg bound in.
func bootTree(t *testing.T, rootfs, kubelet, bin string) *nspawnTree {
	t.Helper()
	boot := exec.Command("systemd-nspawn", "-b", "-D", rootfs, "--register=no", "--keep-unit",
		"--bind=/dev/kmsg", "--capability=CAP_SYSLOG", "--system-call-filter=@keyring",
		"--bind-ro="+kubelet+":/usr/local/bin/kubelet", "--bind-ro="+bin+":/usr/local/bin/kubeletcfg")
	boot.Env = append(os.Environ(), "SYSTEMD_NSPAWN_API_VFS_WRITABLE=1")
	log, err := os.Create(filepath.Join(t.TempDir(), "nspawn.log"))
	if err != nil {
		t.Fatal(err)
	}
	boot.Stdout, boot.Stderr, boot.Stdin = log, log, nil
	if err := boot.Start(); err != nil {
		t.Fatalf("systemd-nspawn: %v (make e2e installs it)", err)
	}
	tree := &nspawnTree{boot: boot, done: make(chan error, 1)}
	go func() { tree.done <- boot.Wait() }()
	tree.init = containerInit(t, boot.Process.Pid, log.Name())
	return tree
}

// stop shuts the tree down (SIGTERM to nspawn), or with kill cuts its power.
func (n *nspawnTree) stop(kill bool) {
	if kill {
		// PID 1 of the container gone: the kernel kills all of it at once.
		syscall.Kill(n.init, syscall.SIGKILL)
	} else {
		n.boot.Process.Signal(syscall.SIGTERM)
	}
	select {
	case <-n.done:
	case <-time.After(20 * time.Second):
		n.boot.Process.Kill()
		<-n.done
	}
}

// inside runs a command in the tree's namespaces.
func (n *nspawnTree) inside(t *testing.T, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command("nsenter", append([]string{"-t", fmt.Sprint(n.init), "-a"}, args...)...)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), string(out)
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, string(out)
}

// containerInit finds the container's PID 1 (the child of systemd-nspawn)
// and waits until its systemd runs.
func containerInit(t *testing.T, nspawn int, logPath string) int {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		out, _ := exec.Command("pgrep", "-P", fmt.Sprint(nspawn)).Output()
		var pid int
		if _, err := fmt.Sscan(string(out), &pid); err != nil || pid == 0 {
			continue
		}
		state, _ := exec.Command("nsenter", "-t", fmt.Sprint(pid), "-a", "systemctl", "is-system-running").Output()
		if s := strings.TrimSpace(string(state)); s == "running" || s == "degraded" {
			return pid
		}
	}
	log, _ := os.ReadFile(logPath)
	t.Fatalf("the container's systemd did not come up:\n%s", tail(log))
	return 0
}

func waitHealthyAt(t *testing.T, diag func() string) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if resp, err := http.Get("http://127.0.0.1:10248/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
	}
	t.Fatalf("the kubelet did not become healthy:\n%s", diag())
}
