// Package fleet reads the running kubelet configuration (/configz) and
// command line (/flagz, where served) of every node of a cluster, directly on
// each kubelet's port or through the API server's node proxy, groups the
// nodes by what their configuration and flags set (each node's own kubelet
// version's defaults taken into account), compares them with a reference
// (kubeadm's kubelet-config ConfigMap or a file) or with each other, and
// checks the kubelets' versions against the API server's.
package fleet

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/kubeletcfg/kubeletcfg/diff"
	"github.com/kubeletcfg/kubeletcfg/internal/printer"
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
	// Nodes are the nodes in list order (by name); with Options.Spill they
	// are not here but given one at a time by EachNode.
	Nodes []Node `json:"nodes"`
	// Groups of read nodes, largest first.
	Groups []Group `json:"groups"`
	Skew   Skew    `json:"skew"`
	// Concurrency says how many reads at once the scan made through the
	// API server's proxy as its latency allowed (absent when direct).
	Concurrency *Concurrency `json:"concurrency,omitempty"`
	// Rollout is the last kubeletcfg rollout's state (nil: none).
	Rollout *Rollout `json:"rollout,omitempty"`

	total    int
	rows     rows
	grouping grouping
}

// Concurrency is how the scan paced its reads through the API server.
type Concurrency struct {
	// Max is --concurrency, Min the fewest reads at once it held to (it
	// starts with 4 at most), Final where it ended.
	Max   int `json:"max"`
	Min   int `json:"min"`
	Final int `json:"final"`
	// BaseLatency is the median of the first reads, the pace the others
	// were held to (milliseconds).
	BaseLatency float64 `json:"baseLatencyMs"`
}

// EachNode calls fn with every node in list order, its group, match and
// differences filled in.
func (r *Report) EachNode(fn func(Node) error) error {
	if r.rows == nil {
		for _, n := range r.Nodes {
			if err := fn(n); err != nil {
				return err
			}
		}
		return nil
	}
	return r.rows.each(func(c int, n Node) error {
		if c >= 0 {
			g := r.grouping.group[c]
			n.Group, n.Differs = g, r.grouping.differs[c]
			n.Matches = len(n.Differs) == 0
		}
		return fn(n)
	})
}

// Close lets go of what the report keeps of its nodes (Options.Spill's
// temporary file).
func (r *Report) Close() error {
	if r.rows == nil {
		return nil
	}
	err := r.rows.close()
	r.rows = nil
	return err
}

// Total counts the nodes listed.
func (r *Report) Total() int {
	if r.rows == nil && len(r.Nodes) > 0 {
		return len(r.Nodes)
	}
	return r.total
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
	// PerNode counts, per field set per node, the nodes per value: the
	// first 100 values one by one, the nodes of the others in PerNodeMore.
	PerNode     map[string][]ValueCount `json:"perNode,omitempty"`
	PerNodeMore map[string]int          `json:"perNodeMore,omitempty"`
	// FlagsRead says the group's /flagz was read; Flags are then the flags
	// its nodes run with away from the defaults (per-node flags aside), and
	// FlagsDiffer how they differ from the largest group whose flags were
	// read. PerNodeFlags counts, per flag set per node, the nodes per value.
	FlagsRead        bool                    `json:"flagsRead"`
	Flags            []kubeletapi.Flag       `json:"flags,omitempty"`
	FlagsDiffer      []FlagChange            `json:"flagsDiffer,omitempty"`
	PerNodeFlags     map[string][]ValueCount `json:"perNodeFlags,omitempty"`
	PerNodeFlagsMore map[string]int          `json:"perNodeFlagsMore,omitempty"`
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

// Read counts the nodes whose configuration was read: the groups' nodes.
func (r *Report) Read() int {
	n := 0
	for _, g := range r.Groups {
		n += g.Count
	}
	return n
}

// Drift says whether some read node does not match (a group does not), or
// runs with other flags than the largest group whose flags were read.
func (r *Report) Drift() bool {
	for _, g := range r.Groups {
		if !g.Matches || len(g.FlagsDiffer) > 0 {
			return true
		}
	}
	return false
}

// WriteJSON writes the report as printer.WriteJSON writes it — the nodes
// one at a time as EachNode gives them, never all held at once.
func (r *Report) WriteJSON(w io.Writer) error {
	shell := *r
	shell.Nodes = nil
	head, err := printer.Shape(&shell)
	if err != nil {
		return err
	}
	const nodes = "\n  \"nodes\": []"
	at := bytes.Index(head, []byte(nodes))
	if at < 0 {
		return fmt.Errorf("fleet: no nodes in the report's JSON")
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.Write(head[:at+len(nodes)-len("[]")])
	bw.WriteByte('[')
	n := 0
	err = r.EachNode(func(node Node) error {
		row, err := json.MarshalIndent(node, "    ", "  ")
		if err != nil {
			return err
		}
		if n == 0 {
			bw.WriteString("\n    ")
		} else {
			bw.WriteString(",\n    ")
		}
		n++
		_, err = bw.Write(row)
		return err
	})
	if err != nil {
		return err
	}
	if n > 0 {
		bw.WriteString("\n  ")
	}
	bw.WriteByte(']')
	bw.Write(head[at+len(nodes):])
	return bw.Flush()
}
