package apply

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// Journal records an apply in progress, on disk beside the config file, so
// that whoever comes next — the guard process, or the next apply — can put
// the old file back if the apply never confirmed the new one.
type Journal struct {
	// ConfigFile is the kubelet's --config file: the journal and the lock
	// live beside it.
	ConfigFile string `json:"configFile"`
	// Files are the files the apply changes, each with how to undo it.
	Files   []FileChange `json:"files"`
	Restart string       `json:"restart,omitempty"`
	Unit    string       `json:"unit,omitempty"`
	Started time.Time    `json:"started"`
	// PID is the apply's process; Deadline is when the guard stops waiting
	// for it to confirm: a stuck apply is killed and its change undone.
	PID      int       `json:"pid"`
	Deadline time.Time `json:"deadline"`
}

// FileChange is one file an apply changes.
type FileChange struct {
	Path string `json:"path"`
	// Backup holds the old content; empty when the file is new (Created).
	Backup  string `json:"backup,omitempty"`
	Created bool   `json:"created,omitempty"`
}

func journalPath(configFile string) string {
	return filepath.Join(filepath.Dir(configFile), ".kubeletcfg-apply.json")
}

func lockPath(configFile string) string {
	return filepath.Join(filepath.Dir(configFile), ".kubeletcfg.lock")
}

func writeJournal(j Journal) error {
	data, err := json.Marshal(j)
	if err != nil {
		return err
	}
	_, err = WriteFile(journalPath(j.ConfigFile), data)
	return err
}

func readJournal(configFile string) (*Journal, error) {
	data, err := os.ReadFile(journalPath(configFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var j Journal
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, fmt.Errorf("%s: %w", journalPath(configFile), err)
	}
	return &j, nil
}

func removeJournal(configFile string) error {
	err := os.Remove(journalPath(configFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err == nil {
		err = syncDir(filepath.Dir(configFile))
	}
	return err
}

// finish puts the old file back for an apply that did not confirm its
// change, restarts the kubelet and clears the journal. The caller holds the
// lock.
func (j *Journal) finish() error {
	if err := j.undo(); err != nil {
		return fmt.Errorf("interrupted apply: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := newRestarter(j.Restart, "", "", j.Unit, 2*time.Minute).Restart(ctx); err != nil {
		return fmt.Errorf("interrupted apply beside %s: restored its files, but the restart failed: %w", j.ConfigFile, err)
	}
	return removeJournal(j.ConfigFile)
}

// Guard waits for the lock of configFile — free once the apply holding it
// has finished or died — and then finishes an apply the journal says was
// not confirmed. Run it detached from the apply (StartGuard), so that it
// outlives the apply, its shell and its SSH session.
func Guard(configFile string) error {
	for {
		l, err := Acquire(lockPath(configFile), "kubeletcfg guard", time.Now())
		if err == nil {
			defer l.Release()
			j, err := readJournal(configFile)
			if err != nil || j == nil {
				return err
			}
			return j.finish()
		}
		if !errors.Is(err, ErrLocked) {
			return err
		}
		j, err := readJournal(configFile)
		if err != nil || j == nil {
			return err // confirmed (or gone): nothing left to guard
		}
		if !j.Deadline.IsZero() && time.Now().After(j.Deadline) && j.PID > 0 {
			// The apply holds the node past its deadline: stop it, and the
			// kernel hands its lock over.
			fmt.Fprintf(os.Stderr, "kubeletcfg guard: apply pid %d not confirmed by %s: stopping it\n", j.PID, j.Deadline.Format(time.RFC3339))
			_ = syscall.Kill(j.PID, syscall.SIGKILL)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// StartGuard starts `self guardArgs...` in a session of its own, with its
// output in the file beside the journal.
func StartGuard(self string, guardArgs []string, configFile string) error {
	log, err := os.OpenFile(filepath.Join(filepath.Dir(configFile), ".kubeletcfg-guard.log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
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

// Recover finishes an apply of configFile that was interrupted and whose
// guard did not run (a reboot): the old file back, a restart, no journal.
// It reports whether there was one.
func Recover(configFile string, holder string, now time.Time) (bool, error) {
	l, err := Acquire(lockPath(configFile), holder, now)
	if err != nil {
		return false, err
	}
	defer l.Release()
	j, err := readJournal(configFile)
	if err != nil || j == nil {
		return false, err
	}
	return true, j.finish()
}

// undo puts every file back as it was: its backup's content, or no file.
func (j *Journal) undo() error {
	for _, f := range j.Files {
		if f.Created {
			if err := os.Remove(f.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("removing %s: %w", f.Path, err)
			}
			if err := syncDir(filepath.Dir(f.Path)); err != nil {
				return err
			}
			continue
		}
		old, err := os.ReadFile(f.Backup)
		if err != nil {
			return fmt.Errorf("reading the backup of %s: %w", f.Path, err)
		}
		if _, err := WriteFile(f.Path, old); err != nil {
			return fmt.Errorf("restoring %s from %s: %w", f.Path, f.Backup, err)
		}
	}
	return nil
}
