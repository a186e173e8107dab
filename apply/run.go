package apply

import (
	"context"
	"fmt"
)

// Run plans the change and, unless it is a dry run, applies it: its phases
// (Phases, with o.Hooks in their places) run in order over one
// transaction, every failure goes through the one rollback path, and the
// phases that end something (the lock, a hook) end it whatever the end. A
// dry run only plans: it takes no lock and writes nothing.
func Run(ctx context.Context, o Options) (*Outcome, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	t := &Tx{o: o}
	if o.DryRun {
		for _, p := range []Phase{planPhase{}, preflightPhase{}, kubeadmPhase{}} {
			if t.done {
				break
			}
			if err := p.Run(ctx, t); err != nil {
				return t.out, fmt.Errorf("%s: %w", p.Name(), err)
			}
		}
		return t.out, nil
	}
	steps, err := o.steps()
	if err != nil {
		return nil, err
	}
	err = t.run(ctx, steps)
	return t.out, err
}

// lockPhase takes the node's lock in kubeletcfg's state directory, and
// releases it once the transaction has ended.
type lockPhase struct{}

func (lockPhase) Name() string { return "lock" }

func (lockPhase) Run(_ context.Context, t *Tx) error {
	dir, err := stateDir(t.o.StateDir)
	if err != nil {
		return err
	}
	lock, err := Acquire(dir, "kubeletcfg apply --node "+t.o.Node, t.o.Clock.Now())
	if err != nil {
		return err
	}
	t.dir, t.lock = dir, lock
	return nil
}

func (lockPhase) End(_ context.Context, t *Tx, _ bool) error {
	if t.lock != nil {
		t.lock.Release()
	}
	return nil
}

// pendingPhase refuses to run over an earlier apply that was interrupted
// and not recovered.
type pendingPhase struct{}

func (pendingPhase) Name() string { return "pending" }

func (pendingPhase) Run(_ context.Context, t *Tx) error {
	j, err := ReadJournal(t.dir)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrPending, err)
	}
	if j != nil && !j.Written && !(&procRef{PID: j.PID, Start: j.PIDStart}).is() && j.ofRoot(t.o.Setup.Root) == nil && j.verify() == nil {
		// An apply killed before it wrote anything: nothing to recover,
		// only what it left to clean.
		if err := j.abandon(t.dir); err != nil {
			return fmt.Errorf("%w: apply %s, killed before it wrote anything: cleaning what it left: %w", ErrPending, j.ID, err)
		}
		t.o.progress("apply %s (pid %d) was killed before it wrote anything: what it left is cleaned", j.ID, j.PID)
		return nil
	}
	if j != nil {
		return fmt.Errorf("%w: apply %s of %s, started %s by pid %d: run kubeletcfg recover (it puts the old files back if they still hold what that apply wrote)",
			ErrPending, j.ID, j.ConfigFile, j.Started.Format("2006-01-02 15:04:05"), j.PID)
	}
	return nil
}
