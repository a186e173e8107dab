package config

import (
	"fmt"
	"strings"
	"sync"

	yamlv3 "go.yaml.in/yaml/v3"

	"github.com/kubeletcfg/kubeletcfg/schema"
)

// walker checks every key of a document against the fields of a version.
type walker struct {
	doc          *Document
	v            *schema.Version
	children     map[string]map[string]schema.Field
	allowUnknown bool
}

var childIndexes sync.Map // *schema.Version → its child index

// childIndex maps each object path of a version ("" for the top) to its fields.
func childIndex(v *schema.Version) map[string]map[string]schema.Field {
	if idx, ok := childIndexes.Load(v); ok {
		return idx.(map[string]map[string]schema.Field)
	}
	idx := buildChildIndex(v)
	childIndexes.Store(v, idx)
	return idx
}

func buildChildIndex(v *schema.Version) map[string]map[string]schema.Field {
	idx := map[string]map[string]schema.Field{"": {}}
	for _, f := range v.Fields() {
		parent, name := "", f.Path
		if i := strings.LastIndex(f.Path, "."); i >= 0 {
			parent, name = f.Path[:i], f.Path[i+1:]
		}
		if idx[parent] == nil {
			idx[parent] = map[string]schema.Field{}
		}
		idx[parent][name] = f
	}
	return idx
}

func resolveAlias(n *yamlv3.Node) *yamlv3.Node {
	for n != nil && n.Kind == yamlv3.AliasNode {
		n = n.Alias
	}
	return n
}

// mapping checks a mapping node whose schema path is path ("" at the top).
func (w *walker) mapping(n *yamlv3.Node, path string) {
	w.mappingAt(n, path, path)
}

func (w *walker) mappingAt(n *yamlv3.Node, schemaPath, keyPath string) {
	seen := map[string]int{}
	known := w.children[schemaPath]
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], resolveAlias(n.Content[i+1])
		name := k.Value
		if name == "<<" { // a YAML merge key: its fields are checked where they are defined
			continue
		}
		kp, sp := join(keyPath, name), join(schemaPath, name)
		if first, dup := seen[name]; dup {
			w.add(Problem{Line: k.Line, Column: k.Column, Field: kp,
				Message: fmt.Sprintf("duplicate key (first at line %d); the kubelet would silently use this last one in a --config file and refuse the file as a drop-in", first)})
		}
		seen[name] = k.Line
		w.doc.Keys[kp] = Position{Line: k.Line, Column: k.Column}
		if schemaPath == "" && (name == "apiVersion" || name == "kind") {
			continue
		}
		f, ok := known[name]
		if !ok {
			w.unknown(k, schemaPath, kp, name, known)
			continue
		}
		w.value(val, f, sp, kp)
	}
}

func (w *walker) value(n *yamlv3.Node, f schema.Field, schemaPath, keyPath string) {
	if n == nil {
		return
	}
	switch {
	case f.Type == "object" && n.Kind == yamlv3.MappingNode:
		w.mappingAt(n, schemaPath, keyPath)
	case strings.HasPrefix(f.Type, "[]") && n.Kind == yamlv3.SequenceNode && w.children[schemaPath+"[]"] != nil:
		for i, item := range n.Content {
			item = resolveAlias(item)
			if item.Kind == yamlv3.MappingNode {
				w.mappingAt(item, schemaPath+"[]", fmt.Sprintf("%s[%d]", keyPath, i))
			}
		}
	case strings.HasPrefix(f.Type, "map[") && n.Kind == yamlv3.MappingNode:
		w.mapKeys(n, keyPath)
	}
}

// mapKeys records the positions of a map's keys and refuses duplicates.
func (w *walker) mapKeys(n *yamlv3.Node, keyPath string) {
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		kp := keyPath + "." + k.Value
		if first, dup := seen[k.Value]; dup {
			w.add(Problem{Line: k.Line, Column: k.Column, Field: kp,
				Message: fmt.Sprintf("duplicate key (first at line %d); the kubelet would silently use this last one in a --config file and refuse the file as a drop-in", first)})
		}
		seen[k.Value] = k.Line
		w.doc.Keys[kp] = Position{Line: k.Line, Column: k.Column}
	}
}

func (w *walker) unknown(k *yamlv3.Node, schemaPath, keyPath, name string, known map[string]schema.Field) {
	var msg string
	if added := schema.FieldAddedIn(join(schemaPath, name)); added != "" {
		if w.v.AtLeast(added) {
			msg = fmt.Sprintf("field %q was removed in kubelet %s; kubelet %s ignores it", name, schema.FieldRemovedIn(join(schemaPath, name)), w.v.Minor)
		} else {
			msg = fmt.Sprintf("field %q is not known to kubelet %s (kubelets from %s on have it); kubelet %s ignores it", name, w.v.Minor, added, w.v.Minor)
		}
	} else {
		msg = fmt.Sprintf("unknown field %q", name)
		if s := suggest(name, known); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
		msg += "; the kubelet ignores unknown fields silently"
	}
	w.add(Problem{Line: k.Line, Column: k.Column, Field: keyPath, Message: msg, Warning: w.allowUnknown})
}

func (w *walker) add(p Problem) {
	p.File = w.doc.File
	w.doc.Problems = append(w.doc.Problems, p)
}

func join(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}

// suggest finds the known field a misspelt name most likely meant: the same
// name in another case, else the closest by edit distance.
func suggest(name string, known map[string]schema.Field) string {
	best, bestDist := "", 0
	for cand := range known {
		if strings.EqualFold(cand, name) {
			return cand
		}
		d := editDistance(strings.ToLower(name), strings.ToLower(cand))
		limit := max(2, len(cand)/4)
		if d <= limit && (best == "" || d < bestDist || (d == bestDist && cand < best)) {
			best, bestDist = cand, d
		}
	}
	return best
}

// Closest returns the candidate a misspelt name most likely meant, or "".
func Closest(name string, candidates []string) string {
	known := make(map[string]schema.Field, len(candidates))
	for _, c := range candidates {
		known[c] = schema.Field{}
	}
	return suggest(name, known)
}

// editDistance is the Damerau–Levenshtein distance (adjacent swaps count one).
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
