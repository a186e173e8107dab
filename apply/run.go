package apply

import (
	"context"
	"errors"
	"fmt"
)

// Run plans the change, and unless it is a dry run, applies it in three
// phases under the node's lock: plan (effective configuration, validation,
// changes, drain gate), commit (backups, journal, guard, writes, state
// files) and confirm (restart, watch, verify; rollback on failure; prune).
// Hooks.BeforeCommit runs between plan and commit, and once it has run,
// Hooks.AfterConfirm runs when the transaction has ended, whatever the end.
func Run(ctx context.Context, o Options) (*Outcome, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	if o.DryRun {
		p, err := plan(o)
		if err != nil {
			return nil, err
		}
		return p.outcome(o)
	}
	dir, err := stateDir(o.StateDir)
	if err != nil {
		return nil, err
	}
	lock, err := Acquire(dir, "kubeletcfg apply --node "+o.Node, o.Clock.Now())
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	if j, err := ReadJournal(dir); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPending, err)
	} else if j != nil {
		return nil, fmt.Errorf("%w: apply %s of %s, started %s by pid %d: run kubeletcfg recover (it puts the old files back if they still hold what that apply wrote)",
			ErrPending, j.ID, j.ConfigFile, j.Started.Format("2006-01-02 15:04:05"), j.PID)
	}
	p, err := plan(o)
	if err != nil {
		return nil, err
	}
	out, err := p.outcome(o)
	if err != nil || p.empty() {
		return out, err
	}
	if err := p.gate(o, out); err != nil {
		return out, err
	}
	if o.Hooks.BeforeCommit != nil {
		if err := o.Hooks.BeforeCommit(ctx, p); err != nil {
			err = fmt.Errorf("before the change (nothing was written): %w", err)
			return out, errors.Join(err, o.afterConfirm(ctx, out, true))
		}
	}
	r := o.Restarter
	var jr *Journal
	if r == nil {
		r = newRestarter(o.Restart, o.PIDFile, o.KubeletLog, o.Unit, o.Timeout)
		if c, ok := r.(*commandRestarter); ok {
			c.started = func(pgid int) error {
				jr.Restart = &procRef{PID: pgid, Start: procStart(pgid)}
				return writeJournal(dir, jr)
			}
		}
	}
	jr, err = commit(o, dir, p, out)
	if err != nil {
		// Undone (no journal left): the kubelet runs on as before.
		return out, errors.Join(err, o.afterConfirm(ctx, out, jr == nil))
	}
	err = confirm(ctx, o, dir, p, jr, r, out)
	healthy := err == nil || errors.Is(err, ErrRolledBack)
	return out, errors.Join(err, o.afterConfirm(ctx, out, healthy))
}

// afterConfirm runs Hooks.AfterConfirm, when set.
func (o Options) afterConfirm(ctx context.Context, out *Outcome, healthy bool) error {
	if o.Hooks.AfterConfirm == nil {
		return nil
	}
	if err := o.Hooks.AfterConfirm(ctx, out, healthy); err != nil {
		return fmt.Errorf("after the change: %w", err)
	}
	return nil
}
