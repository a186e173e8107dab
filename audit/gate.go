package audit

import (
	"k8s.io/kubelet/config/v1beta1"

	"github.com/kubeletcfg/kubeletcfg/schema"
)

// OnConfig runs the checks of the benchmark for kubelet v that the
// configuration alone decides, and returns those that do not pass.
func OnConfig(v *schema.Version, cfg *v1beta1.KubeletConfiguration) ([]Result, error) {
	return onConfig(v, cfg, func(*check) bool { return true })
}

// Breaks returns the checks a change of configuration breaks: those the
// configuration alone decides that pass on old and fail on new. diff shows
// them, apply refuses them unless told otherwise.
func Breaks(v *schema.Version, old, new *v1beta1.KubeletConfiguration) ([]Result, error) {
	before, err := OnConfig(v, old)
	if err != nil {
		return nil, err
	}
	was := map[string]bool{}
	for _, r := range before {
		was[r.ID] = true
	}
	after, err := OnConfig(v, new)
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
	return onConfig(v, cfg, func(c *check) bool { return c.legacy })
}

func onConfig(v *schema.Version, cfg *v1beta1.KubeletConfiguration, want func(*check) bool) ([]Result, error) {
	b, _, err := pickBenchmark("auto", v)
	if err != nil {
		return nil, err
	}
	s, err := newState(v, b, cfg)
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
