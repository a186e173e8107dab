// Package validate reproduces the kubelet's verdict on a configuration: the
// checks of its ValidateKubeletConfiguration (pkg/kubelet/apis/config/validation,
// Linux flavour) with the feature-gate handling, logging and tracing checks it
// runs, for every supported kubelet minor version, with the kubelet's own
// messages. Startup adds the checks the kubelet makes right after validation,
// while starting, that fail the same way on any host.
//
// Version differences live in the rule table (rules.go): each rule names the
// first minor that has it and, if it was dropped or reworded, the first minor
// that no longer has it.
package validate

import (
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kubelet/config/v1beta1"

	"github.com/kubeletcfg/kubeletcfg/schema"
)

// Error is one problem the kubelet would report.
type Error struct {
	// Field is the JSON path of the offending setting ("evictionHard",
	// "logging.format", "featureGates.Foo", "registerWithTaints[0]"), or ""
	// when the problem is not about one field.
	Field string
	// Message is exactly what the kubelet prints for this problem.
	Message string
}

func (e Error) Error() string { return e.Message }

// Host describes the traits of the machine that some kubelet checks depend
// on. The zero value is a modern host: cgroup v2.
type Host struct {
	// CgroupV1 is true on a host whose /sys/fs/cgroup is not a cgroup2
	// mount (the kubelet's IsCgroup2UnifiedMode is false).
	CgroupV1 bool
}

// Config validates an already defaulted configuration the way kubelet v does
// (its ValidateKubeletConfiguration, with the feature gates of v overlaid
// with cfg.FeatureGates) on a cgroup v2 host. It returns every error, not
// just the first. When the feature gates themselves cannot be set, those are
// the only errors, as in the kubelet.
func Config(cfg *v1beta1.KubeletConfiguration, v *schema.Version) []Error {
	return ConfigOnHost(cfg, v, Host{})
}

// ConfigOnHost is Config for a host with the given traits.
func ConfigOnHost(cfg *v1beta1.KubeletConfiguration, v *schema.Version, host Host) []Error {
	g, errs := newGates(v, cfg.FeatureGates)
	if len(errs) > 0 {
		return errs
	}
	c := &checker{cfg: cfg, v: v, gates: g, host: host}
	for _, r := range rules {
		if r.appliesTo(v) {
			r.check(c)
		}
	}
	return c.errs
}

// Messages returns the messages of errs, sorted.
func Messages(errs []Error) []string {
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, e.Message)
	}
	sort.Strings(out)
	return out
}

// checker carries one validation run.
type checker struct {
	cfg   *v1beta1.KubeletConfiguration
	v     *schema.Version
	gates *gates
	host  Host
	errs  []Error
}

// enabled reports whether a feature gate is on for this configuration.
func (c *checker) enabled(gate string) bool { return c.gates.enabled(gate) }

// add records a problem; the message is formatted like fmt.Sprintf.
func (c *checker) add(fieldPath, format string, args ...any) {
	c.errs = append(c.errs, Error{Field: fieldPath, Message: fmt.Sprintf(format, args...)})
}

// invalid records a problem with the kubelet's usual "invalid configuration: " prefix.
func (c *checker) invalid(fieldPath, format string, args ...any) {
	c.add(fieldPath, "invalid configuration: "+format, args...)
}

// addFieldErrors records the errors of a component-base validator the way
// the kubelet does (ErrorList.ToAggregate, which drops repeated messages).
func (c *checker) addFieldErrors(list field.ErrorList) {
	seen := map[string]bool{}
	for _, e := range list {
		msg := e.Error()
		if seen[msg] {
			continue
		}
		seen[msg] = true
		c.errs = append(c.errs, Error{Field: e.Field, Message: msg})
	}
}
