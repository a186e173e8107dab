//go:build e2e

package e2e

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// apiServer is a real etcd and kube-apiserver, reachable with a token.
type apiServer struct {
	URL, Token, Kubeconfig string
}

// startAPIServer runs etcd (Debian's) and the kube-apiserver built by make
// e2e, with a static admin token, and writes a kubeconfig for them.
func startAPIServer(t *testing.T, dir string) *apiServer {
	t.Helper()
	bin := os.Getenv("APISERVER_BIN")
	if bin == "" {
		t.Fatal("APISERVER_BIN is not set: run make e2e")
	}
	etcd, err := exec.LookPath("etcd")
	if err != nil {
		t.Fatal("etcd is not installed: run make e2e (it installs Debian's etcd-server)")
	}
	const etcdURL, port = "http://127.0.0.1:23790", "16443"
	start(t, filepath.Join(dir, "etcd.log"), etcd, "--data-dir", filepath.Join(dir, "etcd"),
		"--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
		"--listen-peer-urls", "http://127.0.0.1:23800", "--initial-advertise-peer-urls", "http://127.0.0.1:23800",
		"--initial-cluster", "default=http://127.0.0.1:23800")

	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	saKey := filepath.Join(dir, "sa.key")
	write(t, saKey, string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})))
	token := "e2e-admin-token"
	write(t, filepath.Join(dir, "tokens.csv"), token+",admin,admin,system:masters\n")
	start(t, filepath.Join(dir, "apiserver.log"), bin,
		"--etcd-servers="+etcdURL,
		"--bind-address=127.0.0.1", "--secure-port="+port, "--advertise-address="+nodeIP(t),
		"--cert-dir="+filepath.Join(dir, "apiserver-pki"),
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file="+saKey, "--service-account-signing-key-file="+saKey,
		"--token-auth-file="+filepath.Join(dir, "tokens.csv"),
		"--authorization-mode=AlwaysAllow",
		"--service-cluster-ip-range=10.96.0.0/24",
		"--kubelet-preferred-address-types=InternalIP")

	s := &apiServer{URL: "https://127.0.0.1:" + port, Token: token, Kubeconfig: filepath.Join(dir, "admin.kubeconfig")}
	write(t, s.Kubeconfig, fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: %s
    insecure-skip-tls-verify: true
users:
- name: admin
  user:
    token: %s
contexts:
- name: e2e
  context: {cluster: e2e, user: admin}
current-context: e2e
`, s.URL, token))

	deadline := time.Now().Add(90 * time.Second)
	for {
		code, body := s.do(t, http.MethodGet, "/readyz", "")
		if code == http.StatusOK {
			return s
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "apiserver.log"))
			t.Fatalf("kube-apiserver not ready within 90 s (%d %s):\n%s", code, body, tail(log))
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// registerNode creates a Node whose status points the API server at the
// kubelet running on this machine, as the kubelet's own registration would.
func (s *apiServer) registerNode(t *testing.T, name string) {
	t.Helper()
	body := fmt.Sprintf(`{"apiVersion":"v1","kind":"Node","metadata":{"name":%q},
"status":{"addresses":[{"type":"InternalIP","address":%q}],"daemonEndpoints":{"kubeletEndpoint":{"Port":10250}}}}`, name, nodeIP(t))
	if code, out := s.do(t, http.MethodPost, "/api/v1/nodes", body); code != http.StatusCreated {
		t.Fatalf("create node %s: %d %s", name, code, out)
	}
}

func (s *apiServer) do(t *testing.T, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.Token)
	req.Header.Set("Content-Type", "application/json")
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	var out bytes.Buffer
	_, _ = out.ReadFrom(resp.Body)
	return resp.StatusCode, out.String()
}

// nodeIP is an address of this machine the API server may proxy to: it
// refuses loopback and link-local addresses.
func nodeIP(t *testing.T) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil && ipn.IP.IsGlobalUnicast() {
			return ipn.IP.String()
		}
	}
	t.Fatal("this machine has no global unicast IPv4 address for the API server to reach the kubelet on")
	return ""
}

// start runs a daemon for the rest of the test, its output in logPath;
// stop ends it sooner.
func start(t *testing.T, logPath, bin string, args ...string) (stop func()) {
	t.Helper()
	log, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			done := make(chan struct{})
			go func() { _ = cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				<-done
			}
			log.Close()
		})
	}
	t.Cleanup(stop)
	return stop
}
