package effective

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kubeletcfg/kubeletcfg/flags"
	"github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/schema"
	"github.com/kubeletcfg/kubeletcfg/validate"
)

// Input is what the layer stack is computed from: a node's kubelet setup,
// and what a caller lays over it (the files a change writes, the command
// line a migration leaves, another kubelet version). Every overlay is
// optional; an Input with only a Setup is the node as it is.
type Input struct {
	// Setup is the node's kubelet setup: version, command line with where
	// each word was written, environment, root, working directory.
	Setup *node.Setup
	// ReadAs reads the setup as this kubelet version: the flags and the
	// feature gate settings it no longer has are left out, as if never
	// written (Result.LostFlags, Result.DroppedGates). A flag no kubelet
	// ever had is an error.
	ReadAs *schema.Version
	// Args, when not nil, is the kubelet's command line instead of the
	// setup's (a migration's new one); its words have no sources.
	Args []string
	// Config, when not nil, is the content of the --config file instead of
	// what is on disk; ConfigName names it in errors and origins (the
	// operator's file; default the --config path).
	Config     []byte
	ConfigName string
	// ConfigFile and ConfigDir stand for --config and --config-dir when the
	// command line names none: a file (and drop-ins) judged with no node
	// behind it.
	ConfigFile, ConfigDir string
	// Dropins are drop-ins created or replaced in the --config-dir;
	// RemoveDropins the names of drop-ins taken out of it (one that is not
	// there is nothing).
	Dropins       []Overlay
	RemoveDropins []string
	// LookupEnv reads the kubelet's environment instead of the setup's.
	LookupEnv func(string) (string, bool)
	// DropGates names feature gates to leave out as if never written
	// (kubeletcfg validate's gates the kubelet refuses, reported apart).
	DropGates func(name string) bool
	// Host is what the verdict knows of the host (cgroup version).
	Host validate.Host
	// Reuse is a Result computed a moment before from the same Setup
	// (apply's current configuration before its new one): the drop-ins it
	// read from the node's disk are taken from it, not read and decoded
	// again, when this computation reads them as the same version.
	Reuse *Result
}

// Overlay is a drop-in laid over the --config-dir.
type Overlay struct {
	Name    string // its file name in the directory (*.conf)
	Content []byte
	// From is the file it was given as, named in errors and origins
	// (default: its path in the directory).
	From string
}

// Compute layers a setup as its kubelet version does: defaults (or the
// flags-only baseline), the --config file, the drop-ins, then the command
// line again on top. When the kubelet would refuse the setup on the way, the
// error is a *Refused with its reason, placed where the word it is about was
// written (unit, env file and line); a file kubeletcfg cannot read is an I/O
// error. Compute does not judge the result: Result.Verdict does.
func Compute(in Input) (*Result, error) {
	s := in.Setup
	if s == nil || s.Version == nil {
		return nil, errors.New("effective: no kubelet setup")
	}
	st := stack{Version: s.Version, Args: s.Args, ArgSources: s.Sources, Dir: s.Dir, Root: s.Root, LookupEnv: s.Environ(),
		DropGate: in.DropGates, configFile: in.ConfigFile, configDir: in.ConfigDir,
		config: in.Config, configName: in.ConfigName, dropins: in.Dropins, removed: in.RemoveDropins, reuse: in.Reuse}
	if in.Args != nil {
		st.Args, st.ArgSources = in.Args, nil
	}
	if in.LookupEnv != nil {
		st.LookupEnv = in.LookupEnv
	}
	for _, d := range in.Dropins {
		if err := checkDropinName(d.Name); err != nil {
			return nil, err
		}
	}
	var lost []flags.Lost
	if to := in.ReadAs; to != nil {
		kept, l, err := flags.ReadAs(st.Args, to)
		if err != nil {
			return nil, err
		}
		lost = l
		args, sources := make([]string, 0, len(kept)), make([]string, 0, len(kept))
		for _, i := range kept {
			args = append(args, st.Args[i])
			if i < len(st.ArgSources) {
				sources = append(sources, st.ArgSources[i])
			} else {
				sources = append(sources, "")
			}
		}
		drop := in.DropGates
		st.Version, st.Args, st.ArgSources = to, args, sources
		st.DropGate = func(name string) bool {
			_, gone := to.RemovedGate(name)
			return gone || (drop != nil && drop(name))
		}
	}
	res, err := layer(st)
	if err != nil {
		err = st.place(err)
		var pathErr *fs.PathError
		if errors.As(err, &pathErr) {
			return nil, err
		}
		return nil, &Refused{Version: st.Version.Minor, Reasons: []string{err.Error()}, Err: err}
	}
	res.LostFlags, res.host = lost, in.Host
	res.askRuntime(s.Runtime)
	if err := res.readCredentialProvider(st); err != nil {
		return nil, err
	}
	return res, nil
}

// place says where on the node the word an error is about was written: the
// unit or environment file and line, and the variable.
func (st stack) place(err error) error {
	var fe *flags.Error
	if !errors.As(err, &fe) || fe.Index < 0 || fe.Index >= len(st.ArgSources) || st.ArgSources[fe.Index] == "" {
		return err
	}
	return fmt.Errorf("%s: %w", st.ArgSources[fe.Index], err)
}

// checkDropinName refuses a drop-in name that is not a file the kubelet
// reads in its --config-dir.
func checkDropinName(name string) error {
	if name != filepath.Base(name) || filepath.Ext(name) != ".conf" || strings.HasPrefix(name, ".") {
		return fmt.Errorf("drop-in %q: a file name in the --config-dir ending in .conf (the kubelet reads no other), not a path", name)
	}
	return nil
}

// dropinFile is a drop-in to read: from disk when data is nil. pos is its
// path in the directory, name what it goes by.
type dropinFile struct {
	pos, name string
	data      []byte
}

// overlaid is the drop-ins the kubelet reads in dir (files, as List has
// them) once over are created or replaced and removed are gone, in the
// kubelet's order: a depth-first walk, byte order in each directory.
func overlaid(dir string, files []string, over []Overlay, removed []string) []dropinFile {
	out := make([]dropinFile, 0, len(files)+len(over))
	for _, f := range files {
		if filepath.Dir(f) == filepath.Clean(dir) && slices.Contains(removed, filepath.Base(f)) {
			continue
		}
		out = append(out, dropinFile{pos: f, name: f})
	}
	for _, o := range over {
		d := dropinFile{pos: filepath.Join(dir, o.Name), name: o.From, data: o.Content}
		if d.name == "" {
			d.name = d.pos
		}
		if d.data == nil {
			d.data = []byte{}
		}
		if i := slices.IndexFunc(out, func(f dropinFile) bool { return f.pos == d.pos }); i >= 0 {
			out[i] = d
			continue
		}
		at := slices.IndexFunc(out, func(f dropinFile) bool { return walkLess(dir, d.pos, f.pos) })
		if at < 0 {
			at = len(out)
		}
		out = slices.Insert(out, at, d)
	}
	return out
}

// walkLess says a comes before b in a walk of dir: path elements compared
// one by one, in byte order.
func walkLess(dir, a, b string) bool {
	ra, _ := filepath.Rel(dir, a)
	rb, _ := filepath.Rel(dir, b)
	ea, eb := strings.Split(ra, string(filepath.Separator)), strings.Split(rb, string(filepath.Separator))
	for i := 0; i < len(ea) && i < len(eb); i++ {
		if ea[i] != eb[i] {
			return ea[i] < eb[i]
		}
	}
	return len(ea) < len(eb)
}
