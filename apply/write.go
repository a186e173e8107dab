// Package apply changes a node's kubelet configuration safely: one change at
// a time (a lock), every replaced file backed up first under a dated name
// that is never reused, and every file replaced atomically.
package apply

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// ErrNotRegular refuses targets that are not plain files (a symlink could
// send the write anywhere).
var ErrNotRegular = errors.New("not a regular file")

// WriteFile replaces path with data atomically: a temporary file in the same
// directory is written, synced, given the old file's mode and owner (0600
// root for a new file), renamed over path, and the directory is synced, so a
// crash leaves the old file or the new one, never a mix or an empty file.
// It does nothing and reports false when path already holds data.
func WriteFile(path string, data []byte) (changed bool, err error) {
	mode, uid, gid := fs.FileMode(0o600), 0, 0
	st, err := os.Lstat(path)
	switch {
	case err == nil && !st.Mode().IsRegular():
		return false, fmt.Errorf("%s: %w (%s)", path, ErrNotRegular, st.Mode().Type())
	case err == nil:
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
			return false, nil
		}
		mode = st.Mode().Perm()
		if sys, ok := st.Sys().(*syscall.Stat_t); ok {
			uid, gid = int(sys.Uid), int(sys.Gid)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return false, err
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".kubeletcfg-*")
	if err != nil {
		return false, err
	}
	renamed := false
	defer func() {
		if !renamed {
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return false, fmt.Errorf("%s: %w", tmp.Name(), err)
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return false, err
	}
	if err := tmp.Chown(uid, gid); err != nil && !errors.Is(err, fs.ErrPermission) {
		tmp.Close()
		return false, err
	}
	// Without the sync a crash after the rename can leave an empty file.
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return false, err
	}
	if err := tmp.Close(); err != nil {
		return false, err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return false, err
	}
	renamed = true
	return true, syncDir(dir)
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
