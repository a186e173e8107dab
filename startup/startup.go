// Package startup is the table of the kubelet's start-up refusals: every way
// a kubelet 1.28–1.37 stops within seconds of starting (or runs on and never
// turns healthy), each with the kubelet's own words in every version, the
// field or flag it concerns and how to fix it. `kubeletcfg why` classifies
// a kubelet's last words with it, `kubeletcfg preflight` checks the host for
// the refusals that depend on it, and both speak of the same class ids.
//
// The words are not typed here: each Probe names where a version's source
// has them, and `make startup-words` (hack/startupsrc) reads every release's
// source and writes what it found into schema/data/startup.json.
package startup

import (
	"sort"
	"strings"
	"sync"

	"github.com/kubeletcfg/kubeletcfg/schema"
)

// Kind says what a class does to the kubelet.
type Kind string

const (
	// Refusal: the kubelet exits (or panics) at start.
	Refusal Kind = "refusal"
	// NeverHealthy: it runs on and never turns healthy.
	NeverHealthy Kind = "never-healthy"
	// Killed: it was ended from outside; not its configuration.
	Killed Kind = "killed"
	// Degraded: it starts, degraded.
	Degraded Kind = "degraded"
)

// Class is one way the kubelet fails to start.
type Class struct {
	ID    string
	Kind  Kind
	Title string
	// Field is the configuration field the class concerns (JSON path), or
	// Flag a flag without one (no dashes); a probe may name its own.
	Field string
	Flag  string
	// Host says the class depends on the host, not only on the
	// configuration: preflight checks it.
	Host bool
	// Words are where the kubelet's words for the class are found.
	Words []Probe
	// Files are the fields (or --flags) naming a file whose absence (or
	// Go's "open PATH: ..." for it) is this class; Ports the fields whose
	// port in use ("bind: address already in use") is.
	Files []string
	Ports []string
	// Fix is the fix, worded with placeholders ({field}, {flag}, {value},
	// {origin}, {version} and the probes' captures) that why fills in.
	Fix string
}

// Loc is a package of the kubelet's source: a directory of a module (""
// for k8s.io/kubernetes itself).
type Loc struct {
	Module string
	Dir    string
}

// Probe finds one of the kubelet's format strings (or log messages) in its
// source: the string literal in one of In (the first that has it) that
// contains Text.
type Probe struct {
	Text string
	In   []Loc
	// Stage marks the words of a step that wraps others: they say where
	// the kubelet was, not which class it is.
	Stage bool
	// Captures names what each of the format's verbs prints ("" for what
	// is not used): flag, gate, value, path, resource...
	Captures []string
	// Field or Flag override the class's for this probe.
	Field string
	Flag  string
}

// ByID finds a class (refusals and degradations).
func ByID(id string) (Class, bool) {
	for _, list := range [][]Class{Classes, Degradations} {
		for _, c := range list {
			if c.ID == id {
				return c, true
			}
		}
	}
	return Class{}, false
}

// Probes lists every probe of the table (for the generator).
func Probes() []Probe {
	var out []Probe
	for _, c := range Classes {
		out = append(out, c.Words...)
	}
	return out
}

// Match is a class found in what the kubelet said.
type Match struct {
	Class Class
	Probe Probe
	// Format is the kubelet's format string, as the version's source has
	// it, and Source where (module@version/file:line).
	Format string
	Source string
	// Captures maps the probe's capture names to what the kubelet printed.
	Captures map[string]string
	// Stages are the wrapping steps also found, outermost first.
	Stages []string
}

// Table is the classes with the words of one kubelet version, ready to
// match.
type Table struct {
	Version *schema.Version
	entries []entry
	// compiled are the entries with their patterns (matching).
	compiled    []entry
	compileOnce sync.Once
}

type entry struct {
	class   Class
	probe   Probe
	format  string
	pattern *pattern // compiled by Table.matching
	source  string
}

var (
	tablesMu sync.Mutex
	tables   = map[string]*Table{}
)

// For returns the table of kubelet version v.
func For(v *schema.Version) (*Table, error) {
	tablesMu.Lock()
	defer tablesMu.Unlock()
	if t, ok := tables[v.Minor]; ok {
		return t, nil
	}
	t := &Table{Version: v}
	words := v.StartupWords()
	for _, c := range Classes {
		for _, p := range c.Words {
			for _, w := range words[p.Text] {
				t.entries = append(t.entries, entry{class: c, probe: p, format: w.Format, source: w.Source})
			}
		}
	}
	tables[v.Minor] = t
	return t, nil
}

// matching is the table with its formats compiled, the first time words
// are matched (preflight asks only which classes a version has). A format
// that does not compile is left out: a test compiles every version's.
func (t *Table) matching() []entry {
	t.compileOnce.Do(func() {
		for _, e := range t.entries {
			if e.pattern, _ = compileFormat(e.format); e.pattern != nil {
				t.compiled = append(t.compiled, e)
			}
		}
	})
	return t.compiled
}

// Has tells whether the version has words for the class (a class whose
// only words are a stage, such as the port in use under "Failed to listen
// and serve", by those).
func (t *Table) Has(id string) bool {
	stageOnly := false
	for _, e := range t.entries {
		if e.class.ID != id {
			continue
		}
		if !e.probe.Stage {
			return true
		}
		stageOnly = true
	}
	if c, ok := ByID(id); ok && stageOnly {
		for _, p := range c.Words {
			if !p.Stage {
				return false
			}
		}
		return true
	}
	return false
}

// Classify finds the class of the kubelet's words. Errors wrap errors
// ("failed to run Kubelet: failed to create kubelet: <cause>"): of the
// formats of this version found in the words, the innermost one (the one
// whose fixed text starts last) that is not a stage wins, then the one with
// the most fixed text. Nil when no class's words are there.
func (t *Table) Classify(words string) *Match {
	var best *Match
	bestAt, bestLen := -1, -1
	var stages []stageAt
	for _, e := range t.matching() {
		loc := e.pattern.re.FindStringSubmatchIndex(words)
		if loc == nil {
			continue
		}
		if e.probe.Stage {
			stages = append(stages, stageAt{loc[0], e.pattern.format})
			continue
		}
		at := loc[0]
		if e.pattern.leadingVerb && len(loc) >= 4 {
			at = loc[3] // where its fixed text starts
		}
		if at < bestAt || (at == bestAt && e.pattern.literal <= bestLen) {
			continue
		}
		caps := e.pattern.match(words)
		m := &Match{Class: e.class, Probe: e.probe, Format: e.pattern.format, Source: e.source, Captures: map[string]string{}}
		for i, name := range e.probe.Captures {
			if name != "" && i < len(caps) {
				m.Captures[name] = caps[i]
			}
		}
		best, bestAt, bestLen = m, at, e.pattern.literal
	}
	if best == nil {
		return nil
	}
	// The class's other words found there add what they print.
	for _, e := range t.matching() {
		if e.class.ID != best.Class.ID || e.probe.Stage || e.pattern.format == best.Format {
			continue
		}
		caps := e.pattern.match(words)
		for i, name := range e.probe.Captures {
			if _, ok := best.Captures[name]; name != "" && !ok && i < len(caps) {
				best.Captures[name] = caps[i]
			}
		}
	}
	sort.SliceStable(stages, func(i, j int) bool { return stages[i].at < stages[j].at })
	for _, s := range stages {
		best.Stages = append(best.Stages, s.format)
	}
	return best
}

// Stage finds the stage words in what the kubelet said (for an error the
// table has no class for: where the kubelet was).
func (t *Table) Stage(words string) []string {
	var stages []stageAt
	for _, e := range t.matching() {
		if !e.probe.Stage {
			continue
		}
		if loc := e.pattern.re.FindStringIndex(words); loc != nil {
			stages = append(stages, stageAt{loc[0], e.pattern.format})
		}
	}
	sort.SliceStable(stages, func(i, j int) bool { return stages[i].at < stages[j].at })
	var out []string
	for _, s := range stages {
		out = append(out, s.format)
	}
	return out
}

type stageAt struct {
	at     int
	format string
}

// Fill puts values into a class's fix wording: {name} is replaced by
// values[name]; a placeholder without a value is left out.
func Fill(wording string, values map[string]string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(wording, '{')
		if i < 0 {
			b.WriteString(wording)
			break
		}
		j := strings.IndexByte(wording[i:], '}')
		if j < 0 {
			b.WriteString(wording)
			break
		}
		b.WriteString(wording[:i])
		b.WriteString(values[wording[i+1:i+j]])
		wording = wording[i+j+1:]
	}
	return b.String()
}

// All finds every occurrence of the match's format in the words (a list of
// errors the kubelet joined), each as the probe's captures.
func (m *Match) All(words string) []map[string]string {
	p, err := compileFormatLast(m.Format, `([^,\]]*)`)
	if err != nil {
		return nil
	}
	var out []map[string]string
	for _, caps := range p.re.FindAllStringSubmatch(words, 1000) {
		one := map[string]string{}
		for i, name := range m.Probe.Captures {
			if name != "" && i+1 < len(caps) {
				one[name] = balanced(unquote(caps[i+1]))
			}
		}
		out = append(out, one)
	}
	return out
}
