//go:build e2e

package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubeletcfg/kubeletcfg/apply"
)

// TestApplyInPodUnderSystemd runs a rollout Job's apply, as the Job's
// container runs it, on a node whose kubelet is a systemd service (the
// nspawn tree): a mount namespace of its own whose root holds only the
// image's binary and the change, the node's / mounted at /host, nothing of
// the node's programs. apply enters the node's root and restarts the
// kubelet's unit through the node's D-Bus socket; its guard is a transient
// unit of the node's systemd running the copy of kubeletcfg it made in
// /var/lib/kubeletcfg/bin (checked by hash). Killed after the write, with
// its "pod" (mount namespace) gone, the guard puts the old file back.
// (The tree's kubelet is not registered with the control plane: TestRollout
// runs the real Jobs, on by-hand kubelets.)
func TestApplyInPodUnderSystemd(t *testing.T) {
	s := useSystemdNode(t, systemdOptions{})
	const root = "/var/tmp/job/root"
	change := s.Base + "failCgroupV1: false\nmaxPods: 111\n"
	write(t, s.in(root+"/change/change.yaml"), change)
	job := func(env ...string) (int, string) {
		script := `set -e
root=` + root + `
mkdir -p $root/host $root/proc $root/run
cp /usr/local/bin/kubeletcfg $root/kubeletcfg
: >$root/run/outcome.json
mount --rbind / $root/host
mount -t proc proc $root/proc
exec chroot $root /kubeletcfg apply --root=/host --root-is-host --node=` + s.Name + ` --kubelet-version=` + s.Minor + ` \
  --outcome-file=/run/outcome.json --filename=/change/change.yaml --stable-for=2s --health-timeout=30s`
		args := append(append([]string{"env"}, env...), "unshare", "--mount", "--propagation", "private", "sh", "-c", script)
		return s.inside(t, args...)
	}
	invocation := func() string {
		_, out := s.inside(t, "systemctl", "show", "-p", "InvocationID", "--value", "kubelet")
		return strings.TrimSpace(out)
	}

	before := invocation()
	start := time.Now()
	if code, out := job(); code != 0 {
		t.Fatalf("the Job's apply: exit %d\n%s", code, out)
	}
	t.Logf("the Job's apply under systemd: %s", time.Since(start).Round(time.Millisecond))
	r, err := apply.DecodeReport(bytes.TrimSpace([]byte(readFile(t, s.in(root+"/run/outcome.json")))))
	if err != nil || r.Outcome != apply.OutcomeApplied || r.Change != apply.ChangeHash(apply.ChangeFile{Kind: "file", Content: []byte(change)}) {
		t.Errorf("outcome %+v %v", r, err)
	}
	if got := configzMaxPods(t); got != 111 {
		t.Errorf("/configz maxPods = %v, want 111", got)
	}
	if after := invocation(); after == before || after == "" {
		t.Errorf("the kubelet's unit was not restarted (InvocationID %s, then %s)", before, after)
	}
	copies, _ := filepath.Glob(s.in("/var/lib/kubeletcfg/bin/kubeletcfg-*"))
	if len(copies) != 1 || readFile(t, copies[0]) != readFile(t, kit.kubeletcfgFailpoints) {
		t.Fatalf("kubeletcfg's copy on the node: %v", copies)
	}
	hostCopy := "/" + strings.TrimLeft(strings.TrimPrefix(copies[0], s.in("/")), "/")
	if unit := readFile(t, s.in("/etc/systemd/system/kubeletcfg-recover.service")); !strings.Contains(unit, "ExecStart="+hostCopy+" recover") {
		t.Errorf("the boot-time recovery unit does not run the copy %s:\n%s", hostCopy, unit)
	}
	if _, err := os.Stat(s.in("/host")); err == nil {
		t.Error("the node has a /host: the Job's mounts leaked out of its mount namespace")
	}

	// Killed right after the write, its mount namespace gone with it.
	write(t, s.in(root+"/change/change.yaml"), s.Base+"failCgroupV1: false\nmaxPods: 133\n")
	if code, out := job("KUBELETCFG_FAILPOINT=after-write"); code != 137 && code != -1 {
		t.Fatalf("the Job's apply with the failpoint was not killed: exit %d\n%s", code, out)
	}
	if b := readFile(t, s.in(root+"/run/outcome.json")); b != "" {
		t.Errorf("a killed apply wrote an outcome: %s", b)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		b, _ := os.ReadFile(s.in("/var/lib/kubelet/config.yaml"))
		_, journal := os.Stat(s.in("/var/lib/kubeletcfg/journal.json"))
		if strings.Contains(string(b), "maxPods: 111") && journal != nil {
			break
		}
		if time.Now().After(deadline) {
			_, units := s.inside(t, "journalctl", "--no-pager", "-n", "40", "-o", "cat", "-u", "kubeletcfg-guard-*")
			t.Fatalf("the old file was not put back after the Job's apply died:\n%s\nguard:\n%s", b, units)
		}
	}
	waitHealthyAt(t, func() string { return "" })
	if got := configzMaxPods(t); got != 111 {
		t.Errorf("after the guard /configz maxPods = %v, want 111", got)
	}
	if _, out := s.inside(t, "journalctl", "--no-pager", "-o", "cat", "-u", "kubeletcfg-guard-*"); !strings.Contains(out, "kubeletcfg guard of apply") {
		t.Errorf("the guard did not run as a unit of the node's systemd:\n%s", out)
	}
}
