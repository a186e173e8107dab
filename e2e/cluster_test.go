//go:build e2e

package e2e

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeletcfg/kubeletcfg/cluster"
	"github.com/kubeletcfg/kubeletcfg/node"
)

// TestClusterMaintenance runs the cluster package against a real control
// plane and a real kubelet: the Lease and Ready after a restart, a drain
// that evicts a ReplicaSet's pod and leaves a DaemonSet's, a drain a
// PodDisruptionBudget stops, and a node cordoned before that stays so.
func TestClusterMaintenance(t *testing.T) {
	n := newNode(t, nodeOptions{cluster: true})
	ctx := context.Background()
	agent := n.daemonSet(t, "agent")
	web := n.replicaSet(t, "web")

	var progress strings.Builder
	cn, err := cluster.Connect(node.ViaAPIServer{Kubeconfig: n.API.Kubeconfig, Node: n.Name}, &progress)
	if err != nil {
		t.Fatal(err)
	}

	// A restart: Ready with a new heartbeat, and the Lease renewed.
	notReady := n.watchReady(t)
	restart := time.Now()
	if out, err := exec.Command(n.Restart).CombinedOutput(); err != nil {
		t.Fatalf("restart: %v %s", err, out)
	}
	h, err := cn.WaitReported(ctx, restart, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("after a kubelet restart: %s; Node not Ready for %s", h, notReady())

	// Drain: the ReplicaSet's pod goes through the Eviction API, the
	// DaemonSet's stays.
	m := &cluster.Maintenance{Node: cn, Drain: true, DrainOptions: cluster.DrainOptions{Timeout: time.Minute, GracePeriodSeconds: -1}}
	began := time.Now()
	if err := m.Begin(ctx); err != nil {
		t.Fatalf("drain: %v\n%s", err, progress.String())
	}
	drained := time.Since(began)
	if !n.cordoned(t) {
		t.Error("the drained node is not cordoned")
	}
	if p, err := n.API.Client.CoreV1().Pods(n.Namespace).Get(ctx, web.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the ReplicaSet's pod is still there after the drain: %v %v", err, p.Status.Phase)
	}
	if p, err := n.API.Client.CoreV1().Pods(n.Namespace).Get(ctx, agent.Name, metav1.GetOptions{}); err != nil || p.UID != agent.UID || p.DeletionTimestamp != nil {
		t.Errorf("the DaemonSet's pod did not stay: %v", err)
	}
	if !strings.Contains(progress.String(), "evicting pod "+n.Namespace+"/"+web.Name) || !strings.Contains(progress.String(), "leaving DaemonSet pod "+n.Namespace+"/"+agent.Name) {
		t.Errorf("progress:\n%s", progress.String())
	}
	began = time.Now()
	if left, err := m.End(ctx, true); err != nil || left != "" {
		t.Fatalf("end: %q %v", left, err)
	}
	t.Logf("drain (one pod evicted) %s, uncordon %s", drained.Round(time.Millisecond), time.Since(began).Round(time.Millisecond))
	if n.cordoned(t) {
		t.Error("the healthy node stays cordoned")
	}

	// A budget that forbids the eviction: the drain stops at its timeout and
	// the node is as it was.
	web = n.bindRunning(t, "web")
	n.budget(t, "web")
	m = &cluster.Maintenance{Node: cn, Drain: true, DrainOptions: cluster.DrainOptions{Timeout: 8 * time.Second, GracePeriodSeconds: -1}}
	began = time.Now()
	err = m.Begin(ctx)
	if err == nil || !strings.Contains(err.Error(), "did not finish within 8s") || !strings.Contains(err.Error(), "disruption budget") {
		t.Fatalf("a drain under a budget that forbids it: %v", err)
	}
	t.Logf("the budget stopped the drain after %s: %v", time.Since(began).Round(time.Millisecond), err)
	if n.cordoned(t) {
		t.Error("the node stays cordoned after a drain that did not finish")
	}
	if p, err := n.API.Client.CoreV1().Pods(n.Namespace).Get(ctx, web.Name, metav1.GetOptions{}); err != nil || p.DeletionTimestamp != nil {
		t.Errorf("the pod the budget protects is gone: %v", err)
	}

	// A node the operator cordoned before (kubectl cordon: no mark of
	// kubeletcfg's) stays cordoned.
	if _, err := n.API.Client.CoreV1().Nodes().Patch(ctx, n.Name, types.MergePatchType, []byte(`{"spec":{"unschedulable":true}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	m = &cluster.Maintenance{Node: cn}
	if err := m.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	if left, err := m.End(ctx, true); err != nil || !strings.Contains(left, "stays cordoned") || !n.cordoned(t) {
		t.Errorf("a node cordoned before: %q %v, cordoned %v", left, err, n.cordoned(t))
	}
	t.Logf("progress:\n%s", progress.String())
}
