package apply

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kubeletcfg/kubeletcfg/audit"
	"github.com/kubeletcfg/kubeletcfg/config"
	"github.com/kubeletcfg/kubeletcfg/diff"
	"github.com/kubeletcfg/kubeletcfg/effective"
	hostnode "github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/nodefile"
	"github.com/kubeletcfg/kubeletcfg/validate"
)

// Plan is what an apply will do: the changes of the effective
// configuration, and the files it writes.
type Plan struct {
	Changes []diff.Change
	// ConfigFile is the file the change is written to (disk path): the
	// --config file, or the drop-in.
	ConfigFile string
	// Writes are every file written, ConfigFile first.
	Writes []FileWrite
	// StateFiles are the kubelet's state files the change needs removed
	// (disk paths); NeedsDrain says a change needs the node drained.
	StateFiles []string
	NeedsDrain bool
	// Removes are the drop-ins the change removes (disk paths).
	Removes []string

	old, next *effective.Result
}

// empty says the plan changes nothing.
func (p *Plan) empty() bool {
	return len(p.Changes) == 0 && len(p.Writes) <= 1 && len(p.Removes) == 0
}

// outcome is what the plan says before anything is done: the changes, the
// effective configurations before and after, and the files it writes (none
// when the change is semantically empty).
func (p *Plan) outcome(o Options) (*Outcome, error) {
	v := o.Setup.Version
	out := &Outcome{Changes: p.Changes, ConfigFile: p.ConfigFile, KubeletVersion: v.Minor, Writes: []string{}}
	var err error
	if out.Breaks, err = audit.Breaks(v, p.old.Config, p.next.Config); err != nil {
		return nil, err
	}
	if out.Before, err = config.JSON(p.old.Config, v); err != nil {
		return nil, err
	}
	if out.After, err = config.JSON(p.next.Config, v); err != nil {
		return nil, err
	}
	if !p.empty() {
		for _, w := range p.Writes {
			out.Writes = append(out.Writes, w.Path)
		}
		out.Removes = p.Removes
	}
	return out, nil
}

// plan layers the new files over the node's setup, validates the result
// for the kubelet's version and computes the changes. It writes nothing.
func plan(o Options) (*Plan, error) {
	v := o.Setup.Version
	old, err := effective.Effective(o.Setup)
	if err != nil {
		return nil, fmt.Errorf("the current setup: %w", err)
	}
	configFile := old.ConfigFile
	if configFile == "" {
		configFile = o.ConfigPath
	}
	if configFile == "" {
		return nil, fmt.Errorf("the kubelet runs without --config: migrate it first (kubeletcfg apply --from-migrate)")
	}
	path := onDisk(o.Setup, configFile)
	if err := checkNode(o, old); err != nil {
		return nil, err
	}
	target := path
	extra := append([]FileWrite(nil), o.Extra...)
	removes, removeNames, err := dropinRemovals(o, old)
	if err != nil {
		return nil, err
	}
	onlyRemoves := o.Dropin == "" && len(o.RemoveDropins) > 0
	var next *effective.Result
	switch {
	case onlyRemoves:
		if o.NewFile != nil {
			return nil, fmt.Errorf("--remove-dropin goes with --dropin or alone, not with -f")
		}
		if target, err = dropinTarget(o, old, o.RemoveDropins[0]); err != nil {
			return nil, err
		}
		next, err = layerWithDropins(o, old, nil, removeNames)
	case o.Dropin != "":
		if target, err = dropinTarget(o, old, o.Dropin); err != nil {
			return nil, err
		}
		all := append([]FileWrite{{Path: o.Dropin, Content: o.NewFile}}, o.MoreDropins...)
		for _, d := range o.MoreDropins {
			full, err := dropinTarget(o, old, d.Path)
			if err != nil {
				return nil, err
			}
			extra = append(extra, FileWrite{Path: full, Content: d.Content})
		}
		next, err = layerWithDropins(o, old, all, removeNames)
	default:
		next, err = layerWith(o, path, o.NewFile)
	}
	if err != nil {
		return nil, fmt.Errorf("the new configuration: %w", err)
	}
	if errs := append(validate.Config(next.Config, v), validate.Startup(next.Config, v)...); len(errs) > 0 {
		var msgs []string
		for _, e := range errs {
			msgs = append(msgs, e.Message)
		}
		return nil, fmt.Errorf("the new configuration is invalid for kubelet %s: %s", v.Minor, strings.Join(msgs, "; "))
	}
	changes, err := diff.Compute(old.Config, next.Config, v)
	if err != nil {
		return nil, err
	}
	p := &Plan{Changes: changes, ConfigFile: target, old: old, next: next, Removes: removes,
		Writes: append([]FileWrite{{Path: target, Content: o.NewFile}}, extra...)}
	if onlyRemoves {
		p.Writes = extra
	}
	for _, c := range changes {
		for _, cl := range c.Classes {
			if cl != diff.DrainState {
				continue
			}
			p.NeedsDrain = true
			sf := filepath.Join(onDisk(o.Setup, rootDir(old)), c.StateFile)
			if c.StateFile != "" && !slices.Contains(p.StateFiles, sf) {
				p.StateFiles = append(p.StateFiles, sf)
			}
		}
	}
	// Every file is checked before anything is written: a link or a
	// directory in the way stops the apply here, not half-way.
	for i, w := range append(p.Writes, stateWrites(append(p.StateFiles, p.Removes...))...) {
		err := inDir(o.Setup.Root, w.Path, func(d *os.Root, name string) error {
			_, err := lstatIn(d, name)
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		})
		if err != nil && (i < len(p.Writes) || !errors.Is(err, fs.ErrNotExist)) {
			return p, err
		}
	}
	return p, nil
}

func stateWrites(files []string) []FileWrite {
	var out []FileWrite
	for _, f := range files {
		out = append(out, FileWrite{Path: f})
	}
	return out
}

// gate refuses a change the node is not ready for, or that makes a CIS
// kubelet check fail that passes now (unless allowed), and says what changes
// the kubelet's exposure.
func (p *Plan) gate(o Options, out *Outcome) error {
	if len(out.Breaks) > 0 && !o.AllowInsecure {
		var broken []string
		for _, b := range out.Breaks {
			broken = append(broken, fmt.Sprintf("CIS %s (%s): %s", b.ID, b.Title, b.Value))
		}
		return fmt.Errorf("the change makes checks fail that pass now: %s; give --allow-insecure to apply it anyway", strings.Join(broken, "; "))
	}
	for _, c := range p.Changes {
		for _, cl := range c.Classes {
			switch {
			case cl == diff.DrainState && !o.Drained:
				return fmt.Errorf("%s changes: the node must be drained and %s removed first; drain it and give --drained", c.Path, c.StateFile)
			case cl == diff.Security:
				o.progress("security: %s %s -> %s changes the kubelet API's exposure", c.Path, diff.Value(c.Old), diff.Value(c.New))
			}
		}
	}
	return nil
}

// dropinRemovals are the drop-ins --remove-dropin names that are there (disk
// paths, and their names): one that is not there is nothing to remove.
func dropinRemovals(o Options, cur *effective.Result) (paths, names []string, err error) {
	for _, name := range o.RemoveDropins {
		full, err := dropinTarget(o, cur, name)
		if err != nil {
			return nil, nil, err
		}
		if slices.Contains(paths, full) || name == o.Dropin || slices.ContainsFunc(o.MoreDropins, func(w FileWrite) bool { return w.Path == name }) {
			return nil, nil, fmt.Errorf("--remove-dropin %q: named twice", name)
		}
		err = inDir(o.Setup.Root, full, func(d *os.Root, base string) error {
			_, err := lstatIn(d, base)
			return err
		})
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return nil, nil, err
		}
		paths, names = append(paths, full), append(names, name)
	}
	return paths, names, nil
}

// dropinTarget is the drop-in file --dropin names, in the kubelet's
// --config-dir.
func dropinTarget(o Options, cur *effective.Result, name string) (string, error) {
	if name != filepath.Base(name) || filepath.Ext(name) != ".conf" || strings.HasPrefix(name, ".") {
		return "", fmt.Errorf("--dropin %q: a file name in the --config-dir ending in .conf (the kubelet reads no other), not a path", name)
	}
	if cur.ConfigDir == "" {
		return "", fmt.Errorf("--dropin: the kubelet runs without --config-dir")
	}
	if o.Setup.Root != "" {
		return "", fmt.Errorf("--dropin with --root is not supported yet")
	}
	return filepath.Join(cur.ConfigDir, name), nil
}

// layerWithDropins layers the setup with the given drop-ins (Path: file
// name) written: a copy of the --config-dir with them is layered in the
// directory's place.
func layerWithDropins(o Options, cur *effective.Result, ds []FileWrite, removed []string) (*effective.Result, error) {
	tmp, err := os.MkdirTemp("", "kubeletcfg-dropins")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	dir := cur.ConfigDir
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(o.Setup.Dir, dir)
		if dir, err = filepath.Abs(dir); err != nil {
			return nil, err
		}
	}
	if err := copyTree(o.Setup.Root, dir, tmp); err != nil {
		return nil, err
	}
	for _, name := range removed {
		if err := os.Remove(filepath.Join(tmp, name)); err != nil {
			return nil, err
		}
	}
	for _, d := range ds {
		if err := os.WriteFile(filepath.Join(tmp, d.Path), d.Content, 0o600); err != nil {
			return nil, err
		}
	}
	s := o.Setup
	s.Args = nil
	for _, a := range o.Setup.Args {
		if n, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); n == "config-dir" {
			continue
		}
		s.Args = append(s.Args, a)
	}
	s.Args = append(s.Args, "--config-dir="+tmp)
	res, err := effective.Effective(s)
	if err != nil {
		// The copy's files are named as what they stand for: the file given
		// for the drop-in, the drop-ins that are there.
		var names []string
		if o.NewFileName != "" && len(ds) > 0 {
			names = append(names, filepath.Join(tmp, ds[0].Path), o.NewFileName)
		}
		return nil, &renamedError{err: err, msg: strings.NewReplacer(append(names, tmp, cur.ConfigDir)...).Replace(err.Error())}
	}
	res.ConfigDir = cur.ConfigDir
	return res, nil
}

// renamedError is err with its message restated.
type renamedError struct {
	err error
	msg string
}

func (e *renamedError) Error() string { return e.msg }
func (e *renamedError) Unwrap() error { return e.err }

// copyTree copies the drop-in directory dir (a path on the node under root,
// "" for this one) into dst, reading through nodefile: inside the root,
// regular files only, each within the limit of a config file. The kubelet
// reads only the *.conf files; any other entry is copied empty, for its name.
func copyTree(root, dir, dst string) error {
	r, err := nodefile.OpenRoot(root)
	if err != nil {
		return err
	}
	defer r.Close()
	res, err := r.Resolve(dir)
	if err != nil {
		return err
	}
	return copyDir(r, res, dst)
}

func copyDir(r *nodefile.Root, dir, dst string) error {
	names, err := r.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, name := range names {
		p, target := path.Join(dir, name), filepath.Join(dst, name)
		fi, err := r.Lstat(p)
		if err != nil {
			return err
		}
		if fi.IsDir() {
			if err := os.Mkdir(target, 0o700); err != nil {
				return err
			}
			if err := copyDir(r, p, target); err != nil {
				return err
			}
			continue
		}
		var data []byte
		if filepath.Ext(name) == ".conf" {
			if data, err = r.ReadFile(p, nodefile.Config); err != nil {
				return err
			}
		}
		if err := os.WriteFile(target, data, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// layerWith layers the setup (with NewArgs when set) with content as its
// --config file at path (disk path).
func layerWith(o Options, path string, content []byte) (*effective.Result, error) {
	v := o.Setup.Version
	name := cmp.Or(o.NewFileName, path)
	doc, err := config.Decode(content, config.DecodeOptions{File: name, Version: v})
	if err != nil {
		return nil, err
	}
	if errs := doc.Errors(); len(errs) > 0 {
		return nil, errs[0]
	}
	if errs := v.CheckGates(doc.Config.FeatureGates); len(errs) > 0 {
		return nil, fmt.Errorf("%s: %s", name, strings.Join(errs, "; "))
	}
	s := o.Setup
	if o.NewArgs != nil {
		s.Args, s.ArgSources = o.NewArgs, nil
	}
	s.Base = config.Default(doc.Config, v) // relative paths resolve against the real file's directory
	return effective.Effective(s)
}

// rootDir is the kubelet's --root-dir.
func rootDir(r *effective.Result) string {
	dir := "/var/lib/kubelet"
	if f, ok := r.Version.Flag("root-dir"); ok && f.Default != "" {
		dir = f.Default
	}
	for _, o := range r.Flags {
		if o.Flag.Name == "root-dir" {
			dir = o.Value
		}
	}
	return dir
}

func onDisk(s effective.Options, p string) string {
	if s.Root == "" {
		return p
	}
	// The kubelet reads /../etc/x as /etc/x: so does the tree.
	return filepath.Join(s.Root, filepath.Clean("/"+p))
}

// checkNode refuses to touch a node other than the one named.
func checkNode(o Options, cur *effective.Result) error {
	name := ""
	for _, f := range cur.Flags {
		if f.Flag.Name == "hostname-override" {
			name = f.Value
		}
	}
	if name == "" {
		var err error
		name, err = hostnode.Hostname(o.Setup.Root)
		if errors.Is(err, hostnode.ErrNoHostname) {
			o.progress("the node's name is not known (no --hostname-override, no /etc/hostname in the image): taking --node %s", o.Node)
			return nil
		}
		if err != nil {
			return fmt.Errorf("the node's name: %w", err)
		}
	}
	if !strings.EqualFold(name, o.Node) {
		return fmt.Errorf("--node %s, but this node is %q: refusing to touch it", o.Node, name)
	}
	return nil
}
