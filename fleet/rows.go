package fleet

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"
)

// rows keeps the nodes' rows of a scan until the report is written: in
// memory, or (Options.Spill) in a temporary file, where a row costs the
// scan its node's name and an offset, and its configuration nothing beyond
// the configurations it shares.
type rows interface {
	put(cell int, n Node) error
	// each calls fn with every row, by node name.
	each(fn func(cell int, n Node) error) error
	close() error
}

type memRows struct {
	rows []memRow
}

type memRow struct {
	cell int
	node Node
}

func (m *memRows) put(cell int, n Node) error {
	m.rows = append(m.rows, memRow{cell, n})
	return nil
}

func (m *memRows) each(fn func(int, Node) error) error {
	sort.Slice(m.rows, func(i, j int) bool { return m.rows[i].node.Name < m.rows[j].node.Name })
	for _, r := range m.rows {
		if err := fn(r.cell, r.node); err != nil {
			return err
		}
	}
	return nil
}

func (m *memRows) close() error { return nil }

// fileRows writes each row as a line of JSON to a temporary file (mode
// 0600, removed on close) and reads them back in list order.
type fileRows struct {
	mu   sync.Mutex
	f    *os.File
	w    *bufio.Writer
	size int64
	rows []fileRow
}

type fileRow struct {
	name   string
	offset int64
}

type spilled struct {
	Cell int  `json:"c"`
	Node Node `json:"n"`
}

func newFileRows() (*fileRows, error) {
	f, err := os.CreateTemp("", "kubeletcfg-fleet-*.jsonl")
	if err != nil {
		return nil, fmt.Errorf("fleet: a temporary file for the nodes' rows: %w", err)
	}
	return &fileRows{f: f, w: bufio.NewWriterSize(f, 64<<10)}, nil
}

func (r *fileRows) put(cell int, n Node) error {
	line, err := json.Marshal(spilled{Cell: cell, Node: n})
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rows = append(r.rows, fileRow{n.Name, r.size})
	line = append(line, '\n')
	if _, err := r.w.Write(line); err != nil {
		return fmt.Errorf("fleet: writing a node's row to %s: %w", r.f.Name(), err)
	}
	r.size += int64(len(line))
	return nil
}

func (r *fileRows) each(fn func(int, Node) error) error {
	if err := r.w.Flush(); err != nil {
		return err
	}
	sort.Slice(r.rows, func(i, j int) bool { return r.rows[i].name < r.rows[j].name })
	br := bufio.NewReaderSize(io.NewSectionReader(r.f, 0, r.size), 64<<10)
	pos := int64(0)
	for _, row := range r.rows {
		off := row.offset
		// Rows are mostly written by name (the API server lists Nodes so):
		// read on when the next row follows, seek when it does not.
		if off != pos {
			br.Reset(io.NewSectionReader(r.f, off, r.size-off))
			pos = off
		}
		line, err := br.ReadBytes('\n')
		if err != nil {
			return fmt.Errorf("fleet: reading a node's row back from %s: %w", r.f.Name(), err)
		}
		pos += int64(len(line))
		var s spilled
		if err := json.Unmarshal(line, &s); err != nil {
			return fmt.Errorf("fleet: reading a node's row back from %s: %w", r.f.Name(), err)
		}
		if err := fn(s.Cell, s.Node); err != nil {
			return err
		}
	}
	return nil
}

func (r *fileRows) close() error {
	r.f.Close()
	return os.Remove(r.f.Name())
}
