package kubeletapi

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	"github.com/kubeletcfg/kubeletcfg/schema"
)

// ca is a throwaway certificate authority.
type ca struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newCA(t *testing.T, name string) *ca {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &ca{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// serving makes a serving certificate for 127.0.0.1 with common name cn,
// signed by c (nil: self-signed).
func (c *ca) serving(t *testing.T, cn string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: cn}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	parent, signer := tmpl, any(key)
	if c != nil {
		parent, signer = c.cert, c.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// kubelet is a fake kubelet's HTTPS port: handler answers, the token the
// request carried is recorded.
func kubelet(t *testing.T, cert tls.Certificate, handler http.HandlerFunc) (host string, port int32, tokens *[]string) {
	t.Helper()
	var seen []string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Header.Get("Authorization"))
		handler(w, r)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // refused handshakes are the point
	srv.StartTLS()
	t.Cleanup(srv.Close)
	h, p, _ := net.SplitHostPort(srv.Listener.Addr().String())
	n, _ := strconv.Atoi(p)
	return h, int32(n), &seen
}

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// realKubelet answers as the real kubelet 1.37 did (testdata).
func realKubelet(t *testing.T) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		accept := r.Header.Get("Accept")
		path := r.URL.Path
		if i := strings.Index(path, "/proxy/"); i >= 0 {
			path = path[i+len("/proxy"):]
		}
		switch path {
		case "/configz":
			fmt.Fprint(w, `{"kubeletconfig":{"maxPods":44}}`)
		case "/healthz":
			fmt.Fprint(w, "ok")
		case "/flagz", "/statusz":
			name := strings.TrimPrefix(path, "/")
			switch {
			case strings.Contains(accept, "as="):
				w.Header().Set("Content-Type", "application/json;g=config.k8s.io;v=v1beta1;as="+strings.ToUpper(name[:1])+name[1:])
				w.Write(fixture(t, name+"-1.37.json"))
			case accept == "" || accept == "text/plain":
				w.Header().Set("Content-Type", "text/plain; charset=utf-8")
				w.Write(fixture(t, name+"-1.37.txt"))
			default:
				http.Error(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotAcceptable","code":406}`, http.StatusNotAcceptable)
			}
		default:
			http.NotFound(w, r)
		}
	}
}

func restConfig(caPEM []byte) *rest.Config {
	cfg := &rest.Config{Host: "https://127.0.0.1:6443", BearerToken: "sekrit"}
	if caPEM != nil {
		cfg.CAData = caPEM
	} else {
		cfg.Insecure = true
	}
	return cfg
}

func nodeAt(t *testing.T, name, minor, host string, port int32) Node {
	t.Helper()
	v, err := schema.Resolve(minor)
	if err != nil {
		t.Fatal(err)
	}
	return Node{Name: name, Version: v, Reported: "v" + minor + ".0", Address: host, Port: port}
}

func reason(t *testing.T, err error, want Reason) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("%v: not an *Error", err)
	}
	if e.Reason != want {
		t.Fatalf("reason %s, want %s: %v", e.Reason, want, e)
	}
	return e
}

// A kubelet whose serving certificate the cluster CA signed is read
// directly, certificate verified, with the kubeconfig's token: every path.
func TestDirectVerified(t *testing.T) {
	cluster := newCA(t, "kubernetes")
	// The fixture kubelet runs with --hostname-override=fixture-node.
	host, port, tokens := kubelet(t, cluster.serving(t, "system:node:fixture-node"), realKubelet(t))
	c, err := New(restConfig(cluster.pem), Options{Via: Direct})
	if err != nil {
		t.Fatal(err)
	}
	n := nodeAt(t, "fixture-node", "1.37", host, port)
	ctx := context.Background()
	raw, u, err := c.Configz(ctx, n)
	if err != nil || string(raw) != `{"maxPods":44}` || u != "https://"+net.JoinHostPort(host, fmt.Sprint(port))+"/configz" {
		t.Fatalf("configz %s %s %v", raw, u, err)
	}
	if err := c.Healthz(ctx, n); err != nil {
		t.Fatal(err)
	}
	f, err := c.Flagz(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	if f.Form != "config.k8s.io/v1beta1 Flagz" || len(f.Values) != 131 {
		t.Errorf("flagz %s, %d flags", f.Form, len(f.Values))
	}
	st, err := c.Statusz(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	if st.BinaryVersion != "1.37.2" || !st.StartTime.Equal(time.Date(2026, 12, 3, 13, 32, 2, 0, time.UTC)) || st.Form != "config.k8s.io/v1beta1 Statusz" {
		t.Errorf("statusz %+v", st)
	}
	for _, tok := range *tokens {
		if tok != "Bearer sekrit" {
			t.Errorf("Authorization %q, want the kubeconfig's token", tok)
		}
	}
	if got := c.Verified("fixture-node"); got != "verified against the kubeconfig's cluster CA" {
		t.Errorf("Verified: %q", got)
	}
	// The kubelet permissions this takes, per its version.
	if a := c.Access(n, "/configz"); a.Needs != "get nodes/configz (or nodes/proxy)" || a.Note != "" {
		t.Errorf("1.37 /configz: %+v", a)
	}
	if a := c.Access(nodeAt(t, "old", "1.31", host, port), "/configz"); a.Needs != "get nodes/proxy" || !strings.Contains(a.Note, "nodes/proxy only") {
		t.Errorf("1.31 /configz: %+v", a)
	}
}

// A self-signed kubelet is refused, named, unless the node is named as one
// to read unverified; --kubelet-ca verifies another signer.
func TestDirectCertificateChoices(t *testing.T) {
	cluster := newCA(t, "kubernetes")
	ctx := context.Background()

	host, port, _ := kubelet(t, (*ca)(nil).serving(t, "worker-2@1700000000"), realKubelet(t))
	n := nodeAt(t, "worker-2", "1.37", host, port)
	c, err := New(restConfig(cluster.pem), Options{Via: Direct})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = c.Configz(ctx, n)
	e := reason(t, err, TLS)
	for _, want := range []string{"self-signed", "worker-2@1700000000", "--kubelet-insecure-skip-tls-verify worker-2", "--kubelet-ca"} {
		if !strings.Contains(e.Error(), want) {
			t.Errorf("%v lacks %q", e, want)
		}
	}
	c, err = New(restConfig(cluster.pem), Options{Via: Direct, Insecure: []string{"worker-2"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Configz(ctx, n); err != nil {
		t.Fatal(err)
	}
	if got := c.Verified("worker-2"); !strings.Contains(got, "not verified (--kubelet-insecure-skip-tls-verify worker-2)") {
		t.Errorf("Verified: %q", got)
	}
	if got := c.Verified("worker-3"); !strings.HasPrefix(got, "verified") {
		t.Errorf("Verified(worker-3): %q", got)
	}

	// As the kubelet makes it: worker-4@TIME signed by its own
	// worker-4-ca@TIME, no IP address in it (Go checks the name first).
	own := newCA(t, "worker-4-ca@1700000001") // a second later than the CA
	made := own.serving(t, "worker-4@1700000000")
	leaf, _ := x509.ParseCertificate(made.Certificate[0])
	leaf.IPAddresses = nil
	key := made.PrivateKey.(*ecdsa.PrivateKey)
	der, err := x509.CreateCertificate(rand.Reader, leaf, own.cert, &key.PublicKey, own.key)
	if err != nil {
		t.Fatal(err)
	}
	host4, port4, _ := kubelet(t, tls.Certificate{Certificate: [][]byte{der, own.cert.Raw}, PrivateKey: key}, realKubelet(t))
	c, _ = New(restConfig(cluster.pem), Options{Via: Direct})
	_, _, err = c.Configz(ctx, nodeAt(t, "worker-4", "1.37", host4, port4))
	if e := reason(t, err, TLS); !strings.Contains(e.Message, "self-signed") || !strings.Contains(e.Message, "--kubelet-insecure-skip-tls-verify worker-4") {
		t.Errorf("%v", e)
	}

	// Another signer: refused against the cluster CA, read with --kubelet-ca.
	other := newCA(t, "kubelet-serving")
	host, port, _ = kubelet(t, other.serving(t, "system:node:worker-3"), realKubelet(t))
	n = nodeAt(t, "worker-3", "1.37", host, port)
	c, _ = New(restConfig(cluster.pem), Options{Via: Direct})
	_, _, err = c.Configz(ctx, n)
	if e := reason(t, err, TLS); !strings.Contains(e.Message, "not signed by the kubeconfig's cluster CA") {
		t.Errorf("%v", e)
	}
	caFile := filepath.Join(t.TempDir(), "kubelet-ca.crt")
	if err := os.WriteFile(caFile, other.pem, 0o600); err != nil {
		t.Fatal(err)
	}
	c, err = New(restConfig(cluster.pem), Options{Via: Direct, KubeletCA: caFile})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Configz(ctx, n); err != nil {
		t.Fatal(err)
	}
	if got := c.Verified("worker-3"); got != "verified against --kubelet-ca "+caFile {
		t.Errorf("Verified: %q", got)
	}

	// A kubeconfig that skips verifying the API server gives nothing to
	// verify kubelets with: said, not skipped.
	c, _ = New(restConfig(nil), Options{Via: Direct})
	_, _, err = c.Configz(ctx, n)
	if e := reason(t, err, TLS); !strings.Contains(e.Message, "the kubeconfig has no cluster CA") {
		t.Errorf("%v", e)
	}
	// A --kubelet-ca that is not a certificate.
	bad := filepath.Join(t.TempDir(), "bad.crt")
	os.WriteFile(bad, []byte("not a certificate"), 0o600)
	if _, err := New(restConfig(cluster.pem), Options{Via: Direct, KubeletCA: bad}); err == nil || !strings.Contains(err.Error(), "no certificate") {
		t.Errorf("bad --kubelet-ca: %v", err)
	}
	if _, err := New(restConfig(cluster.pem), Options{Via: Proxy, KubeletCA: caFile}); err == nil {
		t.Error("--kubelet-ca through the proxy: no error")
	}
}

// A kubelet at another node's address is not that node: its CA-signed
// certificate, or its --hostname-override, says whose it is.
func TestOtherNodesAnswer(t *testing.T) {
	cluster := newCA(t, "kubernetes")
	ctx := context.Background()
	host, port, _ := kubelet(t, cluster.serving(t, "system:node:worker-9"), realKubelet(t))
	c, _ := New(restConfig(cluster.pem), Options{Via: Direct})
	_, _, err := c.Configz(ctx, nodeAt(t, "worker-1", "1.37", host, port))
	if e := reason(t, err, OtherNode); !strings.Contains(e.Message, `node "worker-9"'s`) {
		t.Errorf("%v", e)
	}
	// The fixture kubelet runs with --hostname-override=fixture-node.
	host, port, _ = kubelet(t, cluster.serving(t, "system:node:worker-1"), realKubelet(t))
	_, err = c.Flagz(ctx, nodeAt(t, "worker-1", "1.37", host, port))
	if e := reason(t, err, OtherNode); !strings.Contains(e.Message, `it is node "fixture-node", not "worker-1"`) {
		t.Errorf("%v", e)
	}
	host, port, _ = kubelet(t, cluster.serving(t, "system:node:fixture-node"), realKubelet(t))
	if _, err := c.Flagz(ctx, nodeAt(t, "fixture-node", "1.37", host, port)); err != nil {
		t.Error(err)
	}
}

// Refusals are named with the permission the path needs on that node.
func TestRefusals(t *testing.T) {
	cluster := newCA(t, "kubernetes")
	ctx := context.Background()
	forbidden := func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "Forbidden (user=alice, verb=get, resource=nodes, subresource(s)=[configz proxy])\n\x1b[31m"+strings.Repeat("x", 10000), http.StatusForbidden)
	}
	host, port, _ := kubelet(t, cluster.serving(t, "system:node:n"), forbidden)
	c, _ := New(restConfig(cluster.pem), Options{Via: Direct})
	for minor, needs := range map[string]string{"1.37": "get nodes/configz (or nodes/proxy)", "1.33": "get nodes/configz (or nodes/proxy)", "1.31": "get nodes/proxy", "1.32": "get nodes/proxy"} {
		_, _, err := c.Configz(ctx, nodeAt(t, "n", minor, host, port))
		e := reason(t, err, Forbidden)
		if e.Needs != needs {
			t.Errorf("kubelet %s: needs %q, want %q", minor, e.Needs, needs)
		}
		if (needs == "get nodes/proxy") != strings.Contains(e.Note, "nodes/proxy only") {
			t.Errorf("kubelet %s: note %q", minor, e.Note)
		}
		if len(e.Message) > 600 || strings.ContainsAny(e.Message, "\x1b\n") || !strings.Contains(e.Message, "subresource(s)=[configz proxy]") ||
			!strings.Contains(e.Message, `\x1b[31m`) || !strings.Contains(e.Message, "more bytes)") {
			t.Errorf("kubelet %s: message not bounded and escaped: %q", minor, e.Message)
		}
	}
	_, err := c.Statusz(ctx, nodeAt(t, "n", "1.37", host, port))
	if e := reason(t, err, Forbidden); e.Needs != "get nodes/statusz" {
		t.Errorf("statusz needs %q", e.Needs)
	}
	host, port, _ = kubelet(t, cluster.serving(t, "system:node:n"), func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
	})
	_, err = c.Flagz(ctx, nodeAt(t, "n", "1.37", host, port))
	if e := reason(t, err, Unauthorized); e.Needs != "get nodes/configz" || !strings.Contains(e.Message, "authentication.webhook") {
		t.Errorf("%v", e)
	}
	// Not served: an older kubelet, or the gate off.
	host, port, _ = kubelet(t, cluster.serving(t, "system:node:n"), http.NotFound)
	_, err = c.Flagz(ctx, nodeAt(t, "n", "1.35", host, port))
	if e := reason(t, err, NotServed); !strings.Contains(e.Message, "ComponentFlagz on: alpha in 1.35, off by default") {
		t.Errorf("%v", e)
	}
	// Nothing listening.
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	p := l.Addr().(*net.TCPAddr).Port
	l.Close()
	_, _, err = c.Configz(ctx, nodeAt(t, "n", "1.37", "127.0.0.1", int32(p)))
	reason(t, err, Refused)
	_, _, err = c.Configz(ctx, Node{Name: "n"})
	reason(t, err, NoAddress)
}

// Answers are bounded and checked.
func TestBadAnswers(t *testing.T) {
	cluster := newCA(t, "kubernetes")
	ctx := context.Background()
	c, _ := New(restConfig(cluster.pem), Options{Via: Direct})
	for _, tc := range []struct {
		name, contentType, body, path string
		want                          Reason
		says                          string
	}{
		{"huge flagz", "text/plain", "kubelet flagz\n" + strings.Repeat("v=1\n", 100000), "/flagz", TooLarge, "larger than 262144 bytes"},
		{"flagz not JSON", "application/json", "{not json", "/flagz", BadAnswer, "not a Flagz object"},
		{"flagz of another kind", "application/json", `{"kind":"Statusz","apiVersion":"config.k8s.io/v1beta1"}`, "/flagz", BadAnswer, `kind "Statusz"`},
		{"flagz of another component", "application/json", `{"kind":"Flagz","apiVersion":"config.k8s.io/v1beta1","metadata":{"name":"kube-apiserver"},"flags":{"v":"2"}}`, "/flagz", BadAnswer, `"kube-apiserver", not of the kubelet`},
		{"flagz with no flags", "application/json", `{"kind":"Flagz","apiVersion":"config.k8s.io/v1beta1","metadata":{"name":"kubelet"}}`, "/flagz", BadAnswer, "no flags"},
		{"flagz with a bad name", "application/json", `{"kind":"Flagz","apiVersion":"config.k8s.io/v1beta1","metadata":{"name":"kubelet"},"flags":{"v x":"2"}}`, "/flagz", BadAnswer, "not a flag name"},
		{"flagz text with a bad line", "text/plain", "\nkubelet flagz\nWarning: x\nv=2\n!!!\n", "/flagz", BadAnswer, `line 2 of the flags: "!!!"`},
		{"flagz text of something else", "text/plain", "<html>hello</html>", "/flagz", BadAnswer, "does not start with"},
		{"too many flags", "text/plain", "kubelet flagz\n" + strings.Repeat("f=1\n", 10) + func() string {
			var b strings.Builder
			for i := 0; i < 2001; i++ {
				fmt.Fprintf(&b, "f%d=1\n", i)
			}
			return b.String()
		}(), "/flagz", BadAnswer, "more than a kubelet has"},
		{"statusz without a start", "application/json", `{"kind":"Statusz","apiVersion":"config.k8s.io/v1beta1","binaryVersion":"1.37.2"}`, "/statusz", BadAnswer, "without startTime"},
		{"statusz text garbage", "text/plain", "kubelet statusz\nStarted: yesterday\n", "/statusz", BadAnswer, "Started"},
		{"configz not configz", "application/json", `{"componentconfig":{}}`, "/configz", BadAnswer, "not a /configz answer"},
		{"healthz not ok", "text/plain", "[-]syncloop failed", "/healthz", BadAnswer, "not ok"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			host, port, _ := kubelet(t, cluster.serving(t, "system:node:n"), func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tc.contentType)
				fmt.Fprint(w, tc.body)
			})
			n := nodeAt(t, "n", "1.37", host, port)
			var err error
			switch tc.path {
			case "/flagz":
				_, err = c.Flagz(ctx, n)
			case "/statusz":
				_, err = c.Statusz(ctx, n)
			case "/configz":
				_, _, err = c.Configz(ctx, n)
			case "/healthz":
				err = c.Healthz(ctx, n)
			}
			if e := reason(t, err, tc.want); !strings.Contains(e.Message, tc.says) || e.Node != "n" || e.Path != tc.path {
				t.Errorf("%v lacks %q", e, tc.says)
			}
		})
	}
}

// Through the API server's node proxy: the URL, the token, and the API
// server's refusals.
func TestProxy(t *testing.T) {
	var gotPath string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotPath = r.URL.EscapedPath()
		switch {
		case strings.Contains(r.URL.Path, "/nodes/denied/"):
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"nodes \"denied\" is forbidden: User \"alice\" cannot get resource \"nodes/proxy\" in API group \"\" at the cluster scope","reason":"Forbidden","details":{"name":"denied","kind":"nodes"},"code":403}`)
		case strings.Contains(r.URL.Path, "/nodes/gone/"):
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"nodes \"gone\" not found","reason":"NotFound","details":{"name":"gone","kind":"nodes"},"code":404}`)
		case strings.Contains(r.URL.Path, "/nodes/old/"):
			http.NotFound(w, r) // the kubelet's own 404, relayed
		case strings.Contains(r.URL.Path, "/nodes/down/"):
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"error trying to reach service: dial tcp 10.0.0.9:10250: connect: connection refused","code":503}`)
		default:
			realKubelet(t)(w, r)
		}
	}))
	defer srv.Close()
	cfg := &rest.Config{Host: srv.URL + "/rancher/k8s", BearerToken: "sekrit", TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	c, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	v, _ := schema.Resolve("1.37")
	if _, u, err := c.Configz(ctx, Node{Name: "worker 1", Version: v}); err != nil || u != srv.URL+"/rancher/k8s/api/v1/nodes/worker%201/proxy/configz" {
		t.Fatalf("%s %v", u, err)
	}
	if gotPath != "/rancher/k8s/api/v1/nodes/worker%201/proxy/configz" {
		t.Errorf("path %s", gotPath)
	}
	_, _, err = c.Configz(ctx, Node{Name: "denied", Version: v})
	if e := reason(t, err, Forbidden); e.Needs != "get nodes/proxy" || !strings.Contains(e.Note, "as much as exec") || !strings.Contains(e.Message, `cannot get resource "nodes/proxy"`) {
		t.Errorf("%v", e)
	}
	_, _, err = c.Configz(ctx, Node{Name: "gone", Version: v})
	reason(t, err, NotFound)
	_, _, err = c.Configz(ctx, Node{Name: "down", Version: v})
	reason(t, err, Refused)
	// Flagz through the proxy: the kubelet's 404 is not a missing node.
	_, err = c.Flagz(ctx, Node{Name: "old", Version: v})
	reason(t, err, NotServed)
	// A kubelet that says it is another node, through the proxy too.
	_, err = c.Flagz(ctx, Node{Name: "x", Version: v})
	reason(t, err, OtherNode)
}

// The text forms, with each separator the kubelet may pick.
func TestTextForms(t *testing.T) {
	want, err := parseFlagzJSON(fixture(t, "flagz-1.37.json"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(fixture(t, "flagz-1.37.txt"))
	for _, sep := range separators {
		body := strings.Builder{}
		body.WriteString("\nkubelet flagz\nWarning: This endpoint is not meant to be machine parseable.\n")
		for _, name := range sortedKeys(want.Values) {
			body.WriteString(name + sep + want.Values[name] + "\n")
		}
		got, err := parseFlagzText([]byte(body.String()))
		if err != nil {
			t.Fatalf("separator %q: %v", sep, err)
		}
		for name, v := range want.Values {
			if got.Values[name] != v {
				t.Errorf("separator %q: %s = %q, want %q", sep, name, got.Values[name], v)
			}
		}
	}
	got, err := parseFlagzText([]byte(text))
	if err != nil || len(got.Values) != len(want.Values) || got.Form != "text/plain" {
		t.Fatalf("the real text form: %v", err)
	}
	st, err := parseStatuszText(fixture(t, "statusz-1.37.txt"))
	if err != nil || st.BinaryVersion != "1.37.2" || st.EmulationVersion != "1.37" || st.StartTime.Unix() != time.Date(2026, 12, 3, 13, 32, 2, 0, time.UTC).Unix() {
		t.Fatalf("statusz text: %+v %v", st, err)
	}
	for _, sep := range []string{":", ": ", "=", " "} {
		body := "\nkubelet statusz\nWarning: x\n\nStarted" + sep + " Thu Dec  3 13:32:02 UTC 2026\nUp" + sep + " 0 hr 00 min 02 sec\nBinary version" + sep + " 1.37.2\n"
		if st, err := parseStatuszText([]byte(body)); err != nil || st.BinaryVersion != "1.37.2" {
			t.Errorf("separator %q: %+v %v", sep, st, err)
		}
	}
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// The real kubelet's /flagz, read against the schema of its version, gives
// back exactly its command line (config-backed flags show the command line,
// never the config file: the fixture's file sets maxPods 42, a drop-in 43).
func TestNonDefaultIsTheCommandLine(t *testing.T) {
	f, err := parseFlagzJSON(fixture(t, "flagz-1.37.json"))
	if err != nil {
		t.Fatal(err)
	}
	v, _ := schema.Resolve("1.37")
	var got []string
	for _, fl := range f.NonDefault(v) {
		got = append(got, "--"+fl.Name+"="+fl.Value)
		if fl.Unknown {
			t.Errorf("%s: not in the schema", fl.Name)
		}
	}
	want := "--cert-dir=/tmp/fz/run/pki --config=/tmp/fz/run/config.yaml --config-dir=/tmp/fz/run/conf.d --hostname-override=fixture-node --max-pods=44 --node-labels=team=a --root-dir=/tmp/fz/run/root --v=2"
	if strings.Join(got, " ") != want {
		t.Errorf("non-default flags\n got %s\nwant %s", strings.Join(got, " "), want)
	}
	if c, d := f.ConfigPaths(); c != "/tmp/fz/run/config.yaml" || d != "/tmp/fz/run/conf.d" {
		t.Errorf("config paths %s %s", c, d)
	}
	f.Values["tls-private-key-file"] = Classified
	if fl := f.NonDefault(v); len(fl) != 8 || len(f.ClassifiedFlags()) != 1 {
		t.Errorf("a classified flag: %v %v", fl, f.ClassifiedFlags())
	}
	f.Values["from-the-future"] = "1"
	unknown := 0
	for _, fl := range f.NonDefault(v) {
		if fl.Unknown {
			unknown++
			if fl.Name != "from-the-future" {
				t.Errorf("unknown %s", fl.Name)
			}
		}
	}
	if unknown != 1 {
		t.Errorf("%d unknown flags, want from-the-future", unknown)
	}
}

func TestNodeOf(t *testing.T) {
	n := NodeOf(&corev1.Node{Status: corev1.NodeStatus{
		NodeInfo:        corev1.NodeSystemInfo{KubeletVersion: "v1.34.2"},
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10251}},
		Addresses:       []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: "w1"}, {Type: corev1.NodeExternalIP, Address: "203.0.113.7"}, {Type: corev1.NodeInternalIP, Address: "10.0.0.7"}},
	}})
	if n.Address != "10.0.0.7" || n.Port != 10251 || n.Version == nil || n.Version.Minor != "1.34" {
		t.Errorf("%+v", n)
	}
	n = NodeOf(&corev1.Node{Status: corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{KubeletVersion: "v1.12.0"},
		Addresses: []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: "w1"}}}})
	if n.Address != "w1" || n.Version != nil || n.hostPort() != "w1:10250" {
		t.Errorf("%+v", n)
	}
	c := &Client{via: Direct}
	if a := c.Access(n, "/configz"); a.Needs != "unknown" || !strings.Contains(a.Note, "v1.12.0") {
		t.Errorf("%+v", a)
	}
}

// The node's own kubelet at a URL: the CA given, or --insecure, or this
// machine's CAs.
func TestLocal(t *testing.T) {
	cluster := newCA(t, "kubernetes")
	ctx := context.Background()
	host, port, _ := kubelet(t, cluster.serving(t, "system:node:fixture-node"), realKubelet(t))
	base := "https://" + net.JoinHostPort(host, fmt.Sprint(port))
	caFile := filepath.Join(t.TempDir(), "ca.crt")
	os.WriteFile(caFile, cluster.pem, 0o600)
	v, _ := schema.Resolve("1.37")
	c, err := NewLocal(base, "", "", caFile, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, u, err := c.Configz(ctx, Node{Version: v}); err != nil || u != base+"/configz" {
		t.Fatalf("%s %v", u, err)
	}
	// The name is not known: no claim to check.
	if f, err := c.Flagz(ctx, Node{Version: v}); err != nil || f.Values["hostname-override"] != "fixture-node" {
		t.Fatalf("%v", err)
	}
	c, _ = NewLocal(base, "", "", "", false)
	_, _, err = c.Configz(ctx, Node{Version: v})
	if e := reason(t, err, TLS); !strings.Contains(e.Message, "not signed by this machine's CAs") {
		t.Errorf("%v", e)
	}
	c, _ = NewLocal(base, "", "", "", true)
	if _, _, err := c.Configz(ctx, Node{Version: v}); err != nil || c.Verified("") != "not verified (--insecure)" {
		t.Errorf("%v %s", err, c.Verified(""))
	}
	if _, err := NewLocal("http://127.0.0.1:10250", "", "", "", true); err == nil {
		t.Error("plain http: no error")
	}
}
