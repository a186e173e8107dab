package schema

import (
	"encoding/json"
	"unsafe"
)

// table is one release's schema data and start-up words as the binary holds
// them (tables_gen.go, written by make schema from schema/data): a run
// reads its version's without decoding anything. Raw JSON values are kept
// as text, maps as pairs; load makes the schema's own types of them.
type table struct {
	fields         []Field
	defaults       string
	flagsBaseline  string
	gatedDefaults  []gatedDefaultText
	featureGates   []Gate
	flags          []Flag
	behaviour      []pair
	pathFields     []string
	registerResets []pair
	// startup are the words of each probe of the start-up table that the
	// release's source has, exits the messages it logs before it exits.
	startup []probeWords
	exits   []StartupWord
}

type gatedDefaultText struct {
	gate    string
	enabled bool
	values  string
}

type pair struct{ key, value string }

type probeWords struct {
	probe string
	words []StartupWord
}

// raw is JSON text as a json.RawMessage sharing its bytes: nothing writes
// to the schema's raw values (nil for "").
func raw(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// data is the table as the schema's accessors read it.
func (t *table) data() data {
	d := data{Fields: t.fields, Defaults: raw(t.defaults), FlagsBaseline: raw(t.flagsBaseline),
		FeatureGates: t.featureGates, Flags: t.flags, PathFields: t.pathFields}
	if t.gatedDefaults != nil {
		d.GatedDefaults = make([]GatedDefault, len(t.gatedDefaults))
		for i, g := range t.gatedDefaults {
			d.GatedDefaults[i] = GatedDefault{Gate: g.gate, Enabled: g.enabled, Values: raw(g.values)}
		}
	}
	if t.behaviour != nil {
		d.Behaviour = make(map[string]string, len(t.behaviour))
		for _, p := range t.behaviour {
			d.Behaviour[p.key] = p.value
		}
	}
	if t.registerResets != nil {
		d.RegisterResets = make(map[string]json.RawMessage, len(t.registerResets))
		for _, p := range t.registerResets {
			d.RegisterResets[p.key] = raw(p.value)
		}
	}
	return d
}

// startupData is the table's start-up words.
func (t *table) startupData() *StartupData {
	d := &StartupData{Words: make(map[string][]StartupWord, len(t.startup)), Exits: t.exits}
	for _, p := range t.startup {
		d.Words[p.probe] = p.words
	}
	return d
}
