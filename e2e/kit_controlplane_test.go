//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// apiServer is a real control plane: etcd, kube-apiserver and
// kube-controller-manager built by make e2e, x509 client certificates from
// one throwaway CA, Node and RBAC authorization, and the test's own network
// for the addresses of its Nodes.
type apiServer struct {
	URL        string
	Kubeconfig string // an administrator's (system:masters)
	CA         *testCA
	Net        *nodeNet
	Client     kubernetes.Interface
	dir        string
}

const (
	etcdClientURL = "http://127.0.0.1:23790"
	etcdPeerURL   = "http://127.0.0.1:23800"
	apiserverPort = "16443"
)

// startAPIServer starts the control plane for the rest of the test and
// waits until the API server is ready and the controllers run.
func startAPIServer(t *testing.T, dir string) *apiServer {
	t.Helper()
	bins := map[string]string{}
	for _, env := range []string{"ETCD_BIN", "APISERVER_BIN", "CONTROLLER_MANAGER_BIN"} {
		if bins[env] = os.Getenv(env); bins[env] == "" {
			t.Fatalf("%s is not set: run make e2e", env)
		}
	}
	nn := startNodeNet(t)
	pki := filepath.Join(dir, "pki-control-plane")
	ca := newTestCA(t, pki)
	s := &apiServer{URL: "https://127.0.0.1:" + apiserverPort, CA: ca, Net: nn, dir: dir}

	start(t, filepath.Join(dir, "etcd.log"), bins["ETCD_BIN"], "--data-dir", filepath.Join(dir, "etcd"),
		"--listen-client-urls", etcdClientURL, "--advertise-client-urls", etcdClientURL,
		"--listen-peer-urls", etcdPeerURL, "--initial-advertise-peer-urls", etcdPeerURL,
		"--initial-cluster", "default="+etcdPeerURL, "--unsafe-no-fsync")

	saKey := filepath.Join(pki, "sa.key")
	write(t, saKey, keyPEM(t, newKey(t)))
	serving, servingKey := ca.issue(t, "apiserver", "kube-apiserver", nil,
		"127.0.0.1", nn.HostIP, "10.96.0.1", "kubernetes", "kubernetes.default", "kubernetes.default.svc")
	kubeletClient, kubeletClientKey := ca.issue(t, "apiserver-kubelet-client", "kube-apiserver-kubelet-client", []string{"system:masters"})
	start(t, filepath.Join(dir, "apiserver.log"), bins["APISERVER_BIN"],
		"--etcd-servers="+etcdClientURL,
		"--bind-address=127.0.0.1", "--secure-port="+apiserverPort, "--advertise-address="+nn.HostIP,
		"--tls-cert-file="+serving, "--tls-private-key-file="+servingKey,
		"--client-ca-file="+ca.CertFile,
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file="+saKey, "--service-account-signing-key-file="+saKey,
		"--authorization-mode=Node,RBAC",
		"--enable-admission-plugins=NodeRestriction",
		"--kubelet-client-certificate="+kubeletClient, "--kubelet-client-key="+kubeletClientKey,
		"--kubelet-preferred-address-types=InternalIP",
		"--service-cluster-ip-range=10.96.0.0/24")
	s.Kubeconfig = ca.kubeconfig(t, s.URL, "admin", "kubeletcfg-e2e-admin", "system:masters")
	s.Client = s.client(t, s.Kubeconfig)

	deadline := time.Now().Add(90 * time.Second)
	for {
		code, body := s.do(t, http.MethodGet, "/readyz", "")
		if code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "apiserver.log"))
			t.Fatalf("kube-apiserver not ready within 90 s (%d %s):\n%s", code, body, tail(log))
		}
		time.Sleep(250 * time.Millisecond)
	}

	// Without the controller manager an eviction under a PodDisruptionBudget
	// is always refused, a dead kubelet never turns its Node NotReady, and
	// namespaces get no default ServiceAccount.
	kcm := ca.kubeconfig(t, s.URL, "controller-manager", "system:kube-controller-manager")
	start(t, filepath.Join(dir, "controller-manager.log"), bins["CONTROLLER_MANAGER_BIN"],
		"--kubeconfig="+kcm, "--authentication-kubeconfig="+kcm, "--authorization-kubeconfig="+kcm,
		"--bind-address=127.0.0.1", "--secure-port=0", "--leader-elect=false", "--use-service-account-credentials",
		"--service-account-private-key-file="+saKey, "--root-ca-file="+ca.CertFile,
		"--node-monitor-grace-period=20s")
	for {
		if _, err := s.Client.CoreV1().ServiceAccounts("default").Get(context.Background(), "default", metav1.GetOptions{}); err == nil {
			return s
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "controller-manager.log"))
			t.Fatalf("kube-controller-manager made no default ServiceAccount within 90 s:\n%s", tail(log))
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// client is a client-go clientset for a kubeconfig.
func (s *apiServer) client(t *testing.T, kubeconfig string) kubernetes.Interface {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// kubeletKubeconfig is the kubeconfig a kubelet registers NODE with: a
// client certificate for system:node:NODE in system:nodes.
func (s *apiServer) kubeletKubeconfig(t *testing.T, node string) string {
	t.Helper()
	return s.CA.kubeconfig(t, s.URL, "kubelet-"+node, "system:node:"+node, "system:nodes")
}

// registerNode creates a Node whose status points the API server at the
// kubelet on the host end of the test's veth, port 10250, as the kubelet's
// own registration would.
func (s *apiServer) registerNode(t *testing.T, name string) {
	t.Helper()
	s.registerNodeAt(t, name, s.Net.HostIP, 10250)
}

// registerNodeAt creates a Node whose kubelet the API server reaches at
// addr:port (an address on the test's veth: see nodeNet.addAddress).
func (s *apiServer) registerNodeAt(t *testing.T, name, addr string, port int32) {
	t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	n, err := s.Client.CoreV1().Nodes().Create(context.Background(), n, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create node %s: %v", name, err)
	}
	n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: addr}}
	n.Status.DaemonEndpoints.KubeletEndpoint.Port = port
	if _, err := s.Client.CoreV1().Nodes().UpdateStatus(context.Background(), n, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("node %s status: %v", name, err)
	}
}

// do sends one request as the administrator.
func (s *apiServer) do(t *testing.T, method, path, body string) (int, string) {
	t.Helper()
	pki := filepath.Join(s.dir, "pki-control-plane")
	cert, err := tls.LoadX509KeyPair(filepath.Join(pki, "admin.crt"), filepath.Join(pki, "admin.key"))
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(method, s.URL+path, bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		InsecureSkipVerify: true, Certificates: []tls.Certificate{cert}}}}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	out := new(bytes.Buffer)
	_, _ = out.ReadFrom(resp.Body)
	return resp.StatusCode, out.String()
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
