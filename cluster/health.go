package cluster

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// LeaseNamespace holds each node's Lease, renewed by its kubelet.
const LeaseNamespace = "kube-node-lease"

// Health is what the API server says of a kubelet restarted at Since.
type Health struct {
	Since time.Time `json:"since"`
	// Ready is the Node's Ready condition, with the last heartbeat the
	// kubelet wrote into it.
	Ready         corev1.ConditionStatus `json:"ready"`
	ReadyMessage  string                 `json:"readyMessage,omitempty"`
	LastHeartbeat time.Time              `json:"lastHeartbeat"`
	// LeaseRenewed is the Lease's renewTime.
	LeaseRenewed time.Time `json:"leaseRenewed"`
}

// Reported says whether the restarted kubelet itself has reported: Ready
// with a heartbeat after the restart, and a Lease renewed after it.
func (h Health) Reported() bool { return h.ReadyAfter() && h.LeaseAfter() }

// ReadyAfter says whether the Node is Ready with a heartbeat after the
// restart. Heartbeats have whole seconds: one in the restart's second counts.
func (h Health) ReadyAfter() bool {
	return h.Ready == corev1.ConditionTrue && !h.LastHeartbeat.Before(h.Since.Truncate(time.Second))
}

// LeaseAfter says whether the Lease was renewed after the restart
// (renewTime has microseconds).
func (h Health) LeaseAfter() bool { return h.LeaseRenewed.After(h.Since) }

// String is both checks in one line.
func (h Health) String() string {
	return h.ReadyString() + ", " + h.LeaseString()
}

// ReadyString says what the Ready condition and its heartbeat are.
func (h Health) ReadyString() string {
	ready := fmt.Sprintf("Ready=%s", h.Ready)
	if h.Ready == "" {
		ready = "no Ready condition"
	} else if h.ReadyMessage != "" && h.Ready != corev1.ConditionTrue {
		ready += " (" + h.ReadyMessage + ")"
	}
	return ready + ", heartbeat " + since(h.LastHeartbeat, h.Since, time.Second)
}

// LeaseString says when the Lease was renewed.
func (h Health) LeaseString() string {
	return "Lease renewed " + since(h.LeaseRenewed, h.Since, time.Microsecond)
}

// since says when t was against the restart, for times of a granularity.
func since(t, restart time.Time, granularity time.Duration) string {
	switch {
	case t.IsZero():
		return "never"
	case t.Before(restart.Truncate(granularity)):
		return fmt.Sprintf("%.2fs before the restart", restart.Sub(t).Seconds())
	case t.Before(restart):
		return "in the restart's second"
	default:
		return fmt.Sprintf("%.2fs after the restart", t.Sub(restart).Seconds())
	}
}

// Health reads the Node and its Lease once.
func (n *Node) Health(ctx context.Context, restart time.Time) (Health, error) {
	h := Health{Since: restart}
	node, err := n.api.getNode(ctx, n.Name)
	if err != nil {
		return h, fmt.Errorf("node %s: %w", n.Name, err)
	}
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			h.Ready, h.ReadyMessage, h.LastHeartbeat = c.Status, c.Message, c.LastHeartbeatTime.Time
		}
	}
	lease, err := n.api.getLease(ctx, LeaseNamespace, n.Name)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return h, fmt.Errorf("lease %s/%s: %w", LeaseNamespace, n.Name, err)
	case lease.Spec.RenewTime != nil:
		h.LeaseRenewed = lease.Spec.RenewTime.Time
	}
	return h, nil
}

// WaitReported waits until the kubelet restarted at restart has reported
// (Health.Reported), at most timeout; the error says what was last seen.
func (n *Node) WaitReported(ctx context.Context, restart time.Time, timeout time.Duration) (Health, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	n.step("waiting for Ready with a heartbeat and a Lease renewal after the restart")
	var h Health
	var err error
	for {
		h, err = n.Health(ctx, restart)
		if err == nil && h.Reported() {
			n.step("reported: %s", h)
			return h, nil
		}
		if sleep(ctx, n.Poll) != nil {
			if err != nil {
				return h, fmt.Errorf("the API server has no report of the restarted kubelet within %s: %w", timeout, err)
			}
			return h, fmt.Errorf("the restarted kubelet did not report to the API server within %s: %s", timeout, h)
		}
	}
}
