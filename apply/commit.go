package apply

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// commit writes the plan as one transaction: every old file backed up and
// staged for undo, the journal, the guard, the writes, the state files
// removed. On error nothing of it stays (or the journal says what to undo).
// The caller holds the lock of dir.
func commit(o Options, dir string, p *Plan, out *Outcome) (*Journal, error) {
	now := o.Clock.Now()
	jr := &Journal{ID: newID(), Root: o.Setup.Root, ConfigFile: p.ConfigFile, BootID: bootID(), Started: now,
		PID: os.Getpid(), PIDStart: procStart(os.Getpid()),
		// Two full watches (the change and a rollback) and a margin: an
		// apply still holding the node then is stuck.
		Deadline: now.Add(2*(o.Timeout+o.StableFor) + 10*time.Second)}
	out.ID = jr.ID
	abort := func(err error) (*Journal, error) {
		if uerr := jr.undo(); uerr != nil {
			return jr, fmt.Errorf("%w; undoing: %v (the journal in %s says what is left)", err, uerr, dir)
		}
		jr.settle()
		if rerr := removeJournal(dir); rerr != nil {
			return nil, errors.Join(err, rerr)
		}
		return nil, err
	}
	for _, w := range p.Writes {
		fc := FileChange{Path: w.Path, NewHash: hashBytes(w.Content)}
		switch _, err := os.Lstat(w.Path); {
		case errors.Is(err, fs.ErrNotExist):
			fc.Created = true
		case err != nil:
			return abort(err)
		default:
			if fc.Backup, err = Backup(w.Path, now); err != nil {
				return abort(err)
			}
			o.progress("backup: %s", fc.Backup)
			if w.Path == p.ConfigFile {
				out.Backup = fc.Backup
			}
			if fc.Staged, fc.OldHash, err = stage(w.Path, jr.ID); err != nil {
				return abort(err)
			}
		}
		jr.Files = append(jr.Files, fc)
	}
	for _, sf := range p.StateFiles {
		if _, err := os.Lstat(sf); err != nil {
			continue
		}
		fc := FileChange{Path: sf, Removed: true}
		var err error
		if fc.Backup, err = Backup(sf, now); err != nil {
			return abort(err)
		}
		if fc.Staged, fc.OldHash, err = stage(sf, jr.ID); err != nil {
			return abort(err)
		}
		jr.Files = append(jr.Files, fc)
	}
	failpoint("after-backup")
	// From here the journal says what to undo, and a guard outside this
	// process undoes it if this process dies before it confirms.
	if err := writeJournal(dir, jr); err != nil {
		return abort(err)
	}
	if o.StartGuard != nil {
		if err := o.StartGuard(dir, jr.ID); err != nil {
			return abort(fmt.Errorf("starting the guard: %w", err))
		}
	}
	for _, w := range p.Writes {
		if _, err := WriteFile(w.Path, w.Content); err != nil {
			return abort(err)
		}
		o.progress("wrote %s", w.Path)
	}
	// The kubelet refuses to start with a checkpoint of another policy: the
	// operator drained the node, so the stale state goes (staged for undo).
	for _, f := range jr.Files {
		if !f.Removed {
			continue
		}
		if err := os.Remove(f.Path); err != nil {
			return abort(err)
		}
		if err := syncDir(filepath.Dir(f.Path)); err != nil {
			return abort(err)
		}
		o.progress("removed %s (backup %s)", f.Path, f.Backup)
	}
	jr.Written = true
	if err := writeJournal(dir, jr); err != nil {
		return abort(err)
	}
	out.Applied = true
	failpoint("after-write")
	hangpoint("after-write")
	return jr, nil
}

// stage keeps the old file at path under a second name beside it (a hard
// link: no space needed) so that undo is a rename. Where a link cannot be
// made, a copy is staged (before the write, while there is room).
func stage(path, id string) (staged, hash string, err error) {
	staged = filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".kubeletcfg-old-"+id)
	if err := os.Link(path, staged); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return "", "", fmt.Errorf("staging %s: %s exists", path, staged)
		}
		if err := copyFile(path, staged); err != nil {
			return "", "", fmt.Errorf("staging %s: %w", path, err)
		}
	}
	if hash, err = hashFile(staged); err != nil {
		os.Remove(staged)
		return "", "", err
	}
	return staged, hash, syncDir(filepath.Dir(path))
}
