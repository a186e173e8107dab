//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestApplyCluster runs kubeletcfg apply --kubeconfig against a real
// control plane and a real kubelet: a good change with --drain, a drain a
// PodDisruptionBudget stops, a change that kills the kubelet, a kubelet
// healthy locally that the API server cannot reach (serverTLSBootstrap with
// nobody approving), a kubelet healthy locally that cannot report to the API
// server, and a node cordoned before.
func TestApplyCluster(t *testing.T) {
	n := newNode(t, nodeOptions{cluster: true})
	ctx := context.Background()
	agent := n.daemonSet(t, "agent")
	web := n.replicaSet(t, "web")
	apply := func(content string, more ...string) (int, string, string) {
		file := n.writeNew(t, content)
		return kubeletcfg(t, nil, n.argv("apply", append([]string{"-f", file, "--skip-preflight",
			"--kubeconfig", n.API.Kubeconfig, "--stable-for", "2s", "--health-timeout", "30s", "-o", "json"}, more...)...)...)
	}

	// The baseline: a good change without the API server.
	start := time.Now()
	if code, out, errOut := kubeletcfg(t, nil, n.argv("apply", "-f", n.writeNew(t, "cgroupDriver: cgroupfs\nmaxPods: 110\n"), "--stable-for", "2s")...); code != 0 {
		t.Fatalf("a good change without --kubeconfig: exit %d\n%s%s", code, out, errOut)
	}
	baseline := time.Since(start)

	// A good change with --drain.
	notReady := n.watchReady(t)
	start = time.Now()
	code, out, progress := apply("cgroupDriver: cgroupfs\nmaxPods: 111\n", "--drain", "--drain-timeout", "60s")
	took := time.Since(start)
	down := notReady()
	if code != 0 {
		t.Fatalf("good change with --drain: exit %d\n%s\n%s", code, out, progress)
	}
	var verdict struct {
		Applied bool `json:"applied"`
		Checks  []struct {
			Name   string `json:"name"`
			Answer struct {
				OK    bool                 `json:"ok"`
				Times map[string]time.Time `json:"times"`
			} `json:"answer"`
		} `json:"checks"`
	}
	if err := json.Unmarshal([]byte(out), &verdict); err != nil || !verdict.Applied || len(verdict.Checks) != 2 {
		t.Errorf("verdict: %v\n%s", err, out)
	}
	for _, c := range verdict.Checks {
		if !c.Answer.OK || len(c.Answer.Times) == 0 {
			t.Errorf("check %s: %+v", c.Name, c.Answer)
		}
	}
	if _, err := n.API.Client.CoreV1().Pods(n.Namespace).Get(ctx, web.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the ReplicaSet's pod is still there: %v", err)
	}
	if p, err := n.API.Client.CoreV1().Pods(n.Namespace).Get(ctx, agent.Name, metav1.GetOptions{}); err != nil || p.UID != agent.UID || p.DeletionTimestamp != nil {
		t.Errorf("the DaemonSet's pod did not stay: %v", err)
	}
	if n.cordoned(t) {
		t.Errorf("the node stays cordoned after a good change:\n%s", progress)
	}
	for _, want := range []string{"cordoned", "evicting pod " + n.Namespace + "/" + web.Name, "pod " + n.Namespace + "/" + web.Name + " evicted", "leaving DaemonSet pod " + n.Namespace + "/" + agent.Name, "uncordoned"} {
		if !strings.Contains(progress, want) {
			t.Errorf("progress lacks %q:\n%s", want, progress)
		}
	}
	if strings.Contains(out, "cordoned") {
		t.Errorf("progress on stdout with -o json:\n%s", out)
	}
	t.Logf("good change with --drain, progress:\n%s", progress)
	t.Logf("good change with --drain: %s (without --kubeconfig: %s, ratio %.2f); Node not Ready for %s; cordon and drain %.1fs; %s; %s",
		took.Round(time.Millisecond), baseline.Round(time.Millisecond), took.Seconds()/baseline.Seconds(), down,
		at(progress, "drained"), line(progress, "node Ready:"), line(progress, "lease:"))

	// A budget that forbids evicting the pod: the apply stops after
	// --drain-timeout, nothing written, the node uncordoned.
	web = n.bindRunning(t, "web")
	n.budget(t, "web")
	before, _ := os.ReadFile(n.Config)
	start = time.Now()
	code, out, progress = apply("cgroupDriver: cgroupfs\nmaxPods: 122\n", "--drain", "--drain-timeout", "8s")
	if code != 2 || !strings.Contains(progress+out, "disruption budget") || !strings.Contains(progress+out, "nothing was written") {
		t.Errorf("a drain under a budget that forbids it: exit %d\n%s\n%s", code, out, progress)
	}
	if after, _ := os.ReadFile(n.Config); string(after) != string(before) {
		t.Errorf("the config file changed:\n%s", after)
	}
	if n.cordoned(t) {
		t.Error("the node stays cordoned after a drain that did not finish")
	}
	t.Logf("budget: apply stopped after %s", time.Since(start).Round(time.Millisecond))
	if err := n.API.Client.PolicyV1().PodDisruptionBudgets(n.Namespace).Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	// A change that kills the kubelet: rolled back, the node uncordoned and
	// Ready again.
	notReady = n.watchReady(t)
	start = time.Now()
	code, out, progress = apply("cgroupDriver: cgroupfs\nmaxPods: 133\n"+fatalAtStart, "--drain", "--drain-timeout", "60s")
	took = time.Since(start)
	down = notReady()
	if code != 3 {
		t.Fatalf("a change that kills the kubelet: exit %d, want 3\n%s\n%s", code, out, progress)
	}
	if n.cordoned(t) {
		t.Errorf("the node stays cordoned after the rollback:\n%s", progress)
	}
	n.waitReady(t, time.Time{}, 30*time.Second)
	t.Logf("a change that kills the kubelet, with --drain: rolled back and uncordoned in %s; Node not Ready for %s", took.Round(time.Millisecond), down)

	// Healthy locally, useless to the cluster: without an approved serving
	// certificate the API server cannot reach the kubelet, so /configz
	// through the node proxy fails.
	code, out, progress = apply("cgroupDriver: cgroupfs\nmaxPods: 144\nserverTLSBootstrap: true\n", "--verify-configz")
	if code != 3 || !strings.Contains(progress+out, "configz") {
		t.Errorf("serverTLSBootstrap with nobody approving: exit %d, want 3\n%s\n%s", code, out, progress)
	}
	if got, _ := os.ReadFile(n.Config); !strings.Contains(string(got), "maxPods: 111") {
		t.Errorf("after the rollback the config file is:\n%s", got)
	}
	t.Logf("serverTLSBootstrap with nobody approving: %s", line(progress+out, "configz"))

	// Healthy locally, silent to the API server: every request in a content
	// type the API server does not take. After --health-timeout without Ready
	// and a Lease renewal, rolled back.
	start = time.Now()
	code, out, progress = apply("cgroupDriver: cgroupfs\nmaxPods: 166\ncontentType: application/x-kubeletcfg-e2e\n", "--health-timeout", "15s")
	if code != 3 || !strings.Contains(progress+out, "healthy locally, but") || !strings.Contains(progress+out, "node Ready not ok") {
		t.Errorf("a kubelet that cannot report: exit %d, want 3\n%s\n%s", code, out, progress)
	}
	t.Logf("a kubelet that cannot report: rolled back in %s: %s", time.Since(start).Round(time.Millisecond), line(progress, "unhealthy"))
	n.waitReady(t, time.Time{}, 30*time.Second)

	// A node cordoned before stays cordoned.
	if _, err := n.API.Client.CoreV1().Nodes().Patch(ctx, n.Name, "application/merge-patch+json", []byte(`{"spec":{"unschedulable":true}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	code, out, progress = apply("cgroupDriver: cgroupfs\nmaxPods: 155\n", "--drain", "--drain-timeout", "60s")
	if code != 0 || !n.cordoned(t) || !strings.Contains(progress, "stays cordoned") {
		t.Errorf("a node cordoned before: exit %d, cordoned %v\n%s\n%s", code, n.cordoned(t), out, progress)
	}
}

var elapsedRe = regexp.MustCompile(`\+([0-9.]+)s: `)

// at is the elapsed time of the first progress line containing s.
func at(progress, s string) float64 {
	l := line(progress, s)
	if m := elapsedRe.FindStringSubmatch(l); m != nil {
		f, _ := strconv.ParseFloat(m[1], 64)
		return f
	}
	return -1
}

func line(progress, s string) string {
	for _, l := range strings.Split(progress, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}
