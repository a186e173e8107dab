package apply

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kubeletcfg/kubeletcfg/config"
	"github.com/kubeletcfg/kubeletcfg/diff"
)

// Record is one backup kubeletcfg keeps in its state directory
// (backups/N): the files an apply replaced, as they were, and what the
// apply was. Numbers grow; the newest has the highest.
type Record struct {
	N          int       `json:"n"`
	Time       time.Time `json:"time"`
	ApplyID    string    `json:"applyID"`
	Who        string    `json:"who"`
	ConfigFile string    `json:"configFile"`
	// Changes summarises the change the apply made ("maxPods: 100 -> 111").
	Changes []string       `json:"changes"`
	Files   []RecordedFile `json:"files"`
	// Outcome is how the apply ended: OutcomeApplied, OutcomeRolledBack,
	// one of the Undone* outcomes, or "" while the apply runs.
	Outcome string `json:"outcome,omitempty"`
	// Args is the kubelet's command line before the change, when the
	// change rewrote it (a migration), values of secret flags redacted.
	Args []string `json:"args,omitempty"`
}

// The outcomes of a record.
const (
	OutcomeApplied    = "applied"
	OutcomeRolledBack = "rolled back"
	// An apply that did not confirm, undone after it ended.
	OutcomeUndoneByRecover = "undone by recover"
	OutcomeUndoneByGuard   = "undone by the guard"
	OutcomeUndoneAtBoot    = "undone at boot"
)

// RecordedFile is one file of a Record. Paths are the node's (under --root,
// inside the tree: the image mounted elsewhere keeps its records).
type RecordedFile struct {
	Path string `json:"path"`
	// Copy is the old content's file name in the record's directory (a
	// bare name); empty when the apply created the file.
	Copy string `json:"copy,omitempty"`
	// Beside is the dated copy made beside the file, which pruning removes
	// with the record (never a copy kubeletcfg did not make).
	Beside string `json:"beside,omitempty"`
	// Removed: the apply removed the file (a drop-in, a state file).
	Removed bool `json:"removed,omitempty"`
	// StateFile: a kubelet checkpoint the change needed gone.
	StateFile bool `json:"stateFile,omitempty"`
}

const (
	recordsDir = "backups"
	recordFile = "record.json"
)

func who() string {
	name := os.Getenv("SUDO_USER")
	if u, err := user.Current(); err == nil {
		if name != "" {
			return name + " (as " + u.Username + ")"
		}
		return u.Username
	}
	return name
}

// nodePath is the node's path of the disk path p under root.
func nodePath(root, p string) string {
	if root == "" || p == "" {
		return p
	}
	rel, err := filepath.Rel(filepath.Clean(root), p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return p
	}
	return filepath.Join("/", rel)
}

// diskPath is where the node's path p is on disk under root.
func diskPath(root, p string) string {
	if root == "" || p == "" {
		return p
	}
	return filepath.Join(root, filepath.Clean("/"+p))
}

// openRecords opens the backups directory of the state directory dir
// (nil when there is none and create is not set).
func openRecords(dir string, create bool) (*os.Root, error) {
	state, err := openState(dir)
	if err != nil {
		return nil, err
	}
	defer state.Close()
	return subDir(state, recordsDir, create)
}

// record keeps the old content of every file jr changes in a new record,
// numbered past every record directory there (a half-made one included).
// Records an aborted apply left are cleaned first.
func record(dir string, jr *Journal, changes []diff.Change) (*Record, error) {
	backups, err := openRecords(dir, true)
	if err != nil {
		return nil, err
	}
	defer backups.Close()
	// Numbers never come back, even those of records cleaned here.
	last, err := lastNumber(backups)
	if err != nil {
		return nil, err
	}
	cleanUnfinished(dir, jr.Root, jr.ID)
	r := &Record{Time: jr.Started, ApplyID: jr.ID, Who: who(), ConfigFile: nodePath(jr.Root, jr.ConfigFile)}
	for _, c := range changes {
		r.Changes = append(r.Changes, fmt.Sprintf("%s: %s -> %s", c.Path, diff.Value(c.Old), diff.Value(c.New)))
	}
	for r.N = last + 1; ; r.N++ {
		err := backups.Mkdir(strconv.Itoa(r.N), 0o700)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("backup record: %w", err)
		}
	}
	fail := func(err error) (*Record, error) {
		removeRecord(dir, r.N)
		return nil, err
	}
	rdir, err := subDir(backups, strconv.Itoa(r.N), false)
	if err != nil {
		return fail(err)
	}
	defer rdir.Close()
	for i, f := range jr.Files {
		rf := RecordedFile{Path: nodePath(jr.Root, f.Path), Beside: nodePath(jr.Root, f.Backup), Removed: f.Removed, StateFile: f.StateFile}
		if f.Staged != "" {
			rf.Copy = strconv.Itoa(i)
			if err := inDir(jr.Root, f.Staged, func(d *os.Root, name string) error {
				data, err := readRegular(d, name)
				if err != nil {
					return err
				}
				return writeOwnedIn(rdir, rf.Copy, data)
			}); err != nil {
				return fail(err)
			}
		}
		r.Files = append(r.Files, rf)
	}
	if err := r.saveIn(rdir); err != nil {
		return fail(err)
	}
	return r, nil
}

// readRegular reads the regular file name of d, never through a link.
func readRegular(d *os.Root, name string) ([]byte, error) {
	in, err := d.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w", name, ErrNotRegular)
	}
	return io.ReadAll(in)
}

// lastNumber is the highest number among the entries of backups (0: none).
func lastNumber(backups *os.Root) (int, error) {
	f, err := backups.Open(".")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return 0, err
	}
	last := 0
	for _, name := range names {
		if n, err := strconv.Atoi(name); err == nil && n > last {
			last = n
		}
	}
	return last, nil
}

func (r *Record) saveIn(rdir *os.Root) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return writeOwnedIn(rdir, recordFile, data)
}

// check refuses a record kubeletcfg did not write: a copy name that is not
// a bare name in the record's directory, paths that are not clean and
// absolute.
func (r *Record) check(n int) error {
	if r.N != n {
		return fmt.Errorf("record %d says it is %d: %w", n, r.N, ErrUntrusted)
	}
	for _, f := range r.Files {
		if f.Copy != "" && (f.Copy != filepath.Base(f.Copy) || f.Copy == "." || f.Copy == ".." || f.Copy == recordFile || strings.HasPrefix(f.Copy, ".")) {
			return fmt.Errorf("record %d: copy %q is not a name in its directory: %w", n, f.Copy, ErrUntrusted)
		}
		for _, p := range []string{f.Path, f.Beside} {
			if p != "" && (!filepath.IsAbs(p) || filepath.Clean(p) != p) {
				return fmt.Errorf("record %d: path %q is not clean and absolute: %w", n, p, ErrUntrusted)
			}
		}
		if f.Beside != "" && filepath.Dir(f.Beside) != filepath.Dir(f.Path) {
			return fmt.Errorf("record %d: the dated copy %s is not beside %s: %w", n, f.Beside, f.Path, ErrUntrusted)
		}
	}
	return nil
}

// records reads every record of dir, oldest first; refused has the records
// that are there but not kubeletcfg's (and the half-made ones), by number.
func records(dir string) (list []Record, refused map[int]error, err error) {
	backups, err := openRecords(dir, false)
	if err != nil || backups == nil {
		return nil, nil, err
	}
	defer backups.Close()
	f, err := backups.Open(".")
	if err != nil {
		return nil, nil, err
	}
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		return nil, nil, err
	}
	refused = map[int]error{}
	for _, name := range names {
		n, err := strconv.Atoi(name)
		if err != nil || n <= 0 || strconv.Itoa(n) != name {
			continue
		}
		r, err := readRecord(backups, n)
		if err != nil {
			refused[n] = err
			continue
		}
		list = append(list, r)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].N < list[j].N })
	return list, refused, nil
}

func readRecord(backups *os.Root, n int) (Record, error) {
	var r Record
	rdir, err := subDir(backups, strconv.Itoa(n), false)
	if err != nil || rdir == nil {
		return r, cmpErr(err, fmt.Errorf("record %d: gone", n))
	}
	defer rdir.Close()
	data, err := readOwnedIn(rdir, recordFile, 1<<20)
	if err != nil {
		return r, fmt.Errorf("record %d: %w", n, err) // an apply that died while recording
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return r, fmt.Errorf("record %d: %w", n, err)
	}
	return r, r.check(n)
}

func cmpErr(err, or error) error {
	if err != nil {
		return err
	}
	return or
}

// Records lists the backups kept in the state directory dir, oldest first
// (a record that is not kubeletcfg's is left out).
func Records(dir string) ([]Record, error) {
	list, _, err := records(dir)
	return list, err
}

// RecordedContent is the old content of path (the node's path) kept in
// record n, or (n 0) in the newest record of a change that took effect
// (OutcomeApplied) that holds it.
func RecordedContent(dir string, n int, path string) ([]byte, error) {
	b, _, err := RecordedCopy(dir, n, path)
	return b, err
}

// RecordedCopy is RecordedContent, with the record it comes from.
func RecordedCopy(dir string, n int, path string) ([]byte, *Record, error) {
	all, refused, err := records(dir)
	if err != nil {
		return nil, nil, err
	}
	if err := refused[n]; n != 0 && err != nil {
		return nil, nil, err
	}
	for i := len(all) - 1; i >= 0; i-- {
		r := all[i]
		if n == 0 && r.Outcome == OutcomeApplied && r.copyOf(path) != "" {
			n = r.N
		}
		if r.N != n {
			continue
		}
		c := r.copyOf(path)
		if c == "" {
			return nil, nil, fmt.Errorf("backup %d holds no old content of %s", n, path)
		}
		b, err := readCopy(dir, n, c)
		return b, &r, err
	}
	if n == 0 {
		return nil, nil, fmt.Errorf("no backup of %s from a change that took effect in %s", path, filepath.Join(dir, recordsDir))
	}
	return nil, nil, fmt.Errorf("no backup %d in %s (kubeletcfg backups lists them)", n, filepath.Join(dir, recordsDir))
}

// copyOf is the name of the copy of path in r ("" if none).
func (r *Record) copyOf(path string) string {
	for _, f := range r.Files {
		if f.Path == path && f.Copy != "" {
			return f.Copy
		}
	}
	return ""
}

// readCopy reads the copy name of record n.
func readCopy(dir string, n int, name string) ([]byte, error) {
	backups, err := openRecords(dir, false)
	if err != nil || backups == nil {
		return nil, cmpErr(err, fmt.Errorf("no backup %d", n))
	}
	defer backups.Close()
	rdir, err := subDir(backups, strconv.Itoa(n), false)
	if err != nil || rdir == nil {
		return nil, cmpErr(err, fmt.Errorf("no backup %d", n))
	}
	defer rdir.Close()
	return readOwnedIn(rdir, name, 64<<20)
}

// removeRecordOf removes the record of the apply id, if there is one.
func removeRecordOf(dir, id string) {
	all, _ := Records(dir)
	for _, r := range all {
		if r.ApplyID == id {
			removeRecord(dir, r.N)
		}
	}
}

// removeRecord removes record n's directory, inside the state directory.
func removeRecord(dir string, n int) error {
	backups, err := openRecords(dir, false)
	if err != nil || backups == nil {
		return err
	}
	defer backups.Close()
	name := strconv.Itoa(n)
	st, err := backups.Lstat(name)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s: a %s: %w", filepath.Join(dir, recordsDir, name), kind(st.Mode()), ErrUntrusted)
	}
	return backups.RemoveAll(name)
}

// pruneRecords removes the oldest records beyond the newest keep, and the
// dated copies beside the files that those records made. It is best
// effort: a record whose dated copy cannot be removed stays, for the next
// time; nothing it meets changes the outcome of an apply. It returns how
// many records went.
func pruneRecords(dir, root string, keep int) (int, error) {
	all, err := Records(dir)
	if err != nil || len(all) <= keep {
		return 0, nil
	}
	pruned := 0
	for _, r := range all[:len(all)-keep] {
		if removeBesides(dir, root, r) != nil {
			continue
		}
		if removeRecord(dir, r.N) == nil {
			pruned++
		}
	}
	return pruned, nil
}

// removeBesides removes the dated copies record r made beside its files,
// each only while it still holds what the record kept (something else
// under that name is not kubeletcfg's, and stays).
func removeBesides(dir, root string, r Record) error {
	var errs []error
	for _, f := range r.Files {
		if f.Beside == "" || f.Copy == "" {
			continue
		}
		errs = append(errs, removeIfCopy(dir, root, r.N, f.Copy, f.Beside))
	}
	return errors.Join(errs...)
}

// removeIfCopy removes the node's file p when it is a regular file that
// holds the copy name of record n.
func removeIfCopy(dir, root string, n int, name, p string) error {
	want, err := readCopy(dir, n, name)
	if err != nil {
		return err
	}
	return inDir(root, diskPath(root, p), func(d *os.Root, base string) error {
		st, err := d.Lstat(base)
		if errors.Is(err, fs.ErrNotExist) || (err == nil && !st.Mode().IsRegular()) {
			return nil
		}
		if err != nil {
			return err
		}
		if h, err := hashIn(d, base); err != nil || h != hashBytes(want) {
			return err
		}
		if err := d.Remove(base); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return syncRoot(d)
	})
}

// cleanUnfinished removes what applies that died before their journal
// left (except the apply running, id): a record directory without its
// record, and a record without an outcome whose change never took effect
// (its files still hold the old content), with its dated copies and staged
// links. A record of a journal still there is recover's.
func cleanUnfinished(dir, root, id string) {
	all, refused, err := records(dir)
	if err != nil {
		return
	}
	j, jerr := ReadJournal(dir)
	for n, rerr := range refused {
		if !errors.Is(rerr, ErrUntrusted) {
			removeRecord(dir, n) // half-made: its directory, nothing it names
		}
	}
	for _, r := range all {
		if r.Outcome != "" || r.ApplyID == id || jerr != nil || (j != nil && j.ID == r.ApplyID) || !r.neverTookEffect(dir, root) {
			continue
		}
		var errs []error
		for _, f := range r.Files {
			if f.Copy == "" {
				continue
			}
			staged := filepath.Join(filepath.Dir(f.Path), "."+filepath.Base(f.Path)+".kubeletcfg-old-"+r.ApplyID)
			errs = append(errs, removeIfCopy(dir, root, r.N, f.Copy, staged), removeIfCopy(dir, root, r.N, f.Copy, f.Beside))
		}
		if errors.Join(errs...) == nil {
			removeRecord(dir, r.N)
		}
	}
}

// neverTookEffect says whether every file of r still holds what r kept
// (a file it created, missing): the apply died before it wrote.
func (r *Record) neverTookEffect(dir, root string) bool {
	for _, f := range r.Files {
		var want []byte
		if f.Copy != "" {
			var err error
			if want, err = readCopy(dir, r.N, f.Copy); err != nil {
				return false
			}
		}
		err := inDir(root, diskPath(root, f.Path), func(d *os.Root, base string) error {
			h, err := hashIn(d, base)
			switch {
			case f.Copy == "" && errors.Is(err, fs.ErrNotExist):
				return nil
			case err != nil:
				return err
			case f.Copy == "" || h != hashBytes(want):
				return ErrChangedSince
			}
			return nil
		})
		if err != nil {
			return false
		}
	}
	return true
}

// setOutcome notes how the apply of record n ended (best effort: the
// record stays useful without it).
func setOutcome(dir string, n int, outcome string) {
	all, _ := Records(dir)
	for _, r := range all {
		if r.N == n {
			r.Outcome = outcome
			_ = r.save(dir)
		}
	}
}

// setOutcomeOf notes how the apply id ended, in its record.
func setOutcomeOf(dir, id, outcome string) {
	all, _ := Records(dir)
	for _, r := range all {
		if r.ApplyID == id {
			r.Outcome = outcome
			_ = r.save(dir)
		}
	}
}

func (r *Record) save(dir string) error {
	backups, err := openRecords(dir, false)
	if err != nil || backups == nil {
		return cmpErr(err, fmt.Errorf("no backups in %s", dir))
	}
	defer backups.Close()
	rdir, err := subDir(backups, strconv.Itoa(r.N), false)
	if err != nil || rdir == nil {
		return cmpErr(err, fmt.Errorf("no backup %d", r.N))
	}
	defer rdir.Close()
	return r.saveIn(rdir)
}

// RestoreRecord makes o put back record n (0: the newest of a change that
// took effect) as one transaction: every file it kept gets its old content,
// every file its apply created goes, and when the apply rewrote the
// kubelet's command line (a migration), the record's command line is
// layered. o.Setup is the node as it is now. It says which record.
func RestoreRecord(dir string, n int, o *Options) (*Record, error) {
	all, refused, err := records(dir)
	if err != nil {
		return nil, err
	}
	if err := refused[n]; n != 0 && err != nil {
		return nil, err
	}
	var rec *Record
	for i := len(all) - 1; i >= 0 && rec == nil; i-- {
		if (n == 0 && all[i].Outcome == OutcomeApplied) || (n != 0 && all[i].N == n) {
			rec = &all[i]
		}
	}
	if rec == nil {
		if n == 0 {
			return nil, fmt.Errorf("no backup of a change that took effect in %s", filepath.Join(dir, recordsDir))
		}
		return nil, fmt.Errorf("no backup %d in %s (kubeletcfg backups lists them)", n, filepath.Join(dir, recordsDir))
	}
	root := o.Setup.Root
	o.Restore = nil
	for _, f := range rec.Files {
		if f.StateFile {
			continue // the kubelet's checkpoint: the change's plan says what it needs
		}
		rf := RestoreFile{Path: diskPath(root, f.Path), Remove: f.Copy == ""}
		if f.Copy != "" {
			if rf.Content, err = readCopy(dir, rec.N, f.Copy); err != nil {
				return nil, err
			}
		}
		o.Restore = append(o.Restore, rf)
	}
	if len(o.Restore) == 0 {
		return nil, fmt.Errorf("backup %d holds no file to put back", rec.N)
	}
	o.NewArgs = rec.Args
	return rec, nil
}

// redactArgs is a command line with the values of secret flags (the
// headers of --manifest-url-header) redacted, for a record's metadata.
func redactArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a
		name, _, eq := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch {
		case strings.HasPrefix(a, "-") && name == "manifest-url-header" && eq:
			out[i] = a[:strings.Index(a, "=")+1] + config.Redacted
		case i > 0 && strings.HasPrefix(args[i-1], "-") && strings.TrimLeft(args[i-1], "-") == "manifest-url-header":
			out[i] = config.Redacted
		}
	}
	return out
}
