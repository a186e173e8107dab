package apply

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Journal records an apply in progress in kubeletcfg's state directory, so
// that whoever comes next — the guard, `kubeletcfg recover`, the boot-time
// recovery — can put the old files back if the apply never confirmed the
// new ones. It holds no command: whoever recovers restarts the kubelet the
// way it was told to on its own command line.
type Journal struct {
	ID string `json:"id"`
	// Root is the node tree (--root) every Path lies in; "" for this host.
	Root       string       `json:"root,omitempty"`
	ConfigFile string       `json:"configFile"`
	Files      []FileChange `json:"files"`
	BootID     string       `json:"bootID"`
	Started    time.Time    `json:"started"`
	// PID is the apply's process and PIDStart its start time (clock ticks
	// after boot): the guard stops PID past Deadline only while both still
	// name the apply.
	PID      int       `json:"pid"`
	PIDStart uint64    `json:"pidStart"`
	Deadline time.Time `json:"deadline"`
	// BootDeadline is Deadline on the clock of boot BootID
	// (CLOCK_BOOTTIME, ns), which no clock step moves: the guard goes by it
	// in that boot.
	BootDeadline int64 `json:"bootDeadlineNs,omitempty"`
	// Restart is the process group of a restart command in flight: no
	// restart starts while it still runs.
	Restart *procRef `json:"restart,omitempty"`
	// Written is set once the new files are in place.
	Written bool `json:"written,omitempty"`
}

// FileChange is one file an apply changes.
type FileChange struct {
	Path string `json:"path"`
	// Staged is the old file, hard-linked beside Path before the write, so
	// that undo is a rename and needs no free space.
	Staged string `json:"staged,omitempty"`
	// Backup is the dated copy kept beside the file.
	Backup  string `json:"backup,omitempty"`
	Created bool   `json:"created,omitempty"`
	// Removed: the change removes the file — a drop-in (--remove-dropin),
	// or, with StateFile, a kubelet state file the change needs gone.
	Removed bool `json:"removed,omitempty"`
	// StateFile: a checkpoint the new kubelet writes anew, which an undo
	// replaces; a removed drop-in someone made again is theirs, and stays.
	StateFile bool   `json:"stateFile,omitempty"`
	OldHash   string `json:"oldSHA256,omitempty"`
	NewHash   string `json:"newSHA256,omitempty"`
}

// procRef names a process across the reuse of its ID.
type procRef struct {
	PID   int    `json:"pid"`
	Start uint64 `json:"start"`
}

const journalName = "journal.json"

// ErrChangedSince stops a recovery: a file no longer holds what the apply
// wrote (someone fixed it since), so putting the old one back would undo
// their work.
var ErrChangedSince = errors.New("changed since the apply wrote it: left as it is")

func newID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// procStart is the start time of pid (field 22 of /proc/PID/stat).
func procStart(pid int) uint64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return 0
	}
	n, _ := strconv.ParseUint(f[19], 10, 64)
	return n
}

// is tells whether the process p names still runs.
func (p *procRef) is() bool {
	return p != nil && p.PID > 0 && procStart(p.PID) == p.Start && alive(p.PID)
}

func self() procRef {
	return procRef{PID: os.Getpid(), Start: procStart(os.Getpid())}
}

// hashIn hashes the regular file name of d.
func hashIn(d *os.Root, name string) (string, error) {
	f, err := d.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	// Not io.Copy: *os.File's WriteTo takes a 32 KiB buffer for a file of
	// a few hundred bytes.
	buf := make([]byte, 4096)
	for {
		n, err := f.Read(buf)
		h.Write(buf[:n])
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func hashBytes(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func writeJournal(dir string, j *Journal) error {
	if j.BootDeadline == 0 && !j.Deadline.IsZero() && j.BootID != "" {
		if now, err := bootTime(); err == nil {
			j.BootDeadline = int64(now + j.Deadline.Sub(j.Started))
		}
	}
	data, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return err
	}
	return writeOwned(dir, journalName, data)
}

// ReadJournal reads the journal of dir (nil when there is none). A journal
// kubeletcfg did not write — a link, another owner, paths outside its root —
// is refused.
func ReadJournal(dir string) (*Journal, error) {
	path := filepath.Join(dir, journalName)
	data, err := readOwned(path, 1<<20)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	var j Journal
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	if err := j.check(); err != nil {
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	return &j, nil
}

// bootTime is the time since boot, suspended time included: a clock that
// does not jump when the wall clock is set.
func bootTime() (time.Duration, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		return 0, err
	}
	return time.Duration(ts.Nano()), nil
}

// pastDeadline says whether the apply is past its deadline: on the boot
// clock in the boot that wrote the journal, else (another boot, no boot
// clock) on clock.
func (j *Journal) pastDeadline(clock Clock) bool {
	if j.BootDeadline > 0 && j.BootID != "" && j.BootID == bootID() {
		if now, err := bootTime(); err == nil {
			return int64(now) > j.BootDeadline
		}
	}
	return clock.Now().After(j.Deadline)
}

// ofRoot refuses a journal of another node tree than root ("" for this
// host): its paths would name files of another tree, or of this host.
func (j *Journal) ofRoot(root string) error {
	clean := func(r string) string {
		if r == "" {
			return ""
		}
		return filepath.Clean(r)
	}
	if clean(j.Root) != clean(root) {
		where := "this host"
		if j.Root != "" {
			where = "the tree " + j.Root
		}
		if root == "" {
			return fmt.Errorf("written for %s, not this host: %w", where, ErrUntrusted)
		}
		return fmt.Errorf("written for %s, not for --root %s: %w", where, root, ErrUntrusted)
	}
	return nil
}

// check refuses a journal whose files are not where an apply writes them.
func (j *Journal) check() error {
	inside := func(p string) error {
		if p == "" {
			return nil
		}
		if !filepath.IsAbs(p) || filepath.Clean(p) != p {
			return fmt.Errorf("path %q is not clean and absolute: %w", p, ErrUntrusted)
		}
		if j.Root != "" && !strings.HasPrefix(p, filepath.Clean(j.Root)+"/") {
			return fmt.Errorf("path %s is outside its root %s: %w", p, j.Root, ErrUntrusted)
		}
		return nil
	}
	if len(j.Files) == 0 || j.ID == "" {
		return fmt.Errorf("no apply recorded: %w", ErrUntrusted)
	}
	for _, f := range j.Files {
		if err := errors.Join(inside(f.Path), inside(f.Staged), inside(f.Backup)); err != nil {
			return err
		}
		if f.Staged != "" && filepath.Dir(f.Staged) != filepath.Dir(f.Path) {
			return fmt.Errorf("%s is staged outside its directory: %w", f.Path, ErrUntrusted)
		}
		if f.NewHash == "" && !f.Removed {
			return fmt.Errorf("%s: no hash of what was written: %w", f.Path, ErrUntrusted)
		}
	}
	return nil
}

func removeJournal(dir string) error {
	err := os.Remove(filepath.Join(dir, journalName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err == nil {
		err = syncDir(dir)
	}
	return err
}

// undo puts every file back as it was, last change first: the staged old
// file renamed back (no free space needed), a created file removed. It goes
// on past a file it cannot restore and reports all of them. A file that no
// longer holds what the apply wrote is left alone (ErrChangedSince).
func (j *Journal) undo() error {
	var errs []error
	for i := len(j.Files) - 1; i >= 0; i-- {
		if err := j.Files[i].undo(j.Root); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (f FileChange) undo(root string) error {
	d, name, err := openDir(root, f.Path)
	if err != nil {
		return err
	}
	defer d.Close()
	staged := filepath.Base(f.Staged)
	cur, err := hashIn(d, name)
	missing := errors.Is(err, fs.ErrNotExist)
	if err != nil && !missing {
		return fmt.Errorf("%s: %w", f.Path, err)
	}
	switch {
	case !missing && cur == f.OldHash && !f.Created:
		d.Remove(staged) // already as it was
		return nil
	case f.Removed && !f.StateFile && !missing:
		return fmt.Errorf("%s: removed by the apply and made again since: %w", f.Path, ErrChangedSince)
	case f.Removed:
		// A state file the new kubelet wrote anew: the old one goes back.
	case f.Created && missing:
		return nil
	case missing || cur != f.NewHash:
		return fmt.Errorf("%s: %w", f.Path, ErrChangedSince)
	case f.Created:
		if err := d.Remove(name); err != nil {
			return fmt.Errorf("removing %s: %w", f.Path, err)
		}
		return syncRoot(d)
	}
	if got, err := hashIn(d, staged); err != nil || got != f.OldHash {
		return fmt.Errorf("restoring %s: its staged old content %s is gone or changed (%v); the backup %s holds it", f.Path, f.Staged, err, f.Backup)
	}
	if err := d.Rename(staged, name); err != nil {
		return fmt.Errorf("restoring %s from %s: %w", f.Path, f.Staged, err)
	}
	return syncRoot(d)
}

// verify checks, before anything is touched, that every file holds what
// the apply wrote or what was there before it.
func (j *Journal) verify() error {
	var errs []error
	for _, f := range j.Files {
		d, name, err := openDir(j.Root, f.Path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		cur, err := hashIn(d, name)
		d.Close()
		missing := errors.Is(err, fs.ErrNotExist)
		switch {
		case err != nil && !missing:
			errs = append(errs, fmt.Errorf("%s: %w", f.Path, err))
		case f.Removed && !f.StateFile && !missing && cur != f.OldHash:
			errs = append(errs, fmt.Errorf("%s: removed by the apply and made again since: %w", f.Path, ErrChangedSince))
		case f.Removed, f.Created && missing, !missing && (cur == f.NewHash || cur == f.OldHash):
		default:
			errs = append(errs, fmt.Errorf("%s: %w", f.Path, ErrChangedSince))
		}
	}
	return errors.Join(errs...)
}

// abandon ends an apply that wrote nothing (stopped before its write, or
// killed before it): its files are put back as they were (the staged
// links go), the dated copies it made go while they hold the old content,
// its record and its journal go. Nothing of it stays.
func (j *Journal) abandon(dir string) error {
	if err := j.undo(); err != nil {
		return err
	}
	j.settle()
	for _, f := range j.Files {
		if f.Backup == "" || f.OldHash == "" {
			continue
		}
		if d, name, err := openDir(j.Root, f.Backup); err == nil {
			if st, err := d.Lstat(name); err == nil && st.Mode().IsRegular() {
				if h, err := hashIn(d, name); err == nil && h == f.OldHash {
					d.Remove(name)
					syncRoot(d)
				}
			}
			d.Close()
		}
	}
	removeRecordOf(dir, j.ID)
	return removeJournal(dir)
}

// settle removes what only an undo needed, once the change is confirmed.
func (j *Journal) settle() {
	for _, f := range j.Files {
		if f.Staged == "" {
			continue
		}
		if d, _, err := openDir(j.Root, f.Staged); err == nil {
			d.Remove(filepath.Base(f.Staged))
			d.Close()
		}
	}
}

// waitRestart waits until the restart command an earlier apply started has
// ended (or d has passed: then it refuses to start another).
func waitRestart(ctx context.Context, clock Clock, p *procRef, d time.Duration) error {
	for end := clock.Now().Add(d); p.is(); {
		if clock.Now().After(end) {
			return fmt.Errorf("the restart command started by an earlier apply (process group %d) still runs after %s: not starting another", p.PID, d)
		}
		if err := clock.Sleep(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
	return nil
}
