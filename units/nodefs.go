package units

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
)

// maxLinks is how many symbolic links one path may traverse (Linux's limit).
const maxLinks = 40

// maxFileSize bounds what is read of one unit, drop-in or environment file.
const maxFileSize = 16 << 20

// devNull is the path a masking symlink points to.
const devNull = "/dev/null"

// nodeFS reads files of a node whose filesystem is under a root directory.
// Paths are node paths: absolute, as seen on the node. Symbolic links are
// resolved here, an absolute target relative to the root, so that no path
// leads out of it; os.Root backs this up.
type nodeFS struct {
	root *os.Root
	live bool // the root is "/": the running node
	// systemd is the node's systemd version, 0 if unknown; set by load.
	systemd int
}

func openNode(root string) (*nodeFS, error) {
	if root == "" {
		root = "/"
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	r, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("opening node root: %w", err)
	}
	return &nodeFS{root: r, live: abs == "/"}, nil
}

func (n *nodeFS) Close() error { return n.root.Close() }

// rel turns a resolved node path into a name for os.Root.
func rel(p string) string {
	if p = strings.TrimPrefix(p, "/"); p == "" {
		return "."
	}
	return p
}

// resolve follows the symbolic links in node path p and returns the path
// it names, free of links. If a component does not exist the error says
// so and the returned path is the resolved part joined with the rest, so a
// link to /dev/null on an image without /dev still resolves to "/dev/null".
func (n *nodeFS) resolve(p string) (string, error) {
	todo := splitPath(p)
	cur := "/"
	links := 0
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		if c == ".." {
			cur = path.Dir(cur)
			continue
		}
		next := path.Join(cur, c)
		fi, err := n.root.Lstat(rel(next))
		if err != nil {
			return path.Join(append([]string{next}, todo...)...), nodeError("stat", p, err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if links++; links > maxLinks {
			return next, &fs.PathError{Op: "resolve", Path: p, Err: syscall.ELOOP}
		}
		target, err := n.root.Readlink(rel(next))
		if err != nil {
			return next, nodeError("readlink", p, err)
		}
		if path.IsAbs(target) {
			cur = "/"
		}
		todo = append(splitPath(target), todo...)
	}
	return cur, nil
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

// stat resolves p and returns information about what it names.
func (n *nodeFS) stat(p string) (string, fs.FileInfo, error) {
	res, err := n.resolve(p)
	if err != nil {
		return res, nil, err
	}
	fi, err := n.root.Lstat(rel(res))
	if err != nil {
		return res, nil, nodeError("stat", p, err)
	}
	return res, fi, nil
}

// readFile reads the regular file node path p names.
func (n *nodeFS) readFile(p string) ([]byte, error) {
	res, fi, err := n.stat(p)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "read", Path: p, Err: fmt.Errorf("not a regular file (%s)", fi.Mode().Type())}
	}
	f, err := n.root.Open(rel(res))
	if err != nil {
		return nil, nodeError("open", p, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, nodeError("read", p, err)
	}
	if len(data) > maxFileSize {
		return nil, &fs.PathError{Op: "read", Path: p, Err: fmt.Errorf("larger than %d bytes", maxFileSize)}
	}
	return data, nil
}

// readDir returns the names in directory p, sorted.
func (n *nodeFS) readDir(p string) ([]string, error) {
	res, err := n.resolve(p)
	if err != nil {
		return nil, err
	}
	f, err := n.root.Open(rel(res))
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

// masked reports whether node path p masks a unit or drop-in: a link to
// /dev/null, /dev/null itself, or an empty regular file.
func (n *nodeFS) masked(p string) bool {
	res, fi, err := n.stat(p)
	if res == devNull {
		return true
	}
	return err == nil && fi.Mode().IsRegular() && fi.Size() == 0
}

// glob expands a glob(3) pattern (*, ? and [...] in any component) to the
// sorted node paths that exist. A leading "." of a name must be matched
// explicitly, as without GLOB_PERIOD.
func (n *nodeFS) glob(pattern string) ([]string, error) {
	paths := []string{"/"}
	for _, c := range splitPath(pattern) {
		var next []string
		for _, dir := range paths {
			m, err := n.globIn(dir, c)
			if err != nil {
				return nil, err
			}
			next = append(next, m...)
		}
		paths = next
	}
	slices.Sort(paths)
	return paths, nil
}

// globIn returns the entries of dir that match one pattern component.
func (n *nodeFS) globIn(dir, pattern string) ([]string, error) {
	if !hasGlobMeta(pattern) {
		p := path.Join(dir, unescapeGlob(pattern))
		if _, _, err := n.stat(p); err != nil {
			return nil, nil
		}
		return []string{p}, nil
	}
	names, err := n.readDir(dir)
	if err != nil {
		return nil, nil
	}
	goPattern := fnmatchToGo(pattern)
	var out []string
	for _, name := range names {
		if strings.HasPrefix(name, ".") && !strings.HasPrefix(pattern, ".") {
			continue
		}
		ok, err := path.Match(goPattern, name)
		if err != nil {
			return nil, fmt.Errorf("bad glob pattern %q: %w", pattern, err)
		}
		if ok {
			out = append(out, path.Join(dir, name))
		}
	}
	return out, nil
}

func hasGlobMeta(s string) bool { return strings.ContainsAny(s, "*?[") }

// unescapeGlob removes the backslashes that quote characters in a pattern.
func unescapeGlob(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// fnmatchToGo turns the "[!...]" negation of fnmatch(3) into the "[^...]"
// path.Match understands.
func fnmatchToGo(p string) string {
	return strings.ReplaceAll(p, "[!", "[^")
}
