package apply

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// maxLinks is how many symbolic links one path may traverse (Linux's limit).
const maxLinks = 40

// openDir opens the directory that holds the disk path p, for the file
// operations of an apply: everything it writes, backs up, stages, renames
// or removes goes through the returned os.Root, named by the returned base
// name. Under root (an image, --root), p must lie in root and the links on
// its way are resolved inside root — an absolute target from root, not
// from the host — so no path leads out of the tree.
func openDir(root, p string) (*os.Root, string, error) {
	name := filepath.Base(p)
	if name == "." || name == "/" || name == ".." {
		return nil, "", fmt.Errorf("%s: not a file path", p)
	}
	if root == "" {
		d, err := os.OpenRoot(filepath.Dir(p))
		return d, name, err
	}
	root = filepath.Clean(root)
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") || filepath.IsAbs(rel) {
		return nil, "", fmt.Errorf("%s: outside the node's tree %s: %w", p, root, ErrUntrusted)
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, "", fmt.Errorf("opening the node's tree: %w", err)
	}
	defer r.Close()
	dir, err := resolveIn(r, path.Dir("/"+filepath.ToSlash(rel)))
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", p, err)
	}
	d, err := r.OpenRoot(path.Join(".", strings.TrimPrefix(dir, "/")) + "/.")
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", p, err)
	}
	return d, name, nil
}

// resolveIn follows the links of node path p inside r, and returns the
// node path it names.
func resolveIn(r *os.Root, p string) (string, error) {
	todo := strings.Split(p, "/")
	cur, links := "/", 0
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = path.Dir(cur)
			continue
		}
		next := path.Join(cur, c)
		fi, err := r.Lstat(strings.TrimPrefix(next, "/"))
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if links++; links > maxLinks {
			return "", &fs.PathError{Op: "resolve", Path: p, Err: syscall.ELOOP}
		}
		target, err := r.Readlink(strings.TrimPrefix(next, "/"))
		if err != nil {
			return "", err
		}
		if path.IsAbs(target) {
			cur = "/"
		}
		todo = append(strings.Split(target, "/"), todo...)
	}
	return cur, nil
}

// syncRoot makes a rename or removal in d durable.
func syncRoot(d *os.Root) error {
	f, err := d.Open(".")
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// lstatIn reports what name is in d, refusing anything but a regular file
// (a link could send a write anywhere).
func lstatIn(d *os.Root, name string) (fs.FileInfo, error) {
	st, err := d.Lstat(name)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w (%s)", name, ErrNotRegular, kind(st.Mode()))
	}
	return st, nil
}

// xattrs reads the extended attributes of the open file f (SELinux label,
// capabilities, user attributes).
func xattrs(f *os.File) map[string][]byte {
	p := fmt.Sprintf("/proc/self/fd/%d", f.Fd())
	buf := make([]byte, 64<<10)
	n, err := syscall.Listxattr(p, buf)
	if err != nil || n <= 0 {
		return nil
	}
	out := map[string][]byte{}
	for _, name := range strings.Split(strings.TrimRight(string(buf[:n]), "\x00"), "\x00") {
		v := make([]byte, 64<<10)
		if m, err := syscall.Getxattr(p, name, v); err == nil {
			out[name] = v[:m]
		}
	}
	return out
}

// setXattrs gives the open file f the attributes a (those the file system
// takes; a label it refuses is reported).
func setXattrs(f *os.File, a map[string][]byte) error {
	p := fmt.Sprintf("/proc/self/fd/%d", f.Fd())
	var errs []error
	for name, v := range a {
		if err := syscall.Setxattr(p, name, v, 0); err != nil && !errors.Is(err, syscall.ENOTSUP) {
			errs = append(errs, fmt.Errorf("extended attribute %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}
