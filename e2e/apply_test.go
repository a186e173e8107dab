//go:build e2e

package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestApply changes the config file of a real kubelet: a good change ends
// healthy with /configz showing it; a change that passes validation but
// kills the kubelet right after it starts is rolled back; a second apply
// while one holds the lock is refused.
func TestApply(t *testing.T) {
	k := startConfigKubelet(t)
	minor, dir, base, cfg, confd, args, restart := k.minor, k.dir, k.base, k.cfg, k.confd, k.args, k.restart

	bin := filepath.Join(dir, "kubeletcfg")
	if out, err := exec.Command("go", "build", "-tags", "failpoints", "-o", bin, "../cmd/kubeletcfg").CombinedOutput(); err != nil {
		t.Fatalf("build kubeletcfg: %v\n%s", err, out)
	}
	host, _ := os.Hostname()
	applyCmd := func(newFile string) (int, string, time.Duration) {
		start := time.Now()
		cmd := exec.Command(bin, append([]string{"apply", "--node", host, "-f", newFile, "--kubelet-version", minor,
			"--restart-command", restart, "--state-dir", filepath.Join(dir, "state"), "--pid-file", filepath.Join(dir, "kubelet.pid"), "--kubelet-log", filepath.Join(dir, "kubelet.log"), "--verify-configz", "--insecure", "--stable-for", "2s", "--health-timeout", "20s", "-o", "json", "--"}, args...)...)
		out, err := cmd.CombinedOutput()
		return exitCode(t, err), string(out), time.Since(start)
	}

	good := filepath.Join(dir, "good.yaml")
	write(t, good, base+"cgroupDriver: cgroupfs\nmaxPods: 111\n")
	code, out, took := applyCmd(good)
	if code != 0 || !strings.Contains(out, "serves the intended configuration") {
		t.Fatalf("good change: exit %d, or /configz not verified\n%s", code, out)
	}
	if got := configzMaxPods(t); got != 111 {
		t.Errorf("after the good change /configz maxPods = %v, want 111", got)
	}
	t.Logf("good change applied in %s (%s)", took.Round(time.Millisecond), progressLine(out, "healthy after"))
	if b, _ := filepath.Glob(cfg + ".bak.*"); len(b) != 1 {
		t.Errorf("backups %v, want one", b)
	}

	// Valid for kubeletcfg and the kubelet's validation, fatal at start on
	// this host (no systemd): rolled back.
	bad := filepath.Join(dir, "bad.yaml")
	write(t, bad, base+"cgroupDriver: systemd\nmaxPods: 122\n")
	code, out, took = applyCmd(bad)
	if code != 3 {
		t.Fatalf("fatal change: exit %d, want 3 (rolled back)\n%s", code, out)
	}
	if !strings.Contains(out, "cgroups manager") {
		t.Errorf("the rollback does not report the kubelet's own error:\n%s", out)
	}
	if got, _ := os.ReadFile(cfg); !strings.Contains(string(got), "maxPods: 111") {
		t.Errorf("after the rollback the config file is:\n%s", got)
	}
	waitHealthy(t, dir)
	if got := configzMaxPods(t); got != 111 {
		t.Errorf("after the rollback /configz maxPods = %v, want 111", got)
	}
	t.Logf("fatal change rolled back, node healthy again, in %s (%s; back: %s)", took.Round(time.Millisecond), progressLine(out, "unhealthy"), progressLine(out, "healthy after"))
	if b, _ := filepath.Glob(cfg + ".bak.*"); len(b) != 2 {
		t.Errorf("backups %v, want two, none overwritten", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "state", "journal.json")); err == nil {
		t.Error("the journal of a finished apply is left behind")
	}

	// kill -9 of kubeletcfg while it watches the new kubelet: the guard it
	// left behind puts the old file back and restarts the kubelet.
	killed := filepath.Join(dir, "killed.yaml")
	write(t, killed, base+"cgroupDriver: cgroupfs\nmaxPods: 144\n")
	cmd := exec.Command(bin, append([]string{"apply", "--node", host, "-f", killed, "--kubelet-version", minor,
		"--restart-command", restart, "--state-dir", filepath.Join(dir, "state"), "--pid-file", filepath.Join(dir, "kubelet.pid"), "--stable-for", "30s", "--"}, args...)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if b, _ := os.ReadFile(cfg); strings.Contains(string(b), "maxPods: 144") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("apply never wrote the new file")
		}
	}
	time.Sleep(time.Second) // into the restart and the watch
	killedAt := time.Now()
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		b, _ := os.ReadFile(cfg)
		_, journal := os.Stat(filepath.Join(dir, "state", "journal.json"))
		if strings.Contains(string(b), "maxPods: 111") && journal != nil {
			break
		}
		if time.Now().After(deadline) {
			guard, _ := os.ReadFile(filepath.Join(dir, "state", "guard.log"))
			holders, _ := exec.Command("sh", "-c", "ls -l /proc/[0-9]*/fd 2>/dev/null | grep -B200 kubeletcfg.lock | grep -E '^/proc|kubeletcfg.lock' | grep -B1 lock; ps -ef | grep -E 'guard|kubelet|flock' | grep -v grep").CombinedOutput()
			t.Fatalf("after kill -9 the old file was not restored:\n%s\nguard log:\n%s\nholders:\n%s", b, guard, holders)
		}
	}
	waitHealthy(t, dir)
	if got := configzMaxPods(t); got != 111 {
		t.Errorf("after kill -9 and the guard, /configz maxPods = %v, want 111", got)
	}
	t.Logf("kill -9 during the watch: old file back and the kubelet healthy %s after the kill", time.Since(killedAt).Round(time.Millisecond))

	// kubeletcfg dying at each step (simulated with a failpoint that kills
	// it with SIGKILL) leaves the node on the old file, healthy, no journal.
	for _, step := range []string{"after-backup", "after-write", "after-restart"} {
		write(t, killed, base+"cgroupDriver: cgroupfs\nmaxPods: 155\n")
		cmd := exec.Command(bin, append([]string{"apply", "--node", host, "-f", killed, "--kubelet-version", minor,
			"--restart-command", restart, "--state-dir", filepath.Join(dir, "state"), "--pid-file", filepath.Join(dir, "kubelet.pid"), "--stable-for", "1s", "--"}, args...)...)
		cmd.Env = append(os.Environ(), "KUBELETCFG_FAILPOINT="+step)
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != -1 {
			t.Fatalf("%s: apply was not killed: %v\n%s", step, err, out)
		}
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			b, _ := os.ReadFile(cfg)
			_, journal := os.Stat(filepath.Join(dir, "state", "journal.json"))
			if strings.Contains(string(b), "maxPods: 111") && journal != nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the old file was not restored:\n%s", step, b)
			}
		}
		waitHealthy(t, dir)
		if got := configzMaxPods(t); got != 111 {
			t.Errorf("%s: after the guard /configz maxPods = %v, want 111", step, got)
		}
	}

	// A kubeletcfg that hangs after the write (alive, holding the node): at
	// the journal's deadline the guard stops it and undoes its change.
	write(t, killed, base+"cgroupDriver: cgroupfs\nmaxPods: 166\n")
	hung := exec.Command(bin, append([]string{"apply", "--node", host, "-f", killed, "--kubelet-version", minor,
		"--restart-command", restart, "--state-dir", filepath.Join(dir, "state"), "--pid-file", filepath.Join(dir, "kubelet.pid"), "--stable-for", "1s", "--health-timeout", "3s", "--"}, args...)...)
	hung.Env = append(os.Environ(), "KUBELETCFG_HANGPOINT=after-write")
	if err := hung.Start(); err != nil {
		t.Fatal(err)
	}
	hungDone := make(chan error, 1)
	go func() { hungDone <- hung.Wait() }()
	select {
	case <-hungDone:
	case <-time.After(60 * time.Second):
		hung.Process.Kill()
		t.Fatal("the guard did not stop a hung apply within 60 s")
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		b, _ := os.ReadFile(cfg)
		_, journal := os.Stat(filepath.Join(dir, "state", "journal.json"))
		if strings.Contains(string(b), "maxPods: 111") && journal != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the guard stopped the hung apply the old file was not restored:\n%s", b)
		}
	}
	waitHealthy(t, dir)
	if got := configzMaxPods(t); got != 111 {
		t.Errorf("after the deadline /configz maxPods = %v, want 111", got)
	}

	// backups lists what the applies kept; rollback --to 1 puts the first back.
	out2, err := exec.Command(bin, "backups", "--state-dir", filepath.Join(dir, "state")).CombinedOutput()
	if err != nil || strings.Count(string(out2), ".bak.") != 7 || !strings.HasPrefix(string(out2), "1\t") {
		t.Fatalf("backups: %v, want seven records listed\n%s", err, out2)
	}
	out2, err = exec.Command(bin, append([]string{"rollback", "--node", host, "--to", "1", "--kubelet-version", minor,
		"--restart-command", restart, "--state-dir", filepath.Join(dir, "state"), "--pid-file", filepath.Join(dir, "kubelet.pid"), "--stable-for", "1s", "--"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("rollback --to 1: %v\n%s", err, out2)
	}
	if got := configzMaxPods(t); got != 100 {
		t.Errorf("after rollback to the first backup /configz maxPods = %v, want 100", got)
	}

	// A CPU manager policy change needs a drain: with --drained, apply backs
	// the stale cpu_manager_state up and removes it, and the kubelet starts.
	state := filepath.Join(dir, "root", "cpu_manager_state")
	if _, err := os.Stat(state); err != nil {
		t.Fatalf("the kubelet wrote no %s: %v", state, err)
	}
	static := filepath.Join(dir, "static.yaml")
	write(t, static, base+"cgroupDriver: cgroupfs\nmaxPods: 100\ncpuManagerPolicy: static\nreservedSystemCPUs: \"0\"\n")
	out2, err = exec.Command(bin, append([]string{"apply", "--node", host, "-f", static, "--drained", "--kubelet-version", minor,
		"--restart-command", restart, "--state-dir", filepath.Join(dir, "state"), "--pid-file", filepath.Join(dir, "kubelet.pid"), "--stable-for", "1s", "--"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("apply of the static CPU manager policy with --drained: %v\n%s", err, out2)
	}
	if b, _ := filepath.Glob(state + ".bak.*"); len(b) != 1 || !strings.Contains(string(out2), "removed "+state) {
		t.Errorf("the old cpu_manager_state was not backed up and removed (backups %v)\n%s", b, out2)
	}

	// --dropin: a new drop-in that the kubelet takes; then one that kills it,
	// undone by removing it again.
	applyDropin := func(specs ...string) (int, string) {
		var dropinArgs []string
		for _, spec := range specs {
			dropinArgs = append(dropinArgs, "--dropin", spec)
		}
		cmd := exec.Command(bin, append(append(append([]string{"apply", "--node", host}, dropinArgs...), "--kubelet-version", minor,
			"--restart-command", restart, "--state-dir", filepath.Join(dir, "state"), "--pid-file", filepath.Join(dir, "kubelet.pid"), "--stable-for", "1s", "--"), args...)...)
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode(), string(out)
		}
		return 0, string(out)
	}
	podsDropin := filepath.Join(dir, "pods.yaml")
	write(t, podsDropin, "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: 177\n")
	reservedDropin := filepath.Join(dir, "reserved.yaml")
	write(t, reservedDropin, "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nsystemReserved:\n  memory: 100Mi\n")
	if code, out := applyDropin("50-pods.conf="+podsDropin, "55-reserved.conf="+reservedDropin); code != 0 {
		t.Fatalf("--dropin: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(confd, "55-reserved.conf")); err != nil {
		t.Errorf("the second drop-in of the apply: %v", err)
	}
	if got := configzMaxPods(t); got != 177 {
		t.Errorf("after --dropin /configz maxPods = %v, want 177", got)
	}
	badDropin := filepath.Join(dir, "bad-dropin.yaml")
	write(t, badDropin, "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncgroupDriver: systemd\n")
	if code, out := applyDropin("60-bad.conf=" + badDropin); code != 3 {
		t.Fatalf("a fatal new drop-in: exit %d, want 3\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(confd, "60-bad.conf")); err == nil {
		t.Error("the fatal drop-in was left in place")
	}
	waitHealthy(t, dir)
	if got := configzMaxPods(t); got != 177 {
		t.Errorf("after the fatal drop-in was undone /configz maxPods = %v, want 177", got)
	}

	// A second apply while another holds the lock is refused.
	holder := exec.Command("flock", filepath.Join(dir, "state", "lock"), "sleep", "30")
	holder.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(-holder.Process.Pid, syscall.SIGKILL)
	for exec.Command("flock", "-n", filepath.Join(dir, "state", "lock"), "true").Run() == nil {
		time.Sleep(20 * time.Millisecond)
	}
	write(t, good, base+"cgroupDriver: cgroupfs\nmaxPods: 133\n")
	code, out, _ = applyCmd(good)
	if code != 2 || !strings.Contains(out, "holds the lock") {
		t.Errorf("concurrent apply: exit %d, want 2 naming the lock\n%s", code, out)
	}
}

// configKubelet is a real kubelet the test started on a config file of its
// own (cgroupfs, maxPods 100) with a drop-in directory, healthy.
type configKubelet struct {
	minor, dir string
	base       string // the config file's lines every change keeps
	cfg, confd string // the config file and the drop-in directory
	args       []string
	restart    string // the restart command (restartScript)
}

func startConfigKubelet(t *testing.T) *configKubelet {
	t.Helper()
	kubelet, minor, dir, sock := kubeletNode(t)
	k := &configKubelet{minor: minor, dir: dir, cfg: filepath.Join(dir, "config.yaml"), confd: filepath.Join(dir, "conf.d"),
		base: "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncontainerRuntimeEndpoint: unix://" + sock +
			"\nfailCgroupV1: false\nauthentication:\n  anonymous:\n    enabled: true\n  webhook:\n    enabled: false\nauthorization:\n  mode: AlwaysAllow\n"}
	write(t, k.cfg, k.base+"cgroupDriver: cgroupfs\nmaxPods: 100\n")
	if err := os.MkdirAll(k.confd, 0o755); err != nil {
		t.Fatal(err)
	}
	k.args = []string{"--config=" + k.cfg, "--config-dir=" + k.confd, "--root-dir=" + filepath.Join(dir, "root"), "--cert-dir=" + filepath.Join(dir, "pki")}

	// The restart command stops the running kubelet and starts a new one.
	k.restart = restartScript(t, dir, "KUBELET_CONFIG_DROPIN_DIR_ALPHA= setsid "+kubelet+" "+strings.Join(k.args, " "))
	t.Cleanup(func() {
		// Every kubelet this test started (the guard may have started one).
		exec.Command("pkill", "-9", "-f", "config="+k.cfg).Run()
		time.Sleep(300 * time.Millisecond)
	})
	if out, err := exec.Command(k.restart).CombinedOutput(); err != nil {
		t.Fatalf("start: %v %s", err, out)
	}
	waitHealthy(t, dir)
	return k
}

func waitHealthy(t *testing.T, dir string) {
	t.Helper()
	waitHealthyAt(t, func() string {
		out, _ := os.ReadFile(filepath.Join(dir, "kubelet.log"))
		return tail(out)
	})
}

// requireNoKubelet fails when a kubelet already answers on this machine.
func requireNoKubelet(t *testing.T) {
	t.Helper()
	if resp, err := http.Get("http://127.0.0.1:10248/healthz"); err == nil {
		resp.Body.Close()
		t.Fatal("a kubelet already answers on 127.0.0.1:10248: stop it first")
	}
}

func configzMaxPods(t *testing.T) float64 {
	t.Helper()
	raw := fetchConfigz(t)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	n, _ := m["maxPods"].(float64)
	return n
}

// progressLine is the last progress line of apply that contains s.
func progressLine(out, s string) string {
	found := ""
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "apply: ") && strings.Contains(l, s) {
			found = strings.TrimPrefix(l, "apply: ")
		}
	}
	return found
}

// TestApplyFromMigrate moves a flags-only kubelet onto a config file: the
// file is written, the environment file the flags live in is rewritten to
// the flags that remain, and the running kubelet serves the same
// configuration as before.
func TestApplyFromMigrate(t *testing.T) {
	kubelet, minor, dir, sock := kubeletNode(t)
	env := filepath.Join(dir, "flags.env")
	write(t, env, fmt.Sprintf(`# flags as a kubeadm-era node kept them
KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=unix://%s --fail-cgroupv1=false --root-dir=%s --cert-dir=%s"
KUBELET_EXTRA_ARGS="--max-pods=120 --cgroup-driver=cgroupfs --v=1"
`, sock, filepath.Join(dir, "root"), filepath.Join(dir, "pki")))
	restart := restartScript(t, dir, ". "+env+"\nsetsid "+kubelet+" $KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS")
	t.Cleanup(func() {
		exec.Command("pkill", "-9", "-f", "root-dir="+filepath.Join(dir, "root")).Run()
		time.Sleep(300 * time.Millisecond)
	})
	if out, err := exec.Command(restart).CombinedOutput(); err != nil {
		t.Fatalf("start: %v %s", err, out)
	}
	waitHealthy(t, dir)
	before := fetchConfigz(t)

	bin := filepath.Join(dir, "kubeletcfg")
	if out, err := exec.Command("go", "build", "-tags", "failpoints", "-o", bin, "../cmd/kubeletcfg").CombinedOutput(); err != nil {
		t.Fatalf("build kubeletcfg: %v\n%s", err, out)
	}
	host, _ := os.Hostname()
	cfg := filepath.Join(dir, "config.yaml")
	out, err := exec.Command(bin, "apply", "--node", host, "--from-migrate", "--from", env, "--config-path", cfg,
		"--kubelet-version", minor, "--restart-command", restart, "--state-dir", filepath.Join(dir, "state"), "--pid-file", filepath.Join(dir, "kubelet.pid"),
		"--stable-for", "1s", "--verify-configz", "--insecure").CombinedOutput()
	if err != nil {
		t.Fatalf("apply --from-migrate: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "serves the intended configuration") {
		t.Errorf("the migrated kubelet's /configz was not verified:\n%s", out)
	}
	rewritten, _ := os.ReadFile(env)
	if strings.Contains(string(rewritten), "--max-pods") || !strings.Contains(string(rewritten), "--config="+cfg) ||
		!strings.Contains(string(rewritten), "# flags as a kubeadm-era node kept them") {
		t.Errorf("flags.env after the migration:\n%s", rewritten)
	}
	if doc, _ := os.ReadFile(cfg); !strings.Contains(string(doc), "maxPods: 120") {
		t.Errorf("config.yaml after the migration:\n%s", doc)
	}
	var a, b2 map[string]any
	if err := json.Unmarshal(before, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(fetchConfigz(t), &b2); err != nil {
		t.Fatal(err)
	}
	delete(a, "apiVersion")
	delete(a, "kind")
	delete(b2, "apiVersion")
	delete(b2, "kind")
	if fmt.Sprint(a) != fmt.Sprint(b2) {
		t.Errorf("the kubelet runs another configuration after the migration:\nbefore: %v\nafter:  %v", a, b2)
	}
}

// kubeletNode prepares a private directory for a kubelet the test starts: the
// kubelet and its version from make e2e, a containerd of its own, and the
// sysctls the kubelet changes put back afterwards. cri, when given, writes
// what the containerd needs in dir and says it (startContainerd's cri).
func kubeletNode(t *testing.T, cri ...func(dir string) string) (kubelet, minor, dir, sock string) {
	t.Helper()
	kubelet, minor = os.Getenv("KUBELET_BIN"), os.Getenv("KUBELET_VERSION")
	if kubelet == "" {
		t.Fatal("KUBELET_BIN is not set: run make e2e")
	}
	// Not t.TempDir: the kubelet leaves mounts under its root directory.
	dir, err := os.MkdirTemp("", "kubeletcfg-e2e")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unmountUnder(dir); os.RemoveAll(dir) })
	t.Cleanup(saveSysctls(t))
	requireNoKubelet(t)
	var more []string
	for _, c := range cri {
		more = append(more, c(dir))
	}
	return kubelet, minor, dir, startContainerd(t, dir, more...)
}

// restartScript writes the restart command apply runs: it stops the kubelet
// of dir/kubelet.pid and runs launch (shell lines ending in the kubelet's
// command) in the background as the new one.
func restartScript(t *testing.T, dir, launch string) string {
	t.Helper()
	path := filepath.Join(dir, "restart.sh")
	write(t, path, fmt.Sprintf(`#!/bin/sh
pid=%[1]s/kubelet.pid
# Stop the running kubelet: wait until it is gone or a zombie (PID 1 here may
# not reap it), at most 10 s, then make sure.
if [ -f $pid ]; then
  p=$(cat $pid); kill $p 2>/dev/null; i=0
  while [ -e /proc/$p ] && [ "$(sed 's/.*) //' /proc/$p/stat 2>/dev/null | cut -c1)" != Z ] && [ $i -lt 500 ]; do sleep 0.02; i=$((i+1)); done
  kill -9 $p 2>/dev/null
fi
%[2]s >>%[1]s/kubelet.log 2>&1 </dev/null &
echo $! >$pid
`, dir, launch))
	if err := os.Chmod(path, 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}
