package nodefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// maxLinks is how many symbolic links one path may traverse (Linux's limit).
const maxLinks = 40

// Root is a node's filesystem under a directory: "/" for the running node,
// or an offline image. Paths are node paths, as seen on the node. Symbolic
// links are resolved here, an absolute target relative to the root and ".."
// stopping at it, so that no path leads out of the root; os.Root backs this up.
type Root struct {
	// r is the root opened as an os.Root, at its first use (the walk's):
	// the fast path needs only fd.
	r    *os.Root
	Live bool // the root is "/": the running node
	// held are the directories walks opened, by resolved node path, kept
	// open until Close when the root holds them (Hold): a walk down to
	// the next file of a directory already walked starts from it.
	held map[string]*os.Root
	kept map[*os.Root]bool
	// dirs are what a walk's lstat said of the directories it went
	// through, by resolved node path, while the root holds (a walk of
	// the next file there looks at each again otherwise).
	dirs map[string]fs.FileInfo
	// abs is the root's directory on this host; fd that directory opened
	// for openat2 (beneath) at its first use, -1 before; host the path
	// /proc names it by.
	abs  string
	fd   int
	host string
}

// maxHeld bounds the directories a root holds open.
const maxHeld = 32

// Hold makes the root keep the directories its walks open until Close, for
// a reader of many files in a few directories (the drop-ins of a directory):
// each walk then starts at the deepest directory of its path already
// walked, where a walk from the root opens and looks at every component
// again, and says what it first saw of each directory it went through. A
// directory changed on disk after it was first walked is read as
// it was opened (it stays inside the root: it was opened through it).
func (n *Root) Hold() {
	if n.held == nil {
		n.held, n.kept, n.dirs = map[string]*os.Root{}, map[*os.Root]bool{}, map[string]fs.FileInfo{}
	}
}

// release closes d unless the root holds it.
func (n *Root) release(d *os.Root) {
	if !n.kept[d] {
		d.Close()
	}
}

// OpenRoot opens the node whose filesystem is under dir ("" for "/").
func OpenRoot(dir string) (*Root, error) {
	if dir == "" {
		dir = "/"
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	n := &Root{Live: abs == "/", abs: abs, fd: -1}
	// The root's directory by its path, for openat2 (the os.Root, opened
	// by the same path for the walk, keeps every path beneath a directory
	// at that path too, were it replaced in between); os.OpenRoot says why
	// it cannot be opened, and opens it where openat2 is not to be used.
	if fd, err := unix.Open(abs, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err == nil && !beneathOff && !noBeneath.Load() {
		n.fd = fd
		return n, nil
	} else if err == nil {
		unix.Close(fd)
	}
	if _, err := n.osRoot(); err != nil {
		return nil, err
	}
	return n, nil
}

// osRoot is the root as an os.Root, opened at its first use.
func (n *Root) osRoot() (*os.Root, error) {
	if n.r == nil {
		r, err := os.OpenRoot(n.abs)
		if err != nil {
			return nil, fmt.Errorf("opening node root: %w", err)
		}
		n.r = r
	}
	return n.r, nil
}

func (n *Root) Close() error {
	for d := range n.kept {
		d.Close()
	}
	if n.fd >= 0 {
		unix.Close(n.fd)
		n.fd = -1
	}
	n.held, n.kept, n.dirs = nil, nil, nil
	if n.r == nil {
		return nil
	}
	err := n.r.Close()
	n.r = nil
	return err
}

// rel turns a resolved node path into a name for os.Root.
func rel(p string) string {
	if p = strings.TrimPrefix(p, "/"); p == "" {
		return "."
	}
	return p
}

// Resolve follows the symbolic links in node path p and returns the path
// it names, free of links. If a component does not exist the error says
// so and the returned path is the resolved part joined with the rest, so a
// link to /dev/null on an image without /dev still resolves to "/dev/null".
func (n *Root) Resolve(p string) (string, error) {
	res, _, err := n.resolve(p)
	return res, err
}

// resolve is Resolve, with what the resolved path names when the last step
// looked at it (nil for the root itself, or after a last "..").
func (n *Root) resolve(p string) (string, fs.FileInfo, error) {
	if res, fi, err, ok := n.statBeneath(p); ok {
		return res, fi, err
	}
	w, err := n.walk(p)
	defer w.close()
	return w.res, w.last, err
}

// walked is where a walk down a path ended: the resolved path res, what
// it names (last, when the walk looked at it) and the open directories of
// its components, the last of which holds it.
type walked struct {
	res   string
	last  fs.FileInfo
	names []string
	dirs  []*os.Root // dirs[i]: the directory of names[:i]
	n     *Root
}

func (w walked) close() {
	for _, d := range w.dirs[1:] {
		w.n.release(d)
	}
}

// in is the directory that holds the resolved path and its name there,
// when the walk opened it; false for the root itself and after a last "..".
func (w walked) in() (*os.Root, string, bool) {
	if w.last == nil || len(w.names) == 0 || len(w.dirs) < len(w.names) {
		return nil, "", false
	}
	return w.dirs[len(w.names)-1], w.names[len(w.names)-1], true
}

// where is the directory that holds what the walk resolved and its name
// there: the walk's own, else the root and the whole resolved path.
func (w walked) where() (*os.Root, string) {
	if dir, name, ok := w.in(); ok {
		return dir, name
	}
	return w.n.r, rel(w.res)
}

// walk walks down p with the directories of the resolved part held open,
// each name looked at in its own directory: one lstat per component, where
// an lstat of the whole prefix from the root would walk it again each
// time. The caller closes what it returns, error or not.
func (n *Root) walk(p string) (w walked, err error) {
	todo := splitPath(p)
	// names are the components of the resolved part; dirs[i] is the
	// directory of names[:i] (dirs[0] the root), opened when a name in it
	// is looked at.
	var names []string
	top, err := n.osRoot()
	if err != nil {
		return walked{res: "/", n: n, dirs: []*os.Root{nil}}, err
	}
	dirs := []*os.Root{top}
	defer func() { w.names, w.dirs, w.n = names, dirs, n }()
	var last fs.FileInfo
	links := 0
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		if c == ".." {
			if len(names) > 0 {
				names = names[:len(names)-1]
			}
			for len(dirs) > len(names)+1 {
				n.release(dirs[len(dirs)-1])
				dirs = dirs[:len(dirs)-1]
			}
			last = nil
			continue
		}
		next := "/" + path.Join(append(names, c)...)
		for len(dirs) < len(names)+1 {
			key := "/" + path.Join(names[:len(dirs)]...)
			if d, ok := n.held[key]; ok {
				dirs = append(dirs, d)
				continue
			}
			d, err := dirs[len(dirs)-1].OpenRoot(names[len(dirs)-1])
			if err != nil {
				// Say what an lstat from the root says (os.Root's own
				// error for a file opened as a directory is another).
				if _, lerr := top.Lstat(rel(next)); lerr != nil {
					err = lerr
				}
				return walked{res: path.Join(append([]string{next}, todo...)...)}, nodeError("stat", p, err)
			}
			if n.held != nil && len(n.held) < maxHeld {
				n.held[key], n.kept[d] = d, true
			}
			dirs = append(dirs, d)
		}
		if fi, ok := n.dirs[next]; ok {
			names = append(names, c)
			last = fi
			continue
		}
		fi, err := dirs[len(dirs)-1].Lstat(c)
		if err != nil {
			return walked{res: path.Join(append([]string{next}, todo...)...)}, nodeError("stat", p, err)
		}
		if fi.IsDir() && n.dirs != nil && len(n.dirs) < maxHeld*4 {
			n.dirs[next] = fi
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			names = append(names, c)
			last = fi
			continue
		}
		if links++; links > maxLinks {
			return walked{res: next}, &fs.PathError{Op: "resolve", Path: p, Err: syscall.ELOOP}
		}
		target, err := dirs[len(dirs)-1].Readlink(c)
		if err != nil {
			return walked{res: next}, nodeError("readlink", p, err)
		}
		if path.IsAbs(target) {
			names = names[:0]
			for len(dirs) > 1 {
				n.release(dirs[len(dirs)-1])
				dirs = dirs[:len(dirs)-1]
			}
		}
		last = nil
		todo = append(splitPath(target), todo...)
	}
	return walked{res: "/" + path.Join(names...), last: last}, nil
}

// splitPath returns the components of p without empty and "." ones.
func splitPath(p string) []string {
	parts := strings.Split(p, "/")
	return slices.DeleteFunc(parts, func(s string) bool { return s == "" || s == "." })
}

// nodeError reports err from os.Root for node path p, keeping what
// errors.Is needs but not the host path of the root.
func nodeError(op, p string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &fs.PathError{Op: op, Path: p, Err: err}
}

// Stat resolves p and returns the resolved path and what it names.
func (n *Root) Stat(p string) (string, fs.FileInfo, error) {
	res, fi, err := n.resolve(p)
	if err != nil || fi != nil {
		return res, fi, err
	}
	r, err := n.osRoot()
	if err != nil {
		return res, nil, err
	}
	if fi, err = r.Lstat(rel(res)); err != nil {
		return res, nil, nodeError("stat", p, err)
	}
	return res, fi, nil
}

// Open opens the regular file node path p names, as the package's Open does.
func (n *Root) Open(p string, k Kind) (io.ReadCloser, error) {
	f, err, ok := n.openBeneath(p, k)
	if !ok {
		w, werr := n.walk(p)
		defer w.close()
		if werr != nil {
			return nil, werr
		}
		dir, name := w.where()
		f, err = openIn(dir, name, p, k)
	}
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, nodeError(pe.Op, p, err)
		}
		return nil, err
	}
	return f, nil
}

// ReadFile reads the regular file node path p names.
func (n *Root) ReadFile(p string, k Kind) ([]byte, error) {
	f, err := n.Open(p, k)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// ReadDir returns the names in directory p, sorted.
func (n *Root) ReadDir(p string) ([]string, error) {
	if names, err, ok := n.dirBeneath(p); ok {
		slices.Sort(names)
		return names, err
	}
	w, err := n.walk(p)
	defer w.close()
	if err != nil {
		return nil, err
	}
	dir, name := w.where()
	f, err := dir.Open(name)
	if err != nil {
		return nil, nodeError("open", p, err)
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, nodeError("readdir", p, err)
	}
	slices.Sort(names)
	return names, nil
}

// Lstat returns what resolved node path p names, without following a last
// symbolic link.
func (n *Root) Lstat(p string) (fs.FileInfo, error) {
	r, err := n.osRoot()
	if err != nil {
		return nil, err
	}
	fi, err := r.Lstat(rel(p))
	if err != nil {
		return nil, nodeError("lstat", p, err)
	}
	return fi, nil
}

// HostPath returns where node path p of the node under dir ("" for the
// running node) is on this machine: its symbolic links resolved inside the
// root and ".." stopping at it, so that opening the result does not leave the
// root. A missing component is no error (opening the result fails); a trailing
// slash is kept, as it asks for a directory.
func HostPath(dir, p string) (string, error) {
	return hostPath(dir, p, true)
}

// HostDir is HostPath for a directory walked as filepath.WalkDir walks it:
// a last symbolic link is followed only when p ends in a slash, as the
// kubelet's walk does. Left as it is, a walk sees a link, not a directory,
// and reads nothing through it.
func HostDir(dir, p string) (string, error) {
	return hostPath(dir, p, strings.HasSuffix(p, "/"))
}

func hostPath(dir, p string, followLast bool) (string, error) {
	if dir == "" {
		return p, nil
	}
	if !followLast && path.Clean("/"+p) != "/" {
		parent, err := hostPath(dir, path.Dir(path.Clean("/"+p)), true)
		if err != nil {
			return "", err
		}
		return filepath.Join(parent, path.Base(path.Clean("/"+p))), nil
	}
	r, err := OpenRoot(dir)
	if err != nil {
		return "", err
	}
	defer r.Close()
	res, err := r.Resolve(path.Join("/", p))
	if err != nil {
		missing := errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
		// Past a missing component the rest is joined unresolved, and a ".."
		// there could climb back to a symbolic link that leaves the root.
		if !missing || slices.Contains(strings.Split(p, "/"), "..") {
			return "", err
		}
	}
	out := filepath.Join(dir, res)
	if strings.HasSuffix(p, "/") {
		out += "/"
	}
	return out, nil
}

// ReadFileUnder reads the file at host path p of the node under dir ("":
// the running node, p read as it is) through that node's root: p's links,
// the last one included, resolve inside the root, so a file of the image
// that is a link (absolute, or ../ out) never reads a file of this host.
// Errors name p.
func ReadFileUnder(dir, p string, k Kind) ([]byte, error) {
	u := NewUnder(dir)
	defer u.Close()
	return u.ReadFile(p, k)
}

// Under reads files by their host paths as ReadFileUnder does, the node's
// root opened once (at the first read) and holding the directories walked
// (Root.Hold): for the many files of one directory. Close it.
type Under struct {
	dir, abs, wd string
	r            *Root
}

// NewUnder is a reader of the node under dir ("": the running node).
func NewUnder(dir string) *Under { return &Under{dir: dir} }

// ReadFile is ReadFileUnder(dir, p, k).
func (u *Under) ReadFile(p string, k Kind) ([]byte, error) {
	if u.dir == "" {
		return ReadFile(p, k)
	}
	if u.abs == "" {
		// The working directory looked up once (filepath.Abs asks for
		// it each time: two stats a file).
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		u.wd, u.abs = wd, abs(wd, u.dir)
	}
	hp := abs(u.wd, p)
	relp, err := filepath.Rel(u.abs, hp)
	if err != nil || relp == ".." || strings.HasPrefix(relp, "../") {
		return nil, &fs.PathError{Op: "open", Path: p, Err: fmt.Errorf("outside the node's root %s", u.dir)}
	}
	if u.r == nil {
		r, err := OpenRoot(u.abs)
		if err != nil {
			return nil, err
		}
		r.Hold()
		u.r = r
	}
	data, err := u.r.ReadFile(path.Join("/", filepath.ToSlash(relp)), k)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			pe.Path = p
			return nil, pe
		}
	}
	return data, err
}

// abs is filepath.Abs(p) with wd the working directory.
func abs(wd, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(wd, p)
}

// Close closes the root, when a read opened it.
func (u *Under) Close() error {
	if u.r == nil {
		return nil
	}
	err := u.r.Close()
	u.r = nil
	return err
}

// Readlink returns the target of the symbolic link at resolved node path p.
func (n *Root) Readlink(p string) (string, error) {
	r, err := n.osRoot()
	if err != nil {
		return "", err
	}
	t, err := r.Readlink(rel(p))
	if err != nil {
		return "", nodeError("readlink", p, err)
	}
	return t, nil
}
