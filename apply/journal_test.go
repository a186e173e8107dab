package apply

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hostnode "github.com/kubeletcfg/kubeletcfg/node"
)

// recover --root acts only on a journal of that root: one written with no
// root, or another, names host files, and is refused.
func TestRecoverUnderRootRefusesAJournalOfAnotherRoot(t *testing.T) {
	img := t.TempDir()
	host := t.TempDir()
	victim := filepath.Join(host, "victim")
	os.WriteFile(victim, []byte("keep"), 0o600)
	state := filepath.Join(img, DefaultStateDir)
	dir, err := stateDir(state)
	if err != nil {
		t.Fatal(err)
	}
	// The hash of what is there: recover would take it for its own write.
	for name, root := range map[string]string{"no root": "", "another root": host} {
		forged := &Journal{ID: "1", Root: root, ConfigFile: victim, Files: []FileChange{{Path: victim, Created: true, NewHash: hashBytes([]byte("keep"))}}}
		if err := writeJournal(dir, forged); err != nil {
			t.Fatal(err)
		}
		_, err := Recover(context.Background(), RecoverOptions{StateDir: state, Root: img})
		if !errors.Is(err, ErrUntrusted) {
			t.Errorf("%s: recover --root %s: %v, want refused", name, img, err)
		}
		if b, _ := os.ReadFile(victim); string(b) != "keep" {
			t.Fatalf("%s: the host file the journal named is gone or changed", name)
		}
	}
}

// The guard's deadline does not move with the wall clock: a clock stepped
// forward does not make it stop an apply that is on time.
func TestGuardDeadlineIgnoresAClockStep(t *testing.T) {
	n := newNode(t, nil)
	jr := n.interrupted(t, "maxPods: 371\n")
	dir, _ := stateDir(n.state)
	l, err := Acquire(dir, "the apply", n.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	apply := startSleep(t)
	jr.PID, jr.PIDStart = apply.Pid, procStart(apply.Pid)
	if err := writeJournal(dir, jr); err != nil {
		t.Fatal(err)
	}
	stepped := newFakeClock()
	stepped.now = n.clock.Now().Add(time.Hour) // NTP stepped the clock an hour on
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	go Guard(ctx, GuardOptions{StateDir: n.state, ID: jr.ID, Restarter: n.kubelet, Clock: stepped})
	time.Sleep(400 * time.Millisecond)
	if !alive(apply.Pid) {
		t.Fatal("the guard stopped an apply on time because the wall clock jumped")
	}
}

// recover lifts a cordon kubeletcfg left, once the kubelet it restarted is
// healthy; with nothing to recover (an apply killed mid-drain) at once.
// The guard lifts it only after a recovery of its own.
func TestRecoverAndGuardLiftTheCordon(t *testing.T) {
	type lift struct {
		called      bool
		restartedAt time.Time
	}
	hook := func(l *lift) func(context.Context, time.Time) error {
		return func(_ context.Context, at time.Time) error { l.called, l.restartedAt = true, at; return nil }
	}
	n := newNode(t, nil)
	var byRecover lift
	if _, err := Recover(context.Background(), RecoverOptions{StateDir: n.state, Restarter: n.kubelet, Clock: n.clock, Uncordon: hook(&byRecover)}); err != nil {
		t.Fatal(err)
	}
	if !byRecover.called || !byRecover.restartedAt.IsZero() {
		t.Errorf("recover with nothing to recover: %+v; want the cordon lifted, nothing restarted", byRecover)
	}
	n.interrupted(t, "maxPods: 381\n")
	byRecover = lift{}
	if _, err := Recover(context.Background(), RecoverOptions{StateDir: n.state, Restarter: n.kubelet, Clock: n.clock, Uncordon: hook(&byRecover)}); err != nil {
		t.Fatal(err)
	}
	if !byRecover.called || byRecover.restartedAt.IsZero() {
		t.Errorf("recover of an interrupted apply: %+v; want the cordon lifted after the restart", byRecover)
	}
	var byGuard lift
	if err := Guard(context.Background(), GuardOptions{StateDir: n.state, ID: "confirmed", Restarter: n.kubelet, Clock: n.clock, Uncordon: hook(&byGuard)}); err != nil {
		t.Fatal(err)
	}
	if byGuard.called {
		t.Error("the guard of an apply that ended lifted the cordon the apply left (an unhealthy node stays cordoned)")
	}
	jr := n.interrupted(t, "maxPods: 382\n")
	if err := Guard(context.Background(), GuardOptions{StateDir: n.state, ID: jr.ID, Restarter: n.kubelet, Clock: n.clock, Uncordon: hook(&byGuard)}); err != nil {
		t.Fatal(err)
	}
	if !byGuard.called || byGuard.restartedAt.IsZero() {
		t.Errorf("the guard's recovery: %+v; want the cordon lifted after its restart", byGuard)
	}
}

// A recovery that leaves no kubelet running says so loudly: the old files
// are back, but the node has no kubelet.
func TestRecoverSaysNoKubeletRunning(t *testing.T) {
	n := newNode(t, map[string]life{"maxPods: 100": {healthyAfter: -1, diesAfter: time.Nanosecond}})
	n.interrupted(t, "maxPods: 391\n")
	var progress strings.Builder
	_, err := Recover(context.Background(), RecoverOptions{StateDir: n.state, Restarter: n.kubelet, Clock: n.clock, Progress: &progress})
	if err == nil || !strings.Contains(err.Error(), "NO KUBELET RUNNING") {
		t.Errorf("recover leaving no kubelet: %v", err)
	}
	n.configIs(t, "maxPods: 100\n")
}

// A recovery whose kubelet does not run on the old files says why, in
// apply's explanation: here the old file reserves more memory than the
// machine has, and the kubelet (kubelet 1.37's words) refuses it.
func TestRecoverExplainsTheKubeletsRefusal(t *testing.T) {
	n := newNode(t, map[string]life{"kubeReserved": {healthyAfter: -1, diesAfter: time.Nanosecond,
		words: []string{strings.ReplaceAll(reservedWords, "PID", "1002")}}})
	old := baseConfig + "maxPods: 100\nkubeReserved:\n  memory: 100Ti\n"
	if err := os.WriteFile(n.config, []byte(old), 0o640); err != nil {
		t.Fatal(err)
	}
	n.interrupted(t, "maxPods: 392\n")
	setup := hostnode.Source{Args: n.opts.Setup.Args, Dashed: true, KubeletVersion: "1.37", VersionSet: true}
	_, err := Recover(context.Background(), RecoverOptions{StateDir: n.state, Restarter: n.kubelet, Clock: n.clock, Setup: setup})
	var failed *KubeletFailed
	if !errors.As(err, &failed) || failed.Explanation == nil {
		t.Fatalf("recover leaving no kubelet: %v; want a KubeletFailed with its explanation", err)
	}
	x := failed.Explanation
	if x.Class != "reserved-beyond-capacity" || x.Field != "kubeReserved.memory" || x.Origin == nil || x.Origin.Text != n.config+":6" {
		t.Errorf("explanation: class %s, field %s, origin %+v", x.Class, x.Field, x.Origin)
	}
	if !strings.Contains(err.Error(), "NO KUBELET RUNNING") || !strings.Contains(err.Error(), "kubeReserved.memory=100Ti from "+n.config+":6") {
		t.Errorf("the error does not say why: %v", err)
	}
}
