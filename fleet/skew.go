package fleet

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kubeletcfg/kubeletcfg/diff"
)

// skewPolicy is how much older than the API server a kubelet may be: the
// Kubernetes version skew policy, by the kubelet's minor (since 1.28 a
// kubelet from 1.25 on may be three minors older, an older one two). A
// kubelet is never newer than the API server.
var skewPolicy = []struct {
	kubeletSince int // minor of 1.x
	maxOlder     int
}{
	{kubeletSince: 0, maxOlder: 2},
	{kubeletSince: 25, maxOlder: 3},
}

// maxOlder is how many minors older than the API server kubelet 1.minor may be.
func maxOlder(minor int) int {
	n := 0
	for _, p := range skewPolicy {
		if minor >= p.kubeletSince {
			n = p.maxOlder
		}
	}
	return n
}

// Skew is the fleet's kubelet versions against the API server's.
type Skew struct {
	APIServerMinor string      `json:"apiServerMinor"`
	Minors         []MinorSkew `json:"minors"`
}

// MinorSkew is one kubelet minor of the fleet.
type MinorSkew struct {
	Minor string `json:"minor"`
	Nodes int    `json:"nodes"`
	// Problem says how the minor breaks the skew policy ("" within it).
	Problem string `json:"problem,omitempty"`
	// Upgrade is what running the API server's minor would change in the
	// configurations of this minor's nodes, per set of groups alike.
	Upgrade []UpgradeFindings `json:"upgrade,omitempty"`
	// UpgradeNote says why there is no Upgrade when there is none to give.
	UpgradeNote string `json:"upgradeNote,omitempty"`
}

// UpgradeFindings are the findings of an upgrade for the nodes of some groups.
type UpgradeFindings struct {
	Groups   []int          `json:"groups"`
	Findings []diff.Finding `json:"findings"`
}

// minorOf reads "v1.31.4" (or "1.31", "v1.31.4-gke.100") as 1 and 31.
func minorOf(version string) (int, int, bool) {
	s := strings.TrimPrefix(strings.TrimSpace(version), "v")
	parts := strings.SplitN(s, ".", 3)
	if len(parts) < 2 {
		return 0, 0, false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(strings.TrimRightFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' }))
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return major, minor, true
}

// skewProblem says how a kubelet version breaks the policy against the API
// server's, or "".
func skewProblem(kubelet, apiServer string) string {
	km, kn, ok := minorOf(kubelet)
	am, an, aok := minorOf(apiServer)
	switch {
	case !ok:
		return fmt.Sprintf("kubelet version %q cannot be read", kubelet)
	case !aok:
		return ""
	case km != am:
		return fmt.Sprintf("kubelet %d.%d against API server %d.%d", km, kn, am, an)
	case kn > an:
		return fmt.Sprintf("newer than the API server (%d.%d): a kubelet must not be newer", am, an)
	case an-kn > maxOlder(kn):
		return fmt.Sprintf("%d minors older than the API server (%d.%d); kubelet %d.%d may be at most %d older", an-kn, am, an, km, kn, maxOlder(kn))
	}
	return ""
}
