// Package fleet reads the running kubelet configuration (/configz) and
// command line (/flagz, where served) of every node of a cluster, directly on
// each kubelet's port or through the API server's node proxy, groups the
// nodes by what their configuration and flags set (each node's own kubelet
// version's defaults taken into account), compares them with a reference
// (kubeadm's kubelet-config ConfigMap or a file) or with each other, and
// checks the kubelets' versions against the API server's.
package fleet

import (
	"time"

	"github.com/kubeletcfg/kubeletcfg/diff"
	"github.com/kubeletcfg/kubeletcfg/kubeletapi"
)

// Report is the result of a scan.
type Report struct {
	APIServer        string `json:"apiServer"`
	APIServerVersion string `json:"apiServerVersion"`
	// Via is how the kubelets were read: "direct" (each on its own port)
	// or "proxy" (the API server's node proxy).
	Via      string `json:"via"`
	Selector string `json:"selector,omitempty"`
	// Reference names what the nodes were compared with; "" means with each
	// other (the largest group).
	Reference string `json:"reference,omitempty"`
	// PerNodeFields are the fields set per node by design, shown apart and
	// never counted as drift.
	PerNodeFields []string `json:"perNodeFields"`
	// PerNodeFlags are the flags set per node by design, likewise.
	PerNodeFlags []string      `json:"perNodeFlags"`
	Elapsed      time.Duration `json:"-"`
	Nodes        []Node        `json:"nodes"`
	// Groups of read nodes, largest first.
	Groups []Group `json:"groups"`
	Skew   Skew    `json:"skew"`
}

// Node is one Node object and what was read of it.
type Node struct {
	Name           string `json:"name"`
	KubeletVersion string `json:"kubeletVersion"`
	// Ready is the status of the Node's Ready condition: True, False or
	// Unknown ("" when the Node has none).
	Ready       string `json:"ready"`
	ReadyReason string `json:"readyReason,omitempty"`
	// Group is the node's group (1 the largest); 0 for an unreadable node.
	Group int `json:"group,omitempty"`
	// Matches says whether the node runs what the reference (or the largest
	// group) runs, fields set per node aside.
	Matches bool `json:"matches"`
	// Differs lists the fields that differ from the reference or the largest
	// group: Old is there, New on this node.
	Differs []diff.Change `json:"differs,omitempty"`
	// Sets is what the node's configuration sets: the fields whose running
	// value is not the default of its kubelet version.
	Sets map[string]any `json:"sets,omitempty"`
	// PerNode holds the running values of the fields set per node.
	PerNode map[string]any `json:"perNode,omitempty"`
	// Flags are the flags the kubelet runs with away from its version's
	// defaults (its /flagz); FlagsUnread says why there are none to show
	// (not served, refused, ...), FlagsForm how they were served.
	Flags       []kubeletapi.Flag `json:"flags,omitempty"`
	FlagsForm   string            `json:"flagsForm,omitempty"`
	FlagsUnread *Unreadable       `json:"flagsUnread,omitempty"`
	// Notes say what reading the node took beyond the usual: nodes/proxy
	// on the direct way to an older kubelet, a certificate not verified.
	Notes []string `json:"notes,omitempty"`
	// Skew says how the kubelet's version breaks the skew policy, if it does.
	Skew       string      `json:"skew,omitempty"`
	Unreadable *Unreadable `json:"unreadable,omitempty"`
	Attempts   int         `json:"attempts,omitempty"`
}

// Unreadable says why a node's configuration could not be read.
type Unreadable struct {
	// Reason is one of the Reason* constants.
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// Why a node could not be read.
const (
	ReasonTimeout      = "timeout"             // no answer within the per-node timeout
	ReasonRefused      = "refused"             // the kubelet's port refused the API server's connection
	ReasonUnreachable  = "unreachable"         // no route to the kubelet, or the API server's dial timed out
	ReasonTLS          = "tls"                 // the TLS handshake between the API server and the kubelet failed
	ReasonForbidden    = "forbidden"           // RBAC: no get on nodes/proxy (proxy) or the path's subresource (direct)
	ReasonUnauthorized = "unauthorized"        // the API server or the kubelet refused the credentials
	ReasonNotFound     = "not-found"           // the Node went away during the scan
	ReasonProxy        = "proxy-error"         // another error of the API server's proxy
	ReasonAnswer       = "bad-answer"          // an answer that is not a kubelet's /configz (or /flagz)
	ReasonVersion      = "unsupported-version" // a kubelet version kubeletcfg has no schema for
	ReasonNotServed    = "not-served"          // the kubelet does not serve the path (/flagz before 1.33, or its gate off)
	ReasonTooLarge     = "too-large"           // an answer larger than any kubelet's
	ReasonOtherNode    = "other-node"          // the kubelet answering is another node's (its certificate, its --hostname-override)
	ReasonNoAddress    = "no-address"          // the Node reports no address to reach its kubelet directly
	ReasonError        = "error"               // anything else on the way (connection to the API server)
)

// Group is a set of nodes whose configurations set the same.
type Group struct {
	ID    int `json:"id"`
	Count int `json:"count"`
	// Versions counts the group's nodes per kubelet minor, oldest first.
	Versions []VersionCount `json:"versions"`
	Nodes    []string       `json:"nodes"`
	Matches  bool           `json:"matches"`
	// Differs lists the fields that differ from the reference or the largest
	// group (for the first of the group's nodes; all differ alike).
	Differs []diff.Change  `json:"differs,omitempty"`
	Sets    map[string]any `json:"sets,omitempty"`
	// PerNode counts, per field set per node, the nodes per value.
	PerNode map[string][]ValueCount `json:"perNode,omitempty"`
	// FlagsRead says the group's /flagz was read; Flags are then the flags
	// its nodes run with away from the defaults (per-node flags aside), and
	// FlagsDiffer how they differ from the largest group whose flags were
	// read. PerNodeFlags counts, per flag set per node, the nodes per value.
	FlagsRead    bool                    `json:"flagsRead"`
	Flags        []kubeletapi.Flag       `json:"flags,omitempty"`
	FlagsDiffer  []FlagChange            `json:"flagsDiffer,omitempty"`
	PerNodeFlags map[string][]ValueCount `json:"perNodeFlags,omitempty"`
}

// FlagChange is a flag that differs: Old in the largest group, New here
// ("" for not set away from its default).
type FlagChange struct {
	Name string `json:"name"`
	Old  string `json:"old"`
	New  string `json:"new"`
}

// VersionCount is how many nodes run a kubelet minor.
type VersionCount struct {
	Minor string `json:"minor"`
	Count int    `json:"count"`
}

// ValueCount is how many nodes run a value (rendered as JSON).
type ValueCount struct {
	Value string `json:"value"`
	Count int    `json:"count"`
}

// Read counts the nodes whose configuration was read.
func (r *Report) Read() int {
	n := 0
	for _, node := range r.Nodes {
		if node.Unreadable == nil {
			n++
		}
	}
	return n
}

// Drift says whether some read node does not match, or runs with other
// flags than the largest group whose flags were read.
func (r *Report) Drift() bool {
	for _, node := range r.Nodes {
		if node.Unreadable == nil && !node.Matches {
			return true
		}
	}
	for _, g := range r.Groups {
		if len(g.FlagsDiffer) > 0 {
			return true
		}
	}
	return false
}
