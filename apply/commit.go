package apply

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// backupPhase backs every file the plan touches up and stages it for
// undo: the journal of the transaction (not yet on disk) and a numbered
// record in the state directory. Every file is reached through its
// directory opened inside the node's tree (openDir).
type backupPhase struct{}

func (backupPhase) Name() string { return "backup" }

func (backupPhase) Run(_ context.Context, t *Tx) error {
	o, p, out := t.o, t.plan, t.out
	now := o.Clock.Now()
	root := o.Setup.Root
	if err := p.unchanged(root); err != nil {
		return err
	}
	jr := &Journal{ID: newID(), Root: root, ConfigFile: p.ConfigFile, BootID: bootID(), Started: now,
		PID: os.Getpid(), PIDStart: procStart(os.Getpid()),
		// Two full watches (the change and a rollback, each bounded, its
		// requests included) and a margin for the ends (an uncordon, each
		// request bounded): an apply still holding the node then is stuck.
		Deadline: now.Add(2*(o.Timeout+o.StableFor) + rollbackStableFor + 30*time.Second)}
	t.journal, out.ID = jr, jr.ID
	for _, w := range p.Writes {
		fc, err := prepare(root, w.Path, jr.ID, now)
		if err != nil {
			return err
		}
		fc.NewHash, fc.Created = hashBytes(w.Content), fc.OldHash == ""
		if fc.Backup != "" {
			o.progress("backup: %s", fc.Backup)
		}
		if w.Path == p.ConfigFile {
			out.Backup = fc.Backup
		}
		if err := t.staged(fc); err != nil {
			return err
		}
	}
	for _, sf := range p.StateFiles {
		fc, err := prepare(root, sf, jr.ID, now)
		if errors.Is(err, fs.ErrNotExist) {
			continue // not even its directory
		}
		if err != nil {
			return err
		}
		if fc.OldHash != "" {
			fc.Removed, fc.StateFile = true, true
			if err := t.staged(fc); err != nil {
				return err
			}
		}
	}
	for _, rm := range p.Removes {
		fc, err := prepare(root, rm, jr.ID, now)
		if err != nil {
			return err
		}
		fc.Removed = true
		if rm == p.ConfigFile {
			out.Backup = fc.Backup
		}
		if err := t.staged(fc); err != nil {
			return err
		}
	}
	rec, err := record(t.dir, jr, p.Changes)
	if err != nil {
		return err
	}
	if o.NewArgs != nil {
		// The command line this change rewrites, for its rollback.
		rec.Args = redactArgs(o.Setup.Args)
		if err := rec.save(t.dir); err != nil {
			return err
		}
	}
	t.record, out.BackupN = rec, rec.N
	failpoint("after-backup")
	return nil
}

// staged adds a file backed up and staged to the journal, writes the
// journal at once and starts the guard with the first: an apply killed
// later in its backup leaves a journal that says what it made (nothing
// written yet), which its guard, recover or the next apply cleans.
func (t *Tx) staged(fc FileChange) error {
	t.journal.Files = append(t.journal.Files, fc)
	if err := writeJournal(t.dir, t.journal); err != nil {
		return err
	}
	return t.startGuard()
}

// journalPhase writes the journal: from here it says what to undo to
// whoever comes next (the guard, kubeletcfg recover, the boot-time
// recovery).
type journalPhase struct{}

func (journalPhase) Name() string { return "journal" }

func (journalPhase) Run(_ context.Context, t *Tx) error { return writeJournal(t.dir, t.journal) }

// guardPhase makes sure a guard outside this process undoes the change if
// this process dies before it confirms. The backup starts it as soon as
// the journal exists (Tx.staged), so that an apply killed inside its backup
// is cleaned up too; here it is started if it was not.
type guardPhase struct{}

func (guardPhase) Name() string { return "guard" }

func (guardPhase) Run(_ context.Context, t *Tx) error { return t.startGuard() }

// startGuard starts the guard of the transaction's journal, once.
func (t *Tx) startGuard() error {
	if t.o.StartGuard == nil || t.guarded {
		return nil
	}
	if err := t.o.StartGuard(t.dir, t.journal.ID); err != nil {
		return fmt.Errorf("starting the guard: %w", err)
	}
	t.guarded = true
	return nil
}

// writePhase writes the new files and removes the state files and drop-ins
// the change needs gone, then marks the journal written.
type writePhase struct{}

func (writePhase) Name() string { return "write" }

func (writePhase) Run(_ context.Context, t *Tx) error {
	o, p, jr := t.o, t.plan, t.journal
	root := o.Setup.Root
	for _, w := range p.Writes {
		if err := inDir(root, w.Path, func(d *os.Root, name string) error {
			_, err := writeIn(d, name, w.Content)
			return err
		}); err != nil {
			return err
		}
		o.progress("wrote %s", w.Path)
	}
	// The kubelet refuses to start with a checkpoint of another policy: the
	// operator drained the node, so the stale state goes (staged for undo).
	for _, f := range jr.Files {
		if !f.Removed {
			continue
		}
		if err := inDir(root, f.Path, func(d *os.Root, name string) error {
			if err := d.Remove(name); err != nil {
				return err
			}
			return syncRoot(d)
		}); err != nil {
			return err
		}
		o.progress("removed %s (backup %s)", f.Path, f.Backup)
	}
	jr.Written = true
	if err := writeJournal(t.dir, jr); err != nil {
		return err
	}
	t.out.Applied = true
	failpoint("after-write")
	hangpoint("after-write")
	return nil
}

// inDir runs fn on the file at disk path p, in its directory opened inside
// the node's tree; errors name p.
func inDir(root, p string, fn func(d *os.Root, name string) error) error {
	d, name, err := openDir(root, p)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := fn(d, name); err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	return nil
}

// prepare backs up the file at p (when there is one) and stages it for
// undo; a missing file gives an empty OldHash.
func prepare(root, p, id string, now time.Time) (FileChange, error) {
	fc := FileChange{Path: p}
	err := inDir(root, p, func(d *os.Root, name string) error {
		if _, err := lstatIn(d, name); errors.Is(err, fs.ErrNotExist) {
			return nil
		} else if err != nil {
			return err
		}
		b, err := backupIn(d, name, now)
		if err != nil {
			return err
		}
		staged, hash, err := stageIn(d, name, id)
		if err != nil {
			return err
		}
		fc.Backup = filepath.Join(filepath.Dir(p), b)
		fc.Staged, fc.OldHash = filepath.Join(filepath.Dir(p), staged), hash
		return nil
	})
	return fc, err
}

// stageIn keeps the old file name of d under a second name beside it (a
// hard link: no space needed) so that undo is a rename. Where a link cannot
// be made, a copy is staged (before the write, while there is room).
func stageIn(d *os.Root, name, id string) (staged, hash string, err error) {
	staged = "." + name + ".kubeletcfg-old-" + id
	if err := d.Link(name, staged); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return "", "", fmt.Errorf("staging %s: %s exists", name, staged)
		}
		if err := copyIn(d, name, staged); err != nil {
			return "", "", fmt.Errorf("staging %s: %w", name, err)
		}
	}
	if hash, err = hashIn(d, staged); err != nil {
		d.Remove(staged)
		return "", "", err
	}
	return staged, hash, syncRoot(d)
}
