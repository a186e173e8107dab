package effective

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/kubelet/config/v1beta1"

	"github.com/kubeletcfg/kubeletcfg/criruntime"
	"github.com/kubeletcfg/kubeletcfg/warning"
)

// What the kubelet takes, at start-up, from its container runtime and its
// own derivations, and serves on /configz (criruntime for the runtime's
// answer; the schema's traits say what each version does).

// askRuntime reads what the runtime answers the kubelet (when the setup
// reads runtimes) and decides the driver the kubelet runs.
func (r *Result) askRuntime(ask criruntime.Asker) {
	if ask == nil || r.Config == nil {
		return
	}
	a, err := ask(r.Config.ContainerRuntimeEndpoint)
	if err != nil {
		r.Warnings = append(r.Warnings, warning.New(warning.Unknowable, "the container runtime's answer (RuntimeConfig) is not known: %v", err))
	}
	if a == nil && err == nil {
		return // not to be read
	}
	if a != nil {
		for _, n := range a.Notes {
			r.Warnings = append(r.Warnings, warning.New(warning.RuntimeNote, "%s: %s", a.Source, n))
		}
	}
	d := criruntime.Decide(r.Version, r.Config.FeatureGates, r.Config.CgroupDriver, a)
	r.CgroupDriver = &d
	switch {
	case d.Fatal != "":
		r.Warnings = append(r.Warnings, warning.New(warning.StartRefused, "kubelet %s will not start on its runtime: %s", r.Version.Minor, d.Fatal))
	case d.Mismatch != "":
		r.Warnings = append(r.Warnings, warning.Warning{Code: warning.Other, Field: "cgroupDriver", Message: d.Configured + ": " + d.Mismatch})
	case d.FromRuntime && d.Runs != d.Configured && d.Condition == "":
		r.Warnings = append(r.Warnings, warning.Warning{Code: warning.NoEffect, Field: "cgroupDriver", Message: fmt.Sprintf("%s has no effect: %s", d.Configured, d.Why)})
	}
}

// runtimeEntry shows cgroupDriver as the kubelet runs it, with the runtime
// as its origin, when the runtime decides it.
func (r *Result) runtimeEntry(e Entry) Entry {
	d := r.CgroupDriver
	if e.Path != "cgroupDriver" || d == nil || !d.FromRuntime {
		return e
	}
	from := d.Source
	if d.Condition != "" {
		from += fmt.Sprintf("; %s if %s, else %s", d.Runs, d.Condition, d.Otherwise)
	}
	if d.Configz != d.Runs {
		from += "; /configz shows " + d.Configz
	}
	e.Value, e.Origin = d.Runs, Origin{Kind: "runtime", From: from}
	return e
}

// derived fills in what the started kubelet derives and serves: the
// runtime's cgroup driver, and with --reserved-cpus systemReserved's cpu
// (the count of reserved CPUs, in a map the configuration sets) without
// kubeReserved's.
func (r *Result) derived(out *v1beta1.KubeletConfiguration) {
	if d := r.CgroupDriver; d != nil && d.Configz != "" {
		out.CgroupDriver = d.Configz
	}
	if out.ReservedSystemCPUs == "" || !r.Version.ReservedSystemCPUsRewrite() {
		return
	}
	n, err := cpusetSize(out.ReservedSystemCPUs)
	if err != nil || n == 0 {
		return // refused by the verdict
	}
	if out.KubeReserved != nil {
		delete(out.KubeReserved, "cpu")
	}
	// A map the kubelet makes itself is not the one /configz serves.
	if out.SystemReserved != nil {
		out.SystemReserved["cpu"] = strconv.Itoa(n)
	}
}

// cpusetSize counts the CPUs of a Linux CPU list ("0-3,8").
func cpusetSize(s string) (int, error) {
	seen := map[int]bool{}
	for _, part := range strings.Split(strings.TrimSpace(s), ",") {
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(strings.TrimSpace(lo))
		if err != nil || a < 0 {
			return 0, fmt.Errorf("bad CPU list %q", s)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(strings.TrimSpace(hi)); err != nil || b < a {
				return 0, fmt.Errorf("bad CPU list %q", s)
			}
		}
		if b-a > 1<<16 {
			return 0, fmt.Errorf("CPU list %q too long", s)
		}
		for i := a; i <= b; i++ {
			seen[i] = true
		}
	}
	return len(seen), nil
}

// Runs is the configuration the kubelet runs: Config, with the cgroup
// driver its runtime reports where the kubelet takes it from there.
func (r *Result) Runs() *v1beta1.KubeletConfiguration {
	d := r.CgroupDriver
	if d == nil || !d.FromRuntime || d.Runs == r.Config.CgroupDriver {
		return r.Config
	}
	out := r.Config.DeepCopy()
	out.CgroupDriver = d.Runs
	return out
}
