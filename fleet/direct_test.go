package fleet

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/kubeletcfg/kubeletcfg/fleet/fleettest"
)

// Read directly, each kubelet on its own port, certificate verified: the
// nodes are grouped by configuration and flags; what a node's version does
// not serve, or its kubelet refuses, is said per node with what it needs.
func TestScanDirectWithFlags(t *testing.T) {
	sock := "unix:///run/containerd/containerd.sock"
	plain := fleettest.Serves(fleettest.KubeadmNode(t, "1.37", sock, nil))
	flags := func(ip string, more map[string]string) func(int, http.ResponseWriter) {
		set := map[string]string{"config": "/var/lib/kubelet/config.yaml", "kubeconfig": "/etc/kubernetes/kubelet.conf", "node-ip": ip}
		for k, v := range more {
			set[k] = v
		}
		return fleettest.Flagz(t, "1.37", set)
	}
	nodes := []fleettest.Node{
		{Name: "a-0", Version: "v1.37.2", Ready: "True", Answer: plain, Flagz: flags("10.0.0.10", nil)},
		{Name: "a-1", Version: "v1.37.2", Ready: "True", Answer: plain, Flagz: flags("10.0.0.11", nil)},
		{Name: "a-2", Version: "v1.37.2", Ready: "True", Answer: plain, Flagz: flags("10.0.0.12", nil)},
		{Name: "b-0", Version: "v1.37.2", Ready: "True", Answer: plain, Flagz: flags("10.0.0.20", map[string]string{"node-labels": "team=b"})},
		{Name: "c-0", Version: "v1.35.4", Ready: "True", Answer: fleettest.Serves(fleettest.KubeadmNode(t, "1.35", sock, nil))},
		{Name: "old", Version: "v1.31.9", Ready: "True", Answer: fleettest.Serves(fleettest.KubeadmNode(t, "1.31", sock, nil))},
		{Name: "rbac", Version: "v1.37.2", Ready: "True", Answer: func(_ int, w http.ResponseWriter) {
			http.Error(w, "Forbidden (user=viewer, verb=get, resource=nodes, subresource(s)=[configz proxy])", http.StatusForbidden)
		}},
		{Name: "flagz-refused", Version: "v1.37.2", Ready: "True", Answer: plain, Flagz: func(_ int, w http.ResponseWriter) {
			http.Error(w, "Forbidden (user=viewer, verb=get, resource=nodes, subresource(s)=[configz])", http.StatusForbidden)
		}},
	}
	api := fleettest.NewAPIServerWithKubelets(t, "v1.37.2", "", nodes)
	rep, err := Scan(context.Background(), Options{Kubeconfig: api.Kubeconfig, Direct: true, KubeletCA: api.KubeletCA})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Via != "direct" {
		t.Errorf("via %q", rep.Via)
	}
	got := byName(rep)
	for _, n := range nodes {
		if api.Direct[n.Name].Load() == 0 {
			t.Errorf("%s: its kubelet was not read directly", n.Name)
		}
	}
	a0 := got["a-0"]
	if a0.Unreadable != nil || a0.FlagsUnread != nil || a0.FlagsForm != "config.k8s.io/v1beta1 Flagz" {
		t.Fatalf("a-0: %+v %+v", a0.Unreadable, a0.FlagsUnread)
	}
	var set []string
	for _, f := range a0.Flags {
		set = append(set, f.Name+"="+f.Value)
	}
	if strings.Join(set, " ") != "config=/var/lib/kubelet/config.yaml kubeconfig=/etc/kubernetes/kubelet.conf node-ip=10.0.0.10" {
		t.Errorf("a-0 flags %v", set)
	}
	// Groups: the a-* (node-ip is theirs alone), b-0 (a label more), the
	// nodes whose flags were not read.
	g1 := rep.Groups[0]
	if g1.Count != 3 || !g1.FlagsRead || len(g1.Flags) != 2 || len(g1.PerNodeFlags["node-ip"]) != 3 {
		t.Errorf("group 1: %+v", g1)
	}
	var b *Group
	for i := range rep.Groups {
		if strings.Join(rep.Groups[i].Nodes, ",") == "b-0" {
			b = &rep.Groups[i]
		}
	}
	if b == nil || len(b.FlagsDiffer) != 1 || b.FlagsDiffer[0] != (FlagChange{Name: "node-labels", Old: "", New: "team=b"}) || !b.Matches {
		t.Errorf("b-0's group: %+v", b)
	}
	if !rep.Drift() {
		t.Error("a node with other flags is not drift")
	}
	if u := got["c-0"].FlagsUnread; u == nil || u.Reason != ReasonNotServed || !strings.Contains(u.Message, "ComponentFlagz") {
		t.Errorf("c-0 (1.35): %+v", u)
	}
	if len(got["c-0"].Notes) != 0 {
		t.Errorf("c-0 notes %v", got["c-0"].Notes)
	}
	if notes := strings.Join(got["old"].Notes, " "); !strings.Contains(notes, "kubelet 1.31 authorizes /configz as nodes/proxy only") {
		t.Errorf("old (1.31): notes %q", notes)
	}
	if u := got["rbac"].Unreadable; u == nil || u.Reason != ReasonForbidden || !strings.Contains(u.Message, "needs get nodes/configz (or nodes/proxy)") {
		t.Errorf("rbac: %+v", u)
	}
	if u := got["flagz-refused"].FlagsUnread; u == nil || u.Reason != ReasonForbidden || !strings.Contains(u.Message, "needs get nodes/configz") || got["flagz-refused"].Unreadable != nil {
		t.Errorf("flagz-refused: %+v", u)
	}

	// Without a CA to verify the kubelets with, each node says so.
	rep, err = Scan(context.Background(), Options{Kubeconfig: api.Kubeconfig, Direct: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range rep.Nodes {
		if n.Unreadable == nil || n.Unreadable.Reason != ReasonTLS || !strings.Contains(n.Unreadable.Message, "--kubelet-insecure-skip-tls-verify "+n.Name) {
			t.Errorf("%s without a CA: %+v", n.Name, n.Unreadable)
		}
	}
	// Named per node, read unverified, and said so.
	rep, err = Scan(context.Background(), Options{Kubeconfig: api.Kubeconfig, Direct: true, Insecure: []string{"a-1"}})
	if err != nil {
		t.Fatal(err)
	}
	got = byName(rep)
	if got["a-1"].Unreadable != nil || !strings.Contains(strings.Join(got["a-1"].Notes, " "), "not verified") || got["a-0"].Unreadable == nil {
		t.Errorf("a-1 insecure: %+v %v; a-0 %+v", got["a-1"].Unreadable, got["a-1"].Notes, got["a-0"].Unreadable)
	}

	// Through the proxy the same flags are read.
	rep, err = Scan(context.Background(), Options{Kubeconfig: api.Kubeconfig})
	if err != nil {
		t.Fatal(err)
	}
	if got := byName(rep); len(got["b-0"].Flags) != 4 || rep.Via != "proxy" {
		t.Errorf("through the proxy: %+v", got["b-0"])
	}
}

// A node's error body is the node's (or its proxy's) word: it goes into
// the report bounded and escaped, never as terminal control sequences or
// megabytes.
func TestUnreadableMessageIsBoundedAndEscaped(t *testing.T) {
	body := "\x1b[2J\x1b]0;owned\x07" + strings.Repeat("x", 4<<20)
	status, _ := json.Marshal(map[string]string{"kind": "Status", "message": body})
	for _, b := range []string{body, string(status)} {
		api := fleettest.NewAPIServer(t, "v1.37.2", "", []fleettest.Node{{Name: "evil", Version: "v1.37.2", Ready: "True",
			Answer: func(_ int, w http.ResponseWriter) {
				w.WriteHeader(http.StatusBadGateway)
				w.Write([]byte(b))
			}}})
		rep, err := Scan(context.Background(), Options{Kubeconfig: api.Kubeconfig})
		if err != nil {
			t.Fatal(err)
		}
		u := rep.Nodes[0].Unreadable
		// Shown escaped: by kubeletcfg (\x1b), or as the JSON of a Status
		// too long to read whole (\u001b).
		if u == nil || len(u.Message) > 1024 || strings.ContainsAny(u.Message, "\x1b\x07") ||
			!(strings.Contains(u.Message, `\x1b[2J`) || strings.Contains(u.Message, `\u001b[2J`)) {
			t.Errorf("a %d-byte body: %+v", len(b), u)
		}
	}
}
