package apply

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// DefaultStateDir is kubeletcfg's own directory on a node: the lock, the
// journal of an apply in progress, and the backups with their metadata.
// Under --root it is this path inside the root.
const DefaultStateDir = "/var/lib/kubeletcfg"

// ErrUntrusted refuses a state file or directory that kubeletcfg did not
// make: a symlink, another owner, or open to others.
var ErrUntrusted = errors.New("not kubeletcfg's own (refused)")

// stateDir opens kubeletcfg's directory at path, creating it 0700 when
// missing. It must be a real directory (not a link), owned by this user,
// closed to group and others, below directories that are not links either
// (lstat at each step), so that nobody else can plant a journal or lock in
// it.
func stateDir(path string) (string, error) {
	path = filepath.Clean(path)
	if !filepath.IsAbs(path) {
		return "", fmt.Errorf("state directory %s: not an absolute path", path)
	}
	cur := "/"
	parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
	for i, part := range parts {
		cur = filepath.Join(cur, part)
		st, err := os.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			mode := fs.FileMode(0o755)
			if i == len(parts)-1 {
				mode = 0o700
			}
			if err := os.Mkdir(cur, mode); err != nil && !errors.Is(err, fs.ErrExist) {
				return "", fmt.Errorf("state directory: %w", err)
			}
			if st, err = os.Lstat(cur); err != nil {
				return "", err
			}
		} else if err != nil {
			return "", fmt.Errorf("state directory: %w", err)
		}
		if !st.IsDir() {
			return "", fmt.Errorf("state directory %s: %s is a %s: %w", path, cur, kind(st.Mode()), ErrUntrusted)
		}
	}
	st, err := os.Lstat(path)
	if err != nil {
		return "", err
	}
	if err := owned(st); err != nil {
		return "", fmt.Errorf("state directory %s: %w", path, err)
	}
	return path, nil
}

// owned accepts what this user owns and nobody else may write (a
// directory: nobody else may enter).
func owned(st fs.FileInfo) error {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return ErrUntrusted
	}
	if int(sys.Uid) != os.Geteuid() {
		return fmt.Errorf("owned by uid %d, not %d: %w", sys.Uid, os.Geteuid(), ErrUntrusted)
	}
	mask := fs.FileMode(0o022)
	if st.IsDir() {
		mask = 0o077
	}
	if st.Mode().Perm()&mask != 0 {
		return fmt.Errorf("mode %v: %w", st.Mode().Perm(), ErrUntrusted)
	}
	return nil
}

func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "symlink"
	case m.IsDir():
		return "directory"
	case m.IsRegular():
		return "file"
	}
	return m.Type().String()
}

// openOwned opens a file of the state directory without following a link,
// and checks it is a regular file kubeletcfg owns.
func openOwned(path string, flag int, perm fs.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, flag|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, perm)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("%s: a symlink: %w", path, ErrUntrusted)
		}
		return nil, err
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = fmt.Errorf("a %s: %w", kind(st.Mode()), ErrUntrusted)
	}
	if err == nil {
		err = owned(st)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// readOwned reads a small state file (at most limit bytes).
func readOwned(path string, limit int64) ([]byte, error) {
	f, err := openOwned(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: larger than %d bytes: %w", path, limit, ErrUntrusted)
	}
	return b, nil
}

// writeOwned replaces a state file atomically (0600).
func writeOwned(dir, name string, data []byte) error {
	d, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return writeOwnedIn(d, name, data)
}

// openState opens the state directory dir (checked by stateDir) as a root:
// its files and subdirectories are reached inside it, never through a path
// a link can redirect.
func openState(dir string) (*os.Root, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("state directory: %w", err)
	}
	return r, nil
}

// subDir opens the directory name of parent (a state directory or one of
// its subdirectories), making it 0700 when create is set and it is missing
// (nil, nil when it is missing and create is not set). It must be a real
// directory of this user's, closed to others: a link is never followed.
func subDir(parent *os.Root, name string, create bool) (*os.Root, error) {
	st, err := parent.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		if !create {
			return nil, nil
		}
		if err := parent.Mkdir(name, 0o700); err != nil {
			return nil, fmt.Errorf("state directory %s: %w", filepath.Join(parent.Name(), name), err)
		}
		st, err = parent.Lstat(name)
	}
	if err != nil {
		return nil, fmt.Errorf("state directory: %w", err)
	}
	path := filepath.Join(parent.Name(), name)
	if !st.IsDir() {
		return nil, fmt.Errorf("%s is a %s: %w", path, kind(st.Mode()), ErrUntrusted)
	}
	if err := owned(st); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	d, err := parent.OpenRoot(name)
	if err != nil {
		return nil, fmt.Errorf("state directory: %w", err)
	}
	// Checked by name, opened by name: the same directory, or refused.
	if ost, err := d.Stat("."); err != nil || !os.SameFile(st, ost) {
		d.Close()
		return nil, fmt.Errorf("%s changed while it was opened: %w", path, ErrUntrusted)
	}
	return d, nil
}

// readOwnedIn reads the small state file name of d (at most limit bytes),
// never through a link, only a regular file of this user's.
func readOwnedIn(d *os.Root, name string, limit int64) ([]byte, error) {
	path := filepath.Join(d.Name(), name)
	f, err := d.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("%s: a symlink: %w", path, ErrUntrusted)
		}
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = fmt.Errorf("a %s: %w", kind(st.Mode()), ErrUntrusted)
	}
	if err == nil {
		err = owned(st)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: larger than %d bytes: %w", path, limit, ErrUntrusted)
	}
	return b, nil
}

// writeOwnedIn replaces the state file name of d atomically (0600).
func writeOwnedIn(d *os.Root, name string, data []byte) error {
	tmpName, tmp, err := createTemp(d, name)
	if err != nil {
		return err
	}
	defer d.Remove(tmpName)
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := d.Rename(tmpName, name); err != nil {
		return err
	}
	return syncRoot(d)
}
