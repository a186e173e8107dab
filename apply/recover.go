package apply

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	hostnode "github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/why"
)

// RecoverOptions say how to finish an interrupted apply.
type RecoverOptions struct {
	StateDir string
	// Root is the node's tree (--root; "" for this host): a journal of
	// another root is refused.
	Root string
	// Restarter restarts the kubelet once the old files are back; nil at
	// boot, before the kubelet starts (nothing to restart).
	Restarter Restarter
	Clock     Clock
	Progress  io.Writer
	// ID, when set, limits the recovery to that apply (the guard's).
	ID string
	// Boot: run at boot, before the kubelet starts; only an apply of an
	// earlier boot is undone, and nothing is restarted.
	Boot bool
	// Setup is how the node's kubelet is started (its version, its
	// command line), for the explanation of a kubelet that does not run
	// on the old files (zero: the node's own kubelet.service, under Root).
	Setup hostnode.Source
	// Uncordon, when set, lifts a cordon kubeletcfg left on the node once
	// the kubelet is healthy: restartedAt is when the recovery restarted
	// it (zero: nothing restarted). Recover runs it after a recovery, and
	// when there was nothing to recover (an apply killed during its drain
	// wrote nothing); its error is reported with the recovery's.
	Uncordon func(ctx context.Context, restartedAt time.Time) error
}

// Recover finishes an apply recorded in the journal that never confirmed:
// when every file still holds what that apply wrote (or its old content),
// the old files go back, the kubelet is restarted (once an earlier restart
// has ended) and the journal goes. A file changed since is left alone and
// nothing is done: the error says which. It takes the lock; it reports the
// journal it finished (nil: nothing to do).
func Recover(ctx context.Context, o RecoverOptions) (*Journal, error) {
	if o.Clock == nil {
		o.Clock = realClock{}
	}
	dir, err := stateDir(o.StateDir)
	if err != nil {
		return nil, err
	}
	l, err := Acquire(dir, "kubeletcfg recover", o.Clock.Now())
	if err != nil {
		return nil, err
	}
	j, restartedAt, err := recoverLocked(ctx, dir, o)
	l.Release()
	if err == nil {
		err = o.after(ctx, restartedAt)
	}
	return j, err
}

// after is what follows a recovery, once the lock is released (the next
// apply need not wait for it): the kubelet restarted at restartedAt (zero:
// none) watched for a moment — NO KUBELET RUNNING said loudly — and a cordon
// kubeletcfg left lifted once the kubelet reports (Uncordon).
func (o RecoverOptions) after(ctx context.Context, restartedAt time.Time) error {
	if !restartedAt.IsZero() && o.Restarter != nil {
		src := o.Setup
		if src.Root == "" {
			src.Root = o.Root
		}
		if err := noKubelet(ctx, o.Clock, o.Restarter, src, o.Progress); err != nil {
			return err
		}
	}
	if o.Uncordon != nil && !o.Boot {
		return o.Uncordon(ctx, restartedAt)
	}
	return nil
}

// recoverLocked finishes the apply of the journal; it says when it
// restarted the kubelet (zero: it did not).
func recoverLocked(ctx context.Context, dir string, o RecoverOptions) (j *Journal, restartedAt time.Time, err error) {
	j, err = ReadJournal(dir)
	if err == nil && j == nil {
		cleanUnfinished(dir, o.Root, "")
	}
	if err != nil || j == nil || (o.ID != "" && j.ID != o.ID) {
		return nil, restartedAt, err
	}
	if err := j.ofRoot(o.Root); err != nil {
		return nil, restartedAt, fmt.Errorf("journal %s: %w", filepath.Join(dir, journalName), err)
	}
	if c, ok := o.Restarter.(*commandRestarter); ok && c.output == "" {
		c.output = filepath.Join(dir, restartLog)
	}
	if o.Boot {
		if j.BootID == bootID() {
			progress(o.Progress, "apply %s runs in this boot: its guard finishes it", j.ID)
			return nil, restartedAt, nil
		}
		o.Restarter = nil
	}
	if err := j.verify(); err != nil {
		return j, restartedAt, fmt.Errorf("apply %s is not recovered: %w; put the files right by hand, then remove %s", j.ID, err, filepath.Join(dir, journalName))
	}
	if !j.Written {
		// Killed before it wrote: nothing to put back, its leftovers go.
		progress(o.Progress, "apply %s of %s (started %s, pid %d) was stopped before it wrote anything: cleaning what it left",
			j.ID, j.ConfigFile, j.Started.Format(time.RFC3339), j.PID)
		return j, restartedAt, j.abandon(dir)
	}
	progress(o.Progress, "apply %s of %s (started %s, pid %d) did not confirm: putting its old files back",
		j.ID, j.ConfigFile, j.Started.Format(time.RFC3339), j.PID)
	if err := j.undo(); err != nil {
		return j, restartedAt, fmt.Errorf("apply %s: %w", j.ID, err)
	}
	j.settle()
	outcome := OutcomeUndoneByRecover
	switch {
	case o.Boot:
		outcome = OutcomeUndoneAtBoot
	case o.ID != "":
		outcome = OutcomeUndoneByGuard
	}
	setOutcomeOf(dir, j.ID, outcome)
	// Before the write nothing was restarted; at boot the kubelet has not
	// started yet.
	if o.Restarter != nil && j.Written {
		if err := waitRestart(ctx, o.Clock, j.Restart, 2*time.Minute); err != nil {
			return j, restartedAt, err
		}
		restartedAt = o.Clock.Now()
		if err := o.Restarter.Restart(ctx); err != nil {
			return j, restartedAt, fmt.Errorf("apply %s: the old files are back, but the restart failed (the journal stays): %w", j.ID, err)
		}
		progress(o.Progress, "restarted the kubelet on the old files")
	}
	return j, restartedAt, removeJournal(dir)
}

// noKubelet watches the kubelet a recovery restarted for a moment: one that
// is not running (or cannot be told) is said loudly, for the node has
// none.
func noKubelet(ctx context.Context, clock Clock, r Restarter, src hostnode.Source, w io.Writer) error {
	for end := clock.Now().Add(2 * time.Second); ; {
		st, err := r.State(ctx)
		if err != nil || !st.Running {
			why := st.Why
			if err != nil {
				why = err.Error()
			}
			msg := "NO KUBELET RUNNING: the old files are back, but the kubelet restarted on them is not running (" + why + ")"
			x := explainRestarted(ctx, src, r)
			if x.Failed() {
				msg += ": " + x.Summary()
			}
			progress(w, "%s", msg)
			return &KubeletFailed{Message: msg, Explanation: x}
		}
		if clock.Now().After(end) {
			return nil
		}
		if err := clock.Sleep(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
}

// KubeletFailed is a kubelet that does not run after recover (or the
// guard) restarted it on the old files: Explanation says why (why.Cause,
// the shape of apply's explanation).
type KubeletFailed struct {
	Message     string
	Explanation *why.Explanation
}

func (e *KubeletFailed) Error() string { return e.Message }

// explainRestarted explains a kubelet a recovery restarted, on the node's
// setup as it is now (the old files back).
func explainRestarted(ctx context.Context, src hostnode.Source, r Restarter) *why.Explanation {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer cancel()
	return why.Cause(ctx, nil, src, r.Restarted())
}

func progress(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, "kubeletcfg: "+format+"\n", args...)
	}
}

// GuardOptions say which apply a guard watches.
type GuardOptions struct {
	StateDir  string
	Root      string // the node's tree (--root), as RecoverOptions.Root
	ID        string // the apply's ID
	Restarter Restarter
	Clock     Clock
	Progress  io.Writer
	// Uncordon is RecoverOptions.Uncordon, run only after the guard's own
	// recovery: an apply that ended left the node as it judged right.
	Uncordon func(ctx context.Context, restartedAt time.Time) error
}

// Guard waits for the lock of the state directory — free once the apply
// holding it has finished or died — and then finishes that apply if the
// journal says it was not confirmed. Past the journal's deadline it stops
// the apply, if that process is still the apply. One guard runs at a time.
func Guard(ctx context.Context, o GuardOptions) error {
	if o.Clock == nil {
		o.Clock = realClock{}
	}
	dir, err := stateDir(o.StateDir)
	if err != nil {
		return err
	}
	gl, err := waitLock(ctx, o.Clock, filepath.Join(dir, "guard.lock"))
	if err != nil {
		return err
	}
	defer gl.Release()
	for {
		// The journal first: the guard of an apply that has ended never
		// takes the lock, which the next apply may want at once.
		j, err := ReadJournal(dir)
		if err != nil || j == nil || j.ID != o.ID {
			return err // confirmed (or gone): nothing left to guard
		}
		l, err := Acquire(dir, "kubeletcfg guard of apply "+o.ID, o.Clock.Now())
		if err == nil {
			ro := RecoverOptions{Root: o.Root, Restarter: o.Restarter, Clock: o.Clock, Progress: o.Progress, ID: o.ID}
			j, restartedAt, err := recoverLocked(ctx, dir, ro)
			l.Release()
			if err == nil && j != nil {
				ro.Uncordon = o.Uncordon
				err = ro.after(ctx, restartedAt)
			}
			return err
		}
		if !errors.Is(err, ErrLocked) {
			return err
		}
		apply := procRef{PID: j.PID, Start: j.PIDStart}
		if j.pastDeadline(o.Clock) && apply.is() {
			// The apply holds the node past its deadline: stop it, and the
			// kernel hands its lock over.
			progress(o.Progress, "guard: apply %s (pid %d) not confirmed by %s: stopping it", j.ID, j.PID, j.Deadline.Format(time.RFC3339))
			_ = syscall.Kill(j.PID, syscall.SIGKILL)
		}
		if err := o.Clock.Sleep(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
}

// waitLock takes an flock at path, waiting for it.
func waitLock(ctx context.Context, clock Clock, path string) (*Lock, error) {
	for {
		f, err := openOwned(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, err
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err == nil {
			return &Lock{f: f}, nil
		}
		f.Close()
		if err := clock.Sleep(ctx, 100*time.Millisecond); err != nil {
			return nil, err
		}
	}
}

// StartGuard starts `self guardArgs...` detached: in a session of its own,
// with its output in guard.log of the state directory. It outlives the
// apply's shell and SSH session, but not the cgroup the apply runs in.
func StartGuard(self string, guardArgs []string, dir string) error {
	log, err := openOwned(filepath.Join(dir, "guard.log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer log.Close()
	cmd := exec.Command(self, guardArgs...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	return cmd.Process.Release()
}
