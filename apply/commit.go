package apply

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// commit writes the plan as one transaction: every old file backed up and
// staged for undo, the journal, the guard, the writes, the state files
// removed. On error nothing of it stays (or the journal says what to undo).
// Every file is reached through its directory opened inside the node's
// tree (openDir). The caller holds the lock of dir.
func commit(o Options, dir string, p *Plan, out *Outcome) (*Journal, error) {
	now := o.Clock.Now()
	root := o.Setup.Root
	jr := &Journal{ID: newID(), Root: root, ConfigFile: p.ConfigFile, BootID: bootID(), Started: now,
		PID: os.Getpid(), PIDStart: procStart(os.Getpid()),
		// Two full watches (the change and a rollback) and a margin: an
		// apply still holding the node then is stuck.
		Deadline: now.Add(2*(o.Timeout+o.StableFor) + 10*time.Second)}
	out.ID = jr.ID
	var rec *Record
	abort := func(err error) (*Journal, error) {
		if rec != nil {
			os.RemoveAll(filepath.Join(dir, recordsDir, strconv.Itoa(rec.N)))
		}
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
		fc, err := prepare(root, w.Path, jr.ID, now)
		if err != nil {
			return abort(err)
		}
		fc.NewHash, fc.Created = hashBytes(w.Content), fc.OldHash == ""
		if fc.Backup != "" {
			o.progress("backup: %s", fc.Backup)
		}
		if w.Path == p.ConfigFile {
			out.Backup = fc.Backup
		}
		jr.Files = append(jr.Files, fc)
	}
	for _, sf := range p.StateFiles {
		fc, err := prepare(root, sf, jr.ID, now)
		if errors.Is(err, fs.ErrNotExist) {
			continue // not even its directory
		}
		if err != nil {
			return abort(err)
		}
		if fc.OldHash != "" {
			fc.Removed = true
			jr.Files = append(jr.Files, fc)
		}
	}
	for _, rm := range p.Removes {
		fc, err := prepare(root, rm, jr.ID, now)
		if err != nil {
			return abort(err)
		}
		fc.Removed = true
		if rm == p.ConfigFile {
			out.Backup = fc.Backup
		}
		jr.Files = append(jr.Files, fc)
	}
	var err error
	if rec, err = record(dir, jr, p.Changes); err != nil {
		return abort(err)
	}
	out.BackupN = rec.N
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
		if err := inDir(root, w.Path, func(d *os.Root, name string) error {
			_, err := writeIn(d, name, w.Content)
			return err
		}); err != nil {
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
		if err := inDir(root, f.Path, func(d *os.Root, name string) error {
			if err := d.Remove(name); err != nil {
				return err
			}
			return syncRoot(d)
		}); err != nil {
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
