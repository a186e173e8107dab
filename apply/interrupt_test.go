package apply

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/kubelet/config/v1beta1"

	hostnode "github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/schema"
	"github.com/kubeletcfg/kubeletcfg/why"
)

// drainHook is a drain that blocks until its context ends (a
// PodDisruptionBudget that never allows the eviction) after calling
// started; its End sees the context it is given.
func drainHook(started func(), endCtx *error) Hook {
	return Hook{Before: "backup", Phase: funcPhase{name: "drain",
		run: func(ctx context.Context, _ *Tx) error {
			started()
			<-ctx.Done()
			return ctx.Err()
		},
		end: func(ctx context.Context, _ *Tx, healthy bool) error {
			*endCtx = ctx.Err()
			return nil
		},
	}}
}

// SIGINT (the context canceled) during the drain stops it: nothing is
// written, the hook that cordoned ends with a live context (to uncordon),
// the result comes back and says it was interrupted.
func TestInterruptDuringTheDrain(t *testing.T) {
	n := newNode(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	var endCtx error = errors.New("End not called")
	n.opts.Hooks = []Hook{drainHook(cancel, &endCtx)}
	o := n.opts
	o.NewFile = []byte(baseConfig + "maxPods: 401\n")
	out, err := Run(ctx, o)
	if err == nil || !errors.Is(err, ErrInterrupted) || out == nil || !out.Interrupted {
		t.Fatalf("interrupted during the drain: outcome %v, %v; want the outcome, interrupted", summary(out), err)
	}
	if endCtx != nil {
		t.Errorf("the drain's End ran with a dead context (%v): it cannot uncordon", endCtx)
	}
	n.configIs(t, "maxPods: 100\n")
	n.noJournal(t)
	if n.kubelet.restarts != 0 {
		t.Error("the kubelet was restarted")
	}
}

// SIGINT during the watch rolls back all the way: the old file, the
// kubelet restarted on it and watched, though the context is done.
func TestInterruptDuringTheWatch(t *testing.T) {
	n := newNode(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	n.opts.Checks = []Check{&cancelingCheck{cancel: cancel}}
	var endCtx error = errors.New("End not called")
	n.opts.Hooks = []Hook{{Before: "backup", Phase: funcPhase{name: "drain",
		run: func(context.Context, *Tx) error { return nil },
		end: func(ctx context.Context, _ *Tx, healthy bool) error {
			if !healthy {
				return errors.New("not healthy")
			}
			endCtx = ctx.Err()
			return nil
		}}}}
	o := n.opts
	o.NewFile = []byte(baseConfig + "maxPods: 402\n")
	out, err := Run(ctx, o)
	if !errors.Is(err, ErrRolledBack) || out == nil || !out.RolledBack || !out.Interrupted {
		t.Fatalf("interrupted during the watch: outcome %v, %v; want rolled back, interrupted", summary(out), err)
	}
	if endCtx != nil {
		t.Errorf("End ran with a dead context: %v", endCtx)
	}
	n.configIs(t, "maxPods: 100\n")
	n.noJournal(t)
	if n.kubelet.restarts != 2 || !n.kubelet.running() {
		t.Errorf("%d restarts, running %v: want the kubelet restarted on the old file", n.kubelet.restarts, n.kubelet.running())
	}
}

// cancelingCheck cancels the apply's context the first time it is asked
// (Ctrl-C during the watch), then passes.
type cancelingCheck struct {
	cancel func()
	asked  int
}

func (c *cancelingCheck) Name() string { return "node Ready" }

func (c *cancelingCheck) Check(context.Context, time.Time) (Answer, error) {
	if c.asked++; c.asked == 1 {
		c.cancel()
	}
	return Answer{OK: true, Detail: "Ready"}, nil
}

// hungCheck never answers its first request (an API server that went
// silent); it honours its context, as a client's request does.
type hungCheck struct{ asked int }

func (c *hungCheck) Name() string { return "node Ready" }

func (c *hungCheck) Check(ctx context.Context, _ time.Time) (Answer, error) {
	if c.asked++; c.asked == 1 {
		<-ctx.Done()
		return Answer{}, ctx.Err()
	}
	return Answer{OK: true, Detail: "Ready"}, nil
}

// One request that never answers during the watch ends the watch within
// --health-timeout: the change is rolled back with the full result, not
// left to the guard's SIGKILL.
func TestHungCheckEndsWithinTheHealthTimeout(t *testing.T) {
	n := newNode(t, nil)
	n.opts.Clock = realClock{}
	k := &realKubelet{config: n.config}
	n.opts.Restarter, n.opts.probe = k, k.probe
	n.opts.Timeout, n.opts.StableFor = time.Second, 200*time.Millisecond
	n.opts.Checks = []Check{&hungCheck{}}
	o := n.opts
	o.NewFile = []byte(baseConfig + "maxPods: 403\n")
	done := make(chan struct{})
	var out *Outcome
	var err error
	go func() { out, err = Run(context.Background(), o); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the apply still waits on a request that never answers, 10s on, with a 1s --health-timeout")
	}
	if !errors.Is(err, ErrRolledBack) || out == nil || !out.RolledBack {
		t.Fatalf("a hung check: outcome %v, %v; want rolled back", summary(out), err)
	}
	n.configIs(t, "maxPods: 100\n")
}

// realKubelet is a fake kubelet on the real clock: a new process at each
// restart, healthy at once.
type realKubelet struct {
	config string
	pid    int
}

func (k *realKubelet) Restart(context.Context) error { k.pid++; return nil }
func (k *realKubelet) State(context.Context) (Proc, error) {
	return Proc{PID: 2000 + k.pid, Running: true}, nil
}
func (k *realKubelet) Restarted() why.Restarted { return why.Restarted{PID: 2000 + k.pid} }
func (k *realKubelet) probe(context.Context, *v1beta1.KubeletConfiguration) (bool, string) {
	return true, "healthz"
}

// A file changed between the plan and the write (an edit during a long
// drain) is not overwritten: the apply refuses, naming it, and writes
// nothing.
func TestFileChangedDuringTheDrainIsRefused(t *testing.T) {
	n := newNode(t, nil)
	edit := baseConfig + "maxPods: 404\n# edited by hand during the drain\n"
	n.opts.Hooks = []Hook{{Before: "backup", Phase: funcPhase{name: "drain",
		run: func(context.Context, *Tx) error { return os.WriteFile(n.config, []byte(edit), 0o640) }}}}
	_, err := n.apply(t, "maxPods: 405\n")
	if err == nil || !strings.Contains(err.Error(), n.config) || !strings.Contains(err.Error(), "changed") {
		t.Fatalf("a file edited during the drain: %v; want refused, naming it", err)
	}
	if b, _ := os.ReadFile(n.config); string(b) != edit {
		t.Errorf("the edit was overwritten: %q", b)
	}
	n.noJournal(t)
	if recs, _ := Records(n.state); len(recs) != 0 {
		t.Errorf("records of a refused apply: %+v", recs)
	}
}

// A relative --config names a file relative to the kubelet's working
// directory, which kubeletcfg does not know: refused up front, never a
// journal the guard and recover cannot use.
func TestRelativeConfigRefused(t *testing.T) {
	n := newNode(t, nil)
	wd, _ := os.Getwd()
	defer os.Chdir(wd)
	os.Chdir(n.dir)
	n.opts.Setup = hostnode.Given(schema.Newest(), "--config=config.yaml", "--hostname-override=n1")
	_, err := n.apply(t, "maxPods: 406\n")
	if err == nil || !strings.Contains(err.Error(), "relative") {
		t.Errorf("a relative --config: %v, want refused as relative", err)
	}
	n.configIs(t, "maxPods: 100\n")
	if _, serr := os.Stat(filepath.Join(n.state, journalName)); serr == nil {
		t.Error("a journal was written")
	}
}

// The same drop-in given twice is refused up front.
func TestDuplicateDropinRefused(t *testing.T) {
	n, _ := dropinNode(t, life{})
	o := n.opts
	o.Dropin, o.NewFile = "60-a.conf", []byte(baseConfig+"maxPods: 407\n")
	o.MoreDropins = []FileWrite{{Path: "60-a.conf", Content: []byte(baseConfig + "maxPods: 408\n")}}
	if _, err := Run(t.Context(), o); err == nil || !strings.Contains(err.Error(), "60-a.conf") {
		t.Errorf("--dropin 60-a.conf twice: %v, want refused", err)
	}
	if _, err := os.Stat(filepath.Join(n.dir, "conf.d", "60-a.conf")); err == nil {
		t.Error("the drop-in was written")
	}
}

// summary is what a test says of an outcome.
func summary(out *Outcome) string {
	if out == nil {
		return "none"
	}
	return fmt.Sprintf("applied %v, rolled back %v, interrupted %v, cause %q", out.Applied, out.RolledBack, out.Interrupted, out.Cause)
}

// One healthz probe lost on a loaded node, the same kubelet running, is
// not a death: the change is confirmed. One that keeps failing is.
func TestOneLostProbeIsNotADeath(t *testing.T) {
	for _, lost := range []int{1, 30} {
		n := newNode(t, nil)
		calls := 0
		real := n.opts.probe
		n.opts.probe = func(ctx context.Context, cfg *v1beta1.KubeletConfiguration) (bool, string) {
			ok, where := real(ctx, cfg)
			if ok {
				if calls++; calls > 3 && calls <= 3+lost {
					return false, where
				}
			}
			return ok, where
		}
		_, err := n.apply(t, "maxPods: 421\n")
		if lost == 1 && err != nil {
			t.Errorf("one probe lost: %v", err)
		}
		if lost == 30 && !errors.Is(err, ErrRolledBack) {
			t.Errorf("healthz failing for 3s: %v, want rolled back", err)
		}
	}
}
