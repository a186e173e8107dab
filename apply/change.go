package apply

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kubeletcfg/kubeletcfg/nodefile"
)

// Change is a change as kubeletcfg's command line names it: a new config
// file (File), or a merge patch onto it (Patch), or drop-ins, each
// NAME=FILE (Dropins: the first becomes Options.Dropin with its content
// as NewFile, the others MoreDropins), and drop-ins removed by name.
type Change struct {
	File          string
	Patch         string
	Dropins       []string
	RemoveDropins []string
	// ReadFile reads the change's files (default: nodefile's, with its
	// limits for a config file); an apply in a pod reads them before it
	// enters the host's root, and hands them over here.
	ReadFile func(path string) ([]byte, error)
}

func (c Change) read(path string) ([]byte, error) {
	if c.ReadFile != nil {
		return c.ReadFile(path)
	}
	return nodefile.ReadFile(path, nodefile.Config)
}

// Files are the change's inputs as given, read (ChangeHash names them).
func (c Change) Files() ([]ChangeFile, error) {
	var out []ChangeFile
	add := func(kind, name, path string) error {
		b, err := c.read(path)
		if err == nil {
			out = append(out, ChangeFile{Kind: kind, Name: name, Content: b})
		}
		return err
	}
	if c.File != "" {
		if err := add("file", "", c.File); err != nil {
			return nil, err
		}
	}
	for _, spec := range c.Dropins {
		name, file, ok := strings.Cut(spec, "=")
		if !ok {
			continue // Check says what is wrong
		}
		if err := add("dropin", name, file); err != nil {
			return nil, err
		}
	}
	if c.Patch != "" {
		if err := add("patch", "", c.Patch); err != nil {
			return nil, err
		}
	}
	for _, name := range c.RemoveDropins {
		out = append(out, ChangeFile{Kind: "remove-dropin", Name: name})
	}
	return out, nil
}

// Check refuses what cannot be one change of node, before anything is
// read.
func (c Change) Check(node string) error {
	file := c.File
	for i, spec := range c.Dropins {
		_, f, ok := strings.Cut(spec, "=")
		if !ok || (c.File != "" && i == 0) {
			return fmt.Errorf("give either -f NEW.yaml or --dropin NAME=FILE ...")
		}
		if i == 0 {
			file = f
		}
	}
	if c.Patch != "" && (file != "" || len(c.RemoveDropins) > 0) {
		return fmt.Errorf("--patch sets fields of the --config file: not with -f, --dropin or --remove-dropin")
	}
	if node == "" || (file == "" && c.Patch == "" && len(c.RemoveDropins) == 0) {
		return fmt.Errorf("--node and -f (or --patch, --dropin, --remove-dropin) are required")
	}
	return nil
}

// Into checks c and reads its files (with nodefile's limits for a config
// file) into o: NewFile and NewFileName, Patch and PatchName, Dropin,
// MoreDropins and RemoveDropins.
func (c Change) Into(o *Options) error {
	if err := c.Check(o.Node); err != nil {
		return err
	}
	file := c.File
	for i, spec := range c.Dropins {
		name, f, _ := strings.Cut(spec, "=")
		if i == 0 {
			o.Dropin, file = name, f
			continue
		}
		content, err := c.read(f)
		if err != nil {
			return err
		}
		o.MoreDropins = append(o.MoreDropins, FileWrite{Path: name, Content: content})
	}
	var err error
	if file != "" {
		if o.NewFile, err = c.read(file); err != nil {
			return err
		}
		o.NewFileName = file
	}
	if c.Patch != "" {
		if o.Patch, err = c.read(c.Patch); err != nil {
			return err
		}
		o.PatchName = c.Patch
	}
	o.RemoveDropins = c.RemoveDropins
	return nil
}

// StateDirOf is kubeletcfg's state directory: dir when given, else
// DefaultStateDir inside the node's tree root ("" for this host).
func StateDirOf(root, dir string) string {
	if dir != "" {
		return dir
	}
	return filepath.Join(root, DefaultStateDir)
}

// GuardCommand is the hidden command of kubeletcfg that guards an apply
// (Guard); GuardStarter starts it with these flags.
const GuardCommand = "__guard"

// GuardStarter is Options.StartGuard for o: it starts kubeletcfg's guard
// (this executable's GuardCommand) with o's way to restart the kubelet
// (never read back from a file), and, with kubeconfig, the API server
// through which the guard lifts the cordon the apply left. On this host it
// runs where the host owns it (StartHostGuard); for a node's tree
// (Setup.Root), detached (StartGuard).
func GuardStarter(o *Options, kubeconfig, kubeContext string) func(dir, id string) error {
	return func(dir, id string) error {
		self, err := os.Executable()
		if err != nil {
			return err
		}
		root := ""
		if o.Setup != nil {
			root = o.Setup.Root
		}
		args := GuardArgs(o, dir, id, kubeconfig, kubeContext)
		if root != "" {
			return StartGuard(self, args, dir)
		}
		return StartHostGuard(context.Background(), self, args, dir, id, o.Unit)
	}
}

// GuardArgs is the guard's command line (without the executable) for the
// apply id of o in dir; with kubeconfig, the API server through which it
// lifts the cordon the apply left.
func GuardArgs(o *Options, dir, id, kubeconfig, kubeContext string) []string {
	root := ""
	if o.Setup != nil {
		root = o.Setup.Root
	}
	args := []string{GuardCommand, "--state-dir", dir, "--id", id, "--unit", o.Unit, "--health-timeout", o.Timeout.String()}
	if root != "" {
		args = append(args, "--root", root)
	}
	if kubeconfig != "" {
		// The guard runs elsewhere (a transient unit): an absolute path.
		if abs, err := filepath.Abs(kubeconfig); err == nil {
			kubeconfig = abs
		}
		args = append(args, "--kubeconfig", kubeconfig, "--context", kubeContext, "--node", o.Node)
	}
	if o.Restart != "" {
		args = append(args, "--restart-command", o.Restart, "--pid-file", o.PIDFile, "--kubelet-log", o.KubeletLog)
	}
	return args
}

// RestartSpec says how kubeletcfg restarts the kubelet, as its flags say:
// Command (a shell command given on kubeletcfg's command line, never read
// from a file), with PIDFile and Log; else the systemd Unit (default
// kubelet.service). Timeout is how long a restart may take.
type RestartSpec struct {
	Command, PIDFile, Log, Unit string
	Timeout                     time.Duration
}

// Check refuses a restart that cannot be proven or is of the wrong
// kubelet: a command without the PID file that pins the new process; for
// a node's tree (root), this host's unit.
func (r RestartSpec) Check(root string) error {
	switch {
	case r.Command != "" && r.PIDFile == "":
		return fmt.Errorf("--restart-command needs --pid-file: without the new kubelet's process ID an old kubelet's healthz would confirm the change")
	case r.Command == "" && root != "":
		return fmt.Errorf("--root names another node's tree: give --restart-command (this host's %s is not restarted for it)", unitOr(r.Unit))
	}
	return nil
}

// Restarter restarts as r says: the command when there is one, else the
// systemd unit.
func (r RestartSpec) Restarter() Restarter {
	return newRestarter(r.Command, r.PIDFile, r.Log, r.Unit, r.Timeout)
}

// restartSpec is how o restarts the kubelet.
func (o *Options) restartSpec() RestartSpec {
	return RestartSpec{Command: o.Restart, PIDFile: o.PIDFile, Log: o.KubeletLog, Unit: o.Unit, Timeout: o.Timeout}
}
