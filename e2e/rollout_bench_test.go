//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubeletcfg/kubeletcfg/rollout"
)

// TestRolloutWaveBenchmark measures what a wave of ROLLOUT_BENCH_NODES
// nodes (default 500: a 10 % batch of 5,000) costs the control plane: a
// real kube-apiserver, etcd and kube-controller-manager (its default
// client rate), with the rollout's own client creating the wave's Jobs
// (pinned to nodes no kubelet runs, so that only the control plane's part
// is timed): how long the rollout takes to create them, how long the Job
// controller takes to create their pods, one poll of the wave (the Jobs
// and pods listed by label), and the API server's and the controller
// manager's CPU. It asserts nothing; it runs with ROLLOUT_BENCH=1 (make
// bench-rollout). The per-node apply is TestRollout's.
func TestRolloutWaveBenchmark(t *testing.T) {
	if os.Getenv("ROLLOUT_BENCH") == "" {
		t.Skip("make bench-rollout runs it (ROLLOUT_BENCH=1)")
	}
	n := 500
	if v, err := strconv.Atoi(os.Getenv("ROLLOUT_BENCH_NODES")); err == nil && v > 0 {
		n = v
	}
	cp := useControlPlane(t)
	ns := cp.namespace(t)
	cfg, err := clientcmd.BuildConfigFromFlags("", cp.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	api, err := rollout.NewAPI(cfg)
	if err != nil {
		t.Fatal(err)
	}
	spec := rollout.Spec{ID: "bench", Namespace: ns, Image: rolloutImageName, ServiceAccount: "default",
		Change:     rollout.Change{Kind: rollout.KindDropin, Name: "50-bench.conf", File: "bench.conf", Content: []byte("maxPods: 111\n")},
		Apply:      rollout.ApplyArgs{HealthTimeout: 30 * time.Second, StableFor: 10 * time.Second},
		JobTimeout: time.Hour}
	spec.Hash = spec.Change.Hash()
	wave := rollout.Wave{Name: "1"}
	for i := range n {
		name := fmt.Sprintf("bench-%05d", i)
		wave.Nodes = append(wave.Nodes, name)
		spec.Nodes = append(spec.Nodes, rollout.Node{Name: name, Minor: "1.37"})
	}
	spec.Waves = []rollout.Wave{wave}
	ctx := context.Background()
	apiserver, kcm := cp.apiserver.pid(), cp.controllerManager.pid()
	cpuA, cpuK := cpuSeconds(t, apiserver), cpuSeconds(t, kcm)
	start := time.Now()
	if err := api.CreateSecret(ctx, spec.Secret()); err != nil {
		t.Fatal(err)
	}
	for _, j := range spec.Jobs() {
		if err := api.CreateJob(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	created := time.Since(start)
	sel := rollout.LabelRollout + "=bench"
	var pods int
	for deadline := time.Now().Add(10 * time.Minute); pods < n; time.Sleep(250 * time.Millisecond) {
		list, err := cp.fast.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			t.Fatal(err)
		}
		pods = len(list.Items)
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d pods after 10 minutes", pods, n)
		}
	}
	podsAt := time.Since(start)
	usedA, usedK := cpuSeconds(t, apiserver)-cpuA, cpuSeconds(t, kcm)-cpuK
	pollStart := time.Now()
	jobs, err := api.ListJobs(ctx, ns, sel)
	if err != nil {
		t.Fatal(err)
	}
	listed, err := api.ListPods(ctx, ns, sel)
	if err != nil {
		t.Fatal(err)
	}
	poll := time.Since(pollStart)
	// The API server's CPU for a poll: ten in a row.
	before := cpuSeconds(t, apiserver)
	for range 10 {
		if _, err := api.ListJobs(ctx, ns, sel); err != nil {
			t.Fatal(err)
		}
		if _, err := api.ListPods(ctx, ns, sel); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("a poll of the wave costs kube-apiserver %.0f ms of CPU", 100*(cpuSeconds(t, apiserver)-before))
	t.Logf("a wave of %d nodes: Jobs created by the rollout in %s (%.0f/s); their pods created by the Job controller %s after the first Job (%.0f/s); "+
		"kube-apiserver %.1f CPU-s, kube-controller-manager %.1f CPU-s (%.1f and %.1f ms a node); one poll (%d Jobs, %d pods listed) %s",
		n, created.Round(time.Millisecond), float64(n)/created.Seconds(), podsAt.Round(time.Millisecond), float64(n)/podsAt.Seconds(),
		usedA, usedK, 1000*usedA/float64(n), 1000*usedK/float64(n), len(jobs), len(listed), poll.Round(time.Millisecond))
}
