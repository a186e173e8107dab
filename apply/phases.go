package apply

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kubeletcfg/kubeletcfg/kubeletapi"
)

// Phase is one named step of an apply. Its Run reads and changes the
// transaction; an error ends the apply through its one rollback path.
type Phase interface {
	Name() string
	Run(ctx context.Context, t *Tx) error
}

// Ender is a phase with something to do once the transaction has ended,
// whatever its end, when its Run was called (even if it failed): release
// the lock, uncordon the node. healthy says the kubelet runs healthy on
// what is now on disk: the new configuration, the old one after a rollback,
// or the old one untouched.
type Ender interface {
	End(ctx context.Context, t *Tx, healthy bool) error
}

// Hook is a phase an apply's caller adds (the cluster's drain), run just
// before the built-in phase Before, which must be one of HookPoints. A
// hook cannot leave out, move or skip a built-in phase; its error ends the
// apply like any phase's.
type Hook struct {
	Before string
	Phase  Phase
}

// builtin are apply's phases, in their order. A safety phase is one no
// caller can do without (the rollback path goes with them); hooks may go
// only before the phases that take them.
var builtin = []struct {
	phase  Phase
	safety bool
	hooks  bool
}{
	{phase: lockPhase{}, safety: true},    // the node's lock, held to the end
	{phase: pendingPhase{}, safety: true}, // no earlier apply left unrecovered
	{phase: planPhase{}},                  // effective before and after, verdict, changes
	{phase: gatePhase{}},                  // drain and CIS gates
	{phase: preflightPhase{}},             // will the kubelet start on this host
	{phase: kubeadmPhase{}},               // what the next kubeadm upgrade node keeps
	{phase: startTimePhase{}},             // the kubelet's start time (/statusz) before the change
	{phase: backupPhase{}, safety: true, hooks: true},
	{phase: journalPhase{}, safety: true},
	{phase: guardPhase{}, safety: true},
	{phase: writePhase{}},
	{phase: restartPhase{}, hooks: true},
	{phase: watchPhase{}, safety: true},
	{phase: statuszPhase{}}, // the restart proven by /statusz, where served
	{phase: configzPhase{}, hooks: true},
	{phase: confirmPhase{}, hooks: true},
}

// Phases names apply's built-in phases in their order.
func Phases() []string { return builtinNames(func(bool, bool) bool { return true }) }

// SafetyPhases names the built-in phases no apply runs without.
func SafetyPhases() []string { return builtinNames(func(safety, _ bool) bool { return safety }) }

// HookPoints names the built-in phases a Hook may run before: before the
// backup (nothing written yet: a drain, more files to write), before the
// restart (the files written), and after the watch (the kubelet healthy on
// them: a further proof, waiting for pods).
func HookPoints() []string { return builtinNames(func(_, hooks bool) bool { return hooks }) }

func builtinNames(keep func(safety, hooks bool) bool) []string {
	var out []string
	for _, b := range builtin {
		if keep(b.safety, b.hooks) {
			out = append(out, b.phase.Name())
		}
	}
	return out
}

// step is a phase of one apply; hook says a caller added it.
type step struct {
	Phase
	hook bool
}

// steps are the phases of an apply with o's hooks in their places.
func (o Options) steps() ([]step, error) {
	builtins := Phases()
	for _, h := range o.Hooks {
		if h.Phase == nil {
			return nil, fmt.Errorf("apply hook before %q: no phase", h.Before)
		}
		if slices.Contains(builtins, h.Phase.Name()) {
			return nil, fmt.Errorf("apply hook %q: a built-in phase's name", h.Phase.Name())
		}
		if !slices.Contains(HookPoints(), h.Before) {
			return nil, fmt.Errorf("apply hook %q: it may run before %s, not before %q", h.Phase.Name(), strings.Join(HookPoints(), ", "), h.Before)
		}
	}
	var out []step
	for _, b := range builtin {
		for _, h := range o.Hooks {
			if h.Before == b.phase.Name() {
				out = append(out, step{Phase: h.Phase, hook: true})
			}
		}
		out = append(out, step{Phase: b.phase})
	}
	return out, nil
}

// Tx is one apply: its options, and what its phases found and did. Every
// phase reads and changes it; a hook sees it through its methods.
type Tx struct {
	o    Options
	plan *Plan
	out  *Outcome

	dir       string   // kubeletcfg's state directory (lock)
	lock      *Lock    // (lock)
	journal   *Journal // what to undo: files staged (backup), on disk (journal)
	record    *Record  // the backup record (backup)
	restarter Restarter
	restart   restartState // the kubelet before the restart (restart)
	guarded   bool         // the guard was started (backup, or guard)
	restarted bool         // the kubelet was restarted on the new files
	confirmed bool         // the change is confirmed: nothing left to undo
	// statuszBefore is the kubelet's /statusz before the change, or why
	// not (starttime).
	statuszBefore    *kubeletapi.Status
	statuszBeforeErr error
	done             bool // nothing (more) to do: the plan changes nothing
}

// Plan is what the apply will do (nil before the plan phase).
func (t *Tx) Plan() *Plan { return t.plan }

// Outcome is what the apply did so far (nil before the plan phase).
func (t *Tx) Outcome() *Outcome {
	if t == nil {
		return nil
	}
	return t.out
}

// Progress writes a progress line.
func (t *Tx) Progress(format string, args ...any) { t.o.progress(format, args...) }

// run runs the steps in order until one fails or the transaction is done;
// a failure goes through rollback. Then every step whose Run was called
// and that is an Ender ends, last first.
//
// An interruption (ctx canceled: SIGINT, SIGTERM) stops the phase that
// runs (a drain, a watch) or the next one from starting, and the apply
// takes the same way out: the rollback and the ends run on a context that
// is not canceled (each bounded on its own), so that the old files go back,
// the kubelet is restarted and watched on them, and the node is uncordoned.
func (t *Tx) run(ctx context.Context, steps []step) error {
	var called []step
	var failed step
	var err error
	for _, s := range steps {
		if t.done {
			break
		}
		if ctx.Err() != nil {
			failed, err = s, ctx.Err()
			break
		}
		called = append(called, s)
		if err = s.Run(ctx, t); err != nil {
			failed = s
			break
		}
	}
	if err != nil && ctx.Err() != nil {
		err = t.interrupted(ctx, err)
	}
	live := context.WithoutCancel(ctx)
	healthy := true
	if err != nil {
		err, healthy = t.rollback(live, failed, err)
	}
	for i := len(called) - 1; i >= 0; i-- {
		e, ok := called[i].Phase.(Ender)
		if !ok {
			continue
		}
		if eerr := e.End(live, t, healthy); eerr != nil {
			err = errors.Join(err, fmt.Errorf("after the change: %s: %w", called[i].Name(), eerr))
		}
	}
	return err
}

// noKubelet says loudly, after a rollback that did not end healthy, when
// no kubelet runs at all: the node has none.
func (t *Tx) noKubelet(ctx context.Context) string {
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	st, err := t.restarter.State(sctx)
	if err == nil && st.Running {
		return ""
	}
	why := st.Why
	if err != nil {
		why = err.Error()
	}
	msg := "NO KUBELET RUNNING on the old configuration (" + why + ")"
	t.Progress("%s", msg)
	return msg
}

// interrupted says that ctx ended the apply (SIGINT, SIGTERM), in its
// outcome and its error: err is what the phase running then met.
func (t *Tx) interrupted(ctx context.Context, err error) error {
	if t.out != nil {
		t.out.Interrupted = true
	}
	by := ""
	if c := context.Cause(ctx); c != nil && !errors.Is(c, context.Canceled) {
		by = " (" + c.Error() + ")"
	}
	var u *unhealthy
	switch {
	case errors.As(err, &u):
		return &unhealthy{cause: ErrInterrupted.Error() + by + ": " + u.cause, err: ErrInterrupted}
	case errors.Is(err, context.Canceled) && err == ctx.Err():
		return fmt.Errorf("%w%s", ErrInterrupted, by)
	}
	return fmt.Errorf("%w%s: %w", ErrInterrupted, by, err)
}

// unhealthy is the kubelet failing on the new files: the cause the rollback
// reports.
type unhealthy struct {
	cause string
	err   error // what it also is (ErrInterrupted), if anything
}

func (u *unhealthy) Error() string { return u.cause }
func (u *unhealthy) Unwrap() error { return u.err }

// rollback is the one way out of a failed apply: what the transaction did
// is undone, as far as it got, and the error returned is the failure's,
// with what the undoing met. healthy says the kubelet runs healthy on what
// is on disk afterwards.
func (t *Tx) rollback(ctx context.Context, failed step, err error) (error, bool) {
	var u *unhealthy
	switch {
	case errors.As(err, &u):
	case failed.hook && t.journal == nil:
		err = fmt.Errorf("before the change (nothing was written): %s: %w", failed.Name(), err)
	default:
		err = fmt.Errorf("%s: %w", failed.Name(), err)
	}
	jr := t.journal
	switch {
	case t.confirmed:
		return err, false
	case jr == nil:
		return err, true // nothing was touched
	case !t.restarted:
		// Undone before any restart: the kubelet runs on as before, and
		// nothing of this apply stays (a written one's dated copies do).
		if !jr.Written {
			if aerr := jr.abandon(t.dir); aerr != nil {
				return fmt.Errorf("%w; undoing: %v (the journal in %s says what is left)", err, aerr, t.dir), false
			}
			return err, true
		}
		if t.record != nil {
			removeRecord(t.dir, t.record.N)
		}
		if uerr := jr.undo(); uerr != nil {
			return fmt.Errorf("%w; undoing: %v (the journal in %s says what is left)", err, uerr, t.dir), false
		}
		jr.settle()
		if rerr := removeJournal(t.dir); rerr != nil {
			return errors.Join(err, rerr), true
		}
		return err, true
	}
	cause := err.Error()
	if u != nil {
		cause = u.cause
	}
	t.out.Cause = cause
	t.Progress("unhealthy (%s): rolling back", cause)
	if uerr := jr.undo(); uerr != nil {
		return fmt.Errorf("rollback: %w (cause of the rollback: %s; the journal in %s keeps what is left to undo)", uerr, cause, t.dir), false
	}
	jr.settle()
	failpoint("during-rollback")
	t.out.RolledBack = true
	setOutcome(t.dir, t.out.BackupN, "rolled back")
	back := &Outcome{}
	// The old configuration ran before: its watch proves the restart took,
	// and does not keep the node from service for a full window.
	w := t.watcher()
	w.StableFor = min(w.StableFor, rollbackStableFor)
	ok, why := w.restartAndWatch(ctx, t.plan.old.Config, back)
	t.out.Checks = append(t.out.Checks, back.Checks...)
	if rerr := removeJournal(t.dir); rerr != nil {
		return rerr, false
	}
	if !ok {
		if none := t.noKubelet(ctx); none != "" {
			why += "; " + none
		}
		return fmt.Errorf("rolled back to %s, but the kubelet is not healthy on it either: %s (cause of the rollback: %s)", t.out.Backup, why, cause), false
	}
	return fmt.Errorf("%w: %s", ErrRolledBack, cause), true
}
