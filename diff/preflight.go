package diff

import (
	"fmt"
	"maps"
	"slices"

	"k8s.io/kubelet/config/v1beta1"

	"github.com/kubeletcfg/kubeletcfg/config"
	"github.com/kubeletcfg/kubeletcfg/effective"
	"github.com/kubeletcfg/kubeletcfg/flags"
	"github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/schema"
	"github.com/kubeletcfg/kubeletcfg/warning"
)

// Finding is one thing an upgrade of the kubelet would meet.
type Finding struct {
	// Severity is "blocker" (the new kubelet will not start), "change" (it
	// will run with another value) or "note".
	Severity string `json:"severity"`
	Subject  string `json:"subject"`
	Message  string `json:"message"`
	Do       string `json:"do,omitempty"`
}

// PreflightOptions describe a node's kubelet setup and the upgrade.
type PreflightOptions struct {
	// Setup is the node's kubelet setup; its Version is the kubelet's today.
	Setup *node.Setup
	To    *schema.Version
}

// Preflight reads the same setup as kubelet From and as kubelet To and lists
// what the upgrade meets: flags To no longer has, feature gates To refuses,
// fields it ignores, values that change (defaults, merge model).
func Preflight(o PreflightOptions) ([]Finding, error) {
	fromV := o.Setup.Version
	before, err := effective.Compute(effective.Input{Setup: o.Setup})
	if err != nil {
		return nil, fmt.Errorf("the setup does not start kubelet %s today: %w", fromV.Minor, err)
	}
	_, lost, err := flags.ReadAs(o.Setup.Args, o.To)
	if err != nil {
		return nil, err
	}
	var out []Finding
	for _, l := range lost {
		_, perr := flags.Parse([]string{"--" + l.Name}, o.To)
		msg := fmt.Sprintf("kubelet %s has no --%s", o.To.Minor, l.Name)
		if perr != nil {
			msg = perr.Error()
		}
		do := "remove it from the command line"
		if f, ok := fromV.Flag(l.Name); ok && f.Field != "" {
			do = fmt.Sprintf("set %s in the config file instead (kubeletcfg migrate --kubelet-version %s moves it)", f.Field, o.To.Minor)
		}
		out = append(out, Finding{Severity: "blocker", Subject: l.Word, Message: msg, Do: do})
	}
	// The flags and gates To no longer has are left out, so that the rest
	// of the upgrade can be read.
	after, err := effective.Compute(effective.Input{Setup: o.Setup, ReadAs: o.To})
	if err != nil {
		out = append(out, Finding{Severity: "blocker", Subject: "kubelet " + o.To.Minor, Message: err.Error(), Do: "fix what it names before upgrading"})
		return out, nil
	}
	gone := map[string]bool{}
	for _, d := range after.DroppedGates {
		if gone[d.Name] {
			continue
		}
		gone[d.Name] = true
		g, _ := o.To.RemovedGate(d.Name)
		out = append(out, Finding{Severity: "blocker", Subject: "featureGates." + d.Name, Message: g.Dropping(o.To, d.Value) + " (set in " + d.Where + ")",
			Do: fmt.Sprintf("remove the setting (kubeletcfg migrate --kubelet-version %s leaves it out)", o.To.Minor)})
	}
	if r := after.Verdict(); r != nil {
		for _, reason := range r.Reasons {
			out = append(out, Finding{Severity: "blocker", Subject: "kubelet " + o.To.Minor, Message: reason, Do: "fix what it names before upgrading"})
		}
	}
	out = append(out, gateFindings(before.Config.FeatureGates, o.To, gone)...)
	if before.ConfigDir != "" && fromV.DropinMerge() != o.To.DropinMerge() {
		out = append(out, Finding{Severity: "note", Subject: "--config-dir",
			Message: fmt.Sprintf("drop-ins are merged differently: %s in %s, %s in %s", fromV.DropinMerge(), fromV.Minor, o.To.DropinMerge(), o.To.Minor),
			Do:      "check the changes below; nulls, maps and wrong-case keys behave differently"})
	}
	out = append(out, ignoredFindings(after.Warnings, o.To)...)
	changes, err := changeFindings(before.Config, after.Config, fromV, o.To)
	if err != nil {
		return nil, err
	}
	out = append(out, changes...)
	meanings, err := meaningFindings(before, after, fromV, o.To)
	if err != nil {
		return nil, err
	}
	out = append(out, credentialFindings(before, after, o.To)...)
	return mergeFindings(out, meanings), nil
}

// PreflightRunning is the configuration-only part of Preflight, for a
// kubelet seen from outside (its /configz): running is what kubelet From
// runs, set the KubeletConfiguration document of what its configuration
// sets. Kubelet To reads set with its own fields, gates and defaults.
func PreflightRunning(running *v1beta1.KubeletConfiguration, set []byte, from, to *schema.Version) ([]Finding, error) {
	doc, err := config.Decode(set, config.DecodeOptions{Version: to, AllowUnknownFields: true, AnyTypeMeta: true})
	if err != nil {
		return nil, err
	}
	out := gateFindings(running.FeatureGates, to, nil)
	out = append(out, ignoredFindings(doc.Warnings(), to)...)
	changes, err := changeFindings(running, config.Default(doc.Config, to), from, to)
	if err != nil {
		return nil, err
	}
	return append(out, changes...), nil
}

// gateFindings are the gate settings kubelet to refuses, but those in
// reported.
func gateFindings(gates map[string]bool, to *schema.Version, reported map[string]bool) []Finding {
	var out []Finding
	for _, name := range slices.Sorted(maps.Keys(gates)) {
		if reported[name] {
			continue
		}
		if g, gone := to.RemovedGate(name); gone {
			out = append(out, Finding{Severity: "blocker", Subject: "featureGates." + name, Message: g.Dropping(to, gates[name]),
				Do: fmt.Sprintf("remove the setting (kubeletcfg migrate --kubelet-version %s leaves it out)", to.Minor)})
			continue
		}
		for _, e := range to.CheckGates(map[string]bool{name: gates[name]}) {
			out = append(out, Finding{Severity: "blocker", Subject: "featureGates." + name, Message: e, Do: "remove the gate setting (GA and removed gates cannot be set)"})
		}
	}
	return out
}

// ignoredFindings are the fields kubelet to ignores that another kubelet
// version has, from the warnings of reading the configuration with it.
func ignoredFindings(warnings []warning.Warning, to *schema.Version) []Finding {
	var out []Finding
	for _, w := range warnings {
		if w.Code == warning.UnknownField && schema.FieldAddedIn(config.SchemaPath(w.Field)) != "" {
			out = append(out, Finding{Severity: "note", Subject: "config", Message: w.String(), Do: "remove the field; kubelet " + to.Minor + " ignores it"})
		}
	}
	return out
}

// changeFindings are the values that differ between the configuration
// kubelet from runs and the one kubelet to would run.
func changeFindings(before, after *v1beta1.KubeletConfiguration, from, to *schema.Version) ([]Finding, error) {
	changes, err := Across(before, from, after, to)
	if err != nil {
		return nil, err
	}
	var out []Finding
	for _, c := range changes {
		_, inFrom := from.Field(c.Path)
		_, inTo := to.Field(c.Path)
		switch {
		case !inFrom:
			out = append(out, Finding{Severity: "note", Subject: c.Path,
				Message: fmt.Sprintf("new in kubelet %s, where it is %s", to.Minor, Value(c.New))})
		case !inTo:
			out = append(out, Finding{Severity: "note", Subject: c.Path,
				Message: fmt.Sprintf("kubelet %s has no such field any more (it is %s today)", to.Minor, Value(c.Old))})
		default:
			out = append(out, Finding{Severity: "change", Subject: c.Path,
				Message: fmt.Sprintf("%s -> %s under kubelet %s", Value(c.Old), Value(c.New), to.Minor),
				Do:      fmt.Sprintf("set %s explicitly to keep today's value", c.Path)})
		}
	}
	return out, nil
}

// Across compares a configuration of kubelet a with one of kubelet b, each
// with the fields its own version has.
func Across(old *v1beta1.KubeletConfiguration, a *schema.Version, new *v1beta1.KubeletConfiguration, b *schema.Version) ([]Change, error) {
	am, err := config.ToMap(old, a)
	if err != nil {
		return nil, err
	}
	bm, err := config.ToMap(new, b)
	if err != nil {
		return nil, err
	}
	var out []Change
	walk(am, bm, "", b, &out)
	sortChanges(out)
	return out, nil
}
