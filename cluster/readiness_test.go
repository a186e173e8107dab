package cluster

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

func ready(at time.Time, status corev1.ConditionStatus) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status, LastTransitionTime: metav1.NewTime(at)}}
	}
}

func probed(period int32) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Containers = []corev1.Container{{Name: "c", ReadinessProbe: &corev1.Probe{PeriodSeconds: period}}}
	}
}

func both(fs ...func(*corev1.Pod)) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		for _, f := range fs {
			f(p)
		}
	}
}

func TestReadyPodsAndReadyAgain(t *testing.T) {
	long := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	n, cs, _ := testNode(
		pod("web", both(ready(long, corev1.ConditionTrue), probed(3))),
		pod("plain", ready(long, corev1.ConditionTrue)),
		pod("starting", ready(long, corev1.ConditionFalse)),
		pod("other", both(ready(long, corev1.ConditionTrue), func(p *corev1.Pod) { p.Spec.NodeName = "n2" })),
	)
	ctx := context.Background()
	before, err := n.ReadyPods(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(before) != 2 || before[0].Name != "plain" || before[1].Name != "web" || !before[1].Probed || before[1].Period != 3*time.Second || before[0].Probed {
		t.Fatalf("before: %+v", before)
	}
	restart := long.Add(time.Hour)
	reported := restart.Add(time.Second)
	clock := reported
	n.now = func() time.Time { return clock }

	// Right after the restart the API server still shows the old kubelet's
	// Ready: a probed pod is not Ready again until its probes ran.
	r, err := n.PodsReadyAgain(ctx, before, restart, reported, true)
	if err != nil || r.OK() || len(r.Waiting) != 1 || !strings.Contains(r.Waiting[0], "default/web (Ready as before the restart") {
		t.Fatalf("just after: %v %v", r, err)
	}
	// Without the flip (gate off), the old Ready stands.
	if r, _ := n.PodsReadyAgain(ctx, before, restart, reported, false); !r.OK() {
		t.Fatalf("no flip: %v", r)
	}
	// The restarted kubelet sets it not ready: waiting.
	set := func(name string, f func(*corev1.Pod)) {
		p := pod(name, f)
		if err := cs.Tracker().Update(schema.GroupVersionResource{Version: "v1", Resource: "pods"}, p, "default"); err != nil {
			t.Fatal(err)
		}
	}
	set("web", both(ready(restart.Add(2*time.Second), corev1.ConditionFalse), probed(3)))
	if r, _ := n.PodsReadyAgain(ctx, before, restart, reported, true); r.OK() || !strings.Contains(r.String(), "default/web (not Ready)") {
		t.Fatalf("flipped: %v", r)
	}
	// Ready again, with a transition after the restart.
	set("web", both(ready(restart.Add(4*time.Second), corev1.ConditionTrue), probed(3)))
	if r, _ := n.PodsReadyAgain(ctx, before, restart, reported, true); !r.OK() {
		t.Fatalf("ready again: %v", r)
	}
	// A transition in the restart's own second may be the old kubelet's
	// (transitions are kept to the second): not proof yet.
	set("web", both(ready(restart.Add(300*time.Millisecond).Truncate(time.Second), corev1.ConditionTrue), probed(3)))
	if r, _ := n.PodsReadyAgain(ctx, before, restart.Add(300*time.Millisecond), reported, true); r.OK() {
		t.Fatalf("same second: %v", r)
	}
	// A Ready that never moved counts once a probe period has passed.
	set("web", both(ready(long, corev1.ConditionTrue), probed(3)))
	clock = reported.Add(6 * time.Second)
	if r, _ := n.PodsReadyAgain(ctx, before, restart, reported, true); !r.OK() {
		t.Fatalf("after a period: %v", r)
	}
	// A pod deleted or replaced is not waited for.
	set("web", both(ready(long, corev1.ConditionFalse), probed(3), func(p *corev1.Pod) { p.UID = types.UID("new") }))
	if err := cs.Tracker().Delete(schema.GroupVersionResource{Version: "v1", Resource: "pods"}, "default", "plain"); err != nil {
		t.Fatal(err)
	}
	if r, _ := n.PodsReadyAgain(ctx, before, restart, reported, true); !r.OK() || len(r.Gone) != 2 {
		t.Fatalf("gone: %+v", r)
	}
}

func TestWaitPodsReadyTimesOut(t *testing.T) {
	long := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	n, cs, progress := testNode(pod("web", both(ready(long, corev1.ConditionTrue), probed(3))))
	before, _ := n.ReadyPods(context.Background())
	p := pod("web", both(ready(long.Add(2*time.Hour), corev1.ConditionFalse), probed(3)))
	cs.Tracker().Update(schema.GroupVersionResource{Version: "v1", Resource: "pods"}, p, "default")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := n.WaitPodsReady(ctx, before, long.Add(time.Hour), long.Add(time.Hour), true)
	if err == nil || !strings.Contains(err.Error(), "1 pod(s) not Ready again: default/web (not Ready)") {
		t.Fatalf("%v", err)
	}
	if !strings.Contains(progress.String(), "waiting for the 1 pod(s) Ready before the restart") {
		t.Errorf("progress: %s", progress)
	}
}
