package apply

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// Backup copies path to a backup beside it named with the time, UTC, to the
// nanosecond (config.yaml.bak.20261129T060000.123456789Z), so that a file's
// backups sort by name as they age, pruned or not; when that name is taken,
// the first free config.yaml.bak.TIME.N. A backup is never overwritten: the
// name is claimed with O_EXCL. Mode and owner are kept, and the copy is
// synced before it is reported.
func Backup(path string, now time.Time) (string, error) {
	d, name, err := openDir("", path)
	if err != nil {
		return "", err
	}
	defer d.Close()
	b, err := backupIn(d, name, now)
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(path), b), nil
}

// backupTime is the layout of a backup's time: fixed width, so that names
// sort as times do.
const backupTime = "20060102T150405.000000000Z"

// backupIn is Backup of the file name in d; it returns the backup's name.
func backupIn(d *os.Root, name string, now time.Time) (string, error) {
	if _, err := lstatIn(d, name); err != nil {
		return "", err
	}
	base := name + ".bak." + now.UTC().Format(backupTime)
	for n := 0; n < 10000; n++ {
		b := base
		if n > 0 {
			b = fmt.Sprintf("%s.%d", base, n)
		}
		err := copyIn(d, name, b)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("backup of %s to %s: %w", name, b, err)
		}
		return b, syncRoot(d)
	}
	return "", fmt.Errorf("backup of %s: no free name after %s", name, base)
}

// copyIn copies the regular file src of d to the new file dst beside it,
// keeping mode, owner and extended attributes.
func copyIn(d *os.Root, src, dst string) error {
	in, err := d.OpenFile(src, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s: %w", src, ErrNotRegular)
	}
	out, err := d.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, st.Mode().Perm())
	if err != nil {
		return err
	}
	if err := copyInto(out, in, st); err != nil {
		d.Remove(dst)
		return err
	}
	return nil
}

func copyInto(dst *os.File, src *os.File, st fs.FileInfo) error {
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		if err := dst.Chown(int(sys.Uid), int(sys.Gid)); err != nil && !errors.Is(err, fs.ErrPermission) {
			dst.Close()
			return err
		}
	}
	if err := setXattrs(dst, xattrs(src)); err != nil {
		dst.Close()
		return err
	}
	if err := dst.Sync(); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}
