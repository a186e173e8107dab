package schema

import (
	"fmt"
	"strings"
)

// KubeletPath is a path of the kubelet's HTTPS API that kubeletcfg reads, as
// the kubelet serves it (pkg/kubelet/server/server.go) and authorizes a GET
// of it (pkg/kubelet/server/auth.go). Written by hand from those files of
// every supported release; TestKubeletPathsMatchTheSource reads them again.
type KubeletPath struct {
	Path string
	// Since is the first minor whose kubelet serves it ("" for all).
	Since string
	// Gate is the feature gate that must be on for the kubelet to serve it
	// ("" for none).
	Gate string
	// Subresource is the nodes subresource the kubelet authorizes it as.
	Subresource string
	// FineGrained says the kubelet asks for Subresource only with
	// KubeletFineGrainedAuthz on, and for nodes/proxy otherwise; with the
	// gate on it asks for Subresource, then nodes/proxy: either allows.
	FineGrained bool
}

// FineGrainedAuthzGate is the gate under which the kubelet authorizes
// /configz and /healthz as nodes/configz and nodes/healthz.
const FineGrainedAuthzGate = "KubeletFineGrainedAuthz"

// KubeletPaths are the paths kubeletcfg reads.
var KubeletPaths = []KubeletPath{
	{Path: "/configz", Subresource: "configz", FineGrained: true},
	{Path: "/healthz", Subresource: "healthz", FineGrained: true},
	{Path: "/flagz", Since: "1.33", Gate: "ComponentFlagz", Subresource: "configz"},
	{Path: "/statusz", Since: "1.33", Gate: "ComponentStatusz", Subresource: "statusz"},
}

// KubeletAccess is how a kubelet serves and authorizes one path.
type KubeletAccess struct {
	Path   string
	Served bool
	// NotServed says why not, when not.
	NotServed string
	// Subresources are the nodes subresources a GET on the kubelet's port
	// is allowed with, any one of them, in the order the kubelet asks.
	Subresources []string
	// Why says where the answer comes from: the gate and its state.
	Why string
}

// Needs words the permission: "get nodes/configz (or nodes/proxy)".
func (a KubeletAccess) Needs() string {
	var alts []string
	for _, s := range a.Subresources {
		alts = append(alts, "nodes/"+s)
	}
	if len(alts) == 0 {
		return ""
	}
	out := "get " + alts[0]
	if len(alts) > 1 {
		out += " (or " + strings.Join(alts[1:], ", ") + ")"
	}
	return out
}

// OnlyProxy says the path is allowed only with nodes/proxy, which is as much
// as exec in every container of the node.
func (a KubeletAccess) OnlyProxy() bool {
	return len(a.Subresources) == 1 && a.Subresources[0] == "proxy"
}

// KubeletPathAccess says how kubelet v, with the feature gates set (nil: its
// defaults), serves and authorizes path.
func (v *Version) KubeletPathAccess(path string, set map[string]bool) (KubeletAccess, error) {
	var p *KubeletPath
	for i := range KubeletPaths {
		if KubeletPaths[i].Path == path {
			p = &KubeletPaths[i]
		}
	}
	if p == nil {
		return KubeletAccess{}, fmt.Errorf("%s: not a kubelet path kubeletcfg reads", path)
	}
	a := KubeletAccess{Path: path, Served: true}
	switch {
	case p.Since != "" && !v.AtLeast(p.Since):
		a.Served, a.NotServed = false, fmt.Sprintf("kubelet %s does not serve %s (from %s on)", v.Minor, path, p.Since)
	case p.Gate != "" && !v.GateEnabled(p.Gate, set):
		a.Served, a.NotServed = false, fmt.Sprintf("kubelet %s serves %s only with %s on: %s", v.Minor, path, p.Gate, v.gateState(p.Gate, set))
	}
	if !p.FineGrained {
		a.Subresources = []string{p.Subresource}
		return a, nil
	}
	if v.GateEnabled(FineGrainedAuthzGate, set) {
		a.Subresources = []string{p.Subresource, "proxy"}
		a.Why = fmt.Sprintf("%s is on: %s", FineGrainedAuthzGate, v.gateState(FineGrainedAuthzGate, set))
	} else {
		a.Subresources = []string{"proxy"}
		a.Why = fmt.Sprintf("%s is off: %s", FineGrainedAuthzGate, v.gateState(FineGrainedAuthzGate, set))
	}
	return a, nil
}

// gateState words a gate's state on kubelet v: set, or its stage and
// default; "no such gate" where v has none.
func (v *Version) gateState(name string, set map[string]bool) string {
	g, ok := v.Gate(name)
	if !ok {
		return fmt.Sprintf("kubelet %s has no %s gate", v.Minor, name)
	}
	if on, ok := set[name]; ok {
		return fmt.Sprintf("set to %t", on)
	}
	state := "off"
	if g.Default {
		state = "on"
	}
	out := fmt.Sprintf("%s in %s, %s by default", strings.ToLower(g.Stage), v.Minor, state)
	if v.GateEnabled(name, set) != g.Default {
		out += " (AllAlpha or AllBeta turns it " + map[bool]string{true: "on", false: "off"}[!g.Default] + ")"
	}
	return out
}
