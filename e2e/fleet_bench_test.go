//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubeletcfg/kubeletcfg/fleet"
)

// benchShard is how many simulated nodes carry one value of the label
// fleet-bench-shard: a scan of N nodes selects the first N/benchShard.
const benchShard = 500

// TestFleetBenchmark scans 5,000 simulated nodes through a real
// kube-apiserver and etcd and reports, per scan, the wall time, peak memory
// and CPU of kubeletcfg fleet, the API server's CPU and how fast it kept
// answering other requests meanwhile: 500 to 5,000 nodes at the default
// concurrency (the time as a ratio to the 500-node scan of the same run),
// and 5,000 nodes at two other concurrencies. It measures and asserts
// nothing about time; it runs with FLEET_BENCH=1 (make bench-fleet).
func TestFleetBenchmark(t *testing.T) {
	if os.Getenv("FLEET_BENCH") == "" {
		t.Skip("make bench-fleet runs it (FLEET_BENCH=1)")
	}
	total := 5000
	api := useControlPlane(t)
	// The node lifecycle controller would turn 5,000 nodes without Leases
	// Unknown (5,000 status writes) in the middle of the measurements.
	api.pauseControllerManager(t)
	api.Net.addAddress(t, simAddr)
	sims := newSimKubelets(t, simAddr)
	typical := referenceEffective(t, "1.37", "ok-typical.yaml")
	var nodes []simNode
	for i := range total {
		// Every node serves other bytes (its own providerID): the scan
		// analyses each answer, the worst case.
		cfg := edited(t, typical, map[string]any{"providerID": fmt.Sprintf("sim://bench/%05d", i)})
		nodes = append(nodes, simNode{name: fmt.Sprintf("bench-%05d", i), version: "v1.37.2", port: sims.serve(t, cfg),
			labels: map[string]string{"fleet-bench-shard": fmt.Sprint(i / benchShard)}})
	}
	start := time.Now()
	createNodes(t, fastClient(t, api.Kubeconfig), simAddr, nodes)
	t.Logf("%d Node objects created in %s", total, time.Since(start).Round(time.Millisecond))

	bin := kit.kubeletcfg
	apiserver := api.apiserver.pid()
	probe := fastClient(t, api.Kubeconfig)

	shards := func(n int) string {
		var s []string
		for i := 0; i < n/benchShard; i++ {
			s = append(s, fmt.Sprint(i))
		}
		return "fleet-bench-shard in (" + strings.Join(s, ",") + ")"
	}
	type run struct {
		nodes, concurrency int
	}
	c := fleet.DefaultConcurrency
	runs := []run{{500, c}, {1000, c}, {2000, c}, {5000, c}, {5000, c / 4}, {5000, c * 4}}
	idle := probeLatencies(probe, 3*time.Second)
	if len(idle) == 0 {
		t.Fatal("the API server answered no request in 3 s")
	}
	t.Logf("other API requests with no scan: median %s, max %s (%d)", idle[len(idle)/2].Round(time.Millisecond), idle[len(idle)-1].Round(time.Millisecond), len(idle))
	const repeat = 3
	var base time.Duration
	for _, r := range runs {
		var walls []time.Duration
		for range repeat {
			m := scanOnce(t, bin, api.Kubeconfig, shards(r.nodes), r.concurrency, apiserver, probe, r.nodes)
			walls = append(walls, m.wall)
			t.Logf("nodes=%d concurrency=%d: wall %.2fs, kubeletcfg peak RSS %d MiB, CPU %.2fs; API server CPU %.2fs (%.2f cores); other API requests meanwhile: median %s, max %s (%d)",
				r.nodes, r.concurrency, m.wall.Seconds(), m.maxRSS>>20, m.cpu, m.apiCPU, m.apiCPU/m.wall.Seconds(),
				m.probeMedian.Round(time.Millisecond), m.probeMax.Round(time.Millisecond), m.probes)
		}
		sort.Slice(walls, func(i, j int) bool { return walls[i] < walls[j] })
		median := walls[len(walls)/2]
		if r.nodes == 500 {
			base = median
		}
		t.Logf("== nodes=%d concurrency=%d: median wall %.2fs, %.2f× the 500-node scan", r.nodes, r.concurrency, median.Seconds(), float64(median)/float64(base))
	}
}

// scanMeasure is what one scan measured.
type scanMeasure struct {
	wall                  time.Duration
	maxRSS                int64   // bytes
	cpu, apiCPU           float64 // seconds
	probeMedian, probeMax time.Duration
	probes                int
}

// scanOnce runs kubeletcfg fleet once while another client reads one Node
// every 100 ms, as the API server's other users would.
func scanOnce(t *testing.T, bin, kubeconfig, selector string, concurrency, apiserver int, probe kubernetes.Interface, want int) scanMeasure {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var latencies []time.Duration
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		latencies = probeUntil(ctx, probe)
	}()
	cpu0 := cpuSeconds(t, apiserver)
	cmd := exec.Command(bin, "fleet", "--kubeconfig", kubeconfig, "--selector", selector, "--concurrency", fmt.Sprint(concurrency), "-o", "json")
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The kernel's peak RSS of a child (rusage) counts the memory of this
	// process, which it shares until it execs: read the child's own
	// high-water mark instead, until it exits.
	var hwm int64
	exited, watched := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(watched)
		for {
			if kb, ok := highWaterKiB(cmd.Process.Pid); ok {
				hwm = max(hwm, kb<<10)
			}
			select {
			case <-exited:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	err := cmd.Wait()
	wall := time.Since(start)
	apiCPU := cpuSeconds(t, apiserver) - cpu0
	close(exited)
	<-watched
	cancel()
	wg.Wait()
	if err != nil {
		t.Fatalf("fleet: %v\n%s", err, errOut.String())
	}
	rep := decodeFleet(t, out.String())
	if len(rep.Nodes) != want || len(rep.Groups) != 1 || rep.Groups[0].Count != want {
		t.Fatalf("fleet read %d nodes in %d groups, want %d in one", len(rep.Nodes), len(rep.Groups), want)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	m := scanMeasure{wall: wall, maxRSS: hwm, apiCPU: apiCPU, probes: len(latencies),
		cpu: time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()}
	if len(latencies) > 0 {
		m.probeMedian, m.probeMax = latencies[len(latencies)/2], latencies[len(latencies)-1]
	}
	return m
}

// highWaterKiB is a process's peak resident set (VmHWM), while it runs.
func highWaterKiB(pid int) (int64, bool) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb int64
			if _, err := fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), &kb); err == nil {
				return kb, true
			}
		}
	}
	return 0, false
}

// probeUntil reads one Node every 100 ms, as the API server's other users
// would, until ctx ends, and returns the latencies sorted.
func probeUntil(ctx context.Context, probe kubernetes.Interface) []time.Duration {
	var latencies []time.Duration
	for ctx.Err() == nil {
		start := time.Now()
		if _, err := probe.CoreV1().Nodes().Get(ctx, "bench-00000", metav1.GetOptions{}); err == nil {
			latencies = append(latencies, time.Since(start))
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
	sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
	return latencies
}

// probeLatencies probes for a while with no scan running.
func probeLatencies(probe kubernetes.Interface, d time.Duration) []time.Duration {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return probeUntil(ctx, probe)
}
