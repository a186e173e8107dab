package validate

import (
	"fmt"
	"maps"
	"slices"

	"github.com/kubeletcfg/kubeletcfg/schema"
)

// gates is the kubelet's feature gate after SetFromMap(kc.FeatureGates) on a
// copy of its defaults.
type gates struct {
	v   *schema.Version
	set map[string]bool // what the configuration sets
}

// newGates applies a configuration's featureGates the way featuregate's
// SetFromMap does, and returns the errors it would return.
//
// The kubelet walks the map in Go's random order: up to 1.30 it stops at the
// first bad gate, later it stops at the first unknown one but collects
// locked ones. Reporting every bad gate, in name order, is that verdict made
// deterministic.
func newGates(v *schema.Version, set map[string]bool) (*gates, []Error) {
	var errs []Error
	for _, name := range slices.Sorted(maps.Keys(set)) {
		for _, msg := range v.CheckGates(map[string]bool{name: set[name]}) {
			errs = append(errs, Error{Field: "featureGates." + name, Message: msg})
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	g := &gates{v: v, set: set}
	return g, g.dependencyErrors()
}

// enabled is featuregate's Enabled after the configuration's settings.
func (g *gates) enabled(name string) bool { return g.v.GateEnabled(name, g.set) }

// dependencyErrors is the check featuregate makes from 1.35 on, in SetFromMap
// and Validate: every enabled gate must have its dependencies enabled.
func (g *gates) dependencyErrors() []Error {
	if !has(g.v, gatesNeedDependencies) {
		return nil
	}
	var errs []Error
	deps := gateDependencies(g.v)
	for _, name := range slices.Sorted(maps.Keys(deps)) {
		if !g.enabled(name) {
			continue
		}
		var disabled []string
		for _, dep := range deps[name] {
			if !g.enabled(dep) {
				disabled = append(disabled, dep)
			}
		}
		if len(disabled) > 0 {
			errs = append(errs, Error{Field: "featureGates",
				Message: fmt.Sprintf("%s is enabled, but depends on features that are disabled: %v", name, disabled)})
		}
	}
	return errs
}

// gateDependencies returns, for the gates that have dependencies, the gates
// each depends on; a variable so that tests can supply a table.
var gateDependencies = func(v *schema.Version) map[string][]string {
	deps := map[string][]string{}
	for _, g := range v.Gates() {
		if len(g.DependsOn) > 0 {
			deps[g.Name] = g.DependsOn
		}
	}
	return deps
}
