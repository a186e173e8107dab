package audit

import (
	"fmt"
	"math/big"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubeletcfg/kubeletcfg/criruntime"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

// gracePeriods is kube-controller-manager's --node-monitor-grace-period
// default by release: a node whose kubelet has neither renewed its lease nor
// posted its status for that long is marked NotReady.
var gracePeriods = []struct {
	since string
	grace time.Duration
}{
	{"", 40 * time.Second},
	{"1.32", 50 * time.Second},
}

func gracePeriod(v *schema.Version) time.Duration {
	g := gracePeriods[0].grace
	for _, p := range gracePeriods {
		if p.since == "" || v.AtLeast(p.since) {
			g = p.grace
		}
	}
	return g
}

// leaseRenewFraction is the part of nodeLeaseDurationSeconds after which the
// kubelet renews its lease.
const leaseRenewFraction = 0.25

// minHeartbeats is how many heartbeats the grace period should hold, so one
// slow or failed update does not mark the node NotReady.
const minHeartbeats = 3

var opsChecks = []*check{
	{id: "ops.heartbeat", section: SectionOps,
		title:  "Node heartbeats fit the node controller's grace period",
		reason: "a node whose lease and status go stale for the grace period is marked NotReady and its pods are evicted, so heartbeats too far apart make the node flap",
		field:  "nodeLeaseDurationSeconds",
		rule: func(s *state) outcome {
			grace := gracePeriod(s.v)
			renew := time.Duration(float64(s.cfg.NodeLeaseDurationSeconds) * leaseRenewFraction * float64(time.Second))
			beat := renew
			if st := s.cfg.NodeStatusUpdateFrequency.Duration; st > 0 && st < beat {
				beat = st
			}
			value := fmt.Sprintf("lease %ds (renewed every %s), nodeStatusUpdateFrequency %s", s.cfg.NodeLeaseDurationSeconds, renew, s.cfg.NodeStatusUpdateFrequency.Duration)
			detail := fmt.Sprintf("a heartbeat every %s against a grace period of %s (kube-controller-manager %s's default)", beat, grace, s.v.Minor)
			fix := []Fix{{"nodeLeaseDurationSeconds", 40}, {"nodeStatusUpdateFrequency", "10s"}}
			switch {
			case beat >= grace:
				return outcome{status: Fail, value: value, detail: detail, fixes: fix}
			case beat*minHeartbeats > grace:
				return outcome{status: Warn, value: value, detail: detail + fmt.Sprintf(": fewer than %d fit", minHeartbeats), fixes: fix}
			}
			return outcome{status: Pass, value: value, detail: detail}
		}},
	{id: "ops.eviction", section: SectionOps,
		title:  "Hard eviction thresholds leave room for the system",
		reason: "without a memory.available hard threshold the kernel's OOM killer, not the kubelet, picks what dies, and without reserved memory the pods may use everything down to that threshold",
		field:  "evictionHard",
		rule: func(s *state) outcome {
			hard := s.cfg.EvictionHard
			if len(hard) == 0 {
				return outcome{status: Fail, detail: "no hard eviction thresholds: eviction is off",
					fixes: []Fix{{"evictionHard", map[string]string{"memory.available": "100Mi", "nodefs.available": "10%", "imagefs.available": "15%"}}}}
			}
			mem, ok := hard["memory.available"]
			if !ok || isZeroThreshold(mem) {
				return outcome{status: Fail, detail: "no memory.available threshold",
					remedy: s.advise("evictionHard", "evictionHard with memory.available (e.g. 100Mi or more)", "")}
			}
			reserved := memQuantity(s.cfg.KubeReserved["memory"])
			reserved.Add(memQuantity(s.cfg.SystemReserved["memory"]))
			if reserved.IsZero() {
				return outcome{status: Warn, detail: fmt.Sprintf("memory.available<%s and no kubeReserved or systemReserved memory: allocatable is capacity minus %s, so pods can take what the kubelet and system daemons need", mem, mem),
					remedy: s.advise("kubeReserved", "kubeReserved.memory and systemReserved.memory (e.g. 256Mi and 512Mi)", "")}
			}
			return outcome{status: Pass, detail: fmt.Sprintf("memory.available<%s, %s memory reserved", mem, reserved.String())}
		}},
	{id: "ops.maxpods", section: SectionOps,
		title:  "maxPods fits the node's pod CIDR",
		reason: "pods beyond what the pod CIDR holds are scheduled and then never get an IP address",
		field:  "maxPods",
		rule: func(s *state) outcome {
			cidr, from := s.cfg.PodCIDR, s.origin("podCIDR")
			if s.opts != nil && s.opts.PodCIDR != "" {
				cidr, from = s.opts.PodCIDR, "--pod-cidr"
			}
			if cidr == "" {
				return outcome{status: Manual, detail: "the node's pod CIDR is not known here (the Node's spec.podCIDR; give --pod-cidr)"}
			}
			room, err := podAddresses(cidr)
			if err != nil {
				return outcome{status: Warn, detail: fmt.Sprintf("pod CIDR %q (%s): %v", cidr, from, err)}
			}
			detail := fmt.Sprintf("pod CIDR %s (%s) holds %s pod addresses", cidr, from, room)
			if room.IsInt64() && int64(s.cfg.MaxPods) > room.Int64() {
				return outcome{status: Fail, detail: detail, fixes: []Fix{{"maxPods", room.Int64()}}}
			}
			return outcome{status: Pass, detail: detail}
		}},
	{id: "ops.imagegc", section: SectionOps,
		title:  "Image garbage collection thresholds are ordered and reachable",
		reason: "with the thresholds inverted the kubelet does not start, and with the high threshold at 100% unused images are removed only under eviction pressure",
		field:  "imageGCHighThresholdPercent",
		rule: func(s *state) outcome {
			high, low := deref(s.cfg.ImageGCHighThresholdPercent), deref(s.cfg.ImageGCLowThresholdPercent)
			value := fmt.Sprintf("high %d%%, low %d%%", high, low)
			switch {
			case low >= high:
				return outcome{status: Fail, value: value, detail: "imageGCLowThresholdPercent is not below imageGCHighThresholdPercent (the kubelet refuses to start)",
					fixes: []Fix{{"imageGCHighThresholdPercent", 85}, {"imageGCLowThresholdPercent", 80}}}
			case high >= 100:
				return outcome{status: Warn, value: value, detail: "imageGCHighThresholdPercent 100: image garbage collection never starts",
					fixes: []Fix{{"imageGCHighThresholdPercent", 85}}}
			}
			return outcome{status: Pass, value: value}
		}},
	{id: "ops.cgroupdriver", section: SectionOps,
		title:  "The kubelet's cgroup driver matches the container runtime's",
		reason: "with two cgroup managers the node's resources are accounted twice and pods fail under pressure",
		field:  "cgroupDriver",
		rule:   cgroupDriverRule,
	},
	{id: "ops.swap", section: SectionOps,
		title:  "Swap is off for pods, or limited on purpose",
		reason: "a pod that swaps has unpredictable latency, and memory limits no longer bound what it uses",
		field:  "failSwapOn",
		rule: func(s *state) outcome {
			behavior := s.cfg.MemorySwap.SwapBehavior
			value := fmt.Sprintf("failSwapOn %s, memorySwap.swapBehavior %s", render(s.cfg.FailSwapOn), render(orNil(behavior)))
			if s.cfg.FailSwapOn == nil || *s.cfg.FailSwapOn {
				return outcome{status: Pass, value: value}
			}
			if behavior == "LimitedSwap" {
				return outcome{status: Warn, value: value, detail: "Burstable pods may swap, in proportion to their memory requests",
					remedy: s.advise("memorySwap.swapBehavior", "memorySwap.swapBehavior: NoSwap (unless swapping pods is intended)", "")}
			}
			return outcome{status: Pass, value: value, detail: "the kubelet starts on a node with swap; pods do not swap"}
		}},
	{id: "ops.shutdown", section: SectionOps,
		title:  "Graceful node shutdown is on",
		reason: "without a shutdown grace period a reboot kills every pod at once, without its termination grace period or preStop hooks",
		field:  "shutdownGracePeriod",
		rule: func(s *state) outcome {
			if s.cfg.ShutdownGracePeriod.Duration > 0 {
				return pass()
			}
			return failWith(Fix{"shutdownGracePeriod", "30s"}, Fix{"shutdownGracePeriodCriticalPods", "10s"})
		}},
}

func deref(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}

func memQuantity(s string) resource.Quantity {
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return resource.Quantity{}
	}
	return q
}

func isZeroThreshold(s string) bool {
	if p, ok := percent(s); ok {
		return p == 0
	}
	q := memQuantity(s)
	return q.IsZero()
}

func percent(s string) (float64, bool) {
	p, ok := strings.CutSuffix(s, "%")
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(p, 64)
	return f, err == nil
}

// podAddresses is how many pod addresses a CIDR holds: an IPv4 range loses
// its network and broadcast addresses.
func podAddresses(cidr string) (*big.Int, error) {
	p, err := netip.ParsePrefix(strings.TrimSpace(cidr))
	if err != nil {
		return nil, err
	}
	bits := p.Addr().BitLen() - p.Bits()
	n := new(big.Int).Lsh(big.NewInt(1), uint(bits))
	if p.Addr().Is4() && bits >= 2 {
		n.Sub(n, big.NewInt(2))
	}
	return n, nil
}

func cgroupDriverRule(s *state) outcome {
	if s.opts == nil {
		return pass()
	}
	ep := s.cfg.ContainerRuntimeEndpoint
	ask := s.opts.Setup.Runtime
	if ask == nil {
		// Without a reader of the runtime, containerd's configuration on
		// the node (or under --root).
		var err error
		if ask, err = criruntime.Ask(s.opts.Setup.Root, criruntime.AskOptions{Mode: criruntime.Config}); err != nil {
			return outcome{status: Manual, detail: err.Error()}
		}
	}
	a, err := ask(ep)
	switch {
	case err != nil:
		return outcome{status: Manual, detail: fmt.Sprintf("%v: compare with the runtime's cgroup manager", err)}
	case a == nil:
		return outcome{status: Manual, detail: "the container runtime is not read (--runtime none): compare with its cgroup manager"}
	}
	d := criruntime.Decide(s.v, s.cfg.FeatureGates, s.cfg.CgroupDriver, a)
	if d.Fatal != "" {
		return outcome{status: Fail, detail: fmt.Sprintf("kubelet %s will not start on its runtime: %s", s.v.Minor, d.Fatal),
			remedy: "fix the container runtime's configuration (" + a.Source + ") so that it serves the CRI the kubelet asks"}
	}
	runtime := a.Driver
	if c := a.FromConfig; a.Unsupported && c != nil && c.Fatal == "" {
		// A containerd 1.x answers no RuntimeConfig: what it runs is in its
		// configuration.
		runtime, a = c.Driver, c
	}
	if runtime == "" {
		return outcome{status: Manual, detail: fmt.Sprintf("%s reports no cgroup driver: compare with its cgroup manager", a.Source)}
	}
	detail := fmt.Sprintf("%s uses %s (%s)", a.Source, runtime, a.Why)
	if a.Condition != "" {
		detail = fmt.Sprintf("%s uses %s if %s, else %s (%s)", a.Source, runtime, a.Condition, a.Otherwise, a.Why)
	}
	switch {
	case s.cfg.CgroupDriver == runtime && a.Condition == "":
		return outcome{status: Pass, detail: detail}
	case d.FromRuntime && a.Live:
		return outcome{status: Pass, detail: fmt.Sprintf("%s; kubelet %s runs it: cgroupDriver %s has no effect", detail, s.v.Minor, s.cfg.CgroupDriver)}
	case d.FromRuntime:
		return outcome{status: Warn, detail: fmt.Sprintf("%s; kubelet %s takes the driver from a runtime that reports it (containerd 2.0 and newer) and falls back to cgroupDriver %s (containerd 1.x)", detail, s.v.Minor, s.cfg.CgroupDriver),
			fixes: []Fix{{"cgroupDriver", runtime}}}
	}
	return outcome{status: Fail, detail: detail + "; " + d.Why, fixes: []Fix{{"cgroupDriver", runtime}}}
}
