package schema

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// A Meaning is a value whose effect changes between kubelet versions while
// its field (or flag) stays: the same file means something else to another
// kubelet. Each entry reads what it says from the version's generated data
// (traits the generator reads from the kubelet's code, defaults, gates,
// flags), so that nothing here names a version; the table only says what
// to look at and how to word it. schema/meanings_test.go checks each entry
// against that data for every version.
type Meaning struct {
	ID string
	// Field is the configuration field concerned ("" when none); Flags
	// the command-line flags.
	Field string
	Flags []string
	// Refs are where the change is discussed (k/k pull requests, KEPs).
	Refs []string
	// Touches says whether the node's setup brings the meaning into play.
	Touches func(n *NodeView) bool
	// Means says what it means on kubelet v with these feature gates.
	Means func(v *Version, gates map[string]bool) string
}

// NodeView is what Touches looks at: the effective configuration as
// v1beta1 JSON, the fields the node's files or flags set (not defaulted),
// and the command line's flags.
type NodeView struct {
	Config map[string]any
	Set    map[string]bool
	Flags  []string
}

// Value returns the effective value at a dotted path.
func (n *NodeView) Value(path string) (any, bool) {
	var cur any = n.Config
	for _, k := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

func isZero(x any) bool {
	switch t := x.(type) {
	case float64:
		return t == 0
	case int:
		return t == 0
	case int64:
		return t == 0
	case json.Number:
		return t.String() == "0"
	}
	return false
}

// Meanings is the table.
var Meanings = []Meaning{
	{
		ID:    "eventRecordQPS-zero",
		Field: "eventRecordQPS",
		Refs:  []string{"kubernetes/kubernetes#117101", "kubernetes/kubernetes#117119"},
		Touches: func(n *NodeView) bool {
			v, ok := n.Value("eventRecordQPS")
			return ok && isZero(v)
		},
		Means: func(v *Version, _ map[string]bool) string {
			if z := v.EventRecordQPSZero(); z != "unlimited" {
				return fmt.Sprintf("eventRecordQPS 0 gives the event client client-go's default of %s events per second", z)
			}
			return "eventRecordQPS 0 means no limit on the events the kubelet sends"
		},
	},
	{
		ID:      "restart-readiness",
		Refs:    []string{"KEP-4781", "gate ChangeContainerStatusOnKubeletRestart"},
		Touches: func(*NodeView) bool { return true },
		Means: func(v *Version, gates map[string]bool) string {
			if v.RestartFlipsReadiness(gates) {
				return "a kubelet restart can set containers with a readiness or startup probe not ready until probed again (it forgets their probe results)"
			}
			return fmt.Sprintf("a kubelet restart keeps containers' readiness (gate %s off)", v.RestartReadinessGate())
		},
	},
	{
		ID:    "failCgroupV1-default",
		Field: "failCgroupV1",
		Refs:  []string{"KEP-4569"},
		Touches: func(n *NodeView) bool {
			return !n.Set["failCgroupV1"]
		},
		Means: func(v *Version, _ map[string]bool) string {
			var d map[string]any
			json.Unmarshal(v.Defaults(), &d)
			switch d["failCgroupV1"] {
			case true:
				return "failCgroupV1 unset is true: the kubelet refuses to start on a cgroup v1 host"
			case false:
				return "failCgroupV1 unset is false: the kubelet starts on a cgroup v1 host"
			}
			return "the kubelet has no failCgroupV1: it starts on a cgroup v1 host"
		},
	},
	gatedField("crashLoopBackOff.maxContainerRestartPeriod", "KEP-4603", "caps the crash-loop back-off of containers"),
	gatedField("imagePullCredentialsVerificationPolicy", "KEP-2535", "says when the kubelet checks an image's pull credentials again"),
	{
		ID:    "cadvisor-flags",
		Flags: cadvisorFlags,
		Touches: func(n *NodeView) bool {
			return slices.ContainsFunc(n.Flags, func(f string) bool { return slices.Contains(cadvisorFlags, f) })
		},
		Means: func(v *Version, _ map[string]bool) string {
			var have []string
			for _, f := range cadvisorFlags {
				if _, ok := v.Flag(f); ok {
					have = append(have, f)
				}
			}
			if len(have) == 0 {
				return "the kubelet has none of cAdvisor's flags: one on the command line stops it"
			}
			return "cAdvisor's flags are accepted, deprecated, and do nothing the configuration can say"
		},
	},
	{
		ID:      "cgroupDriver-from-runtime",
		Field:   "cgroupDriver",
		Refs:    []string{"KEP-4033", "gate KubeletCgroupDriverFromCRI"},
		Touches: func(*NodeView) bool { return true },
		Means: func(v *Version, gates map[string]bool) string {
			if !v.AsksRuntimeForCgroupDriver(gates) {
				if _, gate := v.CgroupDriverFromCRI(); gate != "" {
					return fmt.Sprintf("the kubelet runs the cgroupDriver it is given (gate %s off)", gate)
				}
				return "the kubelet runs the cgroupDriver it is given"
			}
			s := "the kubelet runs the cgroup driver its runtime reports (RuntimeConfig), cgroupDriver only where the runtime reports none (containerd 1.x)"
			if v.ConfigzShowsRuntimeDriver() {
				return s + "; /configz shows the driver it runs"
			}
			return s + "; /configz still shows the cgroupDriver it was given"
		},
	},
}

// cadvisorFlags are the flags cAdvisor registered with the kubelet, which
// the kubelet marked deprecated and removed in one release. The test
// checks the list against the flags data (their deprecation text names
// cAdvisor).
var cadvisorFlags = []string{
	"application-metrics-count-limit", "boot-id-file", "container-hints", "containerd", "containerd-namespace",
	"enable-load-reader", "event-storage-age-limit", "event-storage-event-limit", "global-housekeeping-interval",
	"log-cadvisor-usage", "machine-id-file", "storage-driver-buffer-duration", "storage-driver-db", "storage-driver-host",
	"storage-driver-password", "storage-driver-secure", "storage-driver-table", "storage-driver-user",
}

// gatedField is a field the kubelet's validation refuses unless its gate
// is on, whose gate turned on by default in some release: a file written
// for (or copied from the /configz of) a newer kubelet is refused by an
// older one.
func gatedField(field, ref, does string) Meaning {
	return Meaning{
		ID:    field + "-gate",
		Field: field,
		Refs:  []string{ref},
		Touches: func(n *NodeView) bool {
			_, ok := n.Value(field)
			return ok && n.Set[field]
		},
		Means: func(v *Version, gates map[string]bool) string {
			if _, ok := v.Field(field); !ok {
				return fmt.Sprintf("the kubelet has no %s: it drops the field", field)
			}
			gate := v.GateRequired(field)
			switch {
			case gate == "":
				return fmt.Sprintf("%s %s", field, does)
			case v.GateEnabled(gate, gates):
				return fmt.Sprintf("%s %s (gate %s on)", field, does, gate)
			}
			return fmt.Sprintf("%s set is refused: gate %s is off, and the kubelet does not start", field, gate)
		},
	}
}

// MeaningChanges lists the meanings that touch the node and differ between
// kubelet from and kubelet to (each with the gates it runs with).
func MeaningChanges(n *NodeView, from *Version, fromGates map[string]bool, to *Version, toGates map[string]bool) []MeaningChange {
	var out []MeaningChange
	for _, m := range Meanings {
		if !m.Touches(n) {
			continue
		}
		a, b := m.Means(from, fromGates), m.Means(to, toGates)
		if a != b {
			out = append(out, MeaningChange{ID: m.ID, Field: m.Field, Refs: m.Refs, From: a, To: b})
		}
	}
	return out
}

// MeaningChange is one meaning that an upgrade changes for the node.
type MeaningChange struct {
	ID    string   `json:"id"`
	Field string   `json:"field,omitempty"`
	Refs  []string `json:"refs,omitempty"`
	From  string   `json:"from"`
	To    string   `json:"to"`
}
