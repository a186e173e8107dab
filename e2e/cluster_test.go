//go:build e2e

package e2e

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubeletcfg/kubeletcfg/cluster"
	"github.com/kubeletcfg/kubeletcfg/node"
)

// TestClusterMaintenance runs the cluster package against a real control
// plane and a real kubelet: the Lease and Ready after a restart, a drain
// that evicts a ReplicaSet's pod and leaves a DaemonSet's, a drain a
// PodDisruptionBudget stops, and a node cordoned before that stays so.
func TestClusterMaintenance(t *testing.T) {
	n := startClusterNode(t)
	ctx := context.Background()
	agent := n.daemonSet(t, "agent")
	web := n.replicaSet(t, "web")

	var progress strings.Builder
	cn, err := cluster.Connect(node.ViaAPIServer{Kubeconfig: n.API.Kubeconfig, Node: n.Name}, &progress)
	if err != nil {
		t.Fatal(err)
	}

	// A restart: Ready with a new heartbeat, and the Lease renewed.
	notReady := watchReady(t, n)
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
	if !cordoned(t, n) {
		t.Error("the drained node is not cordoned")
	}
	if p, err := n.API.Client.CoreV1().Pods("default").Get(ctx, web.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the ReplicaSet's pod is still there after the drain: %v %v", err, p.Status.Phase)
	}
	if p, err := n.API.Client.CoreV1().Pods("default").Get(ctx, agent.Name, metav1.GetOptions{}); err != nil || p.UID != agent.UID || p.DeletionTimestamp != nil {
		t.Errorf("the DaemonSet's pod did not stay: %v", err)
	}
	if !strings.Contains(progress.String(), "evicting pod default/"+web.Name) || !strings.Contains(progress.String(), "leaving DaemonSet pod default/"+agent.Name) {
		t.Errorf("progress:\n%s", progress.String())
	}
	began = time.Now()
	if left, err := m.End(ctx, true); err != nil || left != "" {
		t.Fatalf("end: %q %v", left, err)
	}
	t.Logf("drain (one pod evicted) %s, uncordon %s", drained.Round(time.Millisecond), time.Since(began).Round(time.Millisecond))
	if cordoned(t, n) {
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
	if cordoned(t, n) {
		t.Error("the node stays cordoned after a drain that did not finish")
	}
	if p, err := n.API.Client.CoreV1().Pods("default").Get(ctx, web.Name, metav1.GetOptions{}); err != nil || p.DeletionTimestamp != nil {
		t.Errorf("the pod the budget protects is gone: %v", err)
	}

	// A node cordoned before stays cordoned.
	if err := cn.Cordon(ctx); err != nil {
		t.Fatal(err)
	}
	m = &cluster.Maintenance{Node: cn}
	if err := m.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	if left, err := m.End(ctx, true); err != nil || !strings.Contains(left, "stays cordoned") || !cordoned(t, n) {
		t.Errorf("a node cordoned before: %q %v, cordoned %v", left, err, cordoned(t, n))
	}
	t.Logf("progress:\n%s", progress.String())
}

func cordoned(t *testing.T, n *clusterNode) bool {
	t.Helper()
	node, err := n.API.Client.CoreV1().Nodes().Get(context.Background(), n.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return node.Spec.Unschedulable
}

// budget creates a PodDisruptionBudget that keeps one pod labelled app=APP
// available, and waits until the controller manager has counted it (before
// that every eviction is refused for another reason).
func (n *clusterNode) budget(t *testing.T, app string) {
	t.Helper()
	one := intstr.FromInt32(1)
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: app, Namespace: "default"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}}}
	if _, err := n.API.Client.PolicyV1().PodDisruptionBudgets("default").Create(context.Background(), pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		pdb, err := n.API.Client.PolicyV1().PodDisruptionBudgets("default").Get(context.Background(), app, metav1.GetOptions{})
		if err == nil && pdb.Status.ObservedGeneration == pdb.Generation && pdb.Status.CurrentHealthy == 1 {
			return
		}
	}
	t.Fatalf("PodDisruptionBudget %s never counted its pod", app)
}

// exitCode is a finished command's exit code.
func exitCode(t *testing.T, err error) int {
	t.Helper()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0
}

// watchReady samples the Node's Ready condition every 50 ms from now on;
// the function it returns stops and says how long Ready was not True.
func watchReady(t *testing.T, n *clusterNode) func() time.Duration {
	t.Helper()
	stop := make(chan struct{})
	var mu sync.Mutex
	var down time.Duration
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		last := time.Now()
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			ready := false
			if node, err := n.API.Client.CoreV1().Nodes().Get(context.Background(), n.Name, metav1.GetOptions{}); err == nil {
				for _, c := range node.Status.Conditions {
					ready = ready || (c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue)
				}
			}
			now := time.Now()
			if !ready {
				mu.Lock()
				down += now.Sub(last)
				mu.Unlock()
			}
			last = now
		}
	}()
	var once sync.Once
	done := func() time.Duration {
		once.Do(func() { close(stop); wg.Wait() })
		mu.Lock()
		defer mu.Unlock()
		return down
	}
	t.Cleanup(func() { done() })
	return done
}
