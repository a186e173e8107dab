package kubeadm

import (
	"fmt"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
	"k8s.io/kubelet/config/v1beta1"
	"sigs.k8s.io/yaml"

	"github.com/kubeletcfg/kubeletcfg/config"
	"github.com/kubeletcfg/kubeletcfg/schema"
	"github.com/kubeletcfg/kubeletcfg/warning"
)

const (
	// ConfigMapName is kubeadm's ConfigMap with the cluster's kubelet
	// configuration (kube-system), and ConfigMapKey its key.
	ConfigMapName = "kubelet-config"
	ConfigMapKey  = "kubelet"
	// ClusterConfigMapName is kubeadm's own ConfigMap, ClusterConfigKey the
	// key of its ClusterConfiguration.
	ClusterConfigMapName = "kubeadm-config"
	ClusterConfigKey     = "ClusterConfiguration"

	kubeletGroup = "kubelet.config.k8s.io"
)

// Text is a document kubeletcfg read, and where: File names it in every
// message and origin, Offset is added to its line numbers (the lines before
// the value inside a ConfigMap manifest).
type Text struct {
	Data   []byte
	File   string
	Offset int
}

// FromManifest returns the value of key when data is a ConfigMap manifest
// (kubectl get configmap -o yaml), with the line offset of that value in the
// file, and data itself otherwise.
func FromManifest(data []byte, file, key string) (Text, error) {
	var root yamlv3.Node
	if err := yamlv3.Unmarshal(data, &root); err != nil || len(root.Content) == 0 || root.Content[0].Kind != yamlv3.MappingNode {
		return Text{Data: data, File: file}, nil
	}
	top := root.Content[0]
	kind, api := mapValue(top, "kind"), mapValue(top, "apiVersion")
	if kind == nil || kind.Value != "ConfigMap" || api == nil || api.Value != "v1" {
		return Text{Data: data, File: file}, nil
	}
	d := mapValue(top, "data")
	var val *yamlv3.Node
	if d != nil && d.Kind == yamlv3.MappingNode {
		val = mapValue(d, key)
	}
	if val == nil || val.Kind != yamlv3.ScalarNode {
		return Text{}, fmt.Errorf("%s: the ConfigMap has no data.%s (kubeadm keeps the configuration there)", file, key)
	}
	t := Text{Data: []byte(val.Value), File: file}
	if val.Style&(yamlv3.LiteralStyle|yamlv3.FoldedStyle) != 0 {
		t.Offset = val.Line // a block scalar starts on the line after its indicator
	} else {
		t.File = file + " (data." + key + ")"
	}
	return t, nil
}

func mapValue(m *yamlv3.Node, key string) *yamlv3.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// typeMeta is what kubeadm reads of a document before decoding it.
type typeMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

func (t typeMeta) group() (string, string) {
	if g, v, ok := strings.Cut(t.APIVersion, "/"); ok {
		return g, v
	}
	return "", t.APIVersion
}

// configDocs is util.SplitConfigDocuments: every document needs a group,
// version and kind, and a kind may appear once.
func configDocs(t Text) ([]document, []typeMeta, error) {
	docs, err := splitDocuments(t.Data)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", t.File, err)
	}
	var metas []typeMeta
	var out []document
	seen := map[string]bool{}
	var twice []string
	for _, d := range docs {
		var m typeMeta
		if err := yaml.Unmarshal(d.Data, &m); err != nil {
			return nil, nil, fmt.Errorf("%s:%d: kubeadm cannot read the document: %v", t.File, t.Offset+d.Line, err)
		}
		if g, v := m.group(); g == "" || v == "" || m.Kind == "" {
			return nil, nil, fmt.Errorf("%s:%d: kubeadm refuses it: a document needs apiVersion GROUP/VERSION and kind (found apiVersion %q, kind %q)",
				t.File, t.Offset+d.Line, m.APIVersion, m.Kind)
		}
		if seen[m.Kind] {
			twice = append(twice, fmt.Sprintf("%s:%d: kind %q is specified twice", t.File, t.Offset+d.Line, m.Kind))
			continue
		}
		seen[m.Kind] = true
		out = append(out, d)
		metas = append(metas, m)
	}
	if len(twice) > 0 {
		return nil, nil, fmt.Errorf("kubeadm refuses it: %s", strings.Join(twice, "; "))
	}
	return out, metas, nil
}

// fromConfigMap is the cluster's KubeletConfiguration as kubeadm r decodes
// it from the ConfigMap's value: leniently, into r's own types (fields r does
// not have are dropped, with a warning, as kubeadm warns), without the
// kubelet's defaulting.
type fromConfigMap struct {
	Config   *v1beta1.KubeletConfiguration
	Keys     map[string]int // JSON path → line in Text.File
	File     string
	Warnings []warning.Warning
}

func decodeConfigMap(t Text, r *Release, v *schema.Version) (*fromConfigMap, error) {
	docs, metas, err := configDocs(t)
	if err != nil {
		return nil, err
	}
	for i, d := range docs {
		g, ver := metas[i].group()
		if g != kubeletGroup {
			continue
		}
		line := t.Offset + d.Line
		if ver != "v1beta1" {
			return nil, fmt.Errorf("%s:%d: kubeadm %s refuses %s: it reads only %s/v1beta1 (a ConfigMap kubeadm generated and signed would be replaced by its defaults; this one is checked as written by hand)",
				t.File, line, r.Minor, metas[i].APIVersion, kubeletGroup)
		}
		if metas[i].Kind != config.Kind {
			return nil, fmt.Errorf("%s:%d: kubeadm %s refuses kind %q: the ConfigMap's %s value must be a KubeletConfiguration",
				t.File, line, r.Minor, metas[i].Kind, ConfigMapKey)
		}
		doc, err := config.Decode(d.Data, config.DecodeOptions{File: t.File, Version: v, AllowUnknownFields: true})
		if err != nil {
			return nil, shiftError(err, t.Offset+d.Line-1, t.File, r)
		}
		out := &fromConfigMap{Config: doc.Config, Keys: map[string]int{}, File: t.File}
		for k, p := range doc.Keys {
			out.Keys[k] = p.Line + t.Offset + d.Line - 1
		}
		for _, p := range doc.Problems {
			w := warning.Warning{Code: p.Code, File: t.File, Line: p.Line + t.Offset + d.Line - 1, Column: p.Column, Field: p.Field, Message: p.Message}
			if w.Code == warning.UnknownField || w.Code == "" {
				w.Code = warning.Dropped
				w.Message = fmt.Sprintf("kubeadm %s drops it: %s", r.Minor, p.Message)
			}
			if p.Line == 0 {
				w.Line = 0
			}
			out.Warnings = append(out.Warnings, w)
		}
		return out, nil
	}
	var kinds []string
	for _, m := range metas {
		kinds = append(kinds, m.APIVersion+" "+m.Kind)
	}
	return nil, fmt.Errorf("%s: no KubeletConfiguration in it (found: %s); kubeadm %s would ignore it and write its own defaults alone, which kubeletcfg does not predict from a value that is not a KubeletConfiguration",
		t.File, strings.Join(kinds, ", "), r.Minor)
}

// shiftError moves the line of a decoding problem to the file's numbering.
func shiftError(err error, by int, file string, r *Release) error {
	if p, ok := err.(config.Problem); ok {
		if p.Line > 0 {
			p.Line += by
		}
		p.File = file
		p.Message = fmt.Sprintf("kubeadm %s fails to decode it: %s", r.Minor, p.Message)
		return p
	}
	return fmt.Errorf("%s: %w", file, err)
}
