//go:build e2e

package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Simulated nodes are Node objects whose kubelet endpoint is a small server
// of this test that answers /configz as a kubelet does. The API server
// refuses to proxy to loopback, so they listen on an address of the test's
// own veth pair (nodeNet), each node on its own port of that one address.

// simKubelets serves /configz for simulated nodes.
type simKubelets struct {
	addr   string
	tls    *tls.Config
	secure *http.Server
	plain  *http.Server
	mu     sync.Mutex
	byPort map[int]simKubelet
	// Served counts the /configz answers given.
	Served atomic.Int64
}

type simKubelet struct {
	body []byte // nil: never answers
}

// newSimKubelets serves on addr with a self-signed serving certificate (the
// API server does not check kubelets' certificates unless told a CA).
func newSimKubelets(t testing.TB, addr string) *simKubelets {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "simulated-kubelet"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP(addr)}, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	s := &simKubelets{addr: addr, byPort: map[int]simKubelet{},
		tls: &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
		_, port, _ := net.SplitHostPort(fmt.Sprint(local))
		p, _ := strconv.Atoi(port)
		s.mu.Lock()
		k, ok := s.byPort[p]
		s.mu.Unlock()
		switch {
		case !ok || r.URL.Path != "/configz":
			http.NotFound(w, r)
		case k.body == nil:
			<-r.Context().Done() // a kubelet that hangs
		default:
			s.Served.Add(1)
			w.Header().Set("Content-Type", "application/json")
			w.Write(k.body)
		}
	})
	s.secure = &http.Server{Handler: handler, ErrorLog: quietLog()}
	s.plain = &http.Server{Handler: handler, ErrorLog: quietLog()}
	t.Cleanup(func() {
		s.secure.Close()
		s.plain.Close()
	})
	return s
}

// listen opens a port for a simulated kubelet.
func (s *simKubelets) listen(t testing.TB) (net.Listener, int) {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(s.addr, "0"))
	if err != nil {
		t.Fatal(err)
	}
	return ln, ln.Addr().(*net.TCPAddr).Port
}

// serve answers /configz with the configuration cfg (v1beta1 JSON), wrapped
// as the kubelet wraps it; nil cfg never answers.
func (s *simKubelets) serve(t testing.TB, cfg []byte) int {
	ln, port := s.listen(t)
	s.register(port, cfg)
	go s.secure.Serve(tls.NewListener(ln, s.tls))
	return port
}

// plainHTTP answers without TLS: the API server's TLS handshake fails.
func (s *simKubelets) plainHTTP(t testing.TB, cfg []byte) int {
	ln, port := s.listen(t)
	s.register(port, cfg)
	go s.plain.Serve(ln)
	return port
}

// refusing is a port nothing listens on.
func (s *simKubelets) refusing(t testing.TB) int {
	ln, port := s.listen(t)
	ln.Close()
	return port
}

func (s *simKubelets) register(port int, cfg []byte) {
	k := simKubelet{}
	if cfg != nil {
		k.body = []byte(`{"kubeletconfig":` + string(cfg) + `}`)
	}
	s.mu.Lock()
	s.byPort[port] = k
	s.mu.Unlock()
}

// simNode is a Node object of a simulated node.
type simNode struct {
	name, version string
	addr          string // its kubelet's address, when not createNodes's
	port          int
	ready         corev1.ConditionStatus // "" is True
	labels        map[string]string
}

// createNodes registers simulated nodes at addr, 16 at a time.
func createNodes(t testing.TB, c kubernetes.Interface, addr string, nodes []simNode) {
	t.Helper()
	errs := make(chan error, len(nodes))
	work := make(chan simNode)
	var wg sync.WaitGroup
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range work {
				ready := n.ready
				if ready == "" {
					ready = corev1.ConditionTrue
				}
				obj := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.name, Labels: n.labels}}
				a := addr
				if n.addr != "" {
					a = n.addr
				}
				obj.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: a}}
				obj.Status.DaemonEndpoints.KubeletEndpoint.Port = int32(n.port)
				obj.Status.NodeInfo.KubeletVersion = n.version
				cond := corev1.NodeCondition{Type: corev1.NodeReady, Status: ready, LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now(),
					Reason: "KubeletReady", Message: "kubelet is posting ready status"}
				if ready != corev1.ConditionTrue {
					cond.Reason, cond.Message = "KubeletNotReady", "container runtime network not ready"
				}
				obj.Status.Conditions = []corev1.NodeCondition{cond}
				if _, err := c.CoreV1().Nodes().Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
					errs <- fmt.Errorf("create node %s: %w", n.name, err)
				}
			}
		}()
	}
	for _, n := range nodes {
		work <- n
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// The API server keeps a new Node's status (a kubelet registers so).
	got, err := c.CoreV1().Nodes().Get(context.Background(), nodes[0].name, metav1.GetOptions{})
	if err != nil || len(got.Status.Addresses) != 1 || got.Status.DaemonEndpoints.KubeletEndpoint.Port != int32(nodes[0].port) {
		t.Fatalf("node %s as created: %v %+v", nodes[0].name, err, got.Status)
	}
}

// referenceEffective is the configuration the kubelet's own code makes of a
// testdata/validate case, for a minor (testdata/reference, written by make
// schema from each release's kubelet code): what such a kubelet serves.
func referenceEffective(t testing.TB, minor, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile("../testdata/reference/verdicts-v" + minor + ".json")
	if err != nil {
		t.Fatal(err)
	}
	var verdicts map[string]struct {
		Effective json.RawMessage `json:"effective"`
	}
	if err := json.Unmarshal(raw, &verdicts); err != nil {
		t.Fatal(err)
	}
	eff := verdicts[name].Effective
	if len(eff) == 0 {
		t.Fatalf("testdata/reference/verdicts-v%s.json has no effective configuration of %s", minor, name)
	}
	return eff
}

// edited is a configuration (v1beta1 JSON) with top-level fields replaced.
func edited(t testing.TB, cfg []byte, fields map[string]any) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(cfg, &m); err != nil {
		t.Fatal(err)
	}
	for k, v := range fields {
		m[k] = v
	}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// cpuSeconds is the CPU time (user + system) a process has used.
func cpuSeconds(t testing.TB, pid int) float64 {
	t.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// The fields after the command name (which may hold spaces), from field 3.
	f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+2:]))
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	return (utime + stime) / 100 // USER_HZ
}

// quietLog drops the servers' complaints about handshakes the API server
// gives up (timeouts, the plain-HTTP kubelet).
func quietLog() *log.Logger { return log.New(io.Discard, "", 0) }
