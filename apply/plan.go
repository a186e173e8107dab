package apply

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/kubelet/config/v1beta1"

	"github.com/kubeletcfg/kubeletcfg/audit"
	"github.com/kubeletcfg/kubeletcfg/config"
	"github.com/kubeletcfg/kubeletcfg/configpatch"
	"github.com/kubeletcfg/kubeletcfg/diff"
	"github.com/kubeletcfg/kubeletcfg/effective"
	hostnode "github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/nodefile"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

// Plan is what an apply will do: the changes of the effective
// configuration, and the files it writes.
type Plan struct {
	Changes []diff.Change
	// ConfigFile is the file the change is written to (disk path): the
	// --config file, or the drop-in.
	ConfigFile string
	// Writes are every file written: ConfigFile first, unless the change
	// only removes drop-ins. A hook before the backup may add files.
	Writes []FileWrite
	// StateFiles are the kubelet's state files the change needs removed
	// (disk paths); NeedsDrain says a change needs the node drained.
	StateFiles []string
	NeedsDrain bool
	// Removes are the drop-ins the change removes (disk paths).
	Removes []string
	// Masked are the fields the new --config file changes that a flag or a
	// drop-in keeps the kubelet from running.
	Masked []Masked

	old, next *effective.Result
	// oldMap and nextMap are their configurations rendered (config.ToMap)
	// as mapsAs has them, only read.
	oldMap, nextMap map[string]any
	mapsAs          *schema.Version
	// read is what the plan found in each file it writes or removes (its
	// SHA-256, "" when absent): the backup refuses a file changed since
	// (an edit during a long drain), naming it.
	read map[string]string
}

// empty says the plan changes nothing: no field of the effective
// configuration, no field of the file (one a flag masks), no other file.
func (p *Plan) empty() bool {
	return len(p.Changes) == 0 && len(p.Masked) == 0 && len(p.Writes) <= 1 && len(p.Removes) == 0
}

// render renders a configuration as config.ToMap does: the plan's own
// before and after as it rendered them.
func (p *Plan) render(v *schema.Version) func(*v1beta1.KubeletConfiguration) (map[string]any, error) {
	return func(c *v1beta1.KubeletConfiguration) (map[string]any, error) {
		switch {
		case c == nil || v != p.mapsAs:
		case p.old != nil && c == p.old.Config && p.oldMap != nil:
			return p.oldMap, nil
		case p.next != nil && c == p.next.Config && p.nextMap != nil:
			return p.nextMap, nil
		}
		return config.ToMap(c, v)
	}
}

// outcome is what the plan says before anything is done: the changes, the
// effective configurations before and after, and the files it writes (none
// when the change is semantically empty).
func (p *Plan) outcome(o Options) (*Outcome, error) {
	v := o.Setup.Version
	out := &Outcome{Changes: p.Changes, ConfigFile: p.ConfigFile, KubeletVersion: v.Minor, Writes: []string{}}
	var err error
	if out.Breaks, err = audit.BreaksRendered(v, p.old.Config, p.next.Config, p.oldMap, p.nextMap); err != nil {
		return nil, err
	}
	out.configs = &outcomeConfigs{before: p.old.Config, after: p.next.Config, v: v}
	if !p.empty() {
		for _, w := range p.Writes {
			out.Writes = append(out.Writes, w.Path)
		}
		out.Removes = p.Removes
		out.Masked = p.Masked
		if len(p.Masked) > 0 || o.NewArgs != nil {
			// The effective configuration does not tell this change.
			if out.Files, err = fileTexts(o.Setup.Root, p.Writes); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// fileTexts are the texts of the files written, before and after, secrets
// redacted.
func fileTexts(root string, writes []FileWrite) ([]FileText, error) {
	var out []FileText
	for _, w := range writes {
		var before []byte
		var err error
		if root == "" {
			before, err = nodefile.ReadFile(w.Path, nodefile.Config)
		} else if rel, rerr := filepath.Rel(root, w.Path); rerr == nil {
			before, err = nodefile.ReadFileIn(root, "/"+rel, nodefile.Config)
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		out = append(out, FileText{Path: w.Path, Before: redactText(before), After: redactText(w.Content)})
	}
	return out, nil
}

// planPhase plans the change: the effective configuration before and
// after, the kubelet's verdict, the changes, the files to write. A change
// that changes nothing ends the transaction here.
type planPhase struct{}

func (planPhase) Name() string { return "plan" }

func (planPhase) Run(_ context.Context, t *Tx) error {
	p, err := plan(t.o)
	if err != nil {
		return err
	}
	out, err := p.outcome(t.o)
	if err != nil {
		return err
	}
	t.plan, t.out = p, out
	t.done = p.empty()
	return nil
}

// gatePhase refuses a change the node is not ready for, or one that makes a
// CIS check fail (Plan.gate).
type gatePhase struct{}

func (gatePhase) Name() string { return "gate" }

func (gatePhase) Run(_ context.Context, t *Tx) error { return t.plan.gate(t.o, t.out) }

// plan layers the new files over the node's setup, judges the result as
// the kubelet's version does and computes the changes. It writes nothing.
func plan(o Options) (*Plan, error) {
	v := o.Setup.Version
	if o.ReadAs != nil {
		v = o.ReadAs
	}
	cur := effective.Input{Setup: o.Setup, ReadAs: o.ReadAs}
	old, err := effective.Compute(cur)
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
	if configFile, err = kubeletPath(o.Setup, "--config", configFile); err != nil {
		return nil, err
	}
	path := onDisk(o.Setup.Root, configFile)
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
	next := cur
	newFile, current := o.NewFile, []byte(nil)
	var newDoc *config.Document
	switch {
	case o.Restore != nil:
		if o.NewFile != nil || o.Patch != nil || o.Dropin != "" || len(o.RemoveDropins) > 0 {
			return nil, fmt.Errorf("a backup put back goes alone")
		}
		if extra, removes, err = restoring(o, old, path, &next); err != nil {
			return nil, err
		}
	case onlyRemoves:
		if o.NewFile != nil {
			return nil, fmt.Errorf("--remove-dropin goes with --dropin or alone, not with -f")
		}
		if target, err = dropinTarget(o, old, o.RemoveDropins[0]); err != nil {
			return nil, err
		}
		next.RemoveDropins = removeNames
	case o.Dropin != "":
		seen := map[string]bool{o.Dropin: true}
		for _, d := range o.MoreDropins {
			if seen[d.Path] {
				return nil, fmt.Errorf("--dropin %q: given twice", d.Path)
			}
			seen[d.Path] = true
		}
		if target, err = dropinTarget(o, old, o.Dropin); err != nil {
			return nil, err
		}
		next.Dropins = []effective.Overlay{{Name: o.Dropin, Content: o.NewFile, From: o.NewFileName}}
		if o.DropinConfig != nil {
			next.Config, next.ConfigName = o.DropinConfig, path
			extra = append(extra, FileWrite{Path: path, Content: o.DropinConfig})
		}
		for _, d := range o.MoreDropins {
			full, err := dropinTarget(o, old, d.Path)
			if err != nil {
				return nil, err
			}
			extra = append(extra, FileWrite{Path: full, Content: d.Content})
			next.Dropins = append(next.Dropins, effective.Overlay{Name: d.Path, Content: d.Content})
		}
		next.RemoveDropins = removeNames
	default:
		if current, err = currentFile(o, configFile, path); err != nil {
			return nil, err
		}
		name := cmp.Or(o.NewFileName, path)
		if o.Patch != nil {
			if o.NewFile != nil {
				return nil, fmt.Errorf("--patch goes instead of -f, not with it")
			}
			if newFile, err = configpatch.Apply(current, o.Patch, configpatch.Options{File: path, PatchFile: o.PatchName, Version: v}); err != nil {
				return nil, fmt.Errorf("the patch: %w", err)
			}
			name = path + " + " + o.PatchName
		}
		if newDoc, err = checkNewFile(v, newFile, name); err != nil {
			return nil, fmt.Errorf("the new configuration: %w", err)
		}
		next.Config, next.ConfigName = newFile, name
		if o.NewArgs != nil {
			next.Args = o.NewArgs
		}
	}
	next.Reuse = old
	after, err := effective.Compute(next)
	if err != nil {
		return nil, fmt.Errorf("the new configuration: %w", err)
	}
	if r := after.Verdict(); r != nil {
		return nil, fmt.Errorf("the new configuration is invalid for kubelet %s: %w", v.Minor, r)
	}
	// Each configuration rendered once, for the diff, the masked fields and
	// the audit's gate.
	oldMap, err := config.ToMap(old.Config, v)
	if err != nil {
		return nil, err
	}
	nextMap, err := config.ToMap(after.Config, v)
	if err != nil {
		return nil, err
	}
	changes := diff.CompareMaps(oldMap, nextMap, v)
	p := &Plan{Changes: changes, ConfigFile: target, old: old, next: after, oldMap: oldMap, nextMap: nextMap, mapsAs: v, Removes: removes,
		Writes: append([]FileWrite{{Path: target, Content: newFile}}, extra...)}
	if onlyRemoves || o.Restore != nil {
		p.Writes = extra
	}
	if o.Dropin == "" && !onlyRemoves && o.Restore == nil {
		if p.Masked, err = masked(v, current, newDoc, path, changes, old, oldMap); err != nil {
			return nil, err
		}
	}
	for _, c := range changes {
		for _, cl := range c.Classes {
			if cl != diff.DrainState {
				continue
			}
			p.NeedsDrain = true
			sf := filepath.Join(onDisk(o.Setup.Root, rootDir(old)), c.StateFile)
			if c.StateFile != "" && !slices.Contains(p.StateFiles, sf) {
				p.StateFiles = append(p.StateFiles, sf)
			}
		}
	}
	// Every file is checked before anything is written: a link or a
	// directory in the way stops the apply here, not half-way. What the
	// files written or removed hold now is noted for the backup.
	p.read = map[string]string{}
	touched := len(p.Writes)
	for i, w := range append(append(p.Writes, stateWrites(p.Removes)...), stateWrites(p.StateFiles)...) {
		err := inDir(o.Setup.Root, w.Path, func(d *os.Root, name string) error {
			_, err := lstatIn(d, name)
			if errors.Is(err, fs.ErrNotExist) {
				if i < touched+len(p.Removes) {
					p.read[w.Path] = ""
				}
				return nil
			}
			if err == nil && i < touched+len(p.Removes) {
				p.read[w.Path], err = hashIn(d, name)
			}
			return err
		})
		if err != nil && (i < len(p.Writes) || !errors.Is(err, fs.ErrNotExist)) {
			return p, err
		}
	}
	return p, nil
}

// unchanged refuses a file written or removed that holds something else
// than when the plan read it: someone changed it meanwhile (during the
// drain), and the change would overwrite their work unseen.
func (p *Plan) unchanged(root string) error {
	var errs []error
	for _, path := range slices.Sorted(maps.Keys(p.read)) {
		want := p.read[path]
		err := inDir(root, path, func(d *os.Root, name string) error {
			got, err := hashIn(d, name)
			if errors.Is(err, fs.ErrNotExist) {
				got, err = "", nil
			}
			if err != nil {
				return err
			}
			if got != want {
				return errors.New("changed since the plan read it (during the drain?): refusing to write over it; plan the change again")
			}
			return nil
		})
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// kubeletPath is the absolute path of what the kubelet's flag names: a
// relative one resolves against the kubelet's working directory (the
// setup's, or / for a service in an image); one kubeletcfg cannot place is
// refused before anything is done, for the journal, the guard and recover
// need the file itself.
func kubeletPath(s *hostnode.Setup, flag, p string) (string, error) {
	switch {
	case filepath.IsAbs(p):
		return p, nil
	case s.Dir != "":
		return filepath.Join(s.Dir, p), nil
	case s.Root != "":
		return filepath.Join("/", p), nil
	}
	return "", fmt.Errorf("%s %s is relative: the kubelet resolves it against its working directory, which kubeletcfg cannot tell here; name it by its absolute path", flag, p)
}

// restoring layers a backup record put back (o.Restore) over the setup:
// the --config file's old content, the drop-ins' (kept, or gone when the
// recorded apply created them), and the command line the record kept. It
// returns the files written and those removed (only those there).
func restoring(o Options, cur *effective.Result, configPath string, next *effective.Input) (writes []FileWrite, removes []string, err error) {
	dropinDir := ""
	if cur.ConfigDir != "" {
		dir, err := kubeletPath(o.Setup, "--config-dir", cur.ConfigDir)
		if err != nil {
			return nil, nil, err
		}
		dropinDir = onDisk(o.Setup.Root, dir)
	}
	for _, f := range o.Restore {
		inDropins := dropinDir != "" && filepath.Dir(f.Path) == filepath.Clean(dropinDir)
		switch {
		case f.Path == configPath && !f.Remove:
			next.Config, next.ConfigName = f.Content, f.Path+" (as backed up)"
		case inDropins && f.Remove:
			next.RemoveDropins = append(next.RemoveDropins, filepath.Base(f.Path))
		case inDropins:
			next.Dropins = append(next.Dropins, effective.Overlay{Name: filepath.Base(f.Path), Content: f.Content, From: f.Path + " (as backed up)"})
		}
		if !f.Remove {
			writes = append(writes, FileWrite{Path: f.Path, Content: f.Content})
			continue
		}
		err := inDir(o.Setup.Root, f.Path, func(d *os.Root, name string) error {
			_, err := lstatIn(d, name)
			return err
		})
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return nil, nil, err
		default:
			removes = append(removes, f.Path)
		}
	}
	if o.NewArgs != nil {
		next.Args = o.NewArgs
	}
	return writes, removes, nil
}

// checkNewFile refuses a new --config file (named name) that does not
// decode strictly for the kubelet's version, with every problem it has, or
// that sets gates it refuses; it returns the file decoded.
func checkNewFile(v *schema.Version, content []byte, name string) (*config.Document, error) {
	doc, err := config.Decode(content, config.DecodeOptions{File: name, Version: v})
	if err != nil {
		return nil, err
	}
	if errs := doc.Errors(); len(errs) > 0 {
		msgs := make([]string, len(errs))
		for i, e := range errs {
			msgs[i] = e.Error()
		}
		return nil, errors.New(strings.Join(msgs, "; "))
	}
	if errs := v.CheckGates(doc.Config.FeatureGates); len(errs) > 0 {
		return nil, fmt.Errorf("%s: %s", name, strings.Join(errs, "; "))
	}
	return doc, nil
}

// currentFile is the --config file as it is on the node (node path
// configFile, disk path path); nil when there is none yet (a migration
// creates it).
func currentFile(o Options, configFile, path string) ([]byte, error) {
	var b []byte
	var err error
	if o.Setup.Root == "" {
		b, err = nodefile.ReadFile(path, nodefile.Config)
	} else {
		b, err = nodefile.ReadFileIn(o.Setup.Root, configFile, nodefile.Config)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// masked are the fields the new --config file changes from the current
// one that the effective configuration does not change (changes): a flag
// or a drop-in sets them. A current file that does not decode masks
// nothing (the change is the whole file). nxt is the new file as
// checkNewFile decoded it.
func masked(v *schema.Version, current []byte, nxt *config.Document, path string, changes []diff.Change, old *effective.Result, runs map[string]any) ([]Masked, error) {
	if current == nil {
		return nil, nil
	}
	cur, err := config.Decode(current, config.DecodeOptions{File: path, Version: v, AllowUnknownFields: true})
	if err != nil {
		return nil, nil
	}
	inFile, err := diff.Compute(config.Default(cur.Config, v), config.Default(nxt.Config, v), v)
	if err != nil {
		return nil, err
	}
	var out []Masked
	for _, c := range inFile {
		if slices.ContainsFunc(changes, func(e diff.Change) bool { return e.Path == c.Path }) {
			continue
		}
		from := "a flag or a drop-in"
		if o, ok := old.Origins[c.Path]; ok && o.Kind != "default" {
			from = o.String()
		}
		out = append(out, Masked{Path: c.Path, File: c.New, Runs: valueAt(runs, c.Path), From: from})
	}
	return out, nil
}

// valueAt is the value at a field path of a configuration rendered by
// config.ToMap.
func valueAt(m map[string]any, path string) any {
	var cur any = m
	for _, k := range strings.Split(path, ".") {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = mm[k]
	}
	return cur
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
	dir, err := kubeletPath(o.Setup, "--config-dir", cur.ConfigDir)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, name), nil
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

// onDisk is where a path the kubelet names lies in the node's tree.
func onDisk(root, p string) string {
	if root == "" {
		return p
	}
	// The kubelet reads /../etc/x as /etc/x: so does the tree.
	return filepath.Join(root, filepath.Clean("/"+p))
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
