package units

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/kubeletcfg/kubeletcfg/nodefile"
)

// devNull is the path a masking symlink points to.
const devNull = "/dev/null"

// nodeFS reads files of a node whose filesystem is under a root directory,
// confined to it (see nodefile.Root).
type nodeFS struct {
	*nodefile.Root
	// systemd is the node's systemd version, 0 if unknown; set by load.
	systemd int
}

func openNode(root string) (*nodeFS, error) {
	r, err := nodefile.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	r.Hold() // the unit directories are looked in again and again
	return &nodeFS{Root: r}, nil
}

// splitPath returns the components of p without empty and "." ones.
func splitPath(p string) []string {
	parts := strings.Split(p, "/")
	return slices.DeleteFunc(parts, func(s string) bool { return s == "" || s == "." })
}

// masked reports whether node path p masks a unit or drop-in: a link to
// /dev/null, /dev/null itself, or an empty regular file.
func (n *nodeFS) masked(p string) bool {
	res, fi, err := n.Stat(p)
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
	comps := splitPath(pattern)
	for i := 0; i < len(comps); {
		// A run of plain names is looked up as the one path they make: it
		// is there when each of them is (".." ends a run: it would hide the
		// name before it).
		var run []string
		for ; i < len(comps) && !hasGlobMeta(comps[i]) && unescapeGlob(comps[i]) != ".."; i++ {
			run = append(run, unescapeGlob(comps[i]))
		}
		if len(run) > 0 {
			var next []string
			for _, dir := range paths {
				p := path.Join(append([]string{dir}, run...)...)
				if _, _, err := n.Stat(p); err == nil {
					next = append(next, p)
				}
			}
			paths = next
			continue
		}
		var next []string
		for _, dir := range paths {
			m, err := n.globIn(dir, comps[i])
			if err != nil {
				return nil, err
			}
			next = append(next, m...)
		}
		paths = next
		i++
	}
	slices.Sort(paths)
	return paths, nil
}

// globIn returns the entries of dir that match one pattern component.
func (n *nodeFS) globIn(dir, pattern string) ([]string, error) {
	if !hasGlobMeta(pattern) {
		p := path.Join(dir, unescapeGlob(pattern))
		if _, _, err := n.Stat(p); err != nil {
			return nil, nil
		}
		return []string{p}, nil
	}
	names, err := n.ReadDir(dir)
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
