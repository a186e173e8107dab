package criruntime

import (
	"fmt"

	"github.com/kubeletcfg/kubeletcfg/schema"
)

// Decision is the cgroup driver a kubelet runs on a node, and the one its
// /configz serves, given its configuration and its runtime's answer.
type Decision struct {
	// Configured is cgroupDriver of the kubelet's effective configuration.
	Configured string `json:"configured"`
	// Runs is the driver the kubelet runs; when Condition is set, Runs is
	// the driver if the condition holds and Otherwise if not.
	Runs      string `json:"runs,omitempty"`
	Condition string `json:"condition,omitempty"`
	Otherwise string `json:"otherwise,omitempty"`
	// Configz is what /configz serves as cgroupDriver (before 1.35 the
	// configured driver, whatever the kubelet runs); Condition applies to
	// it too when it follows the runtime.
	Configz string `json:"configz,omitempty"`
	// FromRuntime: Runs is the runtime's answer; Source names it.
	FromRuntime bool   `json:"fromRuntime"`
	Source      string `json:"source,omitempty"`
	// Why says in a sentence why the kubelet runs that driver.
	Why string `json:"why"`
	// Fatal: the kubelet does not start (its runtime serves no CRI, or
	// answers RuntimeConfig what makes a kubelet that asks exit).
	Fatal string `json:"fatal,omitempty"`
	// Mismatch: the kubelet runs its configured driver while the runtime
	// uses another (the kubelet does not ask, or the runtime does not say).
	Mismatch string `json:"mismatch,omitempty"`
}

// Decide says which cgroup driver kubelet v, with these feature gates,
// runs when configured with cgroupDriver configured and its runtime answers
// a (nil: the answer is not known). The version's traits (whether it asks
// its runtime, and whether /configz shows the answer) come from the schema.
func Decide(v *schema.Version, gates map[string]bool, configured string, a *Answer) Decision {
	d := Decision{Configured: configured, Runs: configured, Configz: configured}
	if a != nil && a.Fatal != "" {
		d.Runs, d.Configz = "", ""
		d.Fatal, d.Source = a.Fatal, a.Source
		d.Why = "the kubelet does not start: " + a.Fatal
		return d
	}
	asks := v.AsksRuntimeForCgroupDriver(gates)
	if !asks {
		if _, gate := v.CgroupDriverFromCRI(); gate != "" {
			d.Why = fmt.Sprintf("kubelet %s takes cgroupDriver from its configuration (gate %s off)", v.Minor, gate)
		} else {
			d.Why = fmt.Sprintf("kubelet %s takes cgroupDriver from its configuration", v.Minor)
		}
		if a != nil && a.Driver != "" && a.Condition == "" && a.Driver != configured {
			d.Mismatch = fmt.Sprintf("the runtime uses %s (%s): pods' cgroups and the kubelet's disagree", a.Driver, a.Source)
		}
		return d
	}
	switch {
	case a == nil:
		d.Why = fmt.Sprintf("kubelet %s takes the driver its runtime reports; the runtime's answer is not known, so cgroupDriver holds only if it reports none", v.Minor)
	case a.ConfigFatal != "":
		d.Runs, d.Configz = "", ""
		d.Fatal, d.Source = a.ConfigFatal, a.Source
		d.Why = "the kubelet does not start: " + a.ConfigFatal
	case a.Unsupported || a.Driver == "":
		d.Source = a.Source
		d.Why = fmt.Sprintf("kubelet %s asks its runtime, which reports no driver (%s): it keeps cgroupDriver", v.Minor, a.Source)
	default:
		d.FromRuntime, d.Source = true, a.Source
		d.Runs, d.Condition, d.Otherwise = a.Driver, a.Condition, a.Otherwise
		d.Why = fmt.Sprintf("kubelet %s runs the driver its runtime reports: %s", v.Minor, a.Why)
		if v.ConfigzShowsRuntimeDriver() {
			d.Configz = a.Driver
		}
	}
	return d
}
