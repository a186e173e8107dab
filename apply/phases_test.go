package apply

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The phases, and among them the safety phases, are all there and in
// their order.
func TestPhasesInOrder(t *testing.T) {
	want := []string{"lock", "pending", "plan", "gate", "preflight", "kubeadm", "starttime", "backup", "journal", "guard", "write", "restart", "watch", "statusz", "configz", "confirm"}
	if diff := cmp.Diff(want, Phases()); diff != "" {
		t.Errorf("phases (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"lock", "pending", "backup", "journal", "guard", "watch"}, SafetyPhases()); diff != "" {
		t.Errorf("safety phases (-want +got):\n%s", diff)
	}
	steps, err := (Options{}).steps()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range steps {
		names = append(names, s.Name())
	}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("an apply without hooks runs (-want +got):\n%s", diff)
	}
}

// A hook goes only where the built-in phases take one: it can neither take
// a built-in phase's place nor land between the backup, the journal, the
// guard and the write, and the built-in phases keep their order.
func TestHooksCannotSkipOrReorderPhases(t *testing.T) {
	points := append(Phases(), "", "rollback", "nonsense")
	for _, before := range points {
		hook := funcPhase{name: "hook"}
		steps, err := (Options{Hooks: []Hook{{Before: before, Phase: hook}}}).steps()
		allowed := slices.Contains(HookPoints(), before)
		if !allowed {
			if err == nil || !strings.Contains(err.Error(), "may run before") {
				t.Errorf("a hook before %q: %v, want it refused", before, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("a hook before %q: %v", before, err)
			continue
		}
		var builtins []string
		for i, s := range steps {
			if !s.hook {
				builtins = append(builtins, s.Name())
				continue
			}
			if i+1 >= len(steps) || steps[i+1].Name() != before {
				t.Errorf("the hook before %q runs before %q", before, steps[i+1].Name())
			}
		}
		if diff := cmp.Diff(Phases(), builtins); diff != "" {
			t.Errorf("with a hook before %q, the built-in phases (-want +got):\n%s", before, diff)
		}
	}
	for _, p := range []string{"journal", "guard", "write", "watch", "lock", "pending", "plan", "gate", "kubeadm"} {
		if slices.Contains(HookPoints(), p) {
			t.Errorf("a hook may go before %s", p)
		}
	}
	if _, err := (Options{Hooks: []Hook{{Before: "backup", Phase: funcPhase{name: "lock"}}}}).steps(); err == nil {
		t.Error("a hook named as a built-in phase was taken")
	}
	if _, err := (Options{Hooks: []Hook{{Before: "backup"}}}).steps(); err == nil {
		t.Error("a hook with no phase was taken")
	}
}

// A failure at any point goes through the one rollback path: before the
// backup nothing is written; after the write and before the restart the
// files go back without a restart; after the restart the old files go
// back and the kubelet is restarted on them. Every hook's End runs, with
// the kubelet healthy.
func TestFailureAtEveryHookPointRollsBack(t *testing.T) {
	for _, tc := range []struct {
		before   string
		restarts int
		rolled   bool
		msg      string
	}{
		{before: "backup", restarts: 0, msg: "before the change (nothing was written): failing: no"},
		{before: "restart", restarts: 0, msg: "failing: no"},
		{before: "configz", restarts: 2, rolled: true, msg: "failing: no"},
		{before: "confirm", restarts: 2, rolled: true, msg: "failing: no"},
	} {
		t.Run(tc.before, func(t *testing.T) {
			n := newNode(t, nil)
			var ended []string
			n.opts.Hooks = []Hook{{Before: tc.before, Phase: funcPhase{name: "failing",
				run: func(context.Context, *Tx) error { return errors.New("no") },
				end: func(_ context.Context, _ *Tx, healthy bool) error {
					ended = append(ended, "failing healthy="+boolString(healthy))
					return nil
				}}}}
			out, err := n.apply(t, "maxPods: 301\n")
			if err == nil || !strings.Contains(err.Error(), tc.msg) || errors.Is(err, ErrRolledBack) != tc.rolled {
				t.Fatalf("err = %v, want %q (rolled back: %v)", err, tc.msg, tc.rolled)
			}
			if out.RolledBack != tc.rolled || (tc.rolled && out.Cause != "failing: no") {
				t.Errorf("outcome %+v", out)
			}
			n.configIs(t, "maxPods: 100\n")
			n.noJournal(t)
			if n.kubelet.restarts != tc.restarts {
				t.Errorf("%d restarts, want %d", n.kubelet.restarts, tc.restarts)
			}
			if diff := cmp.Diff([]string{"failing healthy=true"}, ended); diff != "" {
				t.Errorf("hooks ended (-want +got):\n%s", diff)
			}
			// The lock was released: the next apply runs.
			n.opts.Hooks = nil
			if _, err := n.apply(t, "maxPods: 302\n"); err != nil {
				t.Errorf("the next apply: %v", err)
			}
		})
	}
}
