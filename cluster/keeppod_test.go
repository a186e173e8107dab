package cluster

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// A rollout's Job drains the node it runs on: its own pod, which a Job
// owns and the drain would evict, stays (by UID, not by name: a pod of the
// same name elsewhere or recreated goes).
func TestDrainKeepsThePodThatRunsTheApply(t *testing.T) {
	n, cs, progress := testNode(
		pod("web", nil),
		pod("kubeletcfg-abc-0-x", func(p *corev1.Pod) { p.UID = "job-pod"; p.OwnerReferences[0].Kind = "Job" }),
	)
	asked := evictions(cs, func(string) error { return nil })
	if err := n.Drain(context.Background(), DrainOptions{GracePeriodSeconds: -1, KeepPod: "job-pod"}); err != nil {
		t.Fatal(err)
	}
	if got := names(*asked); got != "web" {
		t.Errorf("evicted %s, want web alone", got)
	}
	if !strings.Contains(progress.String(), "leaving pod default/kubeletcfg-abc-0-x: it runs this apply") {
		t.Errorf("progress:\n%s", progress)
	}
	*asked = nil
	if err := n.Drain(context.Background(), DrainOptions{GracePeriodSeconds: -1, KeepPod: "another"}); err != nil {
		t.Fatal(err)
	}
	if got := names(*asked); got != "kubeletcfg-abc-0-x" {
		t.Errorf("with another UID kept (web gone already), evicted %s", got)
	}
}
