package kubeadm

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strings"
	"syscall"

	"sigs.k8s.io/yaml"

	"github.com/kubeletcfg/kubeletcfg/nodefile"
	"github.com/kubeletcfg/kubeletcfg/warning"
)

// PatchTarget is the kubelet configuration's target name in util/patches.
const PatchTarget = "kubeletconfiguration"

// Patch types, as util/patches names them.
const (
	Strategic = "strategic"
	Merge     = "merge"
	JSON      = "json"
)

// DefaultPatchesDir is where kubeletcfg keeps kubeadm patches when asked to
// persist a change as one. kubeadm has no directory of its own: --patches is
// given on every run.
const DefaultPatchesDir = "/etc/kubernetes/patches"

// PatchFileKind bounds a patch file kubeletcfg reads.
var PatchFileKind = nodefile.Kind{What: "kubeadm patch file", Limit: 4 << 20}

// Walk limits: a patches directory is a handful of files.
var (
	maxPatchFiles = 4096
	maxPatchDepth = 32
)

// PatchFile is one file util/patches reads, for any target.
type PatchFile struct {
	Path   string  `json:"path"` // node path
	Target string  `json:"target"`
	Type   string  `json:"type"`
	Docs   []Patch `json:"-"`
}

// Patch is one document of a patch file, as JSON, with the lines of what it
// names (keys of a strategic or merge patch, operations of a JSON patch).
type Patch struct {
	File  string
	Line  int // of the document's first line
	Type  string
	JSON  []byte
	Keys  map[string]int // strategic, merge: dotted path → line
	Ops   []int          // json: line of each operation
	Index int            // the document's position in its file, from 0
}

// Patches are a --patches directory read as kubeadm r reads it.
type Patches struct {
	Dir   string       `json:"dir"`
	Files []*PatchFile `json:"files"`
	// Warnings: files kubeadm ignores (unknown target or extension, empty),
	// each with its path.
	Warnings []warning.Warning `json:"warnings,omitempty"`
}

// ForKubelet are the kubelet configuration's patches, in the order kubeadm
// applies them: the walk's order (lexical, depth first), whatever their type.
func (p *Patches) ForKubelet() []Patch {
	if p == nil {
		return nil
	}
	var out []Patch
	for _, f := range p.Files {
		if f.Target == PatchTarget {
			out = append(out, f.Docs...)
		}
	}
	return out
}

var patchTypeNames = map[string]string{"json": JSON, "merge": Merge, "strategic": Strategic, "": Strategic}

var extension = regexp.MustCompile(`.+\.(json|yaml)$`)

// parseName is util/patches' parseFilename: an unknown extension or target is
// a reason to ignore the file (ok false, why set), a "+" not followed by a
// known type an error.
func parseName(name string, r *Release) (target, typ, why string, err error) {
	if !extension.MatchString(name) {
		return "", "", "the file extension must be one of [json yaml]", nil
	}
	re := regexp.MustCompile(`^(` + strings.Join(quoteAll(r.PatchTargets), "|") + `)([^.+\n]*)?(\+)?(json|merge|strategic)?`)
	sub := re.FindStringSubmatch(name)
	if sub == nil {
		return "", "", fmt.Sprintf("unknown target, must be one of %v", r.PatchTargets), nil
	}
	if sub[3] != "" && sub[4] == "" {
		return "", "", "", fmt.Errorf("unknown or missing patch type after '+', must be one of [json merge strategic]")
	}
	return sub[1], patchTypeNames[sub[4]], "", nil
}

func quoteAll(s []string) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = regexp.QuoteMeta(x)
	}
	return out
}

// ReadPatches reads a --patches directory as kubeadm r's util/patches does:
// the directory itself must be a directory (a symbolic link to one is
// refused), it is walked depth first in lexical order without following
// links to directories, every file whose name parses is read (following
// links, inside the node root) and split into documents. A "+" with an
// unknown type, a document that is not YAML, or a file that cannot be read
// makes kubeadm fail, and so is an error here; ignored files are warnings.
func ReadPatches(root *nodefile.Root, dir string, r *Release) (*Patches, error) {
	return readPatches(newNodeFS(root, nil), dir, r)
}

func readPatches(root *nodeFS, dir string, r *Release) (*Patches, error) {
	dir = path.Clean("/" + dir)
	parent, err := root.root.Resolve(path.Dir(dir))
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) || !root.laidUnder(dir) {
			return nil, fmt.Errorf("patches directory %s: %w", dir, err)
		}
		parent = path.Dir(dir) // created by the apply that lays the files over
	}
	top := path.Join(parent, path.Base(dir))
	fi, err := root.Lstat(top)
	if err != nil {
		return nil, fmt.Errorf("patches directory %s: %w", dir, err)
	}
	if !fi.IsDir() {
		what := "not a directory"
		if fi.Mode()&fs.ModeSymlink != 0 {
			what = "a symbolic link; kubeadm lstats the directory it is given and refuses anything but a directory"
		}
		return nil, fmt.Errorf("patches directory %s: %s (kubeadm fails: could not list patch files)", dir, what)
	}
	p := &Patches{Dir: dir}
	count := 0
	var walk func(res, shown string, depth int) error
	walk = func(res, shown string, depth int) error {
		if depth > maxPatchDepth {
			return fmt.Errorf("%s: more than %d directories deep (kubeletcfg's limit)", shown, maxPatchDepth)
		}
		names, err := root.ReadDir(res)
		if err != nil {
			return fmt.Errorf("could not list patch files for path %q: %w", dir, err)
		}
		for _, name := range names {
			if count++; count > maxPatchFiles {
				return fmt.Errorf("%s: more than %d entries (kubeletcfg's limit)", dir, maxPatchFiles)
			}
			cres, cshown := path.Join(res, name), path.Join(shown, name)
			fi, err := root.Lstat(cres)
			if err != nil {
				return err
			}
			if fi.IsDir() {
				if err := walk(cres, cshown, depth+1); err != nil {
					return err
				}
				continue
			}
			target, typ, why, err := parseName(name, r)
			if err != nil {
				return fmt.Errorf("%s: kubeadm %s fails: %v", cshown, r.Minor, err)
			}
			if why != "" {
				p.Warnings = append(p.Warnings, warning.At(warning.Other, cshown, 0, "kubeadm %s ignores the file: %s", r.Minor, why))
				continue
			}
			data, err := root.ReadFile(cres, PatchFileKind)
			if err != nil {
				if errors.Is(err, syscall.EISDIR) {
					return fmt.Errorf("%s: a link to a directory, named as a patch: kubeadm %s fails reading it", cshown, r.Minor)
				}
				return fmt.Errorf("%s: kubeadm %s fails: could not read the file: %w", cshown, r.Minor, err)
			}
			if len(data) == 0 {
				p.Warnings = append(p.Warnings, warning.At(warning.Other, cshown, 0, "kubeadm %s ignores the empty file", r.Minor))
				continue
			}
			docs, err := readPatchDocs(data, cshown, typ)
			if err != nil {
				return err
			}
			if target != PatchTarget {
				docs = nil // read and checked, as kubeadm does, but for another component
			}
			p.Files = append(p.Files, &PatchFile{Path: cshown, Target: target, Type: typ, Docs: docs})
		}
		return nil
	}
	if err := walk(top, dir, 0); err != nil {
		return nil, err
	}
	return p, nil
}

// readPatchDocs is util/patches' CreatePatchSet: the file cut into YAML
// documents, blank ones skipped, each converted to JSON.
func readPatchDocs(data []byte, file, typ string) ([]Patch, error) {
	docs, err := splitDocuments(data)
	if err != nil {
		return nil, fmt.Errorf("%s: kubeadm fails to split the patches: %v", file, err)
	}
	var out []Patch
	for _, d := range docs {
		body := strings.TrimSpace(string(d.Data))
		if body == "" {
			continue
		}
		js, err := yaml.YAMLToJSON([]byte(body))
		if err != nil {
			return nil, fmt.Errorf("%s:%d: kubeadm fails: could not convert patch to JSON: %v", file, d.Line+lineShift(d.Data, body, err), err)
		}
		// Lines count from the document's first line; TrimSpace dropped
		// only leading blank lines, which the shift puts back.
		shift := d.Line + leadingLines(string(d.Data), body) - 1
		pt := Patch{File: file, Line: shift + 1, Type: typ, JSON: js, Index: len(out)}
		if typ == JSON {
			for _, l := range opLines([]byte(body)) {
				pt.Ops = append(pt.Ops, l+shift)
			}
		} else {
			pt.Keys = map[string]int{}
			for k, l := range keyLines([]byte(body)) {
				pt.Keys[k] = l + shift
			}
		}
		out = append(out, pt)
	}
	return out, nil
}

// leadingLines counts the lines before body starts in doc.
func leadingLines(doc, body string) int {
	i := strings.Index(doc, body)
	if i < 0 {
		return 0
	}
	return strings.Count(doc[:i], "\n")
}

// lineShift finds the line a YAML error names ("yaml: line 3: ..."), relative
// to the document.
func lineShift(doc []byte, body string, err error) int {
	var n int
	if _, e := fmt.Sscanf(lineAfter(err.Error(), "line "), "%d", &n); e == nil && n > 0 {
		return leadingLines(string(doc), body) + n - 1
	}
	return 0
}

func lineAfter(s, marker string) string {
	if i := strings.Index(s, marker); i >= 0 {
		return s[i+len(marker):]
	}
	return ""
}
