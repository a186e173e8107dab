package cluster

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubeletcfg/kubeletcfg/apply"
)

func TestAttachAddsTheNodeAndLeaseChecks(t *testing.T) {
	restart := time.Now().Add(-time.Second)
	n, _ := fakeNode("n1", nodeStatus(corev1.ConditionTrue, restart.Add(500*time.Millisecond)), lease(restart.Add(-time.Minute)))
	var o apply.Options
	if err := attach(&o, n, Options{}); err != nil {
		t.Fatal(err)
	}
	if len(o.Checks) != 2 || len(o.Hooks) != 2 || o.Drained || o.Configz != nil {
		t.Fatalf("without --drain and --verify-configz: %d checks, hooks %v, drained %v", len(o.Checks), o.Hooks, o.Drained)
	}
	// The pods Ready before the restart, noted before it and waited for
	// after the kubelet's watch.
	if o.Hooks[0].Before != "restart" || o.Hooks[0].Phase.Name() != "pods-before" || o.Hooks[1].Before != "configz" || o.Hooks[1].Phase.Name() != "pods-ready" {
		t.Fatalf("hooks %v", o.Hooks)
	}
	ready, err := o.Checks[0].Check(context.Background(), restart)
	if err != nil || !ready.OK || o.Checks[0].Name() != "node Ready" || ready.Times["lastHeartbeatTime"].IsZero() {
		t.Errorf("node Ready: %+v %v", ready, err)
	}
	l, err := o.Checks[1].Check(context.Background(), restart)
	if err != nil || l.OK || !strings.Contains(l.Detail, "kube-node-lease/n1 renewed 60.00s before the restart") || l.Times["renewTime"].IsZero() {
		t.Errorf("lease renewed before the restart: %+v %v", l, err)
	}
}

func TestAttachRefusesANodeTheAPIServerDoesNotKnow(t *testing.T) {
	n, _ := fakeNode("nowhere")
	var o apply.Options
	if err := attach(&o, n, Options{}); err == nil || !strings.Contains(err.Error(), "nowhere") {
		t.Fatalf("got %v", err)
	}
}

func TestAttachDrainHooks(t *testing.T) {
	n, cs, _ := testNode(pod("web", nil))
	evictions(cs, func(string) error { return nil })
	var o apply.Options
	if err := attach(&o, n, Options{Drain: true, DrainOptions: DrainOptions{GracePeriodSeconds: -1}}); err != nil {
		t.Fatal(err)
	}
	if !o.Drained {
		t.Error("an apply that drains passes the drain gate")
	}
	if len(o.Hooks) != 3 || o.Hooks[2].Before != "backup" {
		t.Fatalf("hooks %v, want the drain before the backup", o.Hooks)
	}
	drain := o.Hooks[2].Phase.(apply.Ender)
	if err := o.Hooks[2].Phase.Run(context.Background(), nil); err != nil || !unschedulable(t, cs) {
		t.Fatalf("before commit: %v, cordoned %v", err, unschedulable(t, cs))
	}
	err := drain.End(context.Background(), nil, false)
	if err == nil || !strings.Contains(err.Error(), "kubectl uncordon n1") || !unschedulable(t, cs) {
		t.Fatalf("unhealthy after the change: %v, cordoned %v", err, unschedulable(t, cs))
	}
	if err := drain.End(context.Background(), nil, true); err != nil || unschedulable(t, cs) {
		t.Fatalf("healthy: %v, cordoned %v", err, unschedulable(t, cs))
	}
}
