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
	"slices"
	"sort"
	"strconv"
	"time"

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
	// Outcome is "applied", "rolled back" or "" while the apply runs.
	Outcome string `json:"outcome,omitempty"`
}

// RecordedFile is one file of a Record.
type RecordedFile struct {
	Path string `json:"path"`
	// Copy is the old content's file name in the record's directory; empty
	// when the apply created the file.
	Copy string `json:"copy,omitempty"`
	// Beside is the dated copy made beside the file, which pruning removes
	// with the record (never a copy kubeletcfg did not make).
	Beside string `json:"beside,omitempty"`
}

const recordsDir = "backups"

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

// record keeps the old content of every file jr changes in a new record.
func record(dir string, jr *Journal, changes []diff.Change) (*Record, error) {
	all, err := Records(dir)
	if err != nil {
		return nil, err
	}
	r := &Record{N: 1, Time: jr.Started, ApplyID: jr.ID, Who: who(), ConfigFile: jr.ConfigFile}
	if len(all) > 0 {
		r.N = all[len(all)-1].N + 1
	}
	for _, c := range changes {
		r.Changes = append(r.Changes, fmt.Sprintf("%s: %s -> %s", c.Path, diff.Value(c.Old), diff.Value(c.New)))
	}
	rdir := filepath.Join(dir, recordsDir, strconv.Itoa(r.N))
	if err := os.MkdirAll(filepath.Join(dir, recordsDir), 0o700); err != nil {
		return nil, err
	}
	if err := os.Mkdir(rdir, 0o700); err != nil {
		return nil, fmt.Errorf("backup record: %w", err)
	}
	for i, f := range jr.Files {
		rf := RecordedFile{Path: f.Path, Beside: f.Backup}
		if f.Staged != "" {
			rf.Copy = strconv.Itoa(i)
			if err := inDir(jr.Root, f.Staged, func(d *os.Root, name string) error {
				in, err := d.OpenFile(name, os.O_RDONLY, 0)
				if err != nil {
					return err
				}
				defer in.Close()
				data, err := io.ReadAll(in)
				if err != nil {
					return err
				}
				return writeOwned(rdir, rf.Copy, data)
			}); err != nil {
				os.RemoveAll(rdir)
				return nil, err
			}
		}
		r.Files = append(r.Files, rf)
	}
	return r, r.save(dir)
}

func (r *Record) save(dir string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return writeOwned(filepath.Join(dir, recordsDir, strconv.Itoa(r.N)), "record.json", data)
}

// Records lists the backups kept in the state directory dir, oldest first.
func Records(dir string) ([]Record, error) {
	entries, err := os.ReadDir(filepath.Join(dir, recordsDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Record
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil || n <= 0 || !e.IsDir() {
			continue
		}
		data, err := readOwned(filepath.Join(dir, recordsDir, e.Name(), "record.json"), 1<<20)
		if err != nil {
			continue // an apply that died while recording
		}
		var r Record
		if err := json.Unmarshal(data, &r); err != nil || r.N != n {
			continue
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].N < out[j].N })
	return out, nil
}

// RecordedContent is the old content of path kept in record n, or (n 0)
// in the newest record that holds it.
func RecordedContent(dir string, n int, path string) ([]byte, error) {
	all, err := Records(dir)
	if err != nil {
		return nil, err
	}
	for i := len(all) - 1; i >= 0; i-- {
		r := all[i]
		if n == 0 && slices.ContainsFunc(r.Files, func(f RecordedFile) bool { return f.Path == path && f.Copy != "" }) {
			n = r.N
		}
		if r.N != n {
			continue
		}
		for _, f := range r.Files {
			if f.Path == path && f.Copy != "" {
				return readOwned(filepath.Join(dir, recordsDir, strconv.Itoa(n), f.Copy), 64<<20)
			}
		}
		return nil, fmt.Errorf("backup %d holds no old content of %s", n, path)
	}
	if n == 0 {
		return nil, fmt.Errorf("no backup of %s in %s", path, filepath.Join(dir, recordsDir))
	}
	return nil, fmt.Errorf("no backup %d in %s (kubeletcfg backups lists them)", n, filepath.Join(dir, recordsDir))
}

// pruneRecords removes the oldest records beyond the newest keep, and the
// dated copies beside the files that those records made.
func pruneRecords(dir, root string, keep int) (int, error) {
	all, err := Records(dir)
	if err != nil || len(all) <= keep {
		return 0, err
	}
	old := all[:len(all)-keep]
	for _, r := range old {
		for _, f := range r.Files {
			if f.Beside == "" {
				continue
			}
			if err := inDir(root, f.Beside, func(d *os.Root, name string) error {
				err := d.Remove(name)
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}); err != nil {
				return 0, err
			}
		}
		if err := os.RemoveAll(filepath.Join(dir, recordsDir, strconv.Itoa(r.N))); err != nil {
			return 0, err
		}
	}
	return len(old), nil
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
