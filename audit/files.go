package audit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/kubeletcfg/kubeletcfg/nodefile"
)

// Limits on walking a --config-dir tree of a node.
const (
	maxDropinDepth   = 8
	maxDropinEntries = 4096
)

// nodeFile is one file of the node a 4.1 check looks at.
type nodeFile struct {
	path     string // node path as the kubelet or systemd names it
	resolved string // after symbolic links, when it differs
	mode     fs.FileMode
	size     int64
	uid, gid uint32
	dir      bool
	regular  bool
	err      error // it could not be read
}

func statNode(root, p string) (string, fs.FileInfo, error) {
	return nodefile.StatIn(root, p)
}

func lookFile(root, p string) nodeFile {
	res, fi, err := statNode(root, p)
	return describe(p, res, fi, err)
}

// look is lookFile through the run's root, opened at the first look and
// holding the directories walked (nodefile.Root.Hold): the checks look at
// a dozen files in a few directories.
func (s *state) look(p string) nodeFile {
	if s.root == nil {
		r, err := nodefile.OpenRoot(s.opts.Setup.Root)
		if err != nil {
			return lookFile(s.opts.Setup.Root, p)
		}
		r.Hold()
		s.root = r
	}
	return lookIn(s.root, p)
}

// close closes the run's root, when a look opened it.
func (s *state) close() {
	if s.root != nil {
		s.root.Close()
		s.root = nil
	}
}

// lookIn is lookFile on an open root.
func lookIn(r *nodefile.Root, p string) nodeFile {
	res, fi, err := r.Stat(p)
	return describe(p, res, fi, err)
}

func describe(p, res string, fi fs.FileInfo, err error) nodeFile {
	f := nodeFile{path: p}
	if res != "" && res != path.Clean(p) {
		f.resolved = res
	}
	if err != nil {
		f.err = err
		return f
	}
	f.mode, f.dir, f.regular, f.size = fi.Mode().Perm(), fi.IsDir(), fi.Mode().IsRegular(), fi.Size()
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		f.uid, f.gid = st.Uid, st.Gid
	}
	return f
}

func (f nodeFile) String() string {
	name := f.path
	if f.resolved != "" {
		name += " -> " + f.resolved
	}
	if f.err != nil {
		return name + " (" + errText(f.err) + ")"
	}
	return fmt.Sprintf("%s %04o %d:%d", name, f.mode, f.uid, f.gid)
}

func errText(err error) string {
	if errors.Is(err, fs.ErrNotExist) {
		return "missing"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// nodePath makes a path the kubelet names absolute: relative to its working
// directory (a systemd service runs in /; given on the command line, here).
func (s *state) nodePath(p string) string { return nodePathIn(s.opts.Setup.Root, p) }

// nodePathIn is nodePath for the node under root.
func nodePathIn(root, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	dir := ""
	if root == "" {
		dir, _ = os.Getwd()
	}
	if dir == "" {
		dir = "/"
	}
	return filepath.Join(dir, p)
}

// fileRule judges files against a most-permissive mode and root ownership.
type fileRule struct {
	maxMode   fs.FileMode // 0 when ownership is judged
	ownership bool
	dirMode   fs.FileMode // for directories: bits that must be clear
}

func (r fileRule) bad(f nodeFile) bool {
	switch {
	case f.err != nil:
		return false
	case r.ownership:
		return f.uid != 0 || f.gid != 0
	case f.dir:
		return f.mode&r.dirMode != 0
	default:
		return f.mode&^r.maxMode != 0
	}
}

// judgeFiles decides a file check over files; what names them for the
// report ("the kubelet service file"), missing decides a missing file.
func (s *state) judgeFiles(files []nodeFile, r fileRule, missing Status) outcome {
	var shown, bad, gone []string
	for _, f := range files {
		shown = append(shown, f.String())
		if f.err != nil {
			gone = append(gone, f.String())
		} else if r.bad(f) {
			bad = append(bad, f.path)
		}
	}
	o := outcome{status: Pass, value: strings.Join(shown, ", "), origin: "the node"}
	if s.opts.Setup.Root != "" {
		o.origin = "the node under " + s.opts.Setup.Root
	}
	switch {
	case len(bad) > 0:
		o.status = Fail
		switch {
		case r.ownership:
			o.remedy = "chown root:root " + strings.Join(bad, " ")
		case r.dirMode != 0:
			o.remedy = fmt.Sprintf("chmod go-w %s; chmod %o on the drop-ins", strings.Join(bad, " "), r.maxMode)
		default:
			o.remedy = fmt.Sprintf("chmod %o %s", r.maxMode, strings.Join(bad, " "))
		}
	case len(gone) > 0 && missing != Pass:
		o.status = missing
		o.detail = "not readable on the node: " + strings.Join(gone, ", ")
	}
	return o
}

func (s *state) serviceFiles() []nodeFile {
	var out []nodeFile
	for _, p := range s.opts.Setup.Files {
		out = append(out, s.look(p))
	}
	return out
}

func (s *state) serviceCheck(r fileRule) outcome {
	if len(s.opts.Setup.Files) == 0 {
		return outcome{status: Manual, value: "(no unit read)", detail: "the command line was given, not read from kubelet.service: check the file that starts the kubelet"}
	}
	return s.judgeFiles(s.serviceFiles(), r, Warn)
}

func (s *state) kubeconfigCheck(r fileRule) outcome {
	occ, ok := s.flag("kubeconfig")
	if !ok {
		return outcome{status: Pass, value: "(no --kubeconfig: a standalone kubelet)", origin: "not on the command line"}
	}
	o := s.judgeFiles([]nodeFile{s.look(s.nodePath(occ.value))}, r, Warn)
	if o.status == Warn {
		o.detail += " (the kubelet writes it from --bootstrap-kubeconfig on first start)"
	}
	o.origin = occ.origin
	return o
}

func (s *state) clientCACheck(r fileRule) outcome {
	ca := s.cfg.Authentication.X509.ClientCAFile
	if ca == "" {
		return outcome{status: Fail, value: "(unset)", origin: s.origin("authentication.x509.clientCAFile"), detail: "no client CA file (see 4.2.3)"}
	}
	o := s.judgeFiles([]nodeFile{s.look(ca)}, r, Warn)
	o.origin = "authentication.x509.clientCAFile at " + s.origin("authentication.x509.clientCAFile")
	return o
}

func (s *state) configFileCheck(r fileRule) outcome {
	if s.eff.ConfigFile == "" {
		return outcome{status: Pass, value: "(no --config file)", origin: "not on the command line"}
	}
	o := s.judgeFiles([]nodeFile{s.look(s.nodePath(s.eff.ConfigFile))}, r, Fail)
	o.origin = "--config " + s.eff.ConfigFile
	return o
}

func (s *state) dropinCheck(r fileRule) outcome {
	if s.eff.ConfigDir == "" {
		return outcome{status: Pass, value: "(no --config-dir)", origin: "not on the command line"}
	}
	files, err := s.trees.dropins(s.opts.Setup.Root, s.nodePath(s.eff.ConfigDir))
	if err != nil {
		return outcome{status: Warn, value: s.eff.ConfigDir, detail: err.Error()}
	}
	o := s.judgeFiles(files, r, Warn)
	o.origin = "--config-dir " + s.eff.ConfigDir
	return o
}

// dropinTree lists a --config-dir directory, its subdirectories and the
// .conf files the kubelet reads from them, bounded in depth and size.
func dropinTree(root, dir string) ([]nodeFile, error) {
	return walkTree(root, dir, func(name string) bool { return path.Ext(name) == ".conf" })
}

// walkTree lists a directory of the node, its subdirectories and the files
// in them keep takes, bounded in depth and size.
func walkTree(root, dir string, keep func(name string) bool) ([]nodeFile, error) {
	r, err := nodefile.OpenRoot(root)
	if err != nil {
		return []nodeFile{{path: dir, err: err}}, nil
	}
	r.Hold() // each entry is looked at from its directory
	defer r.Close()
	var out []nodeFile
	var walk func(f nodeFile, depth int) error
	walk = func(f nodeFile, depth int) error {
		out = append(out, f)
		if len(out) > maxDropinEntries {
			return fmt.Errorf("%s: more than %d entries", dir, maxDropinEntries)
		}
		if f.err != nil || !f.dir {
			return nil
		}
		if depth > maxDropinDepth {
			return fmt.Errorf("%s: nested deeper than %d directories", dir, maxDropinDepth)
		}
		names, err := r.ReadDir(f.path)
		if err != nil {
			return err
		}
		for _, n := range names {
			child := lookIn(r, path.Join(f.path, n))
			if child.err == nil && !child.dir && !keep(n) {
				continue
			}
			if err := walk(child, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	return out, walk(lookIn(r, dir), 0)
}

// trees keeps the drop-in trees one audit walked, by root and directory:
// the confinement and the drop-in checks look at the same tree.
type trees map[[2]string]treeWalk

type treeWalk struct {
	files []nodeFile
	err   error
}

// dropins is dropinTree, walked once per root and directory.
func (t trees) dropins(root, dir string) ([]nodeFile, error) {
	if t == nil {
		return dropinTree(root, dir)
	}
	k := [2]string{root, dir}
	if w, ok := t[k]; ok {
		return w.files, w.err
	}
	files, err := dropinTree(root, dir)
	t[k] = treeWalk{files, err}
	return files, err
}

var fileChecks = []*check{
	{id: "4.1.1", section: SectionCIS, benchmarks: fromCIS19,
		title: "Ensure that the kubelet service file permissions are set to 600 or more restrictive (Automated)",
		rule:  func(s *state) outcome { return s.serviceCheck(fileRule{maxMode: 0o600}) }},
	{id: "4.1.2", section: SectionCIS, benchmarks: fromCIS19,
		title: "Ensure that the kubelet service file ownership is set to root:root (Automated)",
		rule:  func(s *state) outcome { return s.serviceCheck(fileRule{ownership: true}) }},
	{id: "4.1.5", section: SectionCIS, benchmarks: fromCIS19,
		title: "Ensure that the --kubeconfig kubelet.conf file permissions are set to 600 or more restrictive (Automated)",
		rule:  func(s *state) outcome { return s.kubeconfigCheck(fileRule{maxMode: 0o600}) }},
	{id: "4.1.6", section: SectionCIS, benchmarks: fromCIS19,
		title: "Ensure that the --kubeconfig kubelet.conf file ownership is set to root:root (Automated)",
		rule:  func(s *state) outcome { return s.kubeconfigCheck(fileRule{ownership: true}) }},
	{id: "4.1.7", section: SectionCIS, benchmarks: fromCIS19,
		title:  "Ensure that the certificate authorities file permissions are set to 600 or more restrictive (Manual)",
		titles: sinceCIS111("Ensure that the certificate authorities file permissions are set to 644 or more restrictive (Manual)"),
		rule:   func(s *state) outcome { return s.clientCACheck(fileRule{maxMode: s.b.caMode}) }},
	{id: "4.1.8", section: SectionCIS, benchmarks: fromCIS19,
		title: "Ensure that the client certificate authorities file ownership is set to root:root (Manual)",
		rule:  func(s *state) outcome { return s.clientCACheck(fileRule{ownership: true}) }},
	{id: "4.1.9", section: SectionCIS, benchmarks: fromCIS19,
		title: "If the kubelet config.yaml configuration file is being used validate permissions set to 600 or more restrictive (Automated)",
		rule:  func(s *state) outcome { return s.configFileCheck(fileRule{maxMode: 0o600}) }},
	{id: "4.1.10", section: SectionCIS, benchmarks: fromCIS19,
		title: "If the kubelet config.yaml configuration file is being used validate file ownership is set to root:root (Automated)",
		rule:  func(s *state) outcome { return s.configFileCheck(fileRule{ownership: true}) }},
	// The benchmark predates --config-dir; its drop-ins configure the
	// kubelet like the config file and deserve the same care.
	{id: "4.1.9d", section: SectionCIS,
		title: "4.1.9 for the --config-dir drop-ins: the directory not writable by group or others, its .conf files 600 or more restrictive (kubeletcfg)",
		rule:  func(s *state) outcome { return s.dropinCheck(fileRule{maxMode: 0o600, dirMode: 0o022}) }},
	{id: "4.1.10d", section: SectionCIS,
		title: "4.1.10 for the --config-dir drop-ins: the directory and its .conf files owned by root:root (kubeletcfg)",
		rule:  func(s *state) outcome { return s.dropinCheck(fileRule{ownership: true}) }},
}
