package config

import (
	"fmt"
	"strings"
	"sync"

	yamlv3 "go.yaml.in/yaml/v3"

	"github.com/kubeletcfg/kubeletcfg/schema"
	"github.com/kubeletcfg/kubeletcfg/warning"
)

// walker checks every key of a document against the fields of a version.
type walker struct {
	doc          *Document
	v            *schema.Version
	children     map[string]map[string]schema.Field
	allowUnknown bool
	// dropped counts the problems past MaxProblems: errors, warnings.
	dropped [2]int
	// unknowns counts the keys of no field the version has, reported or not.
	unknowns int
}

// MaxProblems is how many problems one document reports; the rest are
// counted in a last "and N more".
const MaxProblems = 100

// maxSuggestLen is the longest name a spelling suggestion is looked for: a
// field name is at most about 40 characters.
const maxSuggestLen = 64

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
	w.keysOf(n, schemaPath, keyPath, map[string]int{}, 0)
}

// keysOf checks the keys of mapping n, recording in seen the line each key
// is set on. mergeLine is the line of the YAML merge key ("<<") that brought
// n in, 0 for the mapping itself.
//
// The kubelet reads YAML with sigs.k8s.io/yaml (go-yaml v2), which expands
// merge keys in document order: a key a merge sets replaces one set before
// it, and the reverse; in a list of merged mappings the first wins. Its
// strict pass calls every such override "already set in map", as for a
// duplicate key: a --config file is then read leniently, a drop-in refused.
func (w *walker) keysOf(n *yamlv3.Node, schemaPath, keyPath string, seen map[string]int, mergeLine int) {
	known := w.children[schemaPath]
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], resolveAlias(n.Content[i+1])
		if isMergeKey(k) {
			w.merge(val, k.Line, func(m *yamlv3.Node, line int) { w.keysOf(m, schemaPath, keyPath, seen, line) })
			continue
		}
		name := k.Value
		kp, sp := join(keyPath, name), join(schemaPath, name)
		w.setKey(k, kp, seen, mergeLine)
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

// isMergeKey reports whether k is a YAML merge key: "<<" unquoted.
func isMergeKey(k *yamlv3.Node) bool {
	return k.Kind == yamlv3.ScalarNode && k.ShortTag() == "!!merge"
}

// merge walks what a merge key brings in: a mapping, or a list of them,
// last to first so that the first wins as in go-yaml v2. Anything else the
// kubelet's YAML reader refuses, and so does Decode's.
func (w *walker) merge(val *yamlv3.Node, line int, walk func(*yamlv3.Node, int)) {
	switch {
	case val == nil:
	case val.Kind == yamlv3.MappingNode:
		walk(val, line)
	case val.Kind == yamlv3.SequenceNode:
		for i := len(val.Content) - 1; i >= 0; i-- {
			if m := resolveAlias(val.Content[i]); m.Kind == yamlv3.MappingNode {
				walk(m, line)
			}
		}
	}
}

// setKey records key k at key path kp and refuses a key set twice.
func (w *walker) setKey(k *yamlv3.Node, kp string, seen map[string]int, mergeLine int) {
	name := k.Value
	if first, dup := seen[name]; dup {
		code := warning.DuplicateKey
		msg := fmt.Sprintf("duplicate key (first at line %d); the kubelet would silently use this last one in a --config file and refuse the file as a drop-in", first)
		if mergeLine > 0 {
			code = warning.MergeKey
			msg = fmt.Sprintf("set again by the YAML merge key at line %d (first at line %d); the kubelet would silently use the value set last in a --config file and refuse the file as a drop-in", mergeLine, first)
		}
		w.add(Problem{Line: k.Line, Column: k.Column, Field: kp, Message: msg, Code: code, FirstLine: first})
	}
	seen[name] = k.Line
	w.doc.Keys[kp] = Position{Line: k.Line, Column: k.Column}
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
	w.mapKeysOf(n, keyPath, map[string]int{}, 0)
}

func (w *walker) mapKeysOf(n *yamlv3.Node, keyPath string, seen map[string]int, mergeLine int) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if isMergeKey(k) {
			w.merge(resolveAlias(n.Content[i+1]), k.Line, func(m *yamlv3.Node, line int) { w.mapKeysOf(m, keyPath, seen, line) })
			continue
		}
		w.setKey(k, keyPath+"."+k.Value, seen, mergeLine)
	}
}

func (w *walker) unknown(k *yamlv3.Node, schemaPath, keyPath, name string, known map[string]schema.Field) {
	w.unknowns++
	if w.full(w.allowUnknown) {
		return
	}
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
	w.add(Problem{Line: k.Line, Column: k.Column, Field: keyPath, Message: msg, Warning: w.allowUnknown, Code: warning.UnknownField})
}

func (w *walker) add(p Problem) {
	if w.full(p.Warning) {
		return
	}
	p.File = w.doc.File
	w.doc.Problems = append(w.doc.Problems, p)
}

// full reports whether the document has all the problems it reports, and
// counts one more (a warning or an error) if so.
func (w *walker) full(warning bool) bool {
	if len(w.doc.Problems) < MaxProblems {
		return false
	}
	if warning {
		w.dropped[1]++
	} else {
		w.dropped[0]++
	}
	return true
}

// summarize adds the "and N more" of the problems not reported.
func (w *walker) summarize() {
	for i, n := range w.dropped {
		if n > 0 {
			w.doc.Problems = append(w.doc.Problems, Problem{File: w.doc.File, Warning: i == 1, Code: warning.MoreProblems,
				Message: fmt.Sprintf("and %d more %s not shown (kubeletcfg reports the first %d problems of a file)", n, plural(n, "error", "errors", i), MaxProblems)})
		}
	}
}

func plural(n int, one, many string, warning int) string {
	if warning == 1 {
		one, many = "warning", "warnings"
	}
	if n == 1 {
		return one
	}
	return many
}

// SchemaPath is the schema's path of a key path: list indexes ("[0]") as
// "[]", as schema.Version.Field takes them.
func SchemaPath(keyPath string) string {
	var b strings.Builder
	for i := 0; i < len(keyPath); i++ {
		if keyPath[i] == '[' {
			if j := strings.IndexByte(keyPath[i:], ']'); j > 0 && isDigits(keyPath[i+1:i+j]) {
				b.WriteString("[]")
				i += j
				continue
			}
		}
		b.WriteByte(keyPath[i])
	}
	return b.String()
}

func isDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
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
	if len(name) > maxSuggestLen {
		return ""
	}
	best, bestDist := "", 0
	for cand := range known {
		if strings.EqualFold(cand, name) {
			return cand
		}
		limit := max(2, len(cand)/4)
		if abs(len(cand)-len(name)) > limit { // the distance is at least the difference
			continue
		}
		d := editDistance(strings.ToLower(name), strings.ToLower(cand))
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

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
