package rollout

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubeletcfg/kubeletcfg/schema"
)

// Node is a node the rollout changes, as its Node object says.
type Node struct {
	Name string `json:"name"`
	// KubeletVersion is the Node's status.nodeInfo.kubeletVersion; Minor
	// the supported minor it is.
	KubeletVersion string            `json:"kubeletVersion"`
	Minor          string            `json:"minor"`
	Labels         map[string]string `json:"-"`
}

// NewNode resolves a node's kubelet version to a supported minor.
func NewNode(name, kubeletVersion string, lbls map[string]string) (Node, error) {
	v, err := schema.Resolve(kubeletVersion)
	if err != nil {
		return Node{}, fmt.Errorf("node %s: %w", name, err)
	}
	return Node{Name: name, KubeletVersion: kubeletVersion, Minor: v.Minor, Labels: lbls}, nil
}

// CanaryWave names the first wave.
const CanaryWave = "canary"

// Wave is nodes changed at once; the next wave starts only when every node
// of this one is done and the soak has passed.
type Wave struct {
	Name  string   `json:"name"` // canary, 1, 2, ...
	Nodes []string `json:"nodes"`
}

// Waves says how the nodes are split.
type Waves struct {
	// Canary is how many nodes go first, alone in their wave (default 1);
	// CanarySelector picks them by label instead.
	Canary         int
	CanarySelector string
	// Batch is each later wave's size: a count ("10") or a share of all
	// the nodes ("10%", rounded up, at least one).
	Batch string
}

// Plan splits the nodes into waves: the canary first, then batches, each
// in the nodes' name order (the order is the same on every run).
func (w Waves) Plan(nodes []Node) ([]Wave, error) {
	if len(nodes) == 0 {
		return nil, fmt.Errorf("no node to change")
	}
	sorted := slices.Clone(nodes)
	slices.SortFunc(sorted, func(a, b Node) int { return strings.Compare(a.Name, b.Name) })
	size, err := batchSize(w.Batch, len(sorted))
	if err != nil {
		return nil, err
	}
	var canary, rest []string
	switch {
	case w.CanarySelector != "":
		sel, err := labels.Parse(w.CanarySelector)
		if err != nil {
			return nil, fmt.Errorf("--canary-selector: %w", err)
		}
		for _, n := range sorted {
			if sel.Matches(labels.Set(n.Labels)) {
				canary = append(canary, n.Name)
			} else {
				rest = append(rest, n.Name)
			}
		}
		if len(canary) == 0 {
			return nil, fmt.Errorf("--canary-selector %q picks none of the %d nodes", w.CanarySelector, len(sorted))
		}
	default:
		c := w.Canary
		if c < 0 {
			return nil, fmt.Errorf("--canary %d: must not be negative", c)
		}
		c = min(c, len(sorted))
		for i, n := range sorted {
			if i < c {
				canary = append(canary, n.Name)
			} else {
				rest = append(rest, n.Name)
			}
		}
	}
	var out []Wave
	if len(canary) > 0 {
		out = append(out, Wave{Name: CanaryWave, Nodes: canary})
	}
	for i := 0; i < len(rest); i += size {
		out = append(out, Wave{Name: strconv.Itoa(len(out) + boolInt(len(canary) == 0)), Nodes: rest[i:min(i+size, len(rest))]})
	}
	return out, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// batchSize reads --batch: N nodes, or P% of all of them (rounded up).
func batchSize(s string, total int) (int, error) {
	if s == "" {
		s = "10%"
	}
	if p, ok := strings.CutSuffix(s, "%"); ok {
		f, err := strconv.ParseFloat(p, 64)
		if err != nil || f <= 0 || f > 100 {
			return 0, fmt.Errorf("--batch %q: a count or a share of the nodes between 0 and 100%%", s)
		}
		return max(1, int(math.Ceil(f*float64(total)/100))), nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("--batch %q: a count of at least 1, or a share of the nodes such as 10%%", s)
	}
	return n, nil
}
