package diff

import (
	"fmt"
	"strings"

	"github.com/kubeletcfg/kubeletcfg/config"
	"github.com/kubeletcfg/kubeletcfg/dropins"
	"github.com/kubeletcfg/kubeletcfg/flags"
	"github.com/kubeletcfg/kubeletcfg/schema"
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
	From, To *schema.Version
	Layer    dropins.Options // the setup; its Version is ignored
}

// Preflight reads the same setup as kubelet From and as kubelet To and lists
// what the upgrade meets: flags To no longer has, feature gates To refuses,
// fields it ignores, values that change (defaults, merge model).
func Preflight(o PreflightOptions) ([]Finding, error) {
	from := o.Layer
	from.Version = o.From
	before, err := dropins.Effective(from)
	if err != nil {
		return nil, fmt.Errorf("the setup does not start kubelet %s today: %w", o.From.Minor, err)
	}
	var out []Finding
	args := o.Layer.Args
	kept := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		name, hasValue := flagName(args[i])
		if name == "" {
			kept = append(kept, args[i])
			continue
		}
		if _, ok := o.To.Flag(name); ok {
			kept = append(kept, args[i])
			continue
		}
		word := args[i]
		if !hasValue && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			if f, ok := o.From.Flag(name); ok && f.Type != "bool" {
				word += " " + args[i+1]
				i++
			}
		}
		_, perr := flags.Parse([]string{"--" + name}, o.To)
		msg := fmt.Sprintf("kubelet %s has no --%s", o.To.Minor, name)
		if perr != nil {
			msg = perr.Error()
		}
		do := "remove it from the command line"
		if f, ok := o.From.Flag(name); ok && f.Field != "" {
			do = fmt.Sprintf("set %s in the config file instead (kubeletcfg migrate --kubelet-version %s moves it)", f.Field, o.To.Minor)
		}
		out = append(out, Finding{Severity: "blocker", Subject: word, Message: msg, Do: do})
	}
	to := o.Layer
	to.Version, to.Args = o.To, kept
	// A gate To no longer has is left out, as a flag it lost is, so that the
	// rest of the upgrade can be read.
	to.DropGate = func(name string) bool { _, gone := o.To.RemovedGate(name); return gone }
	after, err := dropins.Effective(to)
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
	for _, name := range sortedKeys(before.Config.FeatureGates) {
		if gone[name] {
			continue
		}
		for _, e := range o.To.CheckGates(map[string]bool{name: before.Config.FeatureGates[name]}) {
			out = append(out, Finding{Severity: "blocker", Subject: "featureGates." + name, Message: e, Do: "remove the gate setting (GA and removed gates cannot be set)"})
		}
	}
	if before.ConfigDir != "" && o.From.DropinMerge() != o.To.DropinMerge() {
		out = append(out, Finding{Severity: "note", Subject: "--config-dir",
			Message: fmt.Sprintf("drop-ins are merged differently: %s in %s, %s in %s", o.From.DropinMerge(), o.From.Minor, o.To.DropinMerge(), o.To.Minor),
			Do:      "check the changes below; nulls, maps and wrong-case keys behave differently"})
	}
	for _, w := range after.Warnings {
		if strings.Contains(w, "not known to kubelet "+o.To.Minor) || strings.Contains(w, "was removed in kubelet") {
			out = append(out, Finding{Severity: "note", Subject: "config", Message: w, Do: "remove the field; kubelet " + o.To.Minor + " ignores it"})
		}
	}
	changes, err := computeAcross(before, after, o.From, o.To)
	if err != nil {
		return nil, err
	}
	for _, c := range changes {
		_, inFrom := o.From.Field(c.Path)
		_, inTo := o.To.Field(c.Path)
		switch {
		case !inFrom:
			out = append(out, Finding{Severity: "note", Subject: c.Path,
				Message: fmt.Sprintf("new in kubelet %s, where it is %s", o.To.Minor, Value(c.New))})
		case !inTo:
			out = append(out, Finding{Severity: "note", Subject: c.Path,
				Message: fmt.Sprintf("kubelet %s has no such field any more (it is %s today)", o.To.Minor, Value(c.Old))})
		default:
			out = append(out, Finding{Severity: "change", Subject: c.Path,
				Message: fmt.Sprintf("%s -> %s under kubelet %s", Value(c.Old), Value(c.New), o.To.Minor),
				Do:      fmt.Sprintf("set %s explicitly to keep today's value", c.Path)})
		}
	}
	return out, nil
}

// computeAcross compares a configuration of kubelet a with one of kubelet b,
// each with the fields its own version has.
func computeAcross(before, after *dropins.Result, a, b *schema.Version) ([]Change, error) {
	am, err := config.ToMap(before.Config, a)
	if err != nil {
		return nil, err
	}
	bm, err := config.ToMap(after.Config, b)
	if err != nil {
		return nil, err
	}
	var out []Change
	walk(am, bm, "", b, &out)
	sortChanges(out)
	return out, nil
}

// flagName returns the normalized name of a long flag word and whether the
// word carries its value ("" for a word that is not a flag).
func flagName(word string) (string, bool) {
	if !strings.HasPrefix(word, "--") {
		return "", false
	}
	name, _, hasValue := strings.Cut(strings.TrimPrefix(word, "--"), "=")
	return strings.ReplaceAll(name, "_", "-"), hasValue
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}
