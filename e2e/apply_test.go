//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
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
	n := newNode(t, nodeOptions{})
	dir, base, cfg, confd := n.Dir, n.Base, n.Config, n.ConfigDir
	var stdout string // the last apply's -o json
	applyCmd := func(newFile string) (int, string, time.Duration) {
		start := time.Now()
		code, out, errOut := kubeletcfg(t, nil, n.argv("apply", "-f", newFile, "--skip-preflight", "--verify-configz", "--insecure", "--stable-for", "2s", "--health-timeout", "20s", "-o", "json")...)
		stdout = out
		return code, out + errOut, time.Since(start)
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
	// this host: rolled back.
	bad := filepath.Join(dir, "bad.yaml")
	write(t, bad, base+"cgroupDriver: cgroupfs\nmaxPods: 122\n"+fatalAtStart)
	code, out, took = applyCmd(bad)
	if code != 3 {
		t.Fatalf("fatal change: exit %d, want 3 (rolled back)\n%s", code, out)
	}
	if !strings.Contains(out, fatalAtStartMessage) {
		t.Errorf("the rollback does not report the kubelet's own error:\n%s", out)
	}
	// The cause explained: the real kubelet's refusal tied to the field,
	// its value and the node's file and line that set it (not bad.yaml,
	// the file the change was given as), in why's shape.
	var outcome struct {
		Cause       string `json:"cause"`
		Explanation struct {
			Class, Field, Value, Fix, Words string
			Origin                          struct {
				File string
				Line int
				Text string
			}
			Input struct{ Kind string }
		} `json:"explanation"`
	}
	if err := json.Unmarshal([]byte(stdout), &outcome); err != nil {
		t.Fatalf("apply -o json: %v\n%s", err, stdout)
	}
	x, line := outcome.Explanation, strings.Count(base, "\n")+4 // base, cgroupDriver, maxPods, kubeReserved:, memory
	if x.Class != "reserved-beyond-capacity" || x.Field != "kubeReserved.memory" || x.Value == "" || x.Origin.File != cfg || x.Origin.Line != line ||
		!strings.Contains(x.Words, fatalAtStartMessage) || x.Input.Kind != "log" || !strings.Contains(x.Fix, "lower the reservation of memory") {
		t.Errorf("the rollback's explanation: want reserved-beyond-capacity, kubeReserved.memory=100Ti from %s:%d:\n%s", cfg, line, stdout)
	}
	if want := fmt.Sprintf("kubeReserved.memory=100Ti from %s:%d; fix: ", cfg, line); !strings.Contains(outcome.Cause, want) || x.Value != "100Ti" {
		t.Errorf("the rollback's cause %q does not say %q", outcome.Cause, want)
	}
	t.Logf("cause: %s\nthe kubelet's words: %s", outcome.Cause, x.Words)
	if got, _ := os.ReadFile(cfg); !strings.Contains(string(got), "maxPods: 111") {
		t.Errorf("after the rollback the config file is:\n%s", got)
	}
	n.waitHealthy(t)
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
	cmd := exec.Command(kit.kubeletcfg, n.argv("apply", "-f", killed, "--stable-for", "30s")...)
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
	n.waitHealthy(t)
	if got := configzMaxPods(t); got != 111 {
		t.Errorf("after kill -9 and the guard, /configz maxPods = %v, want 111", got)
	}
	t.Logf("kill -9 during the watch: old file back and the kubelet healthy %s after the kill", time.Since(killedAt).Round(time.Millisecond))

	// kubeletcfg dying at each step (simulated with a failpoint that kills
	// it with SIGKILL) leaves the node on the old file, healthy, no journal.
	for _, step := range []string{"after-backup", "after-write", "after-restart"} {
		write(t, killed, base+"cgroupDriver: cgroupfs\nmaxPods: 155\n")
		code, out, errOut := kubeletcfg(t, []string{"KUBELETCFG_FAILPOINT=" + step}, n.argv("apply", "-f", killed, "--stable-for", "1s")...)
		if code != -1 {
			t.Fatalf("%s: apply was not killed: exit %d\n%s%s", step, code, out, errOut)
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
		n.waitHealthy(t)
		if got := configzMaxPods(t); got != 111 {
			t.Errorf("%s: after the guard /configz maxPods = %v, want 111", step, got)
		}
	}

	// A kubeletcfg that hangs after the write (alive, holding the node): at
	// the journal's deadline the guard stops it and undoes its change.
	write(t, killed, base+"cgroupDriver: cgroupfs\nmaxPods: 166\n")
	hung := exec.Command(kit.kubeletcfgFailpoints, n.argv("apply", "-f", killed, "--stable-for", "1s", "--health-timeout", "3s")...)
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
	n.waitHealthy(t)
	if got := configzMaxPods(t); got != 111 {
		t.Errorf("after the deadline /configz maxPods = %v, want 111", got)
	}

	// backups lists what the applies kept; rollback --to 1 puts the first back.
	out2, err := exec.Command(kit.kubeletcfg, "backups", "--state-dir", n.StateDir).CombinedOutput()
	// Six: the apply killed after its backup, which wrote nothing, left no
	// record (its guard cleaned what it made).
	if err != nil || strings.Count(string(out2), ".bak.") != 6 || !strings.HasPrefix(string(out2), "1\t") {
		t.Fatalf("backups: %v, want six records listed\n%s", err, out2)
	}
	out2, err = exec.Command(kit.kubeletcfg, n.argv("rollback", "--to", "1", "--stable-for", "1s")...).CombinedOutput()
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
	out2, err = exec.Command(kit.kubeletcfg, n.argv("apply", "-f", static, "--drained", "--stable-for", "1s")...).CombinedOutput()
	if err != nil {
		t.Fatalf("apply of the static CPU manager policy with --drained: %v\n%s", err, out2)
	}
	if b, _ := filepath.Glob(state + ".bak.*"); len(b) != 1 || !strings.Contains(string(out2), "removed "+state) {
		t.Errorf("the old cpu_manager_state was not backed up and removed (backups %v)\n%s", b, out2)
	}

	// --dropin: a new drop-in that the kubelet takes; then one that kills it,
	// undone by removing it again.
	applyDropin := func(specs ...string) (int, string) {
		dropinArgs := []string{"--stable-for", "1s", "--skip-preflight"}
		for _, spec := range specs {
			dropinArgs = append(dropinArgs, "--dropin", spec)
		}
		code, out, errOut := kubeletcfg(t, nil, n.argv("apply", dropinArgs...)...)
		return code, out + errOut
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
	write(t, badDropin, "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"+fatalAtStart)
	if code, out := applyDropin("60-bad.conf=" + badDropin); code != 3 {
		t.Fatalf("a fatal new drop-in: exit %d, want 3\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(confd, "60-bad.conf")); err == nil {
		t.Error("the fatal drop-in was left in place")
	}
	n.waitHealthy(t)
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
	n := newNode(t, nodeOptions{noStart: true})
	env := filepath.Join(n.Dir, "flags.env")
	write(t, env, fmt.Sprintf(`# flags as a kubeadm-era node kept them
KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=unix://%s --fail-cgroupv1=false --root-dir=%s --cert-dir=%s"
KUBELET_EXTRA_ARGS="--max-pods=120 --cgroup-driver=cgroupfs --v=1"
`, n.Runtime.sock, n.RootDir, n.CertDir))
	os.Remove(n.Config)
	n.setLaunch(t, ". "+env+"\nsetsid "+n.Kubelet+" $KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS")
	n.start(t)
	before := fetchConfigz(t)

	cfg := n.Config
	code, out, errOut := kubeletcfg(t, nil, "apply", "--node", n.Name, "--from-migrate", "--from", env, "--config-path", cfg,
		"--kubelet-version", n.Minor, "--restart-command", n.Restart, "--state-dir", n.StateDir, "--pid-file", n.PidFile,
		"--stable-for", "1s", "--verify-configz", "--insecure")
	if code != 0 {
		t.Fatalf("apply --from-migrate: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out+errOut, "serves the intended configuration") {
		t.Errorf("the migrated kubelet's /configz was not verified:\n%s%s", out, errOut)
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
