package kubeadm

import (
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
)

// keyLines maps the dotted path of every key of a YAML mapping document
// ("evictionHard.memory.available", "authentication.x509.clientCAFile") to
// its 1-based line. Lists are leaves. A document that does not parse has none.
func keyLines(data []byte) map[string]int {
	out := map[string]int{}
	var root yamlv3.Node
	if yamlv3.Unmarshal(data, &root) != nil || len(root.Content) == 0 {
		return out
	}
	var walk func(n *yamlv3.Node, prefix string, depth int)
	walk = func(n *yamlv3.Node, prefix string, depth int) {
		for n != nil && n.Kind == yamlv3.AliasNode {
			n = n.Alias
		}
		if n == nil || n.Kind != yamlv3.MappingNode || depth > 64 {
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			p := joinPath(prefix, k.Value)
			out[p] = k.Line
			walk(n.Content[i+1], p, depth+1)
		}
	}
	walk(root.Content[0], "", 0)
	return out
}

// opLines are the lines of the operations of a JSON patch document (a list).
func opLines(data []byte) []int {
	var root yamlv3.Node
	if yamlv3.Unmarshal(data, &root) != nil || len(root.Content) == 0 || root.Content[0].Kind != yamlv3.SequenceNode {
		return nil
	}
	var out []int
	for _, item := range root.Content[0].Content {
		out = append(out, item.Line)
	}
	return out
}

func joinPath(prefix, k string) string {
	if prefix == "" {
		return k
	}
	return prefix + "." + k
}

// pointerPath turns a JSON pointer ("/evictionHard/memory.available",
// "/clusterDNS/0") into a dotted path, stopping before the first list index.
func pointerPath(ptr string, doc map[string]any) string {
	if ptr == "" || ptr == "/" {
		return ""
	}
	parts := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	var out []string
	var cur any = doc
	for _, p := range parts {
		p = strings.ReplaceAll(strings.ReplaceAll(p, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			break // a list (or a scalar): the leaf is what holds it
		}
		out = append(out, p)
		cur = m[p]
	}
	return strings.Join(out, ".")
}

// lineFor is the line of the longest path in lines that is path or holds it.
func lineFor(lines map[string]int, path string) (int, bool) {
	for p := path; ; {
		if l, ok := lines[p]; ok {
			return l, true
		}
		i := strings.LastIndexByte(p, '.')
		if i < 0 {
			return 0, false
		}
		p = p[:i]
	}
}
