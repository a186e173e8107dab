//go:build e2e

package e2e

import (
	"fmt"
	"net"
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

// TestKubeletStartupExits measures how long after its start, and after its
// healthz first answered, a real kubelet exits on a configuration it
// accepts but cannot run with here: apply's default window must cover it.
// On each runtime: with containerd 2 the kubelet takes its cgroup driver
// from the runtime, so a cgroupDriver it cannot run (systemd: there is no
// systemd here) kills it only on containerd 1.6, which has no
// RuntimeConfig call.
func TestKubeletStartupExits(t *testing.T) {
	var worst time.Duration
	for _, rt := range []runtimeKind{containerd2, containerd16NoRuntimeConfig} {
		t.Run(string(rt), func(t *testing.T) {
			worst = max(worst, startupExits(t, rt))
		})
	}
	if defaultStableFor := 10 * time.Second; 2*worst > defaultStableFor {
		t.Errorf("a kubelet exited %s after its healthz answered: apply's default --stable-for %s does not cover it twice over", worst, defaultStableFor)
	}
}

func startupExits(t *testing.T, rt runtimeKind) (worst time.Duration) {
	n := newNode(t, nodeOptions{runtime: rt, noStart: true})
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	busyPort := busy.Addr().(*net.TCPAddr).Port
	cases := []struct {
		name, extra string
		fatal       bool
	}{
		{"cgroupDriver systemd (no systemd)", "cgroupDriver: systemd\n", rt == containerd16NoRuntimeConfig},
		{"failCgroupV1 on cgroup v1", "failCgroupV1: true\n", true},
		{"kubeReserved beyond the machine", fatalAtStart, true},
		{"port in use", "port: " + strconv.Itoa(busyPort) + "\n", true},
		// The kubelets above left a checkpoint of the none policy.
		{"a stale CPU manager checkpoint", "cpuManagerPolicy: static\nreservedSystemCPUs: \"0\"\n", true},
	}
	client := &http.Client{Timeout: 200 * time.Millisecond}
	for _, c := range cases {
		if _, err := os.Stat(filepath.Join(n.RootDir, "cpu_manager_state")); err != nil && strings.Contains(c.extra, "cpuManagerPolicy") {
			t.Logf("%s: no checkpoint was left to be stale", c.name)
			continue
		}
		// A later key wins in the kubelet's YAML: the fatal line last.
		write(t, n.Config, n.Base+"cgroupDriver: cgroupfs\n"+c.extra)
		start := time.Now()
		pid := n.launchKubelet(t)
		var healthy, gone time.Duration
		for time.Since(start) < 30*time.Second {
			if !running(pid) {
				gone = time.Since(start)
				break
			}
			if healthy == 0 {
				if resp, err := client.Get("http://127.0.0.1:10248/healthz"); err == nil {
					resp.Body.Close()
					if resp.StatusCode == http.StatusOK {
						healthy = time.Since(start)
					}
				}
			}
			if !c.fatal && healthy > 0 && time.Since(start) > healthy+2*time.Second {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		if !c.fatal {
			if gone > 0 || healthy == 0 {
				t.Errorf("%s: on %s the kubelet should run (healthy at %s, exited at %s):\n%s", c.name, rt, healthy, gone, tailFile(n.Log))
			} else if got := configzField(t, "cgroupDriver"); got != "cgroupfs" {
				t.Errorf("%s: on %s the kubelet runs the %v cgroup driver, want cgroupfs (the runtime's)", c.name, rt, got)
			} else {
				t.Logf("%s: runs on %s, with the cgroupfs driver the runtime gave it", c.name, rt)
			}
			n.stop()
			time.Sleep(300 * time.Millisecond) // ports released
			continue
		}
		if gone == 0 {
			n.stop()
			t.Errorf("%s: the kubelet still ran after 30 s:\n%s", c.name, tailFile(n.Log))
			continue
		}
		after := "healthz never answered"
		if healthy > 0 {
			after = fmt.Sprintf("healthz answered at %s, %s before the exit", healthy.Round(time.Millisecond), (gone - healthy).Round(time.Millisecond))
			worst = max(worst, gone-healthy)
		}
		t.Logf("%s: exited %s after its start; %s", c.name, gone.Round(time.Millisecond), after)
		time.Sleep(300 * time.Millisecond) // ports released
	}
	return worst
}

// trustApply runs kubeletcfg apply of the node's Base, cgroupfs and content
// with the default window.
func trustApply(t *testing.T, n *kubeletNode, content string, extra ...string) (int, string, time.Duration) {
	t.Helper()
	file := n.writeNew(t, "cgroupDriver: cgroupfs\n"+content)
	start := time.Now()
	code, out, errOut := kubeletcfg(t, nil, n.argv("apply", append([]string{"-f", file, "--skip-preflight"}, extra...)...)...)
	return code, out + errOut, time.Since(start)
}

// killAfterHealthz kills, d after its healthz first answered, the next
// kubelet the restart script starts while the config file holds marker.
func killAfterHealthz(t *testing.T, n *kubeletNode, marker string, d time.Duration) chan time.Duration {
	killed := make(chan time.Duration, 1)
	old, _ := os.ReadFile(n.PidFile)
	go func() {
		defer close(killed)
		for end := time.Now().Add(60 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
			b, _ := os.ReadFile(n.PidFile)
			cfg, _ := os.ReadFile(n.Config)
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil || string(b) == string(old) || !strings.Contains(string(cfg), marker) {
				continue
			}
			for ; time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
				if resp, err := http.Get("http://127.0.0.1:10248/healthz"); err == nil {
					resp.Body.Close()
					if resp.StatusCode == http.StatusOK {
						break
					}
				}
			}
			start := time.Now()
			time.Sleep(d)
			syscall.Kill(pid, syscall.SIGKILL)
			killed <- time.Since(start)
			return
		}
	}()
	return killed
}

// A kubelet that dies 5 s after its healthz first answered is rolled back
// with apply's default options; the times of a good and a failed apply.
func TestApplyKubeletDyingAfterHealthz(t *testing.T) {
	n := newNode(t, nodeOptions{})
	code, out, took := trustApply(t, n, "maxPods: 111\n")
	if code != 0 {
		t.Fatalf("good change: exit %d\n%s", code, out)
	}
	t.Logf("good apply, default options: %s (%s)", took.Round(time.Millisecond), progressLine(out, "healthy after"))

	killed := killAfterHealthz(t, n, "maxPods: 122", 5*time.Second)
	code, out, took = trustApply(t, n, "maxPods: 122\n")
	if code != 3 {
		t.Fatalf("a kubelet killed 5 s after healthz: exit %d, want 3 (rolled back)\n%s", code, out)
	}
	if d, ok := <-killed; !ok || d < 5*time.Second {
		t.Fatalf("the kubelet was not killed 5 s after its healthz (%s)", d)
	}
	if b, _ := os.ReadFile(n.Config); !strings.Contains(string(b), "maxPods: 111") {
		t.Errorf("after the rollback the config file holds:\n%s", b)
	}
	n.waitHealthy(t)
	if got := configzMaxPods(t); got != 111 {
		t.Errorf("after the rollback /configz maxPods = %v, want 111", got)
	}
	t.Logf("kubelet killed 5 s after healthz: rolled back in %s (%s)", took.Round(time.Millisecond), progressLine(out, "unhealthy"))

	// A change the kubelet refuses at start: the time to a healthy old
	// configuration.
	code, out, took = trustApply(t, n, "maxPods: 133\n"+fatalAtStart)
	if code != 3 {
		t.Fatalf("fatal change: exit %d\n%s", code, out)
	}
	t.Logf("failed apply to a healthy old configuration, default options: %s (%s; back: %s)", took.Round(time.Millisecond), progressLine(out, "unhealthy"), progressLine(out, "healthy after"))
}

// A file system that fills up during the watch does not stop the rollback:
// the old file was staged beside the new one, the undo is a rename.
func TestApplyRollbackOnFullFilesystem(t *testing.T) {
	etc, err := os.MkdirTemp("", "kubeletcfg-tmpfs")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", etc).CombinedOutput(); err != nil {
		t.Fatalf("mount tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", etc).Run(); os.Remove(etc) })
	n := newNode(t, nodeOptions{configDir: etc})
	// The restart script fills the file system before it starts the kubelet
	// on the new file (which the kubelet refuses here).
	n.setPreLaunch(t, fmt.Sprintf("if grep -q 'maxPods: 144' %[1]s; then dd if=/dev/zero of=%[2]s/fill bs=1k 2>/dev/null; stat -f -c %%a %[2]s >%[3]s/free-after-fill; fi", n.Config, etc, n.Dir))

	code, out, _ := trustApply(t, n, "maxPods: 144\n"+fatalAtStart)
	if code != 3 {
		t.Fatalf("rollback on a full file system: exit %d, want 3\n%s", code, out)
	}
	if st, err := os.Stat(filepath.Join(etc, "fill")); err != nil || st.Size() == 0 {
		t.Fatalf("the file system was not filled: %v", err)
	}
	if free, _ := os.ReadFile(filepath.Join(n.Dir, "free-after-fill")); strings.TrimSpace(string(free)) != "0" {
		t.Errorf("%q blocks free once filled, want 0", free)
	}
	if b, _ := os.ReadFile(n.Config); !strings.Contains(string(b), "maxPods: 100") {
		t.Errorf("after the rollback on a full file system the config file holds:\n%s", b)
	}
	n.waitHealthy(t)
	if got := configzMaxPods(t); got != 100 {
		t.Errorf("after the rollback /configz maxPods = %v, want 100", got)
	}
}

// A journal or lock kubeletcfg did not make is refused with a clear error:
// nothing in it runs, nothing is written.
func TestApplyRefusesForgedState(t *testing.T) {
	n := newNode(t, nodeOptions{})
	state := n.StateDir
	if err := os.MkdirAll(state, 0o700); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(n.Dir, "pwned")
	victim := filepath.Join(n.Dir, "victim")
	write(t, victim, "keep\n")
	before, _ := os.ReadFile(n.Config)

	// The old journal format, with a shell command and a file to restore.
	write(t, filepath.Join(state, "journal.json"), `{"id":"x","configFile":"`+n.Config+`","files":[{"path":"`+victim+`","backup":"`+n.Config+`","newSHA256":"00"}],"restart":"touch `+marker+`","pid":1}`)
	os.Chmod(filepath.Join(state, "journal.json"), 0o600)
	code, out, _ := trustApply(t, n, "maxPods: 155\n")
	if code != 2 || !strings.Contains(out, "journal") {
		t.Errorf("a forged journal: exit %d, want 2 naming it\n%s", code, out)
	}
	rec, err := exec.Command(kit.kubeletcfg, "recover", "--state-dir", state, "--restart-command", n.Restart, "--pid-file", n.PidFile).CombinedOutput()
	if err == nil {
		t.Errorf("recover of a forged journal succeeded:\n%s", rec)
	}
	os.Remove(filepath.Join(state, "journal.json"))

	// A lock that is a link to a file to truncate.
	os.Remove(filepath.Join(state, "lock"))
	if err := os.Symlink(victim, filepath.Join(state, "lock")); err != nil {
		t.Fatal(err)
	}
	code, out, _ = trustApply(t, n, "maxPods: 156\n")
	if code != 2 || !strings.Contains(out, "symlink") {
		t.Errorf("a symlinked lock: exit %d, want 2 naming the link\n%s", code, out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("a command from the forged journal ran")
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep\n" {
		t.Errorf("the file the forged state named holds %q", b)
	}
	if b, _ := os.ReadFile(n.Config); string(b) != string(before) {
		t.Error("the config file was written")
	}
	t.Logf("forged journal and symlinked lock refused: %s", strings.TrimSpace(out))
}
