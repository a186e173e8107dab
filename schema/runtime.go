package schema

import (
	"sort"
	"strings"
)

// What the kubelet takes from its runtime and host at start-up, and how its
// credential provider configuration is read, per release: traits the
// generator reads from the release's code (hack/schemagen/gen/runtime.go,
// credprov.go).

// CgroupDriverFromCRI says whether the kubelet asks the runtime's
// RuntimeConfig for the cgroup driver (and takes its answer over
// cgroupDriver): only with gate on (a gate name), always (gate ""), or
// never (asks false).
func (v *Version) CgroupDriverFromCRI() (asks bool, gate string) {
	v.mustLoad()
	t := v.d.Behaviour["cgroupDriverFromCRI"]
	if g, ok := strings.CutPrefix(t, "gate:"); ok {
		return true, g
	}
	return t == "always", ""
}

// AsksRuntimeForCgroupDriver: the kubelet with these gates asks the runtime.
func (v *Version) AsksRuntimeForCgroupDriver(gates map[string]bool) bool {
	asks, gate := v.CgroupDriverFromCRI()
	return asks && (gate == "" || v.GateEnabled(gate, gates))
}

// ConfigzShowsRuntimeDriver: /configz is registered after the runtime's
// answer overwrote cgroupDriver (from 1.35); before, /configz serves the
// configured driver while the kubelet runs the runtime's.
func (v *Version) ConfigzShowsRuntimeDriver() bool {
	v.mustLoad()
	return v.d.Behaviour["configzCgroupDriver"] == "runtime"
}

// ReservedSystemCPUsRewrite: with reservedSystemCPUs set, the kubelet sets
// systemReserved's cpu to the count of reserved CPUs and drops kubeReserved's
// cpu, in the maps /configz serves (a systemReserved it creates is not
// served).
func (v *Version) ReservedSystemCPUsRewrite() bool {
	v.mustLoad()
	return v.d.Behaviour["reservedSystemCPUsRewrite"] == "true"
}

// EventRecordQPSZero is what eventRecordQPS 0 gives the event client:
// "unlimited", or client-go's default QPS as a number ("5").
func (v *Version) EventRecordQPSZero() string {
	v.mustLoad()
	return v.d.Behaviour["eventRecordQPSZero"]
}

// RestartReadinessGate is the gate that, off, keeps containers' readiness
// across a kubelet restart; "" when the release has none (a restart sets
// containers with a readiness probe not ready until probed again).
func (v *Version) RestartReadinessGate() string {
	v.mustLoad()
	return v.d.Behaviour["restartReadinessGate"]
}

// RestartFlipsReadiness: a restart of this kubelet, with these gates, sets
// containers with a readiness (or startup) probe not ready until probed
// again.
func (v *Version) RestartFlipsReadiness(gates map[string]bool) bool {
	g := v.RestartReadinessGate()
	return g == "" || v.GateEnabled(g, gates)
}

// GateRequired is the gate without which the kubelet's validation refuses
// field set ("" when none, or the release has no such field).
func (v *Version) GateRequired(field string) string {
	v.mustLoad()
	return v.d.Behaviour["gateRequired."+field]
}

// CredentialProviderDir: --image-credential-provider-config may name a
// directory, whose *.json, *.yaml and *.yml files are read in name order
// and merged (from 1.34).
func (v *Version) CredentialProviderDir() bool {
	v.mustLoad()
	return v.d.Behaviour["credentialProviderDir"] == "merge"
}

// CredentialProviderRule: the release's validation of the credential
// provider configuration has rule ("duplicate-name", "token-attributes",
// "token-cache-type").
func (v *Version) CredentialProviderRule(rule string) bool {
	v.mustLoad()
	for _, r := range strings.Split(v.d.Behaviour["credentialProviderRules"], ",") {
		if r == rule {
			return true
		}
	}
	return false
}

// CredentialProviderAPIVersions lists the apiVersions of
// CredentialProviderConfig the release decodes.
func (v *Version) CredentialProviderAPIVersions() []string {
	v.mustLoad()
	var out []string
	for k := range v.d.Behaviour {
		if gv, ok := strings.CutPrefix(k, "credentialProviderFields."); ok {
			out = append(out, gv)
		}
	}
	sort.Strings(out)
	return out
}

// CredentialProviderFields lists the JSON paths of a CredentialProviderConfig
// of apiVersion gv as the release decodes it ("providers[].name", ...);
// false when the release does not know gv.
func (v *Version) CredentialProviderFields(gv string) ([]string, bool) {
	v.mustLoad()
	s, ok := v.d.Behaviour["credentialProviderFields."+gv]
	if !ok {
		return nil, false
	}
	return strings.Split(s, ","), true
}
