package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"k8s.io/client-go/rest"

	"github.com/kubeletcfg/kubeletcfg/config"
	"github.com/kubeletcfg/kubeletcfg/kubeadm"
	"github.com/kubeletcfg/kubeletcfg/nodefile"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

// PerNodeField is a field set on each node rather than cluster-wide: its
// value on a node is never drift.
type PerNodeField struct {
	Path string
	Why  string
}

// PerNodeFields are the fields kubeadm sets on each node (the kubeadm
// model's, kubeadm.PerNodeFields), and the cloud's ID of the node.
var PerNodeFields = perNodeFields()

func perNodeFields() []PerNodeField {
	var out []PerNodeField
	for _, f := range kubeadm.PerNodeFields() {
		out = append(out, PerNodeField{f.Path, f.Why})
	}
	return append(out, PerNodeField{"providerID", "the node's ID in its cloud (--provider-id), unique per node"})
}

// PerNodeFlags are the flags set per node by design (besides those of the
// per-node fields: --container-runtime-endpoint, --register-with-taints,
// --provider-id).
var PerNodeFlags = []PerNodeField{
	{"hostname-override", "the node's name, where it is not the host's"},
	{"node-ip", "the node's own address"},
}

// perNodeFlag says whether a flag is set per node: one of PerNodeFlags, or
// one that sets a per-node field on kubelet v.
func perNodeFlag(v *schema.Version, name string) bool {
	for _, f := range PerNodeFlags {
		if f.Path == name {
			return true
		}
	}
	if f, ok := v.Flag(name); ok && f.Field != "" {
		return perNode(f.Field)
	}
	return false
}

func perNodeFlagNames() []string {
	var out []string
	for _, f := range PerNodeFlags {
		out = append(out, f.Path)
	}
	for _, f := range PerNodeFields {
		if fl, ok := schema.Newest().FlagForField(f.Path); ok {
			out = append(out, fl.Name)
		}
	}
	return out
}

func perNode(path string) bool {
	for _, f := range PerNodeFields {
		if path == f.Path || strings.HasPrefix(path, f.Path+".") {
			return true
		}
	}
	return false
}

func perNodePaths() []string {
	out := make([]string, len(PerNodeFields))
	for i, f := range PerNodeFields {
		out[i] = f.Path
	}
	return out
}

// kubeadm's ConfigMap with the cluster's KubeletConfiguration, its key, and
// the directory kubeadm writes it to on each node (relative paths in it are
// resolved against that directory).
const (
	ConfigMapNamespace = "kube-system"
	ConfigMapName      = "kubelet-config"
	ConfigMapKey       = "kubelet"
	kubeadmKubeletDir  = "/var/lib/kubelet"
)

// reference is a KubeletConfiguration document the nodes are compared with,
// as each kubelet version reads it.
type reference struct {
	name string
	doc  []byte
	// dir resolves relative paths, as the kubelet does against its --config
	// file's directory; "" leaves them.
	dir string
	// typeMeta: the document must say apiVersion and kind (a file or a
	// ConfigMap; not a document made of a group's fields).
	typeMeta bool
	// render, when set, is the document as kubelet v gets it (kubeadm's
	// rendering of its ConfigMap for that minor) instead of doc.
	render func(v *schema.Version) ([]byte, error)
	at     map[string]map[string]any
}

// running is the configuration kubelet v runs from the reference (as
// config.ToMap renders it): its fields (unknown ones dropped, as the
// kubelet's lenient decoding does), defaulted.
func (r *reference) running(v *schema.Version) (map[string]any, error) {
	if m, ok := r.at[v.Minor]; ok {
		return m, nil
	}
	data := r.doc
	if r.render != nil {
		var err error
		if data, err = r.render(v); err != nil {
			return nil, fmt.Errorf("%s as kubeadm %s writes it: %w", r.name, v.Minor, err)
		}
	}
	doc, err := config.Decode(data, config.DecodeOptions{File: r.name, Version: v, AllowUnknownFields: true, AnyTypeMeta: !r.typeMeta})
	if err != nil {
		return nil, err
	}
	if errs := doc.Errors(); len(errs) > 0 {
		return nil, errs[0]
	}
	cfg := config.Default(doc.Config, v)
	if r.dir != "" {
		cfg = config.ResolvePaths(cfg, v, r.dir)
	}
	m, err := config.ToMap(cfg, v)
	if err != nil {
		return nil, err
	}
	if r.at == nil {
		r.at = map[string]map[string]any{}
	}
	r.at[v.Minor] = m
	return m, nil
}

// fileReference reads a KubeletConfiguration file (a regular file, of a
// configuration's size).
func fileReference(path string) (*reference, error) {
	data, err := nodefile.ReadFile(path, nodefile.Config)
	if err != nil {
		return nil, err
	}
	return &reference{name: path, doc: data, typeMeta: true}, nil
}

// configMapReference is what kubeadm writes from its kubelet-config
// ConfigMap on a node of each kubelet minor: the kubeadm of that minor
// decodes it, defaults it with the kubeadm-config ClusterConfiguration,
// drops what its types lack (the kubeadm model); the fields kubeadm sets
// per node are shown apart.
func configMapReference(ctx context.Context, c rest.Interface) (*reference, error) {
	newest := kubeadm.Releases()[len(kubeadm.Releases())-1]
	live, err := kubeadm.ReadLive(ctx, c, &newest)
	if err != nil {
		return nil, err
	}
	name := "ConfigMap " + ConfigMapNamespace + "/" + ConfigMapName
	return &reference{name: name, doc: live.ConfigMap.Data, dir: kubeadmKubeletDir, typeMeta: true,
		render: func(v *schema.Version) ([]byte, error) {
			rel, err := kubeadm.ResolveRelease(v.Minor)
			if err != nil {
				return nil, err
			}
			res, err := kubeadm.Render(kubeadm.Input{Release: rel, ConfigMap: live.ConfigMap, Cluster: live.Cluster, Resolved: kubeadm.No})
			if err != nil {
				return nil, err
			}
			return res.YAML()
		}}, nil
}

// setsReference is a document made of the fields a group sets.
func setsReference(name string, sets map[string]any) (*reference, error) {
	doc, err := json.Marshal(nest(sets))
	if err != nil {
		return nil, err
	}
	return &reference{name: name, doc: doc}, nil
}

// nest turns dotted paths (objects' field names hold no dots) into a document.
func nest(flat map[string]any) map[string]any {
	out := map[string]any{}
	paths := make([]string, 0, len(flat))
	for p := range flat {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		parts := strings.Split(p, ".")
		m := out
		for _, part := range parts[:len(parts)-1] {
			sub, ok := m[part].(map[string]any)
			if !ok {
				sub = map[string]any{}
				m[part] = sub
			}
			m = sub
		}
		m[parts[len(parts)-1]] = flat[p]
	}
	return out
}
