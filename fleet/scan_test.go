package fleet

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/kubelet/config/v1beta1"

	"github.com/kubeletcfg/kubeletcfg/fleet/fleettest"
)

func byName(rep *Report) map[string]Node {
	out := map[string]Node{}
	for _, n := range rep.Nodes {
		out[n.Name] = n
	}
	return out
}

func TestScanGroupsAndUnreadable(t *testing.T) {
	containerd := "unix:///run/containerd/containerd.sock"
	crio := "unix:///var/run/crio/crio.sock"
	plain := fleettest.KubeadmNode(t, "1.37", containerd, nil)
	drifted := fleettest.KubeadmNode(t, "1.37", containerd, func(c *v1beta1.KubeletConfiguration) { c.MaxPods = 250 })
	var nodes []fleettest.Node
	for i := 0; i < 7; i++ {
		nodes = append(nodes, fleettest.Node{Name: fmt.Sprintf("a-%d", i), Version: "v1.37.2", Ready: "True", Answer: fleettest.Serves(plain)})
	}
	nodes = append(nodes,
		// another runtime socket is the node's own business, not drift
		fleettest.Node{Name: "crio", Version: "v1.37.2", Ready: "True", Answer: fleettest.Serves(fleettest.KubeadmNode(t, "1.37", crio, func(c *v1beta1.KubeletConfiguration) {
			c.ProviderID = "aws:///eu-west-1a/i-0123456789"
		}))},
		// a 1.36 kubelet set up alike: its own defaults, same group
		fleettest.Node{Name: "old", Version: "v1.36.4", Ready: "True", Answer: fleettest.Serves(fleettest.KubeadmNode(t, "1.36", containerd, nil))},
		fleettest.Node{Name: "d-1", Version: "v1.37.2", Ready: "True", Answer: fleettest.Serves(drifted)},
		fleettest.Node{Name: "d-2", Version: "v1.37.2", Ready: "True", Answer: fleettest.Serves(drifted)},
		fleettest.Node{Name: "flaky", Version: "v1.37.2", Ready: "True", Answer: func(attempt int, w http.ResponseWriter) {
			if attempt == 1 {
				fleettest.ProxyError(503, "error trying to reach service: dial tcp 10.213.1.2:10250: connect: connection refused")(attempt, w)
				return
			}
			w.Write(plain)
		}},
		fleettest.Node{Name: "refused", Version: "v1.37.2", Ready: "True",
			Answer: fleettest.ProxyError(503, "error trying to reach service: dial tcp 10.213.1.3:10250: connect: connection refused")},
		fleettest.Node{Name: "down", Version: "v1.37.2", Ready: "Unknown",
			Answer: fleettest.ProxyError(503, "error trying to reach service: dial tcp 10.213.1.4:10250: i/o timeout")},
		fleettest.Node{Name: "rbac", Version: "v1.37.2", Ready: "True",
			Answer: fleettest.ProxyError(403, `nodes "rbac" is forbidden: User "viewer" cannot get resource "nodes/proxy"`)},
		fleettest.Node{Name: "tls", Version: "v1.37.2", Ready: "True",
			Answer: fleettest.ProxyError(503, "error trying to reach service: tls: failed to verify certificate: x509: certificate signed by unknown authority")},
		fleettest.Node{Name: "slow", Version: "v1.37.2", Ready: "True", Answer: func(int, http.ResponseWriter) { time.Sleep(time.Second) }},
		fleettest.Node{Name: "future", Version: "v1.99.0", Ready: "True", Answer: fleettest.Serves(plain)},
		fleettest.Node{Name: "html", Version: "v1.37.2", Ready: "True", Answer: fleettest.Serves([]byte("<html>hello</html>"))},
	)
	api := fleettest.NewAPIServer(t, "v1.37.2", "", nodes)

	var calls atomic.Int32
	rep, err := Scan(context.Background(), Options{Kubeconfig: api.Kubeconfig, Timeout: 200 * time.Millisecond, Concurrency: 4,
		Progress: func(done, total int) {
			calls.Add(1)
			if total != len(nodes) || done > total {
				t.Errorf("progress %d/%d, want of %d", done, total, len(nodes))
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if int(calls.Load()) != len(nodes) {
		t.Errorf("progress called %d times, want once per node (%d)", calls.Load(), len(nodes))
	}
	if rep.APIServerVersion != "v1.37.2" || rep.Reference != "" {
		t.Errorf("API server %q, reference %q", rep.APIServerVersion, rep.Reference)
	}
	if len(rep.Groups) != 2 {
		t.Fatalf("want 2 groups, got %+v", rep.Groups)
	}
	g1, g2 := rep.Groups[0], rep.Groups[1]
	if g1.Count != 10 || !g1.Matches || strings.Join(g1.Nodes, ",") != "a-0,a-1,a-2,a-3,a-4,a-5,a-6,crio,flaky,old" {
		t.Errorf("group 1: %+v", g1)
	}
	if fmt.Sprint(g1.Versions) != "[{1.36 1} {1.37 9}]" {
		t.Errorf("group 1 versions: %v", g1.Versions)
	}
	if vals := g1.PerNode["containerRuntimeEndpoint"]; len(vals) != 2 || vals[0].Count != 9 || vals[1].Value != `"`+crio+`"` {
		t.Errorf("group 1 per-node containerRuntimeEndpoint: %+v", vals)
	}
	if vals := g1.PerNode["providerID"]; len(vals) != 1 || vals[0].Count != 1 {
		t.Errorf("group 1 per-node providerID: %+v", vals)
	}
	if g2.Count != 2 || g2.Matches || len(g2.Differs) != 1 || g2.Differs[0].Path != "maxPods" ||
		g2.Differs[0].Old != float64(110) || g2.Differs[0].New != float64(250) {
		t.Errorf("group 2: want maxPods 110 -> 250, got %+v", g2)
	}
	if !rep.Drift() || rep.Read() != 12 {
		t.Errorf("drift %v, read %d; want drift and 12 read", rep.Drift(), rep.Read())
	}

	got := byName(rep)
	for name, want := range map[string]string{
		"refused": ReasonRefused, "down": ReasonUnreachable, "rbac": ReasonForbidden, "tls": ReasonTLS,
		"slow": ReasonTimeout, "future": ReasonVersion, "html": ReasonAnswer,
	} {
		n := got[name]
		if n.Unreadable == nil || n.Unreadable.Reason != want {
			t.Errorf("%s: want unreadable (%s), got %+v", name, want, n.Unreadable)
		}
	}
	for name, want := range map[string]int{"flaky": 2, "refused": 2, "slow": 2, "down": 1, "rbac": 1, "tls": 1, "a-0": 1} {
		if got[name].Attempts != want {
			t.Errorf("%s: %d attempts, want %d", name, got[name].Attempts, want)
		}
	}
	if got["down"].Ready != "Unknown" || !strings.Contains(got["down"].ReadyReason, "container runtime is down") {
		t.Errorf("down: ready %q (%s)", got["down"].Ready, got["down"].ReadyReason)
	}
	if !strings.Contains(got["rbac"].Unreadable.Message, "nodes/proxy") {
		t.Errorf("rbac: the API server's message is lost: %s", got["rbac"].Unreadable.Message)
	}
	if got["d-1"].Group != 2 || got["d-1"].Sets["maxPods"] != float64(250) || got["a-0"].Sets["cgroupDriver"] != "systemd" {
		t.Errorf("per node: d-1 %+v, a-0 %+v", got["d-1"], got["a-0"])
	}
	if api.Pages.Load() != 1 {
		t.Errorf("%d list requests for %d nodes", api.Pages.Load(), len(nodes))
	}
}

func TestScanAgainstTheKubeadmConfigMap(t *testing.T) {
	containerd := "unix:///run/containerd/containerd.sock"
	nodes := []fleettest.Node{
		{Name: "n-1", Version: "v1.37.2", Ready: "True", Answer: fleettest.Serves(fleettest.KubeadmNode(t, "1.37", containerd, nil))},
		{Name: "n-2", Version: "v1.37.2", Ready: "True", Answer: fleettest.Serves(fleettest.KubeadmNode(t, "1.37", "unix:///var/run/crio/crio.sock", func(c *v1beta1.KubeletConfiguration) {
			c.ResolverConfig = fleettest.Ptr("/etc/resolv.conf") // no systemd-resolved on this node
		}))},
		{Name: "n-3", Version: "v1.36.1", Ready: "True", Answer: fleettest.Serves(fleettest.KubeadmNode(t, "1.36", containerd, nil))},
		{Name: "n-4", Version: "v1.37.2", Ready: "True", Answer: fleettest.Serves(fleettest.KubeadmNode(t, "1.37", containerd, func(c *v1beta1.KubeletConfiguration) {
			c.MaxPods = 250
			c.RotateCertificates = false
		}))},
	}
	api := fleettest.NewAPIServer(t, "v1.37.2", fleettest.KubeadmConfigMap, nodes)
	rep, err := Scan(context.Background(), Options{Kubeconfig: api.Kubeconfig, AgainstConfigMap: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Reference != "ConfigMap kube-system/kubelet-config" {
		t.Errorf("reference %q", rep.Reference)
	}
	got := byName(rep)
	for _, name := range []string{"n-1", "n-2", "n-3"} {
		if !got[name].Matches || len(got[name].Differs) != 0 {
			t.Errorf("%s runs what the ConfigMap says (its runtime socket and resolv.conf are its own): %+v", name, got[name].Differs)
		}
	}
	if got["n-2"].PerNode["resolvConf"] != "/etc/resolv.conf" || got["n-1"].PerNode["resolvConf"] != "/run/systemd/resolve/resolv.conf" {
		t.Errorf("per-node values: n-1 %v, n-2 %v", got["n-1"].PerNode, got["n-2"].PerNode)
	}
	var differ []string
	for _, c := range got["n-4"].Differs {
		differ = append(differ, fmt.Sprintf("%s %v->%v", c.Path, c.Old, c.New))
	}
	if strings.Join(differ, ", ") != "maxPods 110->250, rotateCertificates true-><nil>" {
		t.Errorf("n-4 differs from the ConfigMap in %v", differ)
	}
	if len(rep.Groups) != 2 || rep.Groups[0].Count != 3 || !rep.Groups[0].Matches || rep.Groups[1].Matches || !rep.Drift() {
		t.Errorf("groups %+v", rep.Groups)
	}

	// The same fleet against a file that sets what n-4 runs.
	file := filepath.Join(t.TempDir(), "intended.yaml")
	if err := os.WriteFile(file, []byte(fleettest.KubeadmConfigMap+"maxPods: 250\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err = Scan(context.Background(), Options{Kubeconfig: api.Kubeconfig, AgainstFile: file})
	if err != nil {
		t.Fatal(err)
	}
	got = byName(rep)
	if rep.Reference != file || got["n-1"].Matches || len(got["n-1"].Differs) != 1 || got["n-1"].Differs[0].Path != "maxPods" {
		t.Errorf("n-1 against %s: %+v", file, got["n-1"].Differs)
	}

	// No ConfigMap: the scan cannot compare, and says with what.
	bare := fleettest.NewAPIServer(t, "v1.37.2", "", nodes)
	if _, err := Scan(context.Background(), Options{Kubeconfig: bare.Kubeconfig, AgainstConfigMap: true}); err == nil ||
		!strings.Contains(err.Error(), "kube-system/kubelet-config") {
		t.Errorf("missing ConfigMap: %v", err)
	}
	if _, err := Scan(context.Background(), Options{Kubeconfig: bare.Kubeconfig, AgainstFile: filepath.Join(t.TempDir(), "nope.yaml")}); err == nil ||
		!strings.Contains(err.Error(), "nope.yaml") {
		t.Errorf("missing file: %v", err)
	}
}

func TestScanSkew(t *testing.T) {
	containerd := "unix:///run/containerd/containerd.sock"
	nodes := []fleettest.Node{
		{Name: "cur", Version: "v1.37.2", Ready: "True", Answer: fleettest.Serves(fleettest.KubeadmNode(t, "1.37", containerd, nil))},
		{Name: "n-1", Version: "v1.36.0", Ready: "True", Answer: fleettest.Serves(fleettest.KubeadmNode(t, "1.36", containerd, nil))},
		{Name: "n-3", Version: "v1.34.5", Ready: "True", Answer: fleettest.Serves(fleettest.KubeadmNode(t, "1.34", containerd, nil))},
		{Name: "n-3b", Version: "v1.33.7", Ready: "True", Answer: fleettest.Serves(fleettest.KubeadmNode(t, "1.33", containerd, nil))},
		{Name: "n-4", Version: "v1.32.1", Ready: "True", Answer: fleettest.Serves(fleettest.KubeadmNode(t, "1.32", containerd, nil))},
		{Name: "newer", Version: "v1.37.2", Ready: "True", Answer: fleettest.Serves(fleettest.KubeadmNode(t, "1.37", containerd, nil))},
	}
	api := fleettest.NewAPIServer(t, "v1.36.3", "", nodes)
	rep, err := Scan(context.Background(), Options{Kubeconfig: api.Kubeconfig})
	if err != nil {
		t.Fatal(err)
	}
	got := byName(rep)
	for _, name := range []string{"n-1", "n-3", "n-3b"} {
		if got[name].Skew != "" {
			t.Errorf("%s (%s) is within the skew of a 1.36 API server: %q", name, got[name].KubeletVersion, got[name].Skew)
		}
	}
	if want := "4 minors older than the API server (1.36); kubelet 1.32 may be at most 3 older"; got["n-4"].Skew != want {
		t.Errorf("n-4 (1.32 against 1.36): %q, want %q", got["n-4"].Skew, want)
	}
	if !strings.Contains(got["newer"].Skew, "newer than the API server") {
		t.Errorf("a 1.37 kubelet under a 1.36 API server: %q", got["newer"].Skew)
	}
	if rep.Skew.APIServerMinor != "1.36" || len(rep.Skew.Minors) != 5 {
		t.Fatalf("skew %+v", rep.Skew)
	}
	for _, m := range rep.Skew.Minors {
		switch m.Minor {
		case "1.32", "1.33", "1.34":
			if len(m.Upgrade) != 1 || len(m.Upgrade[0].Findings) == 0 {
				t.Errorf("%s -> 1.36: want findings, got %+v", m.Minor, m.Upgrade)
			}
			found := false
			for _, f := range m.Upgrade[0].Findings {
				found = found || f.Subject == "failCgroupV1" && f.Severity == "change" && strings.HasPrefix(f.Message, "false -> true")
			}
			if !found {
				t.Errorf("%s -> 1.36: failCgroupV1's default turns true in 1.35; findings %+v", m.Minor, m.Upgrade[0].Findings)
			}
		case "1.36", "1.37":
			if len(m.Upgrade) != 0 {
				t.Errorf("%s: no upgrade to the API server's minor, got %+v", m.Minor, m.Upgrade)
			}
		}
	}
}
