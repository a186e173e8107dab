package fleet

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/kubelet/config/v1beta1"

	"github.com/kubeletcfg/kubeletcfg/fleet/fleettest"
	"github.com/kubeletcfg/kubeletcfg/internal/printer"
)

// distinctFleet is n nodes of one configuration, each serving its own
// providerID, two drifted, one unreadable.
func distinctFleet(t testing.TB, n int) []fleettest.Node {
	sock := "unix:///run/containerd/containerd.sock"
	var nodes []fleettest.Node
	for i := range n {
		maxPods := int32(110)
		if i%500 == 7 {
			maxPods = 250
		}
		body := fleettest.KubeadmNode(t, "1.37", sock, func(c *v1beta1.KubeletConfiguration) {
			c.ProviderID = fmt.Sprintf("sim://node-%05d", i)
			c.MaxPods = maxPods
		})
		nodes = append(nodes, fleettest.Node{Name: fmt.Sprintf("node-%05d", i), Version: "v1.37.2", Ready: "True", Answer: fleettest.Serves(body)})
	}
	nodes = append(nodes, fleettest.Node{Name: "gone", Version: "v1.37.2", Ready: "False",
		Answer: fleettest.ProxyError(503, "error trying to reach service: dial tcp 10.213.1.9:10250: connect: connection refused")})
	return nodes
}

// A scan that keeps its rows in a file gives the report a scan in memory
// gives, and its JSON is what -o json prints of a report (printer's),
// node for node; an empty report's lists are [] as printer prints them.
func TestScanSpillGivesTheSameReport(t *testing.T) {
	api := fleettest.NewAPIServer(t, "v1.37.2", "", distinctFleet(t, 40))
	mem, err := Scan(context.Background(), Options{Kubeconfig: api.Kubeconfig, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	spill, err := Scan(context.Background(), Options{Kubeconfig: api.Kubeconfig, Timeout: time.Second, Spill: true})
	if err != nil {
		t.Fatal(err)
	}
	defer spill.Close()
	if spill.Nodes != nil || spill.Total() != 41 || spill.Read() != 40 || !spill.Drift() {
		t.Errorf("spilled report: %d nodes held, total %d, read %d, drift %v", len(spill.Nodes), spill.Total(), spill.Read(), spill.Drift())
	}
	if !reflect.DeepEqual(mem.Groups, spill.Groups) || !reflect.DeepEqual(mem.Skew, spill.Skew) {
		t.Errorf("groups or skew differ:\n%+v\n%+v", mem.Groups, spill.Groups)
	}
	mem.Concurrency = spill.Concurrency // how the two scans were paced differs
	var wantBuf bytes.Buffer
	if err := printer.WriteJSON(&wantBuf, mem); err != nil {
		t.Fatal(err)
	}
	want := wantBuf.Bytes()
	var got bytes.Buffer
	if err := spill.WriteJSON(&got); err != nil {
		t.Fatal(err)
	}
	if got.String() != string(want) {
		at := 0
		for at < min(got.Len(), len(want)) && got.Bytes()[at] == want[at] {
			at++
		}
		from := max(0, at-300)
		t.Errorf("streamed JSON differs from printer's at byte %d:\n%s\nwant\n%s", at, got.Bytes()[from:min(got.Len(), at+300)], want[from:min(len(want), at+300)])
	}
	var memJSON bytes.Buffer
	if err := mem.WriteJSON(&memJSON); err != nil || memJSON.String() != string(want) {
		t.Errorf("a report in memory streamed: %v", err)
	}
	if d := byName(mem)["node-00007"]; d.Group != 2 || d.Matches || d.Sets["maxPods"] != float64(250) {
		t.Errorf("node-00007: %+v", d)
	}
	empty := &Report{}
	var e bytes.Buffer
	var eWant bytes.Buffer
	if err := empty.WriteJSON(&e); err != nil || !bytes.Contains(e.Bytes(), []byte(`"nodes": [],`)) || printer.WriteJSON(&eWant, empty) != nil || e.String() != eWant.String() {
		t.Errorf("no nodes: %v\n%s\nwant\n%s", err, e.String(), eWant.String())
	}
}

// Nodes are listed a page at a time, the total known from the API
// server's count of what is left; a group counts a field's values one by
// one up to maxValues, the rest together.
func TestScanPagesAndCountsValues(t *testing.T) {
	nodes := distinctFleet(t, 2*listPage+200)
	api := fleettest.NewAPIServer(t, "v1.37.2", "", nodes)
	var bad atomic.Int32
	rep, err := Scan(context.Background(), Options{Kubeconfig: api.Kubeconfig, Timeout: time.Second, Spill: true,
		Progress: func(done, total int) {
			if total != len(nodes) {
				bad.Add(1)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer rep.Close()
	if api.Pages.Load() != 3 || bad.Load() != 0 {
		t.Errorf("%d list requests, %d progress calls with another total", api.Pages.Load(), bad.Load())
	}
	g := rep.Groups[0]
	if g.Count != len(nodes)-4 || len(g.PerNode["providerID"]) != maxValues || g.PerNodeMore["providerID"] != g.Count-maxValues {
		t.Errorf("group 1: %d nodes, %d providerIDs counted, %d more", g.Count, len(g.PerNode["providerID"]), g.PerNodeMore["providerID"])
	}
	seen := 0
	last := ""
	if err := rep.EachNode(func(n Node) error {
		if n.Name <= last {
			t.Errorf("%s after %s", n.Name, last)
		}
		last = n.Name
		seen++
		return nil
	}); err != nil || seen != len(nodes) {
		t.Errorf("EachNode gave %d of %d nodes: %v", seen, len(nodes), err)
	}
}

// Through the proxy, an API server that answers slower the more reads it
// has in flight gets fewer at once.
func TestScanSlowsDownWithTheAPIServer(t *testing.T) {
	api := fleettest.NewAPIServer(t, "v1.37.2", "", distinctFleet(t, 400))
	api.Delay = func(inFlight int) time.Duration {
		if inFlight > 4 {
			return time.Duration(inFlight) * 5 * time.Millisecond
		}
		return time.Millisecond
	}
	rep, err := Scan(context.Background(), Options{Kubeconfig: api.Kubeconfig, Timeout: 5 * time.Second, Concurrency: 16, Spill: true})
	if err != nil {
		t.Fatal(err)
	}
	defer rep.Close()
	if c := rep.Concurrency; c == nil || c.Max != 16 || c.Final >= 16 || c.BaseLatency <= 0 {
		t.Errorf("concurrency: %+v, want fewer than 16 at the end", c)
	}
}

func TestLimiter(t *testing.T) {
	l := newLimiter(16)
	feed := func(d time.Duration) {
		for range limiterWindow {
			l.acquire(context.Background())
			l.release(d, true)
		}
	}
	if l.limit != limiterStart {
		t.Fatalf("starts at %d", l.limit)
	}
	feed(10 * time.Millisecond) // the pace, at 4
	feed(15 * time.Millisecond) // within 1.5 times: doubles
	if l.limit != 16 {
		t.Fatalf("limit %d after reads at the pace, want 16", l.limit)
	}
	feed(25 * time.Millisecond)
	feed(25 * time.Millisecond)
	if l.limit != 9 || l.lowest != limiterStart {
		t.Errorf("limit %d (lowest %d) after two slow windows, want 16*3/4*3/4 = 9", l.limit, l.lowest)
	}
	for range 10 {
		feed(100 * time.Millisecond)
	}
	if l.limit != limiterMin || l.lowest != limiterMin {
		t.Errorf("limit %d (lowest %d) after many slow windows, want %d", l.limit, l.lowest, limiterMin)
	}
	feed(12 * time.Millisecond)
	l.acquire(context.Background())
	l.release(time.Hour, false) // a failed read says nothing
	if l.limit != limiterMin+1 {
		t.Errorf("limit %d after a window at the pace again, want %d (one more once slowed)", l.limit, limiterMin+1)
	}
	var nilLimiter *limiter
	nilLimiter.acquire(context.Background())
	nilLimiter.release(time.Second, true)
}
