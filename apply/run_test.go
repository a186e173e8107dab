package apply

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/kubelet/config/v1beta1"

	hostnode "github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

const baseConfig = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncontainerRuntimeEndpoint: unix:///run/containerd/containerd.sock\n"

// node is a kubelet config file on disk, a fake kubelet running on it, and
// apply's options for it.
type node struct {
	dir, config, state string
	clock              *fakeClock
	kubelet            *fakeKubelet
	opts               Options
}

func newNode(t *testing.T, behave map[string]life) *node {
	t.Helper()
	dir := t.TempDir()
	n := &node{dir: dir, config: filepath.Join(dir, "config.yaml"), state: filepath.Join(dir, "state"), clock: newFakeClock()}
	if err := os.WriteFile(n.config, []byte(baseConfig+"maxPods: 100\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	n.kubelet = &fakeKubelet{clock: n.clock, config: n.config, behave: byContent(behave), pid: 1, cur: life{}}
	n.opts = Options{
		Node: "n1",
		Setup: hostnode.Given(schema.Newest(),
			"--config="+n.config, "--hostname-override=n1", "--root-dir="+filepath.Join(dir, "root")),
		Timeout: 30 * time.Second, StableFor: DefaultStableFor,
		StateDir: n.state, Restarter: n.kubelet, Clock: n.clock, probe: n.kubelet.probe,
		// preflight asks this made-up host, never the machine the test runs
		// on (whose ports a kubelet of another test may hold).
		preflightHost: host{},
	}
	return n
}

func (n *node) apply(t *testing.T, content string) (*Outcome, error) {
	t.Helper()
	o := n.opts
	o.NewFile = []byte(baseConfig + content)
	return Run(context.Background(), o)
}

func (n *node) configIs(t *testing.T, want string) {
	t.Helper()
	if b, _ := os.ReadFile(n.config); string(b) != baseConfig+want {
		t.Errorf("config file holds %q, want %q", b, baseConfig+want)
	}
}

func (n *node) noJournal(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(n.state, journalName)); err == nil {
		t.Error("the journal was left behind")
	}
	entries, _ := os.ReadDir(n.dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".kubeletcfg-") {
			t.Errorf("%s left behind", e.Name())
		}
	}
}

func TestRunGoodChange(t *testing.T) {
	n := newNode(t, nil)
	out, err := n.apply(t, "maxPods: 111\n")
	if err != nil || !out.Applied || out.RolledBack {
		t.Fatalf("good change: %+v, %v", out, err)
	}
	n.configIs(t, "maxPods: 111\n")
	n.noJournal(t)
	if out.Kubelet == nil || out.Kubelet.PID != 1002 || out.HealthyAfter != 400*time.Millisecond {
		t.Errorf("confirmed kubelet %+v healthy after %s, want pid 1002 after 400ms", out.Kubelet, out.HealthyAfter)
	}
	if b, err := os.ReadFile(out.Backup); err != nil || !strings.Contains(string(b), "maxPods: 100") {
		t.Errorf("backup %s: %q %v", out.Backup, b, err)
	}
	if st, _ := os.Stat(n.config); st.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640 kept", st.Mode().Perm())
	}
	if st, err := os.Stat(n.state); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("state directory: %v %v, want 0700", st, err)
	}
}

// A kubelet that exits 5 s after its healthz first answered is rolled back
// with the default window.
func TestRunKubeletDyingAfterHealthzIsRolledBack(t *testing.T) {
	n := newNode(t, map[string]life{"maxPods: 122": {healthyAfter: 400 * time.Millisecond, diesAfter: 5400 * time.Millisecond}})
	out, err := n.apply(t, "maxPods: 122\n")
	if !errors.Is(err, ErrRolledBack) || !out.RolledBack {
		t.Fatalf("a kubelet dying 5 s after healthz: %+v, %v; want rolled back", out, err)
	}
	if !strings.Contains(out.Cause, "exited") {
		t.Errorf("cause %q", out.Cause)
	}
	n.configIs(t, "maxPods: 100\n")
	n.noJournal(t)
	if !n.kubelet.running() || n.kubelet.restarts != 2 {
		t.Errorf("after the rollback: running %v after %d restarts, want running after 2", n.kubelet.running(), n.kubelet.restarts)
	}
}

// --stable-for has a budget of its own: a kubelet healthy just before
// --health-timeout and stable after it is confirmed.
func TestRunStableForOutsideHealthTimeout(t *testing.T) {
	n := newNode(t, map[string]life{"maxPods: 133": {healthyAfter: 1900 * time.Millisecond}})
	n.opts.Timeout, n.opts.StableFor = 2*time.Second, 10*time.Second
	if out, err := n.apply(t, "maxPods: 133\n"); err != nil || out.RolledBack {
		t.Fatalf("healthy within the timeout, stable after it: %+v, %v", out, err)
	}
}

// The old kubelet's healthz never confirms a change: a restart that leaves
// the same process is no restart.
func TestRunOldProcessDoesNotConfirm(t *testing.T) {
	n := newNode(t, nil)
	n.kubelet.sticky = true
	out, err := n.apply(t, "maxPods: 144\n")
	if err == nil || !strings.Contains(out.Cause, "no new kubelet process") {
		t.Fatalf("same process after the restart: %+v, %v", out, err)
	}
	n.configIs(t, "maxPods: 100\n")
}

// Not knowing the kubelet's state (a D-Bus error) is not "alive".
func TestRunStateErrorIsNotAlive(t *testing.T) {
	n := newNode(t, nil)
	n.kubelet.stateErr = errors.New("dbus: connection refused")
	out, err := n.apply(t, "maxPods: 145\n")
	if err == nil || !strings.Contains(out.Cause, "connection refused") {
		t.Fatalf("state unknown: %+v, %v", out, err)
	}
	n.configIs(t, "maxPods: 100\n")
}

// healthzPort 0: the process alone is judged, over the whole window.
func TestRunHealthzOffJudgesTheProcess(t *testing.T) {
	n := newNode(t, map[string]life{"maxPods: 155": {diesAfter: 100 * time.Millisecond}})
	out, err := n.apply(t, "healthzPort: 0\nmaxPods: 155\n")
	if !errors.Is(err, ErrRolledBack) {
		t.Fatalf("healthzPort 0 and a kubelet dead after 100ms: %+v, %v", out, err)
	}
	n.configIs(t, "maxPods: 100\n")
}

func TestRunChecks(t *testing.T) {
	n := newNode(t, nil)
	// Never ready on the new configuration, ready on the old one.
	late := &fakeCheck{clock: n.clock, never: func() bool {
		b, _ := os.ReadFile(n.config)
		return strings.Contains(string(b), "maxPods: 166")
	}}
	n.opts.Checks = []Check{late}
	n.opts.Timeout = 5 * time.Second
	out, err := n.apply(t, "maxPods: 166\n")
	if !errors.Is(err, ErrRolledBack) || !strings.Contains(out.Cause, "node Ready not ok") {
		t.Fatalf("a check that never passes: %+v, %v", out, err)
	}
	n.configIs(t, "maxPods: 100\n")

	ok := &fakeCheck{clock: n.clock, at: n.clock.Now().Add(3 * time.Second)}
	n.opts.Checks = []Check{ok}
	out, err = n.apply(t, "maxPods: 167\n")
	if err != nil || len(out.Checks) != 1 || !out.Checks[0].Answer.OK || out.Checks[0].Answer.Times["restartedAt"].IsZero() {
		t.Fatalf("a check that passes: %+v, %v", out, err)
	}
	n.configIs(t, "maxPods: 167\n")
}

func TestRunHooks(t *testing.T) {
	n := newNode(t, nil)
	var calls []string
	n.opts.Hooks = []Hook{{Before: "backup", Phase: funcPhase{name: "drain",
		run: func(_ context.Context, t *Tx) error {
			p := t.Plan()
			calls = append(calls, "before "+filepath.Base(p.ConfigFile))
			if len(p.Changes) == 1 && strings.Contains(string(p.Writes[0].Content), "maxPods: 177") {
				return errors.New("drain: a PodDisruptionBudget forbids the eviction")
			}
			return nil
		},
		end: func(_ context.Context, t *Tx, healthy bool) error {
			out := t.Outcome()
			calls = append(calls, "after applied="+boolString(out.Applied)+" rolledBack="+boolString(out.RolledBack)+" healthy="+boolString(healthy))
			return nil
		},
	}}}
	_, err := n.apply(t, "maxPods: 177\n")
	if err == nil || !strings.Contains(err.Error(), "nothing was written") {
		t.Fatalf("a failing BeforeCommit: %v", err)
	}
	n.configIs(t, "maxPods: 100\n")
	if n.kubelet.restarts != 0 {
		t.Error("the kubelet was restarted")
	}
	n.noJournal(t)

	n.kubelet.behave = byContent(map[string]life{"maxPods: 188": {healthyAfter: -1}})
	if _, err := n.apply(t, "maxPods: 188\n"); !errors.Is(err, ErrRolledBack) {
		t.Fatal(err)
	}
	if _, err := n.apply(t, "maxPods: 189\n"); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"before config.yaml", "after applied=false rolledBack=false healthy=true",
		"before config.yaml", "after applied=true rolledBack=true healthy=true",
		"before config.yaml", "after applied=true rolledBack=false healthy=true",
	}
	if strings.Join(calls, "\n") != strings.Join(want, "\n") {
		t.Errorf("hooks ran:\n%s\nwant:\n%s", strings.Join(calls, "\n"), strings.Join(want, "\n"))
	}
}

// funcPhase is a hook phase made of functions.
type funcPhase struct {
	name string
	run  func(context.Context, *Tx) error
	end  func(context.Context, *Tx, bool) error
}

func (f funcPhase) Name() string                         { return f.name }
func (f funcPhase) Run(ctx context.Context, t *Tx) error { return f.run(ctx, t) }
func (f funcPhase) End(ctx context.Context, t *Tx, ok bool) error {
	if f.end == nil {
		return nil
	}
	return f.end(ctx, t, ok)
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// A kubelet that is not healthy on the old configuration either.
func TestRunRollbackUnhealthyToo(t *testing.T) {
	n := newNode(t, map[string]life{"maxPods": {healthyAfter: -1}})
	n.opts.Timeout = 3 * time.Second
	_, err := n.apply(t, "maxPods: 199\n")
	if err == nil || errors.Is(err, ErrRolledBack) || !strings.Contains(err.Error(), "not healthy on it either") {
		t.Fatalf("err = %v", err)
	}
	n.configIs(t, "maxPods: 100\n")
}

// An apply that died leaves its journal: the next apply refuses to run
// over it and writes nothing; recover puts the old file back.
func TestRunRefusesPendingJournalAndRecoverRestores(t *testing.T) {
	n := newNode(t, nil)
	jr := n.interrupted(t, "maxPods: 211\n")
	_, err := n.apply(t, "maxPods: 212\n")
	if !errors.Is(err, ErrPending) || !strings.Contains(err.Error(), "kubeletcfg recover") {
		t.Fatalf("apply over a pending journal: %v", err)
	}
	n.configIs(t, "maxPods: 211\n")
	restarts := n.kubelet.restarts
	got, err := Recover(context.Background(), RecoverOptions{StateDir: n.state, Restarter: n.kubelet, Clock: n.clock})
	if err != nil || got == nil || got.ID != jr.ID {
		t.Fatalf("recover: %+v, %v", got, err)
	}
	n.configIs(t, "maxPods: 100\n")
	n.noJournal(t)
	if n.kubelet.restarts != restarts+1 {
		t.Error("recover did not restart the kubelet")
	}
	if got, err := Recover(context.Background(), RecoverOptions{StateDir: n.state, Restarter: n.kubelet, Clock: n.clock}); got != nil || err != nil {
		t.Errorf("a second recover: %+v, %v; want nothing to do", got, err)
	}
}

// interrupted leaves the node as an apply killed after its write does.
func (n *node) interrupted(t *testing.T, content string) *Journal {
	t.Helper()
	o := n.opts
	if err := o.defaults(); err != nil {
		t.Fatal(err)
	}
	o.NewFile = []byte(baseConfig + content)
	steps, err := o.steps()
	if err != nil {
		t.Fatal(err)
	}
	tx := &Tx{o: o}
	for _, s := range steps {
		if s.Name() == "restart" {
			break
		}
		if err := s.Run(context.Background(), tx); err != nil {
			t.Fatal(err)
		}
	}
	tx.lock.Release()
	return tx.journal
}

// A file fixed by hand after an interrupted apply is not overwritten by
// the recovery: it stops and says which file.
func TestRecoverLeavesHandFixAlone(t *testing.T) {
	n := newNode(t, nil)
	n.interrupted(t, "maxPods: 221\n")
	if err := os.WriteFile(n.config, []byte(baseConfig+"maxPods: 222\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	restarts := n.kubelet.restarts
	_, err := Recover(context.Background(), RecoverOptions{StateDir: n.state, Restarter: n.kubelet, Clock: n.clock})
	if !errors.Is(err, ErrChangedSince) || !strings.Contains(err.Error(), n.config) {
		t.Fatalf("recover over a hand fix: %v", err)
	}
	n.configIs(t, "maxPods: 222\n")
	if n.kubelet.restarts != restarts {
		t.Error("the kubelet was restarted")
	}
}

// The undo goes last file first, on past a file it cannot restore, and
// reports it; the others are restored.
func TestUndoReverseOrderContinuesPastErrors(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for _, name := range []string{"a", "b", "c"} {
		p := filepath.Join(dir, name)
		files = append(files, p)
		if err := os.WriteFile(p, []byte("old "+name), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	jr := &Journal{ID: "x"}
	for _, p := range files {
		fc, err := prepare("", p, "x", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		fc.NewHash = hashBytes([]byte("new"))
		jr.Files = append(jr.Files, fc)
		if _, err := WriteFile(p, []byte("new")); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(files[1], []byte("hand fix"), 0o600)
	err := jr.undo()
	if !errors.Is(err, ErrChangedSince) || !strings.Contains(err.Error(), files[1]) {
		t.Fatalf("undo: %v", err)
	}
	for i, want := range []string{"old a", "hand fix", "old c"} {
		if b, _ := os.ReadFile(files[i]); string(b) != want {
			t.Errorf("%s holds %q, want %q", files[i], b, want)
		}
	}
}

// The old file is staged as a hard link: restoring it is a rename, which
// needs no free space.
func TestStageIsAHardLink(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "config.yaml")
	os.WriteFile(p, []byte("old"), 0o600)
	fc, err := prepare("", p, "id1", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	a, _ := os.Stat(p)
	b, _ := os.Stat(fc.Staged)
	if !os.SameFile(a, b) {
		t.Error("the staged old file is a copy, not a link")
	}
}

// A symlinked, unowned or open state directory, lock or journal is refused
// and never followed.
func TestStateRefusesLinksAndStrangers(t *testing.T) {
	n := newNode(t, nil)
	if _, err := stateDir(n.state); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(n.dir, "victim")
	os.WriteFile(victim, []byte("keep"), 0o600)

	if err := os.Symlink(victim, filepath.Join(n.state, lockName)); err != nil {
		t.Fatal(err)
	}
	if _, err := n.apply(t, "maxPods: 231\n"); !errors.Is(err, ErrUntrusted) {
		t.Errorf("symlinked lock: %v, want ErrUntrusted", err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("the lock's target was changed: %q", b)
	}
	os.Remove(filepath.Join(n.state, lockName))

	if err := os.Symlink(victim, filepath.Join(n.state, journalName)); err != nil {
		t.Fatal(err)
	}
	if _, err := n.apply(t, "maxPods: 232\n"); !errors.Is(err, ErrUntrusted) {
		t.Errorf("symlinked journal: %v", err)
	}
	os.Remove(filepath.Join(n.state, journalName))
	n.configIs(t, "maxPods: 100\n")

	os.Chmod(n.state, 0o755)
	if _, err := n.apply(t, "maxPods: 233\n"); !errors.Is(err, ErrUntrusted) {
		t.Errorf("a state directory others can read: %v", err)
	}
	os.Chmod(n.state, 0o700)

	linked := filepath.Join(n.dir, "linked")
	os.Symlink(n.state, linked)
	n.opts.StateDir = filepath.Join(linked, "sub")
	if _, err := n.apply(t, "maxPods: 234\n"); !errors.Is(err, ErrUntrusted) {
		t.Errorf("a state directory below a link: %v", err)
	}
	n.configIs(t, "maxPods: 100\n")
}

// A forged journal names a command to run and files outside the node's
// root: it is refused, nothing runs, nothing is written.
func TestForgedJournalRefused(t *testing.T) {
	n := newNode(t, nil)
	dir, _ := stateDir(n.state)
	marker := filepath.Join(n.dir, "pwned")
	victim := filepath.Join(n.dir, "victim")
	os.WriteFile(victim, []byte("keep"), 0o600)
	for name, forged := range map[string]string{
		"command":      `{"id":"1","configFile":"x","files":[{"path":"` + n.config + `","newSHA256":"a"}],"restart":"touch ` + marker + `"}`,
		"outside root": `{"id":"1","root":"` + n.dir + `/img","configFile":"x","files":[{"path":"` + victim + `","created":true,"newSHA256":"a"}]}`,
		"relative":     `{"id":"1","configFile":"x","files":[{"path":"../../etc/shadow","created":true,"newSHA256":"a"}]}`,
		"staged away":  `{"id":"1","configFile":"x","files":[{"path":"` + n.config + `","staged":"/etc/passwd","newSHA256":"a"}]}`,
	} {
		os.WriteFile(filepath.Join(dir, journalName), []byte(forged), 0o600)
		_, err := Recover(context.Background(), RecoverOptions{StateDir: n.state, Restarter: n.kubelet, Clock: n.clock})
		if err == nil || (name != "command" && !errors.Is(err, ErrUntrusted)) {
			t.Errorf("%s: recover: %v, want refused", name, err)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("a command from the journal ran")
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Error("a file the journal named was changed")
	}
	n.configIs(t, "maxPods: 100\n")
	if n.kubelet.restarts != 0 {
		t.Error("the kubelet was restarted")
	}
}

// A symlinked config file stops the apply before anything is written, with
// no journal left to block the next one.
func TestRunSymlinkedTargetLeavesNoJournal(t *testing.T) {
	n := newNode(t, nil)
	real := filepath.Join(n.dir, "real.yaml")
	os.Rename(n.config, real)
	os.Symlink(real, n.config)
	if _, err := n.apply(t, "maxPods: 241\n"); !errors.Is(err, ErrNotRegular) {
		t.Fatalf("symlinked config: %v", err)
	}
	n.noJournal(t)
	if b, _ := os.ReadFile(real); !strings.Contains(string(b), "maxPods: 100") {
		t.Error("the file behind the link was changed")
	}
}

// The guard stops the journal's PID past the deadline only while that PID
// is still the apply; it leaves when the apply confirmed.
func TestGuardKillsOnlyTheApply(t *testing.T) {
	n := newNode(t, nil)
	jr := n.interrupted(t, "maxPods: 251\n")
	dir, _ := stateDir(n.state)
	l, err := Acquire(dir, "the apply", n.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	stranger := startSleep(t)
	jr.PID, jr.PIDStart, jr.Deadline, jr.BootDeadline = stranger.Pid, 1, n.clock.Now(), 1 // PID reused by another process
	if err := writeJournal(dir, jr); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- Guard(context.Background(), GuardOptions{StateDir: n.state, ID: jr.ID, Restarter: n.kubelet, Clock: n.clock})
	}()
	time.Sleep(200 * time.Millisecond)
	if !alive(stranger.Pid) {
		t.Fatal("the guard killed a process that is not the apply")
	}
	// The real apply, past its deadline, is stopped.
	jr.PIDStart = procStart(stranger.Pid)
	if err := writeJournal(dir, jr); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(5 * time.Second); alive(stranger.Pid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the guard did not stop the apply past its deadline")
		}
	}
	l.Release() // the kernel releases the dead apply's lock
	if err := <-done; err != nil {
		t.Fatalf("guard: %v", err)
	}
	n.configIs(t, "maxPods: 100\n")
	n.noJournal(t)
}

func startSleep(t *testing.T) *os.Process {
	t.Helper()
	p, err := os.StartProcess("/bin/sleep", []string{"sleep", "60"}, &os.ProcAttr{})
	if err != nil {
		t.Fatal(err)
	}
	go p.Wait()
	t.Cleanup(func() { p.Kill() })
	return p
}

// No restart starts while the restart command of an earlier apply runs.
func TestWaitRestartRefusesOverlap(t *testing.T) {
	p := startSleep(t)
	ref := &procRef{PID: p.Pid, Start: procStart(p.Pid)}
	if err := waitRestart(context.Background(), newFakeClock(), ref, 5*time.Second); err == nil || !strings.Contains(err.Error(), "still runs") {
		t.Fatalf("waitRestart over a running restart: %v", err)
	}
	p.Signal(syscall.SIGKILL)
	time.Sleep(100 * time.Millisecond)
	if err := waitRestart(context.Background(), newFakeClock(), ref, 5*time.Second); err != nil {
		t.Fatal(err)
	}
}

func TestHealthzURL(t *testing.T) {
	port := int32(10248)
	for addr, want := range map[string]string{
		"":          "http://127.0.0.1:10248/healthz",
		"::":        "http://[::1]:10248/healthz",
		"fd00::5":   "http://[fd00::5]:10248/healthz",
		"10.0.0.1":  "http://10.0.0.1:10248/healthz",
		"127.0.0.1": "http://127.0.0.1:10248/healthz",
	} {
		cfg := &v1beta1.KubeletConfiguration{HealthzPort: &port, HealthzBindAddress: addr}
		if got := healthzURL(cfg); got != want {
			t.Errorf("%q: %s, want %s", addr, got, want)
		}
	}
}

// Under --root every write stays in the tree: an absolute link in the image
// resolves inside it, a path climbing out of it is brought back in.
func TestRunConfinedToRoot(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "config.yaml"), []byte(baseConfig+"maxPods: 100\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	img := t.TempDir()
	for _, d := range []string{"etc", "var/lib", outside} {
		os.MkdirAll(filepath.Join(img, d), 0o755)
	}
	os.WriteFile(filepath.Join(img, "etc/hostname"), []byte("n1\n"), 0o644)
	os.WriteFile(filepath.Join(img, outside, "config.yaml"), []byte(baseConfig+"maxPods: 100\n"), 0o600)
	// On the host this link leads to outside; in the image, to the same
	// path inside the image.
	if err := os.Symlink(outside, filepath.Join(img, "var/lib/kubelet")); err != nil {
		t.Fatal(err)
	}
	clock := newFakeClock()
	k := &fakeKubelet{clock: clock, behave: byContent(nil), pid: 1}
	setup := hostnode.Given(schema.Newest(), "--config=/var/lib/kubelet/config.yaml")
	setup.Root = img
	o := Options{Node: "n1", Setup: setup,
		Timeout: 30 * time.Second, StableFor: time.Second, Restarter: k, Clock: clock, probe: k.probe,
		NewFile: []byte(baseConfig + "maxPods: 111\n")}
	_, err := Run(context.Background(), o)
	if b, _ := os.ReadFile(filepath.Join(outside, "config.yaml")); !strings.Contains(string(b), "maxPods: 100") {
		t.Fatalf("a file outside the root was changed: %q (apply: %v)", b, err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Errorf("files were made outside the root: %v", entries)
	}
	if _, serr := os.Stat(filepath.Join(img, DefaultStateDir, journalName)); serr == nil {
		t.Error("the journal was left behind")
	}
	if err != nil {
		t.Fatalf("apply under --root: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(img, outside, "config.yaml")); !strings.Contains(string(b), "maxPods: 111") {
		t.Errorf("the image's config file holds %q", b)
	}
	if got := onDisk(o.Setup.Root, "/../../etc/x"); got != filepath.Join(img, "etc/x") {
		t.Errorf("--config=/../../etc/x is %s on disk, want inside the root", got)
	}

	// Without --restart-command, --root restarts nothing of this host.
	o.Restarter = nil
	if _, err := Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), "--restart-command") {
		t.Errorf("--root without a restart command: %v", err)
	}
}

// With credentials the kubelet API's /healthz (sync loop included) judges
// the kubelet; when it refuses them, the healthz port does.
func TestHealthProbe(t *testing.T) {
	status := http.StatusOK
	api := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			t.Errorf("asked %s", r.URL.Path)
		}
		w.WriteHeader(status)
	}))
	defer api.Close()
	ping := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer ping.Close()
	apiPort, _ := strconv.Atoi(api.URL[strings.LastIndexByte(api.URL, ':')+1:])
	pingPort, _ := strconv.Atoi(ping.URL[strings.LastIndexByte(ping.URL, ':')+1:])
	hp := int32(pingPort)
	cfg := &v1beta1.KubeletConfiguration{Port: int32(apiPort), HealthzPort: &hp}
	var said []string
	h := &healthProbe{api: api.Client(), progress: func(f string, a ...any) { said = append(said, fmt.Sprintf(f, a...)) }}
	ctx := context.Background()
	if ok, where := h.probe(ctx, cfg); !ok || !strings.HasPrefix(where, "https://") {
		t.Errorf("API healthz 200: %v %s", ok, where)
	}
	status = http.StatusInternalServerError // syncloop failing
	if ok, _ := h.probe(ctx, cfg); ok {
		t.Error("a failing sync loop was healthy")
	}
	status = http.StatusUnauthorized
	if ok, where := h.probe(ctx, cfg); !ok || !strings.HasPrefix(where, "http://") || len(said) != 1 {
		t.Errorf("refused credentials: %v %s %v; want the healthz port, said once", ok, where, said)
	}
}

// Every apply keeps a numbered record of the old files; pruning removes
// old records and the dated copies they made, never a copy made by hand.
func TestRecordsAndPrune(t *testing.T) {
	n := newNode(t, nil)
	handMade := n.config + ".bak.2026-11-01"
	os.WriteFile(handMade, []byte("by hand"), 0o600)
	n.opts.KeepBackups = 2
	var outs []*Outcome
	for _, pods := range []string{"101", "102", "103"} {
		out, err := n.apply(t, "maxPods: "+pods+"\n")
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, out)
		n.clock.Sleep(context.Background(), 24*time.Hour) // a dated copy a day
	}
	recs, err := Records(n.state)
	if err != nil || len(recs) != 2 || recs[0].N != 2 || recs[1].N != 3 {
		t.Fatalf("records %+v, %v; want 2 and 3", recs, err)
	}
	if recs[1].Outcome != "applied" || recs[1].ApplyID != outs[2].ID || recs[1].Who == "" ||
		strings.Join(recs[1].Changes, ",") != "maxPods: 102 -> 103" {
		t.Errorf("record 3: %+v", recs[1])
	}
	if b, err := RecordedContent(n.state, 2, n.config); err != nil || string(b) != baseConfig+"maxPods: 101\n" {
		t.Errorf("record 2 holds %q, %v", b, err)
	}
	if b, err := RecordedContent(n.state, 0, n.config); err != nil || string(b) != baseConfig+"maxPods: 102\n" {
		t.Errorf("the newest record holds %q, %v", b, err)
	}
	if _, err := os.Stat(handMade); err != nil {
		t.Error("pruning removed a copy made by hand")
	}
	if _, err := os.Stat(outs[0].Backup); err == nil {
		t.Errorf("the dated copy of the pruned record 1 (%s) stays", outs[0].Backup)
	}
	if _, err := os.Stat(outs[1].Backup); err != nil {
		t.Errorf("the dated copy of record 2: %v", err)
	}
}

// A drain-class change removes the stale state file (staged once, however
// many changes name it) and a rollback puts it back.
func TestRunStateFileRemovedAndRestored(t *testing.T) {
	n := newNode(t, map[string]life{"cpuManagerPolicy: static": {healthyAfter: -1}})
	state := filepath.Join(n.dir, "root", "cpu_manager_state")
	os.MkdirAll(filepath.Dir(state), 0o700)
	os.WriteFile(state, []byte(`{"policyName":"none"}`), 0o600)
	n.opts.Drained, n.opts.Timeout = true, 3*time.Second
	out, err := n.apply(t, "maxPods: 100\ncpuManagerPolicy: static\nreservedSystemCPUs: \"0\"\n")
	if !errors.Is(err, ErrRolledBack) {
		t.Fatalf("%+v, %v", out, err)
	}
	if b, _ := os.ReadFile(state); string(b) != `{"policyName":"none"}` {
		t.Errorf("after the rollback cpu_manager_state holds %q", b)
	}
	n.noJournal(t)
	n.kubelet.behave = byContent(nil)
	if _, err := n.apply(t, "maxPods: 100\ncpuManagerPolicy: static\nreservedSystemCPUs: \"0\"\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(state); err == nil {
		t.Error("the stale cpu_manager_state stays")
	}
}

// Recovery after an apply killed while its restart command ran: the
// recovery's restart waits until that command has ended.
func TestRecoverWaitsForTheInterruptedRestart(t *testing.T) {
	n := newNode(t, nil)
	jr := n.interrupted(t, "maxPods: 271\n")
	dir, _ := stateDir(n.state)
	restart := exec.Command("sleep", "1")
	restart.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := restart.Start(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan time.Time, 1)
	go func() { restart.Wait(); ended <- time.Now() }()
	jr.Restart = &procRef{PID: restart.Process.Pid, Start: procStart(restart.Process.Pid)}
	if err := writeJournal(dir, jr); err != nil {
		t.Fatal(err)
	}
	var restartedAt time.Time
	r := &recordingRestarter{Restarter: n.kubelet, at: &restartedAt}
	if _, err := Recover(context.Background(), RecoverOptions{StateDir: n.state, Restarter: r}); err != nil {
		t.Fatal(err)
	}
	if end := <-ended; restartedAt.Before(end) {
		t.Errorf("the recovery restarted the kubelet at %s, before the interrupted restart ended at %s", restartedAt.Format("15:04:05.000"), end.Format("15:04:05.000"))
	}
	n.configIs(t, "maxPods: 100\n")
}

type recordingRestarter struct {
	Restarter
	at *time.Time
}

func (r *recordingRestarter) Restart(ctx context.Context) error {
	*r.at = time.Now()
	return r.Restarter.Restart(ctx)
}

// The restart command's process group is in the journal while it runs.
func TestRunRecordsTheRestartCommand(t *testing.T) {
	n := newNode(t, nil)
	pidFile := filepath.Join(n.dir, "kubelet.pid")
	during := filepath.Join(n.dir, "journal-during-restart")
	o := n.opts
	o.Restarter, o.Clock, o.PIDFile = nil, nil, pidFile
	o.Restart = fmt.Sprintf("sleep 0.3; cp %s %s; setsid sleep 30 </dev/null >/dev/null 2>&1 & echo $! >%s", filepath.Join(n.state, journalName), during, pidFile)
	o.StableFor, o.Timeout = 300*time.Millisecond, 5*time.Second
	o.probe = func(context.Context, *v1beta1.KubeletConfiguration) (bool, string) { return true, "healthz" }
	o.NewFile = []byte(baseConfig + "maxPods: 281\n")
	t.Cleanup(func() {
		if b, err := os.ReadFile(pidFile); err == nil {
			if pid, _ := strconv.Atoi(strings.TrimSpace(string(b))); pid > 0 {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	if _, err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(during)
	if err != nil {
		t.Fatal(err)
	}
	var j Journal
	if err := json.Unmarshal(b, &j); err != nil || j.Restart == nil || j.Restart.PID <= 0 || j.Restart.Start == 0 {
		t.Errorf("the journal during the restart: %s (%v)", b, err)
	}
}

// A new kubelet already gone at the first look fails the watch at once,
// with its exit, not at the end of the timeout.
func TestRunNewKubeletGoneAtOnce(t *testing.T) {
	n := newNode(t, map[string]life{"maxPods: 291": {healthyAfter: -1, diesAfter: time.Nanosecond}})
	start := n.clock.Now()
	out, err := n.apply(t, "maxPods: 291\n")
	if !errors.Is(err, ErrRolledBack) || !strings.Contains(out.Cause, "exited") {
		t.Fatalf("%+v, %v", out, err)
	}
	if took := n.clock.Now().Sub(start); took > 5*time.Second {
		t.Errorf("the failure took %s of the watch", took)
	}
}

// The guard of an apply that has ended (no journal of its ID) leaves
// without taking the node's lock: an apply started right after the last
// one returned is not refused because that apply's guard holds the lock.
func TestGuardOfAnEndedApplyLeavesTheLock(t *testing.T) {
	n := newNode(t, nil)
	dir, _ := stateDir(n.state)
	if err := Guard(context.Background(), GuardOptions{StateDir: n.state, ID: "ended", Restarter: n.kubelet, Clock: n.clock}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, lockName)); strings.Contains(string(b), "guard") {
		t.Errorf("the guard of an ended apply took the node's lock: %s", b)
	}
}

// One guard at a time: a second guard waits for the first.
func TestOneGuardAtATime(t *testing.T) {
	n := newNode(t, nil)
	dir, _ := stateDir(n.state)
	first, err := waitLock(context.Background(), n.clock, filepath.Join(dir, "guard.lock"))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- Guard(context.Background(), GuardOptions{StateDir: n.state, ID: "x", Restarter: n.kubelet, Clock: realClock{}})
	}()
	select {
	case err := <-done:
		t.Fatalf("a second guard ran beside the first: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	first.Release()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the second guard did not run once the first ended")
	}
}

// A change the kubelet refuses at start (kubelet 1.37's words for
// kubeReserved memory beyond the machine) is rolled back, and the outcome
// explains it in why's shape: the class, the field, its value and the file
// and line of the node that set it (not the file the change was given
// as), the fix and the kubelet's words; cause says the same in one line.
func TestRollbackExplainsTheKubeletsRefusal(t *testing.T) {
	n := newNode(t, map[string]life{"kubeReserved": {healthyAfter: -1, diesAfter: time.Nanosecond,
		words: []string{strings.ReplaceAll(reservedWords, "PID", "1002")}}})
	o := n.opts
	o.NewFile = []byte(baseConfig + "maxPods: 120\nkubeReserved:\n  memory: 100Ti\n")
	o.NewFileName = filepath.Join(t.TempDir(), "given.yaml")
	o.SkipPreflight = true
	out, err := Run(context.Background(), o)
	if !errors.Is(err, ErrRolledBack) || out == nil || !out.RolledBack {
		t.Fatalf("want a rollback: %v", err)
	}
	x := out.Explanation
	if x == nil {
		t.Fatalf("no explanation; cause %q", out.Cause)
	}
	if x.Class != "reserved-beyond-capacity" || x.Field != "kubeReserved.memory" || x.Value != "100Ti" || x.Origin == nil || x.Origin.Text != n.config+":6" ||
		!strings.Contains(x.Fix, "lower the reservation of memory") || !strings.Contains(x.Words, "invalid Node Allocatable configuration") {
		t.Errorf("explanation: class %s, field %s=%s, origin %+v, fix %q, words %q", x.Class, x.Field, x.Value, x.Origin, x.Fix, x.Words)
	}
	if !strings.Contains(out.Cause, "exited") || !strings.Contains(out.Cause, "kubeReserved.memory=100Ti from "+n.config+":6; fix: ") {
		t.Errorf("cause %q", out.Cause)
	}
	raw, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	var shape struct {
		Cause       string         `json:"cause"`
		Explanation map[string]any `json:"explanation"`
	}
	if err := json.Unmarshal(raw, &shape); err != nil {
		t.Fatal(err)
	}
	origin, _ := shape.Explanation["origin"].(map[string]any)
	if shape.Cause != out.Cause || shape.Explanation["class"] != "reserved-beyond-capacity" || shape.Explanation["field"] != "kubeReserved.memory" ||
		origin["file"] != n.config || origin["line"] != float64(6) {
		t.Errorf("-o json: %s", raw)
	}
	n.configIs(t, "maxPods: 100\n")
}
