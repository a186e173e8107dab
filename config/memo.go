package config

import (
	"slices"
	"sync"
)

// decoded remembers the documents a run decoded, by content and options.
var decoded = &memo{}

// memo holds at most memoEntries documents of at most memoBytes in all,
// none bigger than memoFile (decoding costs about a hundred times a file's
// size in memory, kept while remembered): a run reads a config file and a
// few dozen drop-ins of a few KiB; a process that reads more (a long-lived
// caller) starts over rather than grow.
type memo struct {
	mu      sync.Mutex
	entries map[memoKey]memoEntry
	bytes   int
}

const (
	memoEntries = 256
	memoBytes   = 1 << 20
	memoFile    = 64 << 10
)

type memoKey struct {
	data string
	opts DecodeOptions
}

type memoEntry struct {
	doc *Document
	// unknown counts the keys of no field: with none, the document reads
	// the same whether unknown fields are allowed or not.
	unknown int
}

func (m *memo) get(data []byte, opts DecodeOptions) (*Document, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	key := opts
	key.File = ""
	if e, ok := m.entries[memoKey{string(data), key}]; ok {
		return e.doc.copyAs(opts.File), true
	}
	key.AllowUnknownFields = !opts.AllowUnknownFields
	if e, ok := m.entries[memoKey{string(data), key}]; ok && e.unknown == 0 {
		return e.doc.copyAs(opts.File), true
	}
	return nil, false
}

func (m *memo) put(data []byte, opts DecodeOptions, d *Document, unknown int) {
	if len(data) > memoFile {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.entries) >= memoEntries || m.bytes+len(data) > memoBytes {
		m.entries, m.bytes = nil, 0
	}
	if m.entries == nil {
		m.entries = map[memoKey]memoEntry{}
	}
	// The file's name is only what the problems say: the same bytes read
	// under another name (a path given relative, then absolute) are
	// renamed, not read again.
	opts.File = ""
	m.entries[memoKey{string(data), opts}] = memoEntry{doc: d, unknown: unknown}
	m.bytes += len(data)
}

// copyAs is copy, named file.
func (d *Document) copyAs(file string) *Document {
	out := d.copy()
	if out.File != file {
		out.File = file
		for i := range out.Problems {
			out.Problems[i].File = file
		}
	}
	return out
}

// copy is a document the caller may change: its problems and typed
// configuration are its own; the key positions and the JSON are shared
// and only read.
func (d *Document) copy() *Document {
	out := *d
	out.Problems = slices.Clone(d.Problems)
	if d.Config != nil {
		out.Config = d.Config.DeepCopy()
	}
	return &out
}
