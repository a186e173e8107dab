package audit

import (
	"strings"

	"k8s.io/kubelet/config/v1beta1"

	"github.com/kubeletcfg/kubeletcfg/schema"
	"github.com/kubeletcfg/kubeletcfg/warning"
)

// OnConfig runs the checks of the benchmark for kubelet v that the
// configuration alone decides, and returns those that do not pass.
func OnConfig(v *schema.Version, cfg *v1beta1.KubeletConfiguration) ([]Result, error) {
	return onConfig(v, cfg, nil, func(*check) bool { return true })
}

// Breaks returns the checks a change of configuration breaks: those the
// configuration alone decides that pass on old and fail on new. diff shows
// them, apply refuses them unless told otherwise.
func Breaks(v *schema.Version, old, new *v1beta1.KubeletConfiguration) ([]Result, error) {
	return BreaksRendered(v, old, new, nil, nil)
}

// BreaksRendered is Breaks given each configuration's config.ToMap as well
// (nil: made here), which it only reads.
func BreaksRendered(v *schema.Version, old, new *v1beta1.KubeletConfiguration, oldValues, newValues map[string]any) ([]Result, error) {
	all := func(*check) bool { return true }
	before, err := onConfig(v, old, oldValues, all)
	if err != nil {
		return nil, err
	}
	was := map[string]bool{}
	for _, r := range before {
		was[r.ID] = true
	}
	after, err := onConfig(v, new, newValues, all)
	if err != nil {
		return nil, err
	}
	var out []Result
	for _, r := range after {
		if r.Status == Fail && !was[r.ID] {
			out = append(out, r)
		}
	}
	return out, nil
}

// Legacy returns the checks cfg fails because of a flags-only default that
// a migration writes out (anonymous authentication, AlwaysAllow, the
// read-only port), each with the secure value in its fixes.
func Legacy(v *schema.Version, cfg *v1beta1.KubeletConfiguration) ([]Result, error) {
	return onConfig(v, cfg, nil, func(c *check) bool { return c.legacy })
}

func onConfig(v *schema.Version, cfg *v1beta1.KubeletConfiguration, values map[string]any, want func(*check) bool) ([]Result, error) {
	b, _, err := pickBenchmark("auto", v)
	if err != nil {
		return nil, err
	}
	s, err := newStateOf(v, b, cfg, values)
	if err != nil {
		return nil, err
	}
	var out []Result
	for _, c := range checks {
		if !c.onConfig || !c.in(b) || !want(c) {
			continue
		}
		if r := s.judge(c); r.Status != Pass {
			out = append(out, r)
		}
	}
	return out, nil
}

// SecureMigration judges a migrated configuration (eff, as the kubelet will
// run it; cfg, the new config file as a JSON map) on the checks whose failure
// is a legacy default written out, and returns the migration's warnings with
// what it found. With secure, it sets the secure values in cfg instead, and
// the warnings about those legacy defaults give way to what it changed.
//
// A warning about a legacy default is a warning.LegacyDefault whose Field is
// the field it is kept as.
func SecureMigration(v *schema.Version, eff *v1beta1.KubeletConfiguration, cfg map[string]any, warnings []warning.Warning, secure bool) ([]warning.Warning, error) {
	failing, err := Legacy(v, eff)
	if err != nil || len(failing) == 0 {
		return warnings, err
	}
	if !secure {
		for _, r := range failing {
			warnings = append(warnings, warning.New(warning.FailsCheck, "security: the migrated config fails CIS %s (%s): %s; --secure writes %s", r.ID, r.Title, r.Value, fixText(r.Fixes)))
		}
		return warnings, nil
	}
	var out []warning.Warning
	fixed := map[string]bool{}
	for _, r := range failing {
		ApplyFixes(cfg, r.Fixes)
		for _, f := range r.Fixes {
			fixed[f.Field] = true
		}
		out = append(out, warning.New(warning.MadeSecure, "secure: %s instead of the legacy default %s, for CIS %s", fixText(r.Fixes), r.Value, r.ID))
	}
	for _, w := range warnings {
		if w.Code != warning.LegacyDefault || !fixed[w.Field] {
			out = append(out, w)
		}
	}
	return out, nil
}

func fixText(fixes []Fix) string {
	var parts []string
	for _, f := range fixes {
		parts = append(parts, f.Field+": "+render(f.Value))
	}
	return strings.Join(parts, ", ")
}
