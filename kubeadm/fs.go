package kubeadm

import (
	"errors"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/kubeletcfg/kubeletcfg/nodefile"
)

// nodeFS is the node as kubeadm would find it: read through nodefile (inside
// the root, size-limited, regular files only), with the files an apply is
// about to write laid over it.
type nodeFS struct {
	root *nodefile.Root
	// over holds the laid-over files by resolved node path; a nil content
	// is a file removed.
	over map[string][]byte
}

func newNodeFS(root *nodefile.Root, overlay map[string][]byte) *nodeFS {
	n := &nodeFS{root: root, over: map[string][]byte{}}
	for p, content := range overlay {
		p = path.Clean("/" + p)
		dir := path.Dir(p)
		if res, err := root.Resolve(dir); err == nil {
			dir = res
		}
		n.over[path.Join(dir, path.Base(p))] = content
	}
	return n
}

// laid tells whether resolved path p is laid over, and its content.
func (n *nodeFS) laid(p string) ([]byte, bool) {
	c, ok := n.over[p]
	return c, ok
}

// resolvedFile resolves the directory of node path p (not p itself).
func (n *nodeFS) resolvedFile(p string) string {
	p = path.Clean("/" + p)
	dir := path.Dir(p)
	if res, err := n.root.Resolve(dir); err == nil {
		dir = res
	}
	return path.Join(dir, path.Base(p))
}

// ReadFile reads node path p, or its laid-over content.
func (n *nodeFS) ReadFile(p string, k nodefile.Kind) ([]byte, error) {
	if c, ok := n.laid(n.resolvedFile(p)); ok {
		if c == nil {
			return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
		}
		return c, nil
	}
	return n.root.ReadFile(p, k)
}

// Exists tells whether node path p names something.
func (n *nodeFS) Exists(p string) bool {
	if c, ok := n.laid(n.resolvedFile(p)); ok {
		return c != nil
	}
	_, _, err := n.root.Stat(p)
	return err == nil
}

// ReadDir lists resolved directory p with the laid-over files in it.
func (n *nodeFS) ReadDir(p string) ([]string, error) {
	names, err := n.root.ReadDir(p)
	if err != nil && !(errors.Is(err, fs.ErrNotExist) && n.laidUnder(p)) {
		return nil, err
	}
	for f, c := range n.over {
		if path.Dir(f) != p {
			continue
		}
		base := path.Base(f)
		has := slices.Contains(names, base)
		switch {
		case c == nil && has:
			names = slices.DeleteFunc(names, func(s string) bool { return s == base })
		case c != nil && !has:
			names = append(names, base)
		}
	}
	slices.Sort(names)
	return names, nil
}

// laidUnder tells whether a file is laid over in directory p (which may not
// exist yet: the apply creates it).
func (n *nodeFS) laidUnder(p string) bool {
	for f, c := range n.over {
		if c != nil && (path.Dir(f) == p || strings.HasPrefix(f, p+"/")) {
			return true
		}
	}
	return false
}

// Lstat is Root.Lstat of resolved path p, a laid-over file being a regular
// file and a directory holding laid-over files a directory.
func (n *nodeFS) Lstat(p string) (fs.FileInfo, error) {
	if c, ok := n.laid(p); ok {
		if c == nil {
			return nil, &fs.PathError{Op: "lstat", Path: p, Err: fs.ErrNotExist}
		}
		return laidInfo{name: path.Base(p), size: int64(len(c))}, nil
	}
	fi, err := n.root.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) && n.laidUnder(p) {
		return laidInfo{name: path.Base(p), dir: true}, nil
	}
	return fi, err
}

type laidInfo struct {
	name string
	size int64
	dir  bool
}

func (i laidInfo) Name() string { return i.name }
func (i laidInfo) Size() int64  { return i.size }
func (i laidInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o755
	}
	return 0o644
}
func (i laidInfo) ModTime() time.Time { return time.Time{} }
func (i laidInfo) IsDir() bool        { return i.dir }
func (i laidInfo) Sys() any           { return nil }
