package criruntime

import (
	"sort"
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"
)

// tomlIndex knows where each key of a TOML text was written, to name the
// line of a value that decided an answer.
type tomlIndex struct {
	lines []int          // offsets of line starts
	keys  map[string]int // key path (parts joined by \x00) → offset
}

// indexTOML records the offset of every key path in data; a text that does
// not parse yields what was read before the error (decoding reports it).
func indexTOML(data []byte) *tomlIndex {
	ix := &tomlIndex{lines: []int{0}, keys: map[string]int{}}
	for i, c := range data {
		if c == '\n' {
			ix.lines = append(ix.lines, i+1)
		}
	}
	var p unstable.Parser
	p.Reset(data)
	var table []string
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			table = keyParts(e.Key())
		case unstable.KeyValue:
			ix.keyValue(table, e)
		}
	}
	return ix
}

func keyParts(it unstable.Iterator) []string {
	var parts []string
	for it.Next() {
		parts = append(parts, string(it.Node().Data))
	}
	return parts
}

func (ix *tomlIndex) keyValue(prefix []string, e *unstable.Node) {
	it := e.Key()
	full := append([]string(nil), prefix...)
	off := -1
	for it.Next() {
		n := it.Node()
		full = append(full, string(n.Data))
		if off < 0 {
			off = int(n.Raw.Offset)
		}
		if _, ok := ix.keys[strings.Join(full, "\x00")]; !ok {
			ix.keys[strings.Join(full, "\x00")] = int(n.Raw.Offset)
		}
	}
	if v := e.Value(); v != nil && v.Kind == unstable.InlineTable {
		children := v.Children()
		for children.Next() {
			if c := children.Node(); c.Kind == unstable.KeyValue {
				ix.keyValue(full, c)
			}
		}
	}
}

// find returns the line of keys, matching each part exactly or, failing
// that, without regard to case (containerd's decoder folds case for the
// fields it knows).
func (ix *tomlIndex) find(keys []string) (int, bool) {
	if ix == nil {
		return 0, false
	}
	off, ok := ix.keys[strings.Join(keys, "\x00")]
	if !ok {
		for k, o := range ix.keys {
			parts := strings.Split(k, "\x00")
			if len(parts) != len(keys) {
				continue
			}
			same := true
			for i := range parts {
				if parts[i] != keys[i] && !strings.EqualFold(parts[i], keys[i]) {
					same = false
					break
				}
			}
			if same && (!ok || o > off) {
				off, ok = o, true
			}
		}
	}
	if !ok {
		return 0, false
	}
	return sort.Search(len(ix.lines), func(i int) bool { return ix.lines[i] > off }), true
}
