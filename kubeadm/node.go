package kubeadm

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/kubeletcfg/kubeletcfg/kubeletapi"
	"github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/nodefile"
)

// NodeOptions say where kubeadm's inputs are, for one node.
type NodeOptions struct {
	// Root is the node: "" for the running one, else an offline image
	// (systemd-resolved and the CRI socket are then conditions).
	Root string
	// ConfigMapFile holds the kubelet-config ConfigMap's kubelet value (or
	// the ConfigMap itself, as kubectl prints it); ClusterConfigFile the
	// kubeadm-config ConfigMap's ClusterConfiguration (or that ConfigMap).
	ConfigMapFile, ClusterConfigFile string
	// Kubeconfig and Context: read both ConfigMaps through the API server
	// instead ("" Kubeconfig: $KUBECONFIG or ~/.kube/config).
	Kubeconfig, Context string
	FromCluster         bool
	PatchesDir          string
	Release             *Release
}

// Inputs are kubeadm's inputs as read, with the ConfigMap's resourceVersion
// when it came from the API server.
type Inputs struct {
	ConfigMap       Text
	Cluster         *Cluster
	ResourceVersion string
	Notes           []string
}

// ReadInputs reads the ConfigMaps from files or through the API server.
func ReadInputs(ctx context.Context, o NodeOptions) (*Inputs, error) {
	in := &Inputs{}
	switch {
	case o.ConfigMapFile != "" && o.FromCluster:
		return nil, errors.New("--configmap and --kubeconfig exclude each other: the ConfigMaps come from files or from the API server")
	case o.ConfigMapFile != "":
		data, err := nodefile.ReadFile(o.ConfigMapFile, nodefile.Config)
		if err != nil {
			return nil, err
		}
		if in.ConfigMap, err = FromManifest(data, o.ConfigMapFile, ConfigMapKey); err != nil {
			return nil, err
		}
		if o.ClusterConfigFile != "" {
			data, err := nodefile.ReadFile(o.ClusterConfigFile, nodefile.Config)
			if err != nil {
				return nil, err
			}
			t, err := FromManifest(data, o.ClusterConfigFile, ClusterConfigKey)
			if err != nil {
				return nil, err
			}
			if in.Cluster, err = ParseCluster(t, o.Release); err != nil {
				return nil, err
			}
		}
	case o.FromCluster:
		if o.ClusterConfigFile != "" {
			return nil, errors.New("--cluster-configuration goes with --configmap: with --kubeconfig both ConfigMaps are read from the API server")
		}
		cfg, err := node.RESTConfig(o.Kubeconfig, o.Context)
		if err != nil {
			return nil, err
		}
		c, err := kubeletapi.CoreClient(cfg)
		if err != nil {
			return nil, err
		}
		live, err := ReadLive(ctx, c, o.Release)
		if err != nil {
			return nil, err
		}
		in.ConfigMap, in.Cluster, in.ResourceVersion, in.Notes = live.ConfigMap, live.Cluster, live.ResourceVersion, live.Notes
	default:
		return nil, errors.New("kubeadm's ConfigMap is needed: give --configmap FILE (its kubelet value, or the ConfigMap) or --kubeconfig to read it from the API server")
	}
	return in, nil
}

// NodeRenderer is a node's kubeadm inputs, read once, rendered as often as
// needed (with files laid over: what an apply is about to write).
type NodeRenderer struct {
	Options NodeOptions
	// Inputs are nil without a ConfigMap (offline): Render then fails.
	Inputs *Inputs
	input  Input
	root   *nodefile.Root
	notes  []string
}

// OpenNode reads the ConfigMaps (when o says where from) and the facts of
// the running node (when o.Root is ""); Close releases the node's root.
func OpenNode(ctx context.Context, o NodeOptions) (*NodeRenderer, error) {
	if o.Release == nil {
		return nil, errors.New("no kubeadm version")
	}
	n := &NodeRenderer{Options: o}
	if o.ConfigMapFile != "" || o.FromCluster {
		in, err := ReadInputs(ctx, o)
		if err != nil {
			return nil, err
		}
		n.Inputs = in
	}
	root, err := nodefile.OpenRoot(o.Root)
	if err != nil {
		return nil, err
	}
	n.root = root
	n.input = Input{Release: o.Release, Root: root, PatchesDir: o.PatchesDir}
	if n.Inputs != nil {
		n.input.ConfigMap, n.input.Cluster = n.Inputs.ConfigMap, n.Inputs.Cluster
	}
	if o.PatchesDir != "" && o.Root == "" && !filepath.IsAbs(o.PatchesDir) {
		abs, err := filepath.Abs(o.PatchesDir)
		if err != nil {
			root.Close()
			return nil, err
		}
		n.input.PatchesDir = abs
	}
	if o.Root == "" {
		n.input.Resolved = ResolvedActive(ctx)
		if o.Release.Missing == MissingDetect {
			sock, found := DetectCRISocket(ctx)
			n.input.CRISocket = sock
			if len(found) > 1 {
				n.notes = append(n.notes, fmt.Sprintf("several CRI sockets answer (%s): kubeadm %s falls back to %s", strings.Join(found, ", "), o.Release.Minor, sock))
			}
		}
	} else if ResolvedInImage(root) {
		n.notes = append(n.notes, "systemd-resolved is enabled in the image: if it is active when kubeadm runs, see the conditions")
	}
	return n, nil
}

// SetPatchesDir sets the --patches kubeadm upgrade is given (a node path).
func (n *NodeRenderer) SetPatchesDir(dir string) {
	n.Options.PatchesDir, n.input.PatchesDir = dir, dir
}

// HasDir tells whether node path p is a directory on the node.
func (n *NodeRenderer) HasDir(p string) bool {
	_, fi, err := n.root.Stat(p)
	return err == nil && fi.IsDir()
}

// exists tells whether node path p names something on the node.
func (n *NodeRenderer) exists(p string) bool {
	_, _, err := n.root.Stat(p)
	return err == nil
}

// Close releases the node's root.
func (n *NodeRenderer) Close() error { return n.root.Close() }

// Online tells whether the ConfigMap is known.
func (n *NodeRenderer) Online() bool { return n != nil && n.Inputs != nil }

// none, as Render's patchesDir, renders without a patches directory.
const none = "\x00none"

// Render renders the node with files laid over (node path → content; nil
// removes), and patchesDir as kubeadm upgrade's --patches ("" keeps the
// node's).
func (n *NodeRenderer) Render(overlay map[string][]byte, patchesDir string) (*Result, error) {
	if !n.Online() {
		return nil, errors.New("kubeadm's ConfigMap is not known: give --kubeconfig or the ConfigMap's file")
	}
	in := n.input
	in.Overlay = overlay
	switch patchesDir {
	case "":
	case none:
		in.PatchesDir = ""
	default:
		in.PatchesDir = patchesDir
	}
	res, err := Render(in)
	if err != nil {
		return nil, err
	}
	res.Notes = append(append(append([]string(nil), n.Inputs.Notes...), n.notes...), res.Notes...)
	return res, nil
}

// RenderNode is Render for a node: its patches directory, its
// instance-config.yaml and kubeadm-flags.env, and (on the running node) the
// facts kubeadm asks the host.
func RenderNode(ctx context.Context, o NodeOptions) (*Result, *Inputs, error) {
	if o.ConfigMapFile == "" && !o.FromCluster {
		_, err := ReadInputs(ctx, o)
		return nil, nil, err
	}
	n, err := OpenNode(ctx, o)
	if err != nil {
		return nil, nil, err
	}
	defer n.Close()
	res, err := n.Render(nil, "")
	return res, n.Inputs, err
}
