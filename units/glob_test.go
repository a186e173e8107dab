package units

import (
	"slices"
	"testing"
)

// globEach is the glob looking at one name at a time: a plain name is
// there when its path from the last match is.
func globEach(n *nodeFS, pattern string) ([]string, error) {
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

// globTree is a node with links, a file where a directory could be, a
// directory named "*" and a dangling link.
var globTree = map[string]string{
	"a/b/1.conf":   "",
	"a/b/2.conf":   "",
	"a/c/3.conf":   "",
	"a/*/x":        "",
	"a/file":       "",
	"link":         "-> a",
	"abs":          "-> /a/b",
	"up":           "-> ../../a",
	"dangling":     "-> /missing/dir",
	"lib/x/s/l.so": "",
}

// A run of plain names is looked up as one path, with the matches of a
// look at each name: through links, files, missing names, "..", escapes.
func TestGlobAsEachName(t *testing.T) {
	root := makeTree(t, globTree)
	n, err := openNode(root)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	for _, p := range []string{
		"/a/b/*.conf", "/a/b/1.conf", "/a/*/*.conf", "/link/b/*.conf", "/abs/*", "/up/c/3.conf",
		"/a/file/x", "/a/file", "/a/\\*/x", "/a/../a/b/1.conf", "/missing/../a/b/1.conf", "/a/b/../../a/c/*",
		"/a/\\../a/b/2.conf", "/dangling/x", "/dangling", "/lib/*/s/*.so", "/lib/x/s/l.so", "/", "/a/b/",
		"/missing/x/*", "/*/b/1.conf",
	} {
		want, werr := globEach(n, p)
		got, err := n.glob(p)
		if !slices.Equal(got, want) || (err == nil) != (werr == nil) {
			t.Errorf("%s: %q %v, one name at a time %q %v", p, got, err, want, werr)
		}
	}
}

// FuzzGlobAsEachName: any pattern matches what a look at each name matches.
func FuzzGlobAsEachName(f *testing.F) {
	for _, p := range []string{"/a/b/*.conf", "/link/../a/*/x", "/a/\\*/x", "/up/c/[0-9].conf", "/dangling/x/*", "/lib/*/s/*.so"} {
		f.Add(p)
	}
	root := makeTree(f, globTree)
	n, err := openNode(root)
	if err != nil {
		f.Fatal(err)
	}
	defer n.Close()
	f.Fuzz(func(t *testing.T, p string) {
		want, werr := globEach(n, p)
		got, err := n.glob(p)
		if !slices.Equal(got, want) || (err == nil) != (werr == nil) {
			t.Errorf("%q: %q %v, one name at a time %q %v", p, got, err, want, werr)
		}
	})
}
