// Package configpatch sets some fields of a kubelet config file: an RFC 7386
// JSON merge patch (a mapping of the fields to set, null removing one) merged
// onto the file's text. Comments, key order and the text of every field the
// patch does not touch are kept; what it sets is written as the patch says.
// The result is a whole config file, for the caller to validate as one.
package configpatch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"

	"github.com/kubeletcfg/kubeletcfg/config"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

// Options name the inputs in errors and say which kubelet's fields a patch
// may set.
type Options struct {
	File      string          // the config file patched
	PatchFile string          // the patch
	Version   *schema.Version // whose fields the patch may name; the newest when nil
}

// Apply returns the config file text current with the merge patch patch
// (YAML or JSON) merged onto it. A patch that names a field the kubelet
// version does not have, or a field twice, is refused with its file, line
// and column, every such problem at once.
func Apply(current, patch []byte, o Options) ([]byte, error) {
	p, err := decodePatch(patch, o)
	if err != nil {
		return nil, err
	}
	var doc yamlv3.Node
	if err := yamlv3.Unmarshal(current, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", o.File, err)
	}
	if doc.Kind == 0 { // an empty file
		doc = yamlv3.Node{Kind: yamlv3.DocumentNode, Content: []*yamlv3.Node{{Kind: yamlv3.MappingNode, Tag: "!!map"}}}
	}
	if doc.Kind != yamlv3.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yamlv3.MappingNode {
		return nil, fmt.Errorf("%s: not a mapping of KubeletConfiguration fields", o.File)
	}
	if err := merge(doc.Content[0], p, o.File, ""); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	enc := yamlv3.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// decodePatch reads the patch as a partial configuration of the version:
// its own lines in every problem. Types are the whole result's to check (a
// null, which removes a field, fits no type).
func decodePatch(patch []byte, o Options) (map[string]any, error) {
	d, err := config.Decode(patch, config.DecodeOptions{File: o.PatchFile, Version: o.Version, AnyTypeMeta: true, NoTyped: true})
	if err != nil {
		return nil, err
	}
	if errs := d.Errors(); len(errs) > 0 {
		all := make([]error, len(errs))
		for i, e := range errs {
			all[i] = e
		}
		return nil, joined(all)
	}
	js, err := yaml.YAMLToJSON(patch)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.PatchFile, err)
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	var p map[string]any
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("%s: %w", o.PatchFile, err)
	}
	for _, k := range []string{"apiVersion", "kind"} {
		if v, ok := p[k]; ok && v == nil {
			return nil, fmt.Errorf("%s: %s: null would remove it; the file keeps its %s", o.PatchFile, k, k)
		}
	}
	return p, nil
}

// joined is every error on one line, as kubeletcfg's other multi-error
// messages read.
func joined(errs []error) error {
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return errors.New(strings.Join(msgs, "; "))
}

// merge applies the merge patch p onto the mapping m, as RFC 7386 says: a
// null removes the key, a mapping merges into a mapping, anything else
// replaces the value (its mappings' nulls dropped).
func merge(m *yamlv3.Node, p map[string]any, file, path string) error {
	for i := 0; i < len(m.Content); i += 2 {
		if m.Content[i].Value == "<<" && m.Content[i].Tag == "!!merge" {
			return fmt.Errorf("%s:%d:%d: %s<<: a merge key; a patch cannot set fields through it (write the mapping out)", file, m.Content[i].Line, m.Content[i].Column, path)
		}
	}
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := p[k]
		at := indexes(m, k)
		if v == nil {
			for j := len(at) - 1; j >= 0; j-- {
				m.Content = append(m.Content[:at[j]], m.Content[at[j]+2:]...)
			}
			continue
		}
		if len(at) == 0 {
			m.Content = append(m.Content, &yamlv3.Node{Kind: yamlv3.ScalarNode, Tag: "!!str", Value: k}, node(pruned(v)))
			continue
		}
		// The kubelet reads the last of duplicated keys: that one is set.
		cur := m.Content[at[len(at)-1]+1]
		sub, isMap := v.(map[string]any)
		if isMap && cur.Kind == yamlv3.MappingNode {
			if err := merge(cur, sub, file, path+k+"."); err != nil {
				return err
			}
			continue
		}
		n := node(pruned(v))
		n.LineComment, n.HeadComment, n.FootComment = cur.LineComment, cur.HeadComment, cur.FootComment
		m.Content[at[len(at)-1]+1] = n
	}
	return nil
}

// indexes are the positions of the key k in the mapping m.
func indexes(m *yamlv3.Node, k string) []int {
	var out []int
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Kind == yamlv3.ScalarNode && m.Content[i].Value == k {
			out = append(out, i)
		}
	}
	return out
}

// pruned is v without the null members of its mappings (RFC 7386: a value
// set whole carries no deletions).
func pruned(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if e != nil {
				out[k] = pruned(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = pruned(e)
		}
		return out
	}
	return v
}

// node is the YAML of a JSON value, numbers as written in the patch.
func node(v any) *yamlv3.Node {
	switch x := v.(type) {
	case map[string]any:
		n := &yamlv3.Node{Kind: yamlv3.MappingNode, Tag: "!!map"}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			n.Content = append(n.Content, &yamlv3.Node{Kind: yamlv3.ScalarNode, Tag: "!!str", Value: k}, node(x[k]))
		}
		return n
	case []any:
		n := &yamlv3.Node{Kind: yamlv3.SequenceNode, Tag: "!!seq"}
		for _, e := range x {
			n.Content = append(n.Content, node(e))
		}
		return n
	case json.Number:
		if _, err := x.Int64(); err == nil {
			return &yamlv3.Node{Kind: yamlv3.ScalarNode, Tag: "!!int", Value: x.String()}
		}
		return &yamlv3.Node{Kind: yamlv3.ScalarNode, Tag: "!!float", Value: x.String()}
	case bool:
		return &yamlv3.Node{Kind: yamlv3.ScalarNode, Tag: "!!bool", Value: fmt.Sprint(x)}
	case string:
		return &yamlv3.Node{Kind: yamlv3.ScalarNode, Tag: "!!str", Value: x}
	}
	return &yamlv3.Node{Kind: yamlv3.ScalarNode, Tag: "!!null", Value: "null"}
}
