package cluster

import (
	"bytes"
	"context"
	"errors"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

func testNode(objs ...runtime.Object) (*Node, *fake.Clientset, *bytes.Buffer) {
	n, cs := fakeNode("n1", append([]runtime.Object{&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}}, objs...)...)
	var progress bytes.Buffer
	n.Progress = &progress
	n.Poll, n.EvictRetry = time.Millisecond, 5*time.Millisecond
	return n, cs, &progress
}

func pod(name string, mod func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name),
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", Controller: ptr(true)}}},
		Spec: corev1.PodSpec{NodeName: "n1"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	if mod != nil {
		mod(p)
	}
	return p
}

func ptr[T any](v T) *T { return &v }

// evictions makes the fake API server answer evictions with answer(pod)
// (nil: the pod is deleted) and records the evictions asked for.
func evictions(cs *fake.Clientset, answer func(name string) error) *[]*policyv1.Eviction {
	var asked []*policyv1.Eviction
	cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "eviction" {
			return false, nil, nil
		}
		ev := a.(k8stesting.CreateAction).GetObject().(*policyv1.Eviction)
		asked = append(asked, ev)
		if err := answer(ev.Name); err != nil {
			return true, nil, err
		}
		return true, nil, cs.Tracker().Delete(schema.GroupVersionResource{Version: "v1", Resource: "pods"}, "default", ev.Name)
	})
	return &asked
}

func names(evs []*policyv1.Eviction) string {
	var out []string
	for _, ev := range evs {
		out = append(out, ev.Name)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

func TestDrainEvictsByKubectlRules(t *testing.T) {
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "ds", Namespace: "default"}}
	n, cs, progress := testNode(ds,
		pod("web", nil),
		pod("agent", func(p *corev1.Pod) { p.OwnerReferences[0].Kind, p.OwnerReferences[0].Name = "DaemonSet", "ds" }),
		pod("static", func(p *corev1.Pod) { p.Annotations = map[string]string{mirrorAnnotation: "x"}; p.OwnerReferences = nil }),
		pod("done", func(p *corev1.Pod) { p.OwnerReferences = nil; p.Status.Phase = corev1.PodSucceeded }),
		pod("elsewhere", func(p *corev1.Pod) { p.Spec.NodeName = "n2" }),
	)
	asked := evictions(cs, func(string) error { return nil })
	if err := n.Drain(context.Background(), DrainOptions{GracePeriodSeconds: -1}); err != nil {
		t.Fatal(err)
	}
	got := names(*asked)
	if got != "done,web" {
		t.Errorf("evicted %s, want done,web (DaemonSet, static and other nodes' pods stay)", got)
	}
	for _, want := range []string{"leaving DaemonSet pod default/agent", "leaving static pod default/static", "pod default/web evicted", "drained (2 evicted)"} {
		if !strings.Contains(progress.String(), want) {
			t.Errorf("progress lacks %q:\n%s", want, progress)
		}
	}
}

func TestDrainRefusesBeforeEvictingAnything(t *testing.T) {
	n, cs, _ := testNode(
		pod("web", nil),
		pod("cache", func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
		}),
		pod("bare", func(p *corev1.Pod) { p.OwnerReferences = nil }),
		pod("orphan", func(p *corev1.Pod) { p.OwnerReferences[0].Kind, p.OwnerReferences[0].Name = "DaemonSet", "gone" }),
	)
	asked := evictions(cs, func(string) error { return nil })
	err := n.Drain(context.Background(), DrainOptions{GracePeriodSeconds: -1})
	if err == nil {
		t.Fatal("drained a node with pods that may not go")
	}
	for _, want := range []string{"default/bare (no controller recreates it; --force", "default/cache (emptyDir data would be lost; --delete-emptydir-data", "default/orphan (its DaemonSet gone is gone; --force"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if len(*asked) != 0 {
		t.Errorf("evicted %v before refusing", *asked)
	}

	// With both options all four go.
	if err := n.Drain(context.Background(), DrainOptions{GracePeriodSeconds: -1, Force: true, DeleteEmptyDirData: true}); err != nil {
		t.Fatal(err)
	}
	if got := names(*asked); got != "bare,cache,orphan,web" {
		t.Errorf("with --force and --delete-emptydir-data evicted %s", got)
	}
}

func TestDrainRetriesABudgetUntilTheTimeout(t *testing.T) {
	n, cs, progress := testNode(pod("web", nil))
	budget := apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0)
	asked := evictions(cs, func(string) error { return budget })
	start := time.Now()
	err := n.Drain(context.Background(), DrainOptions{Timeout: 60 * time.Millisecond, GracePeriodSeconds: -1})
	if err == nil || !strings.Contains(err.Error(), "did not finish within 60ms") || !strings.Contains(err.Error(), "disruption budget") {
		t.Fatalf("want the timeout with the budget's message, got %v", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the drain took %s for a 60ms timeout", took)
	}
	if len(*asked) < 2 {
		t.Errorf("the eviction was asked %d times, want retries", len(*asked))
	}
	if !strings.Contains(progress.String(), "refused") {
		t.Errorf("progress does not say the eviction was refused:\n%s", progress)
	}

	// Once the budget allows it, the retry succeeds.
	calls := 0
	evictions(cs, func(string) error {
		if calls++; calls < 3 {
			return budget
		}
		return nil
	})
	if err := n.Drain(context.Background(), DrainOptions{Timeout: 5 * time.Second, GracePeriodSeconds: -1}); err != nil {
		t.Fatal(err)
	}
}

func TestDrainStopsOnOtherErrors(t *testing.T) {
	n, cs, _ := testNode(pod("web", nil))
	evictions(cs, func(string) error {
		return apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "web", errors.New("no"))
	})
	err := n.Drain(context.Background(), DrainOptions{GracePeriodSeconds: -1})
	if err == nil || !strings.Contains(err.Error(), "evict pod default/web") || !strings.Contains(err.Error(), "forbidden") {
		t.Fatalf("want the API server's refusal, got %v", err)
	}
}

func TestGracePeriodGoesIntoTheEviction(t *testing.T) {
	for _, grace := range []int64{-1, 0, 7} {
		n, cs, _ := testNode(pod("web", nil))
		asked := evictions(cs, func(string) error { return nil })
		if err := n.Drain(context.Background(), DrainOptions{GracePeriodSeconds: grace}); err != nil {
			t.Fatal(err)
		}
		ev := (*asked)[0]
		switch {
		case grace < 0 && ev.DeleteOptions != nil:
			t.Errorf("grace %d: the eviction overrides the pod's own grace period: %+v", grace, ev.DeleteOptions)
		case grace >= 0 && (ev.DeleteOptions == nil || ev.DeleteOptions.GracePeriodSeconds == nil || *ev.DeleteOptions.GracePeriodSeconds != grace):
			t.Errorf("grace %d: eviction delete options %+v", grace, ev.DeleteOptions)
		}
	}
}

func nodeStatus(ready corev1.ConditionStatus, heartbeat time.Time) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
		{Type: corev1.NodeReady, Status: ready, LastHeartbeatTime: metav1.NewTime(heartbeat), Message: "kubelet says so"}}}}
}

func lease(renew time.Time) *coordinationv1.Lease {
	return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "n1", Namespace: LeaseNamespace},
		Spec: coordinationv1.LeaseSpec{RenewTime: &metav1.MicroTime{Time: renew}}}
}

func TestHealthNeedsReadyHeartbeatAndLeaseAfterTheRestart(t *testing.T) {
	restart := time.Date(2026, 1, 2, 3, 4, 5, 600_000_000, time.UTC)
	sameSecond := restart.Truncate(time.Second) // heartbeats have whole seconds
	for _, c := range []struct {
		name  string
		node  *corev1.Node
		lease *coordinationv1.Lease
		want  bool
		says  string
	}{
		{"reported", nodeStatus(corev1.ConditionTrue, sameSecond), lease(restart.Add(300 * time.Millisecond)), true, "Ready=True, heartbeat in the restart's second, Lease renewed 0.30s after the restart"},
		{"old heartbeat", nodeStatus(corev1.ConditionTrue, restart.Add(-2*time.Second)), lease(restart.Add(time.Second)), false, "heartbeat 2.00s before the restart"},
		{"old lease", nodeStatus(corev1.ConditionTrue, restart.Add(time.Second)), lease(restart.Add(-time.Millisecond)), false, "Lease renewed 0.00s before the restart"},
		{"not ready", nodeStatus(corev1.ConditionFalse, restart.Add(time.Second)), lease(restart.Add(time.Second)), false, "Ready=False (kubelet says so)"},
		{"no lease", nodeStatus(corev1.ConditionTrue, restart.Add(time.Second)), nil, false, "Lease renewed never"},
	} {
		objs := []runtime.Object{c.node}
		if c.lease != nil {
			objs = append(objs, c.lease)
		}
		n, _ := fakeNode("n1", objs...)
		h, err := n.Health(context.Background(), restart)
		if err != nil {
			t.Fatal(err)
		}
		if h.Reported() != c.want || !strings.Contains(h.String(), c.says) {
			t.Errorf("%s: reported %v (want %v), %q lacks %q", c.name, h.Reported(), c.want, h, c.says)
		}
	}
}

func TestWaitReportedSaysWhatItLastSaw(t *testing.T) {
	restart := time.Now()
	n, _ := fakeNode("n1", nodeStatus(corev1.ConditionTrue, restart.Add(-time.Minute)))
	n.Poll = time.Millisecond
	_, err := n.WaitReported(context.Background(), restart, 30*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "did not report to the API server within 30ms") || !strings.Contains(err.Error(), "Lease renewed never") {
		t.Fatalf("got %v", err)
	}
	n, _ = fakeNode("n1")
	n.Poll = time.Millisecond
	if _, err := n.WaitReported(context.Background(), restart, 30*time.Millisecond); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("a node the API server does not know: got %v", err)
	}
}

func unschedulable(t *testing.T, cs *fake.Clientset) bool {
	t.Helper()
	n, err := cs.CoreV1().Nodes().Get(context.Background(), "n1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return n.Spec.Unschedulable
}

func TestMaintenanceUncordonsOnlyAHealthyNodeItCordoned(t *testing.T) {
	n, cs, progress := testNode(pod("web", nil))
	evictions(cs, func(string) error { return nil })
	m := &Maintenance{Node: n, Drain: true, DrainOptions: DrainOptions{GracePeriodSeconds: -1}}
	if err := m.Begin(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !unschedulable(t, cs) {
		t.Fatal("Begin did not cordon")
	}
	left, err := m.End(context.Background(), false)
	if err != nil || !strings.Contains(left, "kubectl uncordon n1") || !unschedulable(t, cs) {
		t.Fatalf("an unhealthy node: %q %v, cordoned %v", left, err, unschedulable(t, cs))
	}
	if left, err := m.End(context.Background(), true); err != nil || left != "" || unschedulable(t, cs) {
		t.Fatalf("a healthy node: %q %v, cordoned %v", left, err, unschedulable(t, cs))
	}
	if !strings.Contains(progress.String(), "node n1 +") || !strings.Contains(progress.String(), "s: uncordoned") {
		t.Errorf("progress lines lack the node or the elapsed time:\n%s", progress)
	}
}

func TestMaintenanceLeavesACordonedNodeCordoned(t *testing.T) {
	n, cs, _ := testNode()
	// kubectl cordon: no mark of kubeletcfg's.
	if _, err := cs.CoreV1().Nodes().Patch(context.Background(), "n1", types.MergePatchType, []byte(`{"spec":{"unschedulable":true}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	m := &Maintenance{Node: n}
	if err := m.Begin(context.Background()); err != nil {
		t.Fatal(err)
	}
	left, err := m.End(context.Background(), true)
	if err != nil || !strings.Contains(left, "was cordoned before and stays cordoned") || !unschedulable(t, cs) {
		t.Fatalf("%q %v, cordoned %v", left, err, unschedulable(t, cs))
	}
}

func TestMaintenanceFailedDrainLeavesTheNodeAsItWas(t *testing.T) {
	n, cs, _ := testNode(pod("bare", func(p *corev1.Pod) { p.OwnerReferences = nil }))
	m := &Maintenance{Node: n, Drain: true, DrainOptions: DrainOptions{GracePeriodSeconds: -1}}
	if err := m.Begin(context.Background()); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("want the refusal, got %v", err)
	}
	if unschedulable(t, cs) {
		t.Error("the node stays cordoned after a drain that failed")
	}
	if left, err := m.End(context.Background(), true); left != "" || err != nil {
		t.Errorf("End after a failed Begin: %q %v", left, err)
	}
}
