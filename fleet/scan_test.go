package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/kubelet/config/v1beta1"

	"github.com/kubeletcfg/kubeletcfg/config"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

// kubeadmConfigMap is the KubeletConfiguration as kubeadm 1.37 writes it into
// kube-system/kubelet-config: its own defaults, zero values for the rest.
const kubeadmConfigMap = `apiVersion: kubelet.config.k8s.io/v1beta1
authentication:
  anonymous:
    enabled: false
  webhook:
    cacheTTL: 0s
    enabled: true
  x509:
    clientCAFile: /etc/kubernetes/pki/ca.crt
authorization:
  mode: Webhook
  webhook:
    cacheAuthorizedTTL: 0s
    cacheUnauthorizedTTL: 0s
cgroupDriver: systemd
clusterDNS:
- 10.96.0.10
clusterDomain: cluster.local
containerRuntimeEndpoint: ""
cpuManagerReconcilePeriod: 0s
crashLoopBackOff: {}
evictionPressureTransitionPeriod: 0s
fileCheckFrequency: 0s
healthzBindAddress: 127.0.0.1
healthzPort: 10248
httpCheckFrequency: 0s
imageMaximumGCAge: 0s
imageMinimumGCAge: 0s
kind: KubeletConfiguration
logging:
  flushFrequency: 0
  options:
    json:
      infoBufferSize: "0"
    text:
      infoBufferSize: "0"
  verbosity: 0
memorySwap: {}
nodeStatusReportFrequency: 0s
nodeStatusUpdateFrequency: 0s
rotateCertificates: true
runtimeRequestTimeout: 0s
shutdownGracePeriod: 0s
shutdownGracePeriodCriticalPods: 0s
staticPodPath: /etc/kubernetes/manifests
streamingConnectionIdleTimeout: 0s
syncFrequency: 0s
volumeStatsAggPeriod: 0s
`

// kubeadmNode is what a kubeadm node of a kubelet minor serves on /configz:
// the ConfigMap's configuration, its own containerRuntimeEndpoint and
// resolvConf, and edit on top.
func kubeadmNode(t *testing.T, minor, criSocket string, edit func(*v1beta1.KubeletConfiguration)) []byte {
	t.Helper()
	v, err := schema.Resolve(minor)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := config.Decode([]byte(kubeadmConfigMap), config.DecodeOptions{Version: v, AllowUnknownFields: true})
	if err != nil {
		t.Fatal(err)
	}
	cfg := doc.Config
	cfg.ContainerRuntimeEndpoint = criSocket
	cfg.ResolverConfig = ptr("/run/systemd/resolve/resolv.conf")
	if edit != nil {
		edit(cfg)
	}
	js, err := config.JSON(config.Default(cfg, v), v)
	if err != nil {
		t.Fatal(err)
	}
	return []byte(`{"kubeletconfig":` + string(js) + `}`)
}

func ptr[T any](v T) *T { return &v }

// fakeNode is a Node the fake API server lists, and how its proxy answers.
type fakeNode struct {
	name, version string
	ready         corev1.ConditionStatus
	labels        map[string]string
	// answer is what the node proxy answers for /configz, per attempt.
	answer func(attempt int, w http.ResponseWriter)
}

func serves(body []byte) func(int, http.ResponseWriter) {
	return func(_ int, w http.ResponseWriter) { w.Write(body) }
}

// proxyError is the API server's answer when it cannot reach the kubelet.
func proxyError(code int, message string) func(int, http.ResponseWriter) {
	return func(_ int, w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		json.NewEncoder(w).Encode(metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
			Status: "Failure", Message: message, Code: int32(code)})
	}
}

// fakeAPIServer stands in for kube-apiserver: /version, the Node list (in
// pages), the node proxy's /configz and kubeadm's ConfigMap.
type fakeAPIServer struct {
	*httptest.Server
	kubeconfig string
	mu         sync.Mutex
	attempts   map[string]int
	pages      atomic.Int32
}

func newFakeAPIServer(t *testing.T, version string, configMap string, nodes []fakeNode) *fakeAPIServer {
	t.Helper()
	f := &fakeAPIServer{attempts: map[string]int{}}
	byName := map[string]fakeNode{}
	for _, n := range nodes {
		byName[n.name] = n
	}
	f.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := r.URL.Path
		switch {
		case path == "/version":
			fmt.Fprintf(w, `{"major":"1","minor":"37","gitVersion":%q}`, version)
		case path == "/api/v1/nodes":
			f.pages.Add(1)
			sel, err := labels.Parse(r.URL.Query().Get("labelSelector"))
			if err != nil {
				proxyError(400, err.Error())(0, w)
				return
			}
			limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
			from, _ := strconv.Atoi(r.URL.Query().Get("continue"))
			list := corev1.NodeList{TypeMeta: metav1.TypeMeta{Kind: "NodeList", APIVersion: "v1"}}
			for i := from; i < len(nodes); i++ {
				if limit > 0 && len(list.Items) == limit {
					list.Continue = strconv.Itoa(i)
					break
				}
				n := nodes[i]
				if !sel.Matches(labels.Set(n.labels)) {
					continue
				}
				obj := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.name, Labels: n.labels}}
				obj.Status.NodeInfo.KubeletVersion = n.version
				if n.ready != "" {
					obj.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: n.ready, Reason: "KubeletNotReady", Message: "container runtime is down"}}
				}
				list.Items = append(list.Items, obj)
			}
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(list)
		case strings.HasPrefix(path, "/api/v1/nodes/") && strings.HasSuffix(path, "/proxy/configz"):
			name := strings.TrimSuffix(strings.TrimPrefix(path, "/api/v1/nodes/"), "/proxy/configz")
			n, ok := byName[name]
			if !ok {
				proxyError(404, fmt.Sprintf("nodes %q not found", name))(0, w)
				return
			}
			f.mu.Lock()
			f.attempts[name]++
			attempt := f.attempts[name]
			f.mu.Unlock()
			n.answer(attempt, w)
		case path == "/api/v1/namespaces/kube-system/configmaps/kubelet-config" && configMap != "":
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(corev1.ConfigMap{TypeMeta: metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"},
				ObjectMeta: metav1.ObjectMeta{Name: "kubelet-config", Namespace: "kube-system"},
				Data:       map[string]string{"kubelet": configMap}})
		default:
			proxyError(404, "the server could not find the requested resource")(0, w)
		}
	}))
	t.Cleanup(f.Close)
	f.kubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(f.kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "`+f.URL+`", insecure-skip-tls-verify: true}
users:
- name: u
  user: {token: t}
contexts:
- name: ctx
  context: {cluster: c, user: u}
current-context: ctx
`), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

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
	plain := kubeadmNode(t, "1.37", containerd, nil)
	drifted := kubeadmNode(t, "1.37", containerd, func(c *v1beta1.KubeletConfiguration) { c.MaxPods = 250 })
	var nodes []fakeNode
	for i := 0; i < 7; i++ {
		nodes = append(nodes, fakeNode{name: fmt.Sprintf("a-%d", i), version: "v1.37.2", ready: "True", answer: serves(plain)})
	}
	nodes = append(nodes,
		// another runtime socket is the node's own business, not drift
		fakeNode{name: "crio", version: "v1.37.2", ready: "True", answer: serves(kubeadmNode(t, "1.37", crio, nil))},
		// a 1.36 kubelet set up alike: its own defaults, same group
		fakeNode{name: "old", version: "v1.36.4", ready: "True", answer: serves(kubeadmNode(t, "1.36", containerd, nil))},
		fakeNode{name: "d-1", version: "v1.37.2", ready: "True", answer: serves(drifted)},
		fakeNode{name: "d-2", version: "v1.37.2", ready: "True", answer: serves(drifted)},
		fakeNode{name: "flaky", version: "v1.37.2", ready: "True", answer: func(attempt int, w http.ResponseWriter) {
			if attempt == 1 {
				proxyError(503, "error trying to reach service: dial tcp 10.213.1.2:10250: connect: connection refused")(attempt, w)
				return
			}
			w.Write(plain)
		}},
		fakeNode{name: "refused", version: "v1.37.2", ready: "True",
			answer: proxyError(503, "error trying to reach service: dial tcp 10.213.1.3:10250: connect: connection refused")},
		fakeNode{name: "down", version: "v1.37.2", ready: "Unknown",
			answer: proxyError(503, "error trying to reach service: dial tcp 10.213.1.4:10250: i/o timeout")},
		fakeNode{name: "rbac", version: "v1.37.2", ready: "True",
			answer: proxyError(403, `nodes "rbac" is forbidden: User "viewer" cannot get resource "nodes/proxy"`)},
		fakeNode{name: "tls", version: "v1.37.2", ready: "True",
			answer: proxyError(503, "error trying to reach service: tls: failed to verify certificate: x509: certificate signed by unknown authority")},
		fakeNode{name: "slow", version: "v1.37.2", ready: "True", answer: func(int, http.ResponseWriter) { time.Sleep(time.Second) }},
		fakeNode{name: "future", version: "v1.99.0", ready: "True", answer: serves(plain)},
		fakeNode{name: "html", version: "v1.37.2", ready: "True", answer: serves([]byte("<html>hello</html>"))},
	)
	api := newFakeAPIServer(t, "v1.37.2", "", nodes)

	var calls atomic.Int32
	rep, err := Scan(context.Background(), Options{Kubeconfig: api.kubeconfig, Timeout: 200 * time.Millisecond, Concurrency: 4,
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
	if api.pages.Load() != 1 {
		t.Errorf("%d list requests for %d nodes", api.pages.Load(), len(nodes))
	}
}

func TestScanAgainstTheKubeadmConfigMap(t *testing.T) {
	containerd := "unix:///run/containerd/containerd.sock"
	nodes := []fakeNode{
		{name: "n-1", version: "v1.37.2", ready: "True", answer: serves(kubeadmNode(t, "1.37", containerd, nil))},
		{name: "n-2", version: "v1.37.2", ready: "True", answer: serves(kubeadmNode(t, "1.37", "unix:///var/run/crio/crio.sock", func(c *v1beta1.KubeletConfiguration) {
			c.ResolverConfig = ptr("/etc/resolv.conf") // no systemd-resolved on this node
		}))},
		{name: "n-3", version: "v1.36.1", ready: "True", answer: serves(kubeadmNode(t, "1.36", containerd, nil))},
		{name: "n-4", version: "v1.37.2", ready: "True", answer: serves(kubeadmNode(t, "1.37", containerd, func(c *v1beta1.KubeletConfiguration) {
			c.MaxPods = 250
			c.RotateCertificates = false
		}))},
	}
	api := newFakeAPIServer(t, "v1.37.2", kubeadmConfigMap, nodes)
	rep, err := Scan(context.Background(), Options{Kubeconfig: api.kubeconfig, AgainstConfigMap: true})
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
	if err := os.WriteFile(file, []byte(kubeadmConfigMap+"maxPods: 250\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err = Scan(context.Background(), Options{Kubeconfig: api.kubeconfig, AgainstFile: file})
	if err != nil {
		t.Fatal(err)
	}
	got = byName(rep)
	if rep.Reference != file || got["n-1"].Matches || len(got["n-1"].Differs) != 1 || got["n-1"].Differs[0].Path != "maxPods" {
		t.Errorf("n-1 against %s: %+v", file, got["n-1"].Differs)
	}

	// No ConfigMap: the scan cannot compare, and says with what.
	bare := newFakeAPIServer(t, "v1.37.2", "", nodes)
	if _, err := Scan(context.Background(), Options{Kubeconfig: bare.kubeconfig, AgainstConfigMap: true}); err == nil ||
		!strings.Contains(err.Error(), "kube-system/kubelet-config") {
		t.Errorf("missing ConfigMap: %v", err)
	}
	if _, err := Scan(context.Background(), Options{Kubeconfig: bare.kubeconfig, AgainstFile: filepath.Join(t.TempDir(), "nope.yaml")}); err == nil ||
		!strings.Contains(err.Error(), "nope.yaml") {
		t.Errorf("missing file: %v", err)
	}
}

func TestScanSkew(t *testing.T) {
	containerd := "unix:///run/containerd/containerd.sock"
	nodes := []fakeNode{
		{name: "cur", version: "v1.37.2", ready: "True", answer: serves(kubeadmNode(t, "1.37", containerd, nil))},
		{name: "n-1", version: "v1.36.0", ready: "True", answer: serves(kubeadmNode(t, "1.36", containerd, nil))},
		{name: "n-3", version: "v1.34.5", ready: "True", answer: serves(kubeadmNode(t, "1.34", containerd, nil))},
		{name: "n-3b", version: "v1.33.7", ready: "True", answer: serves(kubeadmNode(t, "1.33", containerd, nil))},
		{name: "n-4", version: "v1.32.1", ready: "True", answer: serves(kubeadmNode(t, "1.32", containerd, nil))},
		{name: "newer", version: "v1.37.2", ready: "True", answer: serves(kubeadmNode(t, "1.37", containerd, nil))},
	}
	api := newFakeAPIServer(t, "v1.36.3", "", nodes)
	rep, err := Scan(context.Background(), Options{Kubeconfig: api.kubeconfig})
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
