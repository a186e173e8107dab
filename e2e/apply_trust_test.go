//go:build e2e

package e2e

import (
	"errors"
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

// trustBase is the config every kubelet of these tests starts from.
func trustBase(sock string) string {
	return "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncontainerRuntimeEndpoint: unix://" + sock +
		"\nfailCgroupV1: false\ncgroupDriver: cgroupfs\nauthentication:\n  anonymous:\n    enabled: true\n  webhook:\n    enabled: false\nauthorization:\n  mode: AlwaysAllow\n"
}

// TestKubeletStartupExits measures how long after its start, and after its
// healthz first answered, a real kubelet exits on a configuration it
// accepts but cannot run with here: apply's default window must cover it.
func TestKubeletStartupExits(t *testing.T) {
	kubelet, _, dir, sock := kubeletNode(t)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	busyPort := busy.Addr().(*net.TCPAddr).Port
	fatal := [][2]string{
		{"cgroupDriver systemd (no systemd)", "cgroupDriver: systemd\n"},
		{"failCgroupV1 on cgroup v1", "failCgroupV1: true\n"},
		{"kubeReserved beyond the machine", "kubeReserved:\n  memory: 100Ti\n"},
		{"port in use", "port: " + strconv.Itoa(busyPort) + "\n"},
		// The kubelets above left a checkpoint of the none policy.
		{"a stale CPU manager checkpoint", "cpuManagerPolicy: static\nreservedSystemCPUs: \"0\"\n"},
	}
	client := &http.Client{Timeout: 200 * time.Millisecond}
	var worst time.Duration
	for _, f := range fatal {
		name, extra := f[0], f[1]
		if _, err := os.Stat(filepath.Join(dir, "root", "cpu_manager_state")); err != nil && strings.Contains(extra, "cpuManagerPolicy") {
			t.Logf("%s: no checkpoint was left to be stale", name)
			continue
		}
		cfg := filepath.Join(dir, "exit.yaml")
		// A later key wins in the kubelet's YAML: the fatal line last.
		write(t, cfg, trustBase(sock)+extra)
		cmd := exec.Command(kubelet, "--config="+cfg, "--root-dir="+filepath.Join(dir, "root"), "--cert-dir="+filepath.Join(dir, "pki"))
		cmd.Env = append(os.Environ(), "KUBELET_CONFIG_DROPIN_DIR_ALPHA=")
		logf, _ := os.Create(filepath.Join(dir, "exit.log"))
		cmd.Stdout, cmd.Stderr = logf, logf
		start := time.Now()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		var healthy, gone time.Duration
	watch:
		for time.Since(start) < 30*time.Second {
			select {
			case <-exited:
				gone = time.Since(start)
				break watch
			default:
			}
			if healthy == 0 {
				if resp, err := client.Get("http://127.0.0.1:10248/healthz"); err == nil {
					resp.Body.Close()
					if resp.StatusCode == http.StatusOK {
						healthy = time.Since(start)
					}
				}
			}
			time.Sleep(5 * time.Millisecond)
		}
		logf.Close()
		if gone == 0 {
			cmd.Process.Kill()
			<-exited
			log, _ := os.ReadFile(filepath.Join(dir, "exit.log"))
			t.Errorf("%s: the kubelet still ran after 30 s:\n%s", name, tail(log))
			continue
		}
		after := "healthz never answered"
		if healthy > 0 {
			after = fmt.Sprintf("healthz answered at %s, %s before the exit", healthy.Round(time.Millisecond), (gone - healthy).Round(time.Millisecond))
			worst = max(worst, gone-healthy)
		}
		t.Logf("%s: exited %s after its start; %s", name, gone.Round(time.Millisecond), after)
		time.Sleep(300 * time.Millisecond) // ports released
	}
	if defaultStableFor := 10 * time.Second; 2*worst > defaultStableFor {
		t.Errorf("a kubelet exited %s after its healthz answered: apply's default --stable-for %s does not cover it twice over", worst, defaultStableFor)
	}
}

// trustNode starts a kubelet with a restart script, and returns what the
// tests apply with.
type trustNode struct {
	t                             *testing.T
	bin, dir, cfg, restart, minor string
	args                          []string
}

func newTrustNode(t *testing.T, cfgDir string) *trustNode {
	kubelet, minor, dir, sock := kubeletNode(t)
	if cfgDir == "" {
		cfgDir = dir
	}
	n := &trustNode{t: t, dir: dir, minor: minor, cfg: filepath.Join(cfgDir, "config.yaml")}
	write(t, n.cfg, trustBase(sock)+"maxPods: 100\n")
	n.args = []string{"--config=" + n.cfg, "--root-dir=" + filepath.Join(dir, "root"), "--cert-dir=" + filepath.Join(dir, "pki")}
	n.restart = restartScript(t, dir, "KUBELET_CONFIG_DROPIN_DIR_ALPHA= setsid "+kubelet+" "+strings.Join(n.args, " "))
	t.Cleanup(func() {
		exec.Command("pkill", "-9", "-f", "config="+n.cfg).Run()
		time.Sleep(300 * time.Millisecond)
	})
	if out, err := exec.Command(n.restart).CombinedOutput(); err != nil {
		t.Fatalf("start: %v %s", err, out)
	}
	waitHealthy(t, dir)
	n.bin = filepath.Join(dir, "kubeletcfg")
	if out, err := exec.Command("go", "build", "-o", n.bin, "../cmd/kubeletcfg").CombinedOutput(); err != nil {
		t.Fatalf("build kubeletcfg: %v\n%s", err, out)
	}
	return n
}

// apply runs kubeletcfg apply of content with the default window.
func (n *trustNode) apply(content string, extra ...string) (int, string, time.Duration) {
	n.t.Helper()
	file := filepath.Join(n.dir, "new.yaml")
	base, _ := os.ReadFile(n.cfg)
	head := string(base[:strings.Index(string(base), "maxPods:")])
	if strings.Contains(content, "cgroupDriver:") {
		head = strings.Replace(head, "cgroupDriver: cgroupfs\n", "", 1)
	}
	write(n.t, file, head+content)
	host, _ := os.Hostname()
	args := append([]string{"apply", "--node", host, "-f", file, "--kubelet-version", n.minor, "--restart-command", n.restart,
		"--pid-file", filepath.Join(n.dir, "kubelet.pid"), "--kubelet-log", filepath.Join(n.dir, "kubelet.log"),
		"--state-dir", filepath.Join(n.dir, "state")}, extra...)
	start := time.Now()
	out, err := exec.Command(n.bin, append(append(args, "--"), n.args...)...).CombinedOutput()
	var exit *exec.ExitError
	code := 0
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		n.t.Fatal(err)
	}
	return code, string(out), time.Since(start)
}

// killAfterHealthz kills, d after its healthz first answered, the next
// kubelet the restart script starts while the config file holds marker.
func killAfterHealthz(t *testing.T, n *trustNode, marker string, d time.Duration) chan time.Duration {
	killed := make(chan time.Duration, 1)
	old, _ := os.ReadFile(filepath.Join(n.dir, "kubelet.pid"))
	go func() {
		defer close(killed)
		for end := time.Now().Add(60 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
			b, _ := os.ReadFile(filepath.Join(n.dir, "kubelet.pid"))
			cfg, _ := os.ReadFile(n.cfg)
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
	n := newTrustNode(t, "")
	code, out, took := n.apply("maxPods: 111\n")
	if code != 0 {
		t.Fatalf("good change: exit %d\n%s", code, out)
	}
	t.Logf("good apply, default options: %s (%s)", took.Round(time.Millisecond), progressLine(out, "healthy after"))

	killed := killAfterHealthz(t, n, "maxPods: 122", 5*time.Second)
	code, out, took = n.apply("maxPods: 122\n")
	if code != 3 {
		t.Fatalf("a kubelet killed 5 s after healthz: exit %d, want 3 (rolled back)\n%s", code, out)
	}
	if d, ok := <-killed; !ok || d < 5*time.Second {
		t.Fatalf("the kubelet was not killed 5 s after its healthz (%s)", d)
	}
	if b, _ := os.ReadFile(n.cfg); !strings.Contains(string(b), "maxPods: 111") {
		t.Errorf("after the rollback the config file holds:\n%s", b)
	}
	waitHealthy(t, n.dir)
	if got := configzMaxPods(t); got != 111 {
		t.Errorf("after the rollback /configz maxPods = %v, want 111", got)
	}
	t.Logf("kubelet killed 5 s after healthz: rolled back in %s (%s)", took.Round(time.Millisecond), progressLine(out, "unhealthy"))

	// A change the kubelet refuses at start: the time to a healthy old
	// configuration.
	code, out, took = n.apply("maxPods: 133\ncgroupDriver: systemd\n")
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
	n := newTrustNode(t, etc)
	// The restart script fills the file system before it starts the kubelet
	// on the new file (which the kubelet refuses here).
	script, _ := os.ReadFile(n.restart)
	fill := fmt.Sprintf("if grep -q 'maxPods: 144' %[1]s; then dd if=/dev/zero of=%[2]s/fill bs=1k 2>/dev/null; stat -f -c %%a %[2]s >%[3]s/free-after-fill; fi\n", n.cfg, etc, n.dir)
	write(t, n.restart, strings.Replace(string(script), "\n", "\n"+fill, 1))
	os.Chmod(n.restart, 0o755)

	code, out, _ := n.apply("maxPods: 144\ncgroupDriver: systemd\n")
	if code != 3 {
		t.Fatalf("rollback on a full file system: exit %d, want 3\n%s", code, out)
	}
	if st, err := os.Stat(filepath.Join(etc, "fill")); err != nil || st.Size() == 0 {
		t.Fatalf("the file system was not filled: %v", err)
	}
	if free, _ := os.ReadFile(filepath.Join(n.dir, "free-after-fill")); strings.TrimSpace(string(free)) != "0" {
		t.Errorf("%q blocks free once filled, want 0", free)
	}
	if b, _ := os.ReadFile(n.cfg); !strings.Contains(string(b), "maxPods: 100") {
		t.Errorf("after the rollback on a full file system the config file holds:\n%s", b)
	}
	waitHealthy(t, n.dir)
	if got := configzMaxPods(t); got != 100 {
		t.Errorf("after the rollback /configz maxPods = %v, want 100", got)
	}
}

// A journal or lock kubeletcfg did not make is refused with a clear error:
// nothing in it runs, nothing is written.
func TestApplyRefusesForgedState(t *testing.T) {
	n := newTrustNode(t, "")
	state := filepath.Join(n.dir, "state")
	if err := os.MkdirAll(state, 0o700); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(n.dir, "pwned")
	victim := filepath.Join(n.dir, "victim")
	write(t, victim, "keep\n")
	before, _ := os.ReadFile(n.cfg)

	// The old journal format, with a shell command and a file to restore.
	write(t, filepath.Join(state, "journal.json"), `{"id":"x","configFile":"`+n.cfg+`","files":[{"path":"`+victim+`","backup":"`+n.cfg+`","newSHA256":"00"}],"restart":"touch `+marker+`","pid":1}`)
	os.Chmod(filepath.Join(state, "journal.json"), 0o600)
	code, out, _ := n.apply("maxPods: 155\n")
	if code != 2 || !strings.Contains(out, "journal") {
		t.Errorf("a forged journal: exit %d, want 2 naming it\n%s", code, out)
	}
	rec, err := exec.Command(n.bin, "recover", "--state-dir", state, "--restart-command", n.restart, "--pid-file", filepath.Join(n.dir, "kubelet.pid")).CombinedOutput()
	if err == nil {
		t.Errorf("recover of a forged journal succeeded:\n%s", rec)
	}
	os.Remove(filepath.Join(state, "journal.json"))

	// A lock that is a link to a file to truncate.
	os.Remove(filepath.Join(state, "lock"))
	if err := os.Symlink(victim, filepath.Join(state, "lock")); err != nil {
		t.Fatal(err)
	}
	code, out, _ = n.apply("maxPods: 156\n")
	if code != 2 || !strings.Contains(out, "symlink") {
		t.Errorf("a symlinked lock: exit %d, want 2 naming the link\n%s", code, out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("a command from the forged journal ran")
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep\n" {
		t.Errorf("the file the forged state named holds %q", b)
	}
	if b, _ := os.ReadFile(n.cfg); string(b) != string(before) {
		t.Error("the config file was written")
	}
	t.Logf("forged journal and symlinked lock refused: %s", strings.TrimSpace(out))
}
