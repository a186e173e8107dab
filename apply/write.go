// Package apply changes a node's kubelet configuration safely, as named
// phases over one transaction (phases.go: lock, pending, plan, gate, backup,
// journal, guard, write, restart, watch, configz, confirm, and a caller's
// hooks): one change at a time, every replaced file backed up first under a
// name never reused, every file replaced atomically, and every failure undone
// by one rollback path.
package apply

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ErrNotRegular refuses targets that are not plain files (a symlink could
// send the write anywhere).
var ErrNotRegular = errors.New("not a regular file")

// WriteFile replaces path with data atomically: a temporary file in the same
// directory is written, synced, given the old file's mode, owner and
// extended attributes (its SELinux label) — 0600 root for a new file —
// renamed over path, and the directory is synced, so a crash leaves the old
// file or the new one, never a mix or an empty file. It does nothing and
// reports false when path already holds data.
func WriteFile(path string, data []byte) (changed bool, err error) {
	d, name, err := openDir("", path)
	if err != nil {
		return false, err
	}
	defer d.Close()
	changed, err = writeIn(d, name, data)
	if err != nil {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	return changed, nil
}

// writeIn is WriteFile for the file name in the directory d.
func writeIn(d *os.Root, name string, data []byte) (changed bool, err error) {
	mode, uid, gid := fs.FileMode(0o600), 0, 0
	var attrs map[string][]byte
	st, err := d.Lstat(name)
	switch {
	case err == nil && !st.Mode().IsRegular():
		return false, fmt.Errorf("%w (%s)", ErrNotRegular, kind(st.Mode()))
	case err == nil:
		old, err := d.Open(name)
		if err != nil {
			return false, err
		}
		same := sameContent(old, data)
		attrs = xattrs(old)
		old.Close()
		if same {
			return false, nil
		}
		mode = st.Mode().Perm()
		if sys, ok := st.Sys().(*syscall.Stat_t); ok {
			uid, gid = int(sys.Uid), int(sys.Gid)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return false, err
	}
	tmpName, tmp, err := createTemp(d, name)
	if err != nil {
		return false, err
	}
	renamed := false
	defer func() {
		if !renamed {
			d.Remove(tmpName)
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return false, fmt.Errorf("%s: %w", tmpName, err)
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return false, err
	}
	if err := tmp.Chown(uid, gid); err != nil && !errors.Is(err, fs.ErrPermission) {
		tmp.Close()
		return false, err
	}
	if err := setXattrs(tmp, attrs); err != nil {
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
	if err := d.Rename(tmpName, name); err != nil {
		return false, err
	}
	renamed = true
	return true, syncRoot(d)
}

// createTemp creates a new file beside name in d, for this process only.
func createTemp(d *os.Root, name string) (string, *os.File, error) {
	for range 100 {
		b := make([]byte, 6)
		_, _ = rand.Read(b)
		tmpName := "." + name + ".kubeletcfg-" + hex.EncodeToString(b)
		f, err := d.OpenFile(tmpName, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return tmpName, f, err
	}
	return "", nil, fmt.Errorf("no free temporary name beside %s", name)
}

// sameContent tells whether f holds exactly data.
func sameContent(f *os.File, data []byte) bool {
	b, err := io.ReadAll(io.LimitReader(f, int64(len(data))+1))
	return err == nil && bytes.Equal(b, data)
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
