//go:build e2e

package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubeletcfg/kubeletcfg/schema"
)

// The benchmark's simulated kubelets: node i answers at its own address,
// benchNet's i+1st, all on benchPort (below the ephemeral ports, which the
// API server's and kubeletcfg's connections take). The whole range is
// routed to this machine as local (one listener takes them all): 20,000
// listeners, each a descriptor, would pass the 20,000 a process may hold
// here (RLIMIT_NOFILE's hard limit, which the test may not raise). They
// keep connections alive as a kubelet does, idle ones for benchIdle only:
// the API server's connections to 20,000 kubelets, kept for its own idle
// timeout, would pass the limit too (kubeletcfg closes each node's itself).
// A kubelet that closed after each answer would be no kubelet: net/http's
// client keeps a small entry per host it never found an idle connection
// for (about 1.4 KiB a node, measured).
const (
	benchNet   = "10.213.128.0/17"
	benchPort  = 10350
	benchShard = 500 // nodes per value of the label fleet-bench-shard
	benchIdle  = 2 * time.Second
)

func benchAddr(i int) string {
	ip := make(net.IP, 4)
	binary.BigEndian.PutUint32(ip, binary.BigEndian.Uint32(net.ParseIP("10.213.128.0").To4())+uint32(i)+1)
	return ip.String()
}

func benchIndex(addr net.Addr) int {
	host, _, _ := net.SplitHostPort(addr.String())
	ip := net.ParseIP(host).To4()
	if ip == nil {
		return -1
	}
	return int(binary.BigEndian.Uint32(ip) - binary.BigEndian.Uint32(net.ParseIP("10.213.128.0").To4()) - 1)
}

func benchName(i int) string { return fmt.Sprintf("bench-%05d", i) }

// benchKubelets answers /configz and /flagz for every benchmark node, each
// node its own providerID and node-ip (distinct) or all alike; their
// serving certificates, made when first asked for, name the node (CN
// system:node:NAME, its address) and are signed by caFile's CA.
type benchKubelets struct {
	distinct atomic.Bool
	head     []byte // the configuration's JSON without its opening brace
	flagz    func(ip string) []byte
	caFile   string
	ca       *testCA
	key      *ecdsa.PrivateKey // every node's
	certs    sync.Map          // index → *tls.Certificate
	served   atomic.Int64
}

func startBenchKubelets(t *testing.T) *benchKubelets {
	t.Helper()
	ip(t, "route", "add", "local", benchNet, "dev", vethHost)
	t.Cleanup(func() { _ = exec.Command("ip", "route", "del", "local", benchNet, "dev", vethHost).Run() })
	typical := referenceEffective(t, "1.37", "ok-typical.yaml")
	ca := newTestCA(t, filepath.Join(t.TempDir(), "bench-ca"))
	defaults := map[string]string{}
	v, err := schema.Resolve("1.37")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range v.Flags() {
		defaults[f.Name] = f.Default
	}
	k := &benchKubelets{head: typical[1:], caFile: ca.CertFile, ca: ca, key: newKey(t)}
	k.flagz = func(ip string) []byte {
		flags := map[string]string{}
		for n, d := range defaults {
			flags[n] = d
		}
		flags["config"], flags["kubeconfig"], flags["node-ip"] = "/var/lib/kubelet/config.yaml", "/etc/kubernetes/kubelet.conf", ip
		body, _ := json.Marshal(map[string]any{"kind": "Flagz", "apiVersion": "config.k8s.io/v1beta1", "metadata": map[string]string{"name": "kubelet"}, "flags": flags})
		return body
	}
	ln, err := net.Listen("tcp", fmt.Sprintf("0.0.0.0:%d", benchPort))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(k.answer), ErrorLog: quietLog(),
		TLSConfig: &tls.Config{GetCertificate: func(h *tls.ClientHelloInfo) (*tls.Certificate, error) {
			return k.cert(benchIndex(h.Conn.LocalAddr()))
		}}}
	srv.IdleTimeout = benchIdle
	go srv.ServeTLS(ln, "", "")
	t.Cleanup(func() { srv.Close() })
	return k
}

func (k *benchKubelets) cert(i int) (*tls.Certificate, error) {
	if c, ok := k.certs.Load(i); ok {
		return c.(*tls.Certificate), nil
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(int64(i) + 1000), Subject: pkix.Name{CommonName: "system:node:" + benchName(i), Organization: []string{"system:nodes"}},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), IPAddresses: []net.IP{net.ParseIP(benchAddr(i))},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, k.ca.cert, &k.key.PublicKey, k.ca.key)
	if err != nil {
		return nil, err
	}
	c := &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: k.key}
	k.certs.Store(i, c)
	return c, nil
}

func (k *benchKubelets) answer(w http.ResponseWriter, r *http.Request) {
	local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	i := benchIndex(local)
	distinct := k.distinct.Load()
	switch r.URL.Path {
	case "/configz":
		k.served.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"kubeletconfig":{`))
		if distinct {
			fmt.Fprintf(w, `"providerID":"sim://bench/%05d",`, i)
		}
		w.Write(k.head)
		w.Write([]byte(`}`))
	case "/flagz":
		ip := "10.213.128.1"
		if distinct {
			ip = benchAddr(i)
		}
		w.Header().Set("Content-Type", "application/json;g=config.k8s.io;v=v1beta1;as=Flagz")
		w.Write(k.flagz(ip))
	default:
		http.NotFound(w, r)
	}
}

// TestFleetBenchmark scans up to 20,000 simulated nodes (FLEET_BENCH_NODES)
// through a real kube-apiserver and etcd, at 500, 5,000 and 20,000 nodes,
// every node serving its own configuration (its providerID, its node-ip:
// each answer is analysed) or all the same, through the API server's node
// proxy and directly; per scan it reports the wall time, kubeletcfg's peak
// RSS and CPU, the API server's CPU and how fast it kept answering other
// requests meanwhile, then a model of a 65,000-node scan from the 5,000 and
// 20,000 ones. It asserts nothing about time; it runs with FLEET_BENCH=1
// (make bench-fleet).
func TestFleetBenchmark(t *testing.T) {
	if os.Getenv("FLEET_BENCH") == "" {
		t.Skip("make bench-fleet runs it (FLEET_BENCH=1)")
	}
	total := 20000
	if s := os.Getenv("FLEET_BENCH_NODES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < benchShard || n%benchShard != 0 {
			t.Fatalf("FLEET_BENCH_NODES=%q: a multiple of %d", s, benchShard)
		}
		total = n
	}
	var limit syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &limit); err == nil {
		limit.Cur = limit.Max // what this process may use of it
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &limit)
		t.Logf("RLIMIT_NOFILE %d", limit.Cur)
	}
	api := useControlPlane(t)
	// The node lifecycle controller would turn thousands of Nodes without
	// Leases Unknown (as many status writes) in the middle of the scans.
	api.pauseControllerManager(t)
	sims := startBenchKubelets(t)
	var nodes []simNode
	for i := range total {
		nodes = append(nodes, simNode{name: benchName(i), version: "v1.37.2", port: benchPort, addr: benchAddr(i),
			labels: map[string]string{"fleet-bench-shard": fmt.Sprint(i / benchShard)}})
	}
	start := time.Now()
	createNodes(t, fastClient(t, api.Kubeconfig), "", nodes)
	t.Logf("%d Node objects created in %s", total, time.Since(start).Round(time.Millisecond))
	if load, err := os.ReadFile("/proc/loadavg"); err == nil {
		t.Logf("load average at the start of the scans: %s", strings.TrimSpace(string(load)))
	}

	bin := kit.kubeletcfg
	apiserver := api.apiserver.pid()
	probe := fastClient(t, api.Kubeconfig)
	idle := probeLatencies(probe, 3*time.Second)
	if len(idle) == 0 {
		t.Fatal("the API server answered no request in 3 s")
	}
	t.Logf("other API requests with no scan: median %s, max %s (%d)", idle[len(idle)/2].Round(time.Millisecond), idle[len(idle)-1].Round(time.Millisecond), len(idle))

	selector := func(n int) string {
		if n == total {
			return "" // all: the API server says how many are left
		}
		var s []string
		for i := 0; i < n/benchShard; i++ {
			s = append(s, fmt.Sprint(i))
		}
		return "fleet-bench-shard in (" + strings.Join(s, ",") + ")"
	}
	var sizes []int
	for _, n := range []int{500, 5000, 20000} {
		if n <= total {
			sizes = append(sizes, n)
		}
	}
	type key struct {
		via      string
		distinct bool
		nodes    int
	}
	results := map[key]scanMeasure{}
	for _, via := range []string{"proxy", "direct"} {
		for _, distinct := range []bool{true, false} {
			sims.distinct.Store(distinct)
			for _, n := range sizes {
				args := []string{"fleet", "--kubeconfig", api.Kubeconfig, "-o", "json"}
				if s := selector(n); s != "" {
					args = append(args, "--selector", s)
				}
				if via == "direct" {
					args = append(args, "--direct", "--kubelet-ca", sims.caFile)
				}
				m := scanOnce(t, bin, args, apiserver, probe, n)
				results[key{via, distinct, n}] = m
				answers := "identical"
				if distinct {
					answers = "distinct"
				}
				t.Logf("%-6s %-9s nodes=%5d: wall %6.2fs (%.2f ms/node), kubeletcfg peak RSS %5.1f MiB, CPU %6.2fs; API server CPU %6.2fs (%.2f cores); other API requests: median %s, max %s (%d); reads at once %s",
					via, answers, n, m.wall.Seconds(), float64(m.wall.Milliseconds())/float64(n), float64(m.maxRSS)/(1<<20), m.cpu, m.apiCPU, m.apiCPU/m.wall.Seconds(),
					m.probeMedian.Round(time.Millisecond), m.probeMax.Round(time.Millisecond), m.probes, m.concurrency)
			}
		}
	}
	// A model of 65,000 nodes: the 5,000 and 20,000 scans' per-node
	// slopes carried on.
	if total >= 20000 {
		for _, via := range []string{"proxy", "direct"} {
			for _, distinct := range []bool{true, false} {
				a, b := results[key{via, distinct, 5000}], results[key{via, distinct, 20000}]
				at := func(x5, x20 float64) float64 { return x20 + (x20-x5)/15000*45000 }
				answers := map[bool]string{true: "distinct", false: "identical"}[distinct]
				t.Logf("model %-6s %-9s nodes=65000: wall %.0fs, kubeletcfg peak RSS %.1f MiB (20,000/5,000: %.2f×), API server CPU %.0fs",
					via, answers, at(a.wall.Seconds(), b.wall.Seconds()), at(float64(a.maxRSS), float64(b.maxRSS))/(1<<20),
					float64(b.maxRSS)/float64(a.maxRSS), at(a.apiCPU, b.apiCPU))
			}
		}
	}
}

type scanMeasure struct {
	wall                  time.Duration
	maxRSS                int64   // bytes
	cpu, apiCPU           float64 // seconds
	probeMedian, probeMax time.Duration
	probes                int
	concurrency           string
}

// scanOnce runs kubeletcfg with args once while another client reads one
// Node every 100 ms, as the API server's other users would.
func scanOnce(t *testing.T, bin string, args []string, apiserver int, probe kubernetes.Interface, want int) scanMeasure {
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
	cmd := exec.Command(bin, args...)
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
	var rep struct {
		Nodes []struct {
			Unreadable *struct{ Reason, Message string } `json:"unreadable"`
		} `json:"nodes"`
		Groups []struct {
			Count int `json:"count"`
		} `json:"groups"`
		Concurrency *struct{ Max, Min, Final int } `json:"concurrency"`
	}
	if err := json.Unmarshal([]byte(out.String()), &rep); err != nil {
		t.Fatalf("fleet -o json: %v\n%.2000s", err, out.String())
	}
	if len(rep.Nodes) != want || len(rep.Groups) != 1 || rep.Groups[0].Count != want {
		for _, n := range rep.Nodes {
			if n.Unreadable != nil {
				t.Fatalf("fleet read %d nodes in %d groups, want %d in one; unreadable: %s: %s", len(rep.Nodes), len(rep.Groups), want, n.Unreadable.Reason, n.Unreadable.Message)
			}
		}
		t.Fatalf("fleet read %d nodes in %d groups, want %d in one", len(rep.Nodes), len(rep.Groups), want)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	m := scanMeasure{wall: wall, maxRSS: hwm, apiCPU: apiCPU, probes: len(latencies),
		cpu: time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds(), concurrency: "16 (direct: no pacing)"}
	if c := rep.Concurrency; c != nil {
		m.concurrency = fmt.Sprintf("%d..%d of %d, %d at the end", c.Min, max(c.Final, c.Min), c.Max, c.Final)
	}
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
		if _, err := probe.CoreV1().Nodes().Get(ctx, benchName(0), metav1.GetOptions{}); err == nil {
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
