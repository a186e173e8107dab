package apply

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"k8s.io/kubelet/config/v1beta1"

	"github.com/kubeletcfg/kubeletcfg/config"
	"github.com/kubeletcfg/kubeletcfg/effective"
	"github.com/kubeletcfg/kubeletcfg/kubeadm"
	hostnode "github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/nodefile"
)

// KubeadmCheck is a kubeadm node's side of a change: kubeadm rewrites its
// config.yaml on every `kubeadm upgrade node`, so a change of that file is
// checked against what the next upgrade writes, and refused, or persisted
// where kubeadm keeps it (the kubeadm phase).
type KubeadmCheck struct {
	// Node renders what kubeadm writes (its ConfigMap unknown: offline).
	Node       *kubeadm.NodeRenderer
	Persist    kubeadm.Persist
	PatchesDir string // default kubeadm.DefaultPatchesDir
	// Force applies a change the next upgrade reverts, saying so.
	Force bool
}

// kubeadmPhase checks a change of kubeadm's config.yaml (after the plan and
// its gates, before anything is written): a change the next `kubeadm upgrade
// node` reverts is refused, naming the fields; --persist patch adds
// kubeletcfg's kubeadm patch to the files written, --persist dropin turns the
// change into a drop-in over the file kubeadm writes. Either way the files
// are written, backed up and rolled back with the rest.
type kubeadmPhase struct{}

func (kubeadmPhase) Name() string { return "kubeadm" }

func (kubeadmPhase) Run(_ context.Context, t *Tx) error {
	k := t.o.Kubeadm
	if k == nil || t.plan == nil {
		return nil
	}
	old := t.plan.old
	switch {
	case !kubeadm.OwnsConfig(old.ConfigFile) && !(old.ConfigFile == "" && kubeadm.OwnsConfig(t.o.ConfigPath)):
		return nil // not the file kubeadm rewrites
	case t.o.Dropin != "" || len(t.plan.Writes) == 0 || t.plan.Writes[0].Path != t.plan.ConfigFile:
		t.o.progress("kubeadm: drop-ins are not kubeadm's: the next kubeadm upgrade node leaves them")
		return nil
	}
	// The new config file: -f's, or the --patch laid over the current one.
	desired := t.plan.Writes[0].Content
	v := t.o.Setup.Version
	if t.o.ReadAs != nil {
		v = t.o.ReadAs
	}
	current, err := nodefile.ReadFile(t.plan.ConfigFile, nodefile.Config)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	// The other files the change writes (a migration's kubeadm-flags.env)
	// are what kubeadm reads at the next upgrade.
	overlay := map[string][]byte{}
	for _, w := range t.plan.Writes {
		if w.Path != t.plan.ConfigFile {
			overlay[nodePath(t.o.Setup.Root, w.Path)] = w.Content
		}
	}
	co := kubeadm.ChangeOptions{Node: k.Node, Current: current, Desired: desired,
		CurrentFile: kubeadm.ConfigFile, NewFile: newFileName(t.o), Version: v, Persist: k.Persist, PatchesDir: k.PatchesDir,
		Force: k.Force, Overlay: overlay, Runs: t.runs(), Render: t.plan.render(v)}
	if t.o.NewArgs == nil && old.ConfigFile != "" {
		co.RunsNow = old.Config // today's file on today's command line
	}
	res, err := kubeadm.CheckChange(co)
	if err != nil {
		return err
	}
	var also []FileWrite
	if res.InstanceConfig != nil {
		also = append(also, FileWrite{Path: onDisk(t.o.Setup.Root, res.InstanceConfigPath), Content: res.InstanceConfig})
	}
	for _, n := range res.Notes {
		t.o.progress("kubeadm: %s", n)
	}
	switch res.Persist {
	case kubeadm.PersistPatch:
		p := onDisk(t.o.Setup.Root, res.PatchFile)
		if err := t.ensureDir(path.Dir(res.PatchFile)); err != nil {
			return err
		}
		also = append(also, FileWrite{Path: p, Content: res.Patch})
	case kubeadm.PersistDropin:
		if err := t.replanAsDropin(res, also); err != nil {
			return err
		}
		also = nil
	}
	for _, w := range also {
		t.plan.Writes = append(t.plan.Writes, w)
		t.out.Writes = append(t.out.Writes, w.Path)
	}
	t.out.Kubeadm = res
	return nil
}

// ensureDir creates the directory of kubeletcfg's kubeadm patch (a node
// path), inside the root; a dry run creates nothing. The directory is left
// on a rollback: it is empty then.
func (t *Tx) ensureDir(dir string) error {
	if t.o.DryRun {
		return nil
	}
	root := t.o.Setup.Root
	if root == "" {
		root = "/"
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := r.MkdirAll(strings.TrimPrefix(path.Clean("/"+dir), "/"), 0o755); err != nil {
		return fmt.Errorf("kubeadm patches directory %s: %w", dir, err)
	}
	return nil
}

// replanAsDropin plans the change again as kubeletcfg's drop-in over the
// config.yaml kubeadm writes, and checks it gives the kubelet the
// configuration the new file asked for.
func (t *Tx) replanAsDropin(res *kubeadm.ChangeResult, also []FileWrite) error {
	if t.plan.old.ConfigDir == "" {
		return fmt.Errorf("--persist dropin: the kubelet runs without --config-dir: add --config-dir=/etc/kubernetes/kubelet.conf.d to KUBELET_EXTRA_ARGS in /etc/default/kubelet (kubeadm never rewrites it), or use --persist patch")
	}
	want := t.plan.next
	o := t.o
	o.Dropin, o.NewFile, o.NewFileName, o.Patch = kubeadm.DropinName, res.Dropin, kubeadm.DropinName+" (--persist dropin)", nil
	o.DropinConfig = res.ConfigYAML
	o.Extra = append(append([]FileWrite(nil), o.Extra...), also...)
	p, err := plan(o)
	if err != nil {
		return fmt.Errorf("--persist dropin: %w", err)
	}
	v := o.Setup.Version
	if o.ReadAs != nil {
		v = o.ReadAs
	}
	a, err := config.JSON(want.Config, v)
	if err != nil {
		return err
	}
	b, err := config.JSON(p.next.Config, v)
	if err != nil {
		return err
	}
	if string(a) != string(b) {
		return fmt.Errorf("--persist dropin: with %s the kubelet would not run the configuration asked for (a later drop-in overrides it?): use --persist patch", filepath.Join(t.plan.old.ConfigDir, kubeadm.DropinName))
	}
	out, err := p.outcome(o)
	if err != nil {
		return err
	}
	t.o, t.plan, t.out = o, p, out
	return nil
}

// KubeadmOptions are how a command asks for the kubeadm check.
type KubeadmOptions struct {
	Persist    string // "", "patch" or "dropin"
	PatchesDir string // the --patches kubeadm upgrade is given (default kubeadm.DefaultPatchesDir)
	// ConfigMapFile and ClusterConfigFile hold kubeadm's ConfigMaps; without
	// them, Kubeconfig (when set) reads them through the API server.
	ConfigMapFile, ClusterConfigFile string
	Kubeconfig, Context              string
	Version                          string // the kubeadm that runs the next upgrade ("": the kubelet's minor)
	Force                            bool
	Progress                         func(format string, args ...any)
}

// NewKubeadmCheck is the kubeadm check of a node kubeadm set up (nil for
// another node: --persist is then refused). Close the check's Node after
// the apply.
func NewKubeadmCheck(ctx context.Context, setup *hostnode.Setup, o KubeadmOptions) (*KubeadmCheck, error) {
	persist := kubeadm.Persist(o.Persist)
	switch persist {
	case kubeadm.PersistNone, kubeadm.PersistPatch, kubeadm.PersistDropin:
	default:
		return nil, fmt.Errorf("--persist %q: must be patch or dropin", o.Persist)
	}
	root, err := nodefile.OpenRoot(setup.Root)
	if err != nil {
		return nil, err
	}
	node := kubeadm.Detect(root)
	root.Close()
	if !node.Kubeadm {
		if persist != kubeadm.PersistNone || o.ConfigMapFile != "" {
			return nil, fmt.Errorf("--persist and --kubeadm-configmap are for a node kubeadm set up: this one has none of kubeadm's files (kubeadm-flags.env, instance-config.yaml, kubelet.conf next to /var/lib/kubelet/config.yaml)")
		}
		return nil, nil
	}
	version := o.Version
	if version == "" {
		version = setup.Version.Minor
		if o.Progress != nil {
			o.Progress("kubeadm: the node's next upgrade is taken to be kubeadm %s (the kubelet's minor; --kubeadm-version says otherwise)", version)
		}
	}
	rel, err := kubeadm.ResolveRelease(version)
	if err != nil {
		return nil, err
	}
	dir := o.PatchesDir
	if dir == "" {
		dir = kubeadm.DefaultPatchesDir
	}
	no := kubeadm.NodeOptions{Root: setup.Root, Release: rel, ConfigMapFile: o.ConfigMapFile, ClusterConfigFile: o.ClusterConfigFile,
		Kubeconfig: o.Kubeconfig, Context: o.Context, FromCluster: o.ConfigMapFile == "" && o.Kubeconfig != ""}
	nr, err := kubeadm.OpenNode(ctx, no)
	if err != nil && no.FromCluster && o.Force {
		// --force-unmanaged applies a change kubeadm may revert without
		// knowing which: a cluster that cannot be read is said, not fatal.
		if o.Progress != nil {
			o.Progress("kubeadm: kubeadm's ConfigMap not read (%v): --force-unmanaged applies without knowing what the next kubeadm upgrade node reverts", err)
		}
		no.FromCluster = false
		nr, err = kubeadm.OpenNode(ctx, no)
	}
	if err != nil {
		return nil, err
	}
	if nr.HasDir(dir) {
		// The node has the patches directory: kubeadm upgrade is taken to be
		// run with it.
		nr.SetPatchesDir(dir)
	}
	return &KubeadmCheck{Node: nr, Persist: persist, PatchesDir: dir, Force: o.Force}, nil
}

// FromKubeadm is the config.yaml kubeadm would write on this node from its
// ConfigMap (the cluster's intent rolled out to the node): the kubeadm check,
// the file, and its name for messages.
func FromKubeadm(ctx context.Context, setup *hostnode.Setup, o KubeadmOptions) (*KubeadmCheck, []byte, string, error) {
	if o.ConfigMapFile == "" && o.Kubeconfig == "" {
		return nil, nil, "", errors.New("--from-kubeadm needs kubeadm's ConfigMap: --kubeconfig, or --kubeadm-configmap FILE")
	}
	check, err := NewKubeadmCheck(ctx, setup, o)
	if err != nil {
		return nil, nil, "", err
	}
	if check == nil {
		return nil, nil, "", errors.New("--from-kubeadm: kubeadm did not set this node up (none of its files)")
	}
	res, err := check.Node.Render(nil, "")
	if err != nil {
		check.Node.Close()
		return nil, nil, "", err
	}
	for _, c := range res.Conditions {
		if o.Progress != nil {
			o.Progress("kubeadm: if %s, kubeadm writes another %s: written as it is known now", c.When, c.Field)
		}
	}
	content, err := res.YAML()
	if err != nil {
		check.Node.Close()
		return nil, nil, "", err
	}
	return check, content, fmt.Sprintf("config.yaml as kubeadm %s writes it from %s", res.KubeadmVersion, check.Node.Inputs.ConfigMap.File), nil
}

// runs is what the kubelet runs with a config file's content: the node's
// command line (the new one of a migration) and drop-ins over it. The new
// file's is the plan's, computed once; each other content once too.
func (t *Tx) runs() kubeadm.Runs {
	o := t.o
	done := map[string]*v1beta1.KubeletConfiguration{string(t.plan.Writes[0].Content): t.plan.next.Config}
	return func(data []byte, name string) (*v1beta1.KubeletConfiguration, error) {
		if c, ok := done[string(data)]; ok {
			return c, nil
		}
		in := effective.Input{Setup: o.Setup, ReadAs: o.ReadAs, Config: data, ConfigName: name, Reuse: t.plan.old}
		if o.NewArgs != nil {
			in.Args = o.NewArgs
		}
		r, err := effective.Compute(in)
		if err != nil {
			return nil, err
		}
		done[string(data)] = r.Config
		return r.Config, nil
	}
}

// newFileName names the new config file in messages.
func newFileName(o Options) string {
	switch {
	case o.NewFileName != "":
		return o.NewFileName
	case o.Patch != nil:
		return "config.yaml + " + o.PatchName
	}
	return "the new config.yaml"
}
