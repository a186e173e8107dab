// Package fleettest stands in for a cluster in tests of fleet scans: an API
// server that lists Nodes and answers the node proxy's /configz for each as
// told, and the /configz answers of kubeadm nodes.
package fleettest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
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
	"github.com/kubeletcfg/kubeletcfg/internal/testkit"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

// KubeadmConfigMap is the KubeletConfiguration as kubeadm 1.37 writes it into
// kube-system/kubelet-config: its own defaults, zero values for the rest.
const KubeadmConfigMap = `apiVersion: kubelet.config.k8s.io/v1beta1
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

// KubeadmNode is what a kubeadm node of a kubelet minor serves on /configz:
// the ConfigMap's configuration, its own containerRuntimeEndpoint and
// resolvConf, and edit on top.
func KubeadmNode(t testing.TB, minor, criSocket string, edit func(*v1beta1.KubeletConfiguration)) []byte {
	t.Helper()
	v, err := schema.Resolve(minor)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := config.Decode([]byte(KubeadmConfigMap), config.DecodeOptions{Version: v, AllowUnknownFields: true})
	if err != nil {
		t.Fatal(err)
	}
	cfg := doc.Config
	cfg.ContainerRuntimeEndpoint = criSocket
	cfg.ResolverConfig = Ptr("/run/systemd/resolve/resolv.conf")
	if edit != nil {
		edit(cfg)
	}
	js, err := config.JSON(config.Default(cfg, v), v)
	if err != nil {
		t.Fatal(err)
	}
	return []byte(`{"kubeletconfig":` + string(js) + `}`)
}

func Ptr[T any](v T) *T { return &v }

// Node is a Node the fake API server lists, and how its proxy answers.
type Node struct {
	Name, Version string
	// Runtime is the Node's containerRuntimeVersion ("containerd://2.4.2").
	Runtime string
	Ready   corev1.ConditionStatus
	Labels  map[string]string
	// Answer is what the node proxy answers for /configz, per attempt.
	Answer func(attempt int, w http.ResponseWriter)
	// Flagz is what it answers for /flagz (nil: 404, as a kubelet that
	// does not serve it).
	Flagz func(attempt int, w http.ResponseWriter)
}

// Flagz is a kubelet's structured /flagz answer with these flags set on
// top of kubelet minor's defaults.
func Flagz(t testing.TB, minor string, set map[string]string) func(int, http.ResponseWriter) {
	t.Helper()
	v, err := schema.Resolve(minor)
	if err != nil {
		t.Fatal(err)
	}
	flags := map[string]string{}
	for _, f := range v.Flags() {
		flags[f.Name] = f.Default
	}
	for k, val := range set {
		flags[k] = val
	}
	body, err := json.Marshal(map[string]any{"kind": "Flagz", "apiVersion": "config.k8s.io/v1beta1", "metadata": map[string]string{"name": "kubelet"}, "flags": flags})
	if err != nil {
		t.Fatal(err)
	}
	return func(_ int, w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json;g=config.k8s.io;v=v1beta1;as=Flagz")
		w.Write(body)
	}
}

func Serves(body []byte) func(int, http.ResponseWriter) {
	return func(_ int, w http.ResponseWriter) { w.Write(body) }
}

// ProxyError is the API server's answer when it cannot reach the kubelet.
func ProxyError(code int, message string) func(int, http.ResponseWriter) {
	return func(_ int, w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		json.NewEncoder(w).Encode(metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
			Status: "Failure", Message: message, Code: int32(code)})
	}
}

// APIServer stands in for kube-apiserver: /version, the Node list (in
// pages), the node proxy's /configz and /flagz, and kubeadm's ConfigMap.
// With kubelets, each Node's kubelet also listens on its own address and
// port, answering alike.
type APIServer struct {
	*httptest.Server
	Kubeconfig string
	// KubeletCA is the CA file that signed the kubelets' serving
	// certificates (with kubelets).
	KubeletCA string
	mu        sync.Mutex
	attempts  map[string]int
	// Pages counts the Node list requests.
	Pages atomic.Int32
	// Direct counts the requests each kubelet got on its own port.
	Direct   map[string]*atomic.Int32
	kubelets map[string]int32 // ports
	// Delay, when set before a scan, holds each proxied request as long as
	// it says for the proxied requests in flight: an API server that slows
	// down under load.
	Delay    func(inFlight int) time.Duration
	inFlight atomic.Int32
	served   map[string]any
}

// Serve makes the server answer GET path with obj (JSON).
func (f *APIServer) Serve(path string, obj any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.served[path] = obj
}

func NewAPIServer(t testing.TB, version string, configMap string, nodes []Node) *APIServer {
	return newAPIServer(t, version, configMap, nodes, false)
}

// NewAPIServerWithKubelets is NewAPIServer with every node's kubelet
// listening too (127.0.0.1, a port of its own, a serving certificate of
// KubeletCA's for system:node:NAME), taking the kubeconfig's token.
func NewAPIServerWithKubelets(t testing.TB, version string, configMap string, nodes []Node) *APIServer {
	return newAPIServer(t, version, configMap, nodes, true)
}

// answer picks the answer of a node for a path, counting attempts.
func (f *APIServer) answer(n Node, path string, w http.ResponseWriter) {
	f.mu.Lock()
	f.attempts[n.Name+path]++
	attempt := f.attempts[n.Name+path]
	f.mu.Unlock()
	switch {
	case path == "/configz":
		n.Answer(attempt, w)
	case path == "/flagz" && n.Flagz != nil:
		n.Flagz(attempt, w)
	default:
		http.NotFound(w, nil)
	}
}

// nodeObject is the Node object of n.
func (f *APIServer) nodeObject(n Node) corev1.Node {
	obj := corev1.Node{TypeMeta: metav1.TypeMeta{Kind: "Node", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: n.Labels}}
	obj.Status.NodeInfo.KubeletVersion = n.Version
	obj.Status.NodeInfo.ContainerRuntimeVersion = n.Runtime
	if port, ok := f.kubelets[n.Name]; ok {
		obj.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: n.Name}, {Type: corev1.NodeInternalIP, Address: "127.0.0.1"}}
		obj.Status.DaemonEndpoints.KubeletEndpoint.Port = port
	}
	if n.Ready != "" {
		obj.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: n.Ready, Reason: "KubeletNotReady", Message: "container runtime is down"}}
	}
	return obj
}

func newAPIServer(t testing.TB, version string, configMap string, nodes []Node, kubelets bool) *APIServer {
	t.Helper()
	f := &APIServer{attempts: map[string]int{}, Direct: map[string]*atomic.Int32{}, kubelets: map[string]int32{}, served: map[string]any{}}
	byName := map[string]Node{}
	for _, n := range nodes {
		byName[n.Name] = n
	}
	if kubelets {
		f.startKubelets(t, nodes)
	}
	f.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := r.URL.Path
		switch {
		case path == "/version":
			fmt.Fprintf(w, `{"major":"1","minor":"37","gitVersion":%q}`, version)
		case path == "/api/v1/nodes":
			f.Pages.Add(1)
			sel, err := labels.Parse(r.URL.Query().Get("labelSelector"))
			if err != nil {
				ProxyError(400, err.Error())(0, w)
				return
			}
			limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
			from, _ := strconv.Atoi(r.URL.Query().Get("continue"))
			list := corev1.NodeList{TypeMeta: metav1.TypeMeta{Kind: "NodeList", APIVersion: "v1"}}
			for i := from; i < len(nodes); i++ {
				if limit > 0 && len(list.Items) == limit {
					list.Continue = strconv.Itoa(i)
					if r.URL.Query().Get("labelSelector") == "" {
						// As the API server: how many are left, without a selector.
						left := int64(len(nodes) - i)
						list.RemainingItemCount = &left
					}
					break
				}
				n := nodes[i]
				if !sel.Matches(labels.Set(n.Labels)) {
					continue
				}
				list.Items = append(list.Items, f.nodeObject(n))
			}
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(list)
		case strings.HasPrefix(path, "/api/v1/nodes/") && !strings.Contains(strings.TrimPrefix(path, "/api/v1/nodes/"), "/"):
			n, ok := byName[strings.TrimPrefix(path, "/api/v1/nodes/")]
			if !ok {
				ProxyError(404, fmt.Sprintf("nodes %q not found", strings.TrimPrefix(path, "/api/v1/nodes/")))(0, w)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(f.nodeObject(n))
		case strings.HasPrefix(path, "/api/v1/nodes/") && strings.Contains(path, "/proxy/"):
			if f.Delay != nil {
				n := f.inFlight.Add(1)
				time.Sleep(f.Delay(int(n)))
				defer f.inFlight.Add(-1)
			}
			name, sub, _ := strings.Cut(strings.TrimPrefix(path, "/api/v1/nodes/"), "/proxy")
			n, ok := byName[name]
			if !ok {
				ProxyError(404, fmt.Sprintf("nodes %q not found", name))(0, w)
				return
			}
			f.answer(n, sub, w)
		case path == "/api/v1/namespaces/kube-system/configmaps/kubelet-config" && configMap != "":
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(corev1.ConfigMap{TypeMeta: metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"},
				ObjectMeta: metav1.ObjectMeta{Name: "kubelet-config", Namespace: "kube-system"},
				Data:       map[string]string{"kubelet": configMap}})
		default:
			f.mu.Lock()
			obj, ok := f.served[path]
			f.mu.Unlock()
			if ok {
				w.Header().Set("Content-Type", "application/json")
				json.NewEncoder(w).Encode(obj)
				return
			}
			ProxyError(404, "the server could not find the requested resource")(0, w)
		}
	}))
	t.Cleanup(f.Close)
	f.Kubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
	if err := (testkit.Kubeconfig{Server: f.URL, Token: "t"}).Write(f.Kubeconfig); err != nil {
		t.Fatal(err)
	}
	return f
}
