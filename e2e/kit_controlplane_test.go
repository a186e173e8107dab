//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"
)

// controlPlane is the run's real control plane: etcd, kube-apiserver and
// kube-controller-manager built by make e2e, x509 client certificates from
// one throwaway CA, Node and RBAC authorization, and the test's own network
// (a veth pair and a network namespace) for the addresses of its Nodes. It
// starts on the first useControlPlane and ends after the last test.
type controlPlane struct {
	URL        string // on the host end of the veth: reachable from the node namespace too
	Kubeconfig string // an administrator's (system:masters)
	CA         *testCA
	Net        *nodeNet
	Client     kubernetes.Interface
	fast       kubernetes.Interface // without client-go's rate limit, for the kit's cleanups
	dir        string

	etcd, apiserver, controllerManager *daemon
	kcmArgs                            []string

	mu       sync.Mutex
	isolated map[testing.TB]bool
	nsOf     map[testing.TB]string
}

const (
	etcdClientURL = "http://127.0.0.1:23790"
	etcdPeerURL   = "http://127.0.0.1:23800"
	apiserverPort = "16443"
)

var sharedControlPlane struct {
	once sync.Once
	cp   *controlPlane
	err  error
}

// useControlPlane is the run's control plane, started on first use. What
// the test creates of Nodes, their Leases, namespaces, cluster roles and
// bindings, and kube-system's ConfigMaps, Roles and RoleBindings is deleted
// when it ends, so that every test finds the cluster as the first did.
func useControlPlane(t testing.TB) *controlPlane {
	t.Helper()
	sharedControlPlane.once.Do(func() {
		// Set until the start succeeds: a t.Fatal inside leaves it.
		sharedControlPlane.err = fmt.Errorf("the shared control plane did not start (see %s)", t.Name())
		sharedControlPlane.cp = startControlPlane(t)
		sharedControlPlane.err = nil
	})
	if sharedControlPlane.err != nil {
		t.Fatal(sharedControlPlane.err)
	}
	cp := sharedControlPlane.cp
	cp.isolate(t)
	return cp
}

// startControlPlane starts etcd, kube-apiserver and kube-controller-manager
// until the end of the run, and waits until the API server is ready and the
// controllers run.
func startControlPlane(t testing.TB) *controlPlane {
	t.Helper()
	etcd, apiserver, kcm := env(t, "ETCD_BIN"), env(t, "APISERVER_BIN"), env(t, "CONTROLLER_MANAGER_BIN")
	dir := filepath.Join(kit.dir, "control-plane")
	nn := startNodeNet(t)
	pki := filepath.Join(dir, "pki")
	ca := newTestCA(t, pki)
	cp := &controlPlane{URL: "https://" + nn.HostIP + ":" + apiserverPort, CA: ca, Net: nn, dir: dir,
		isolated: map[testing.TB]bool{}, nsOf: map[testing.TB]string{}}
	daemon := func(name, bin string, args ...string) *daemon {
		d, err := startDaemon(name, filepath.Join(dir, name+".log"), nil, bin, args...)
		if err != nil {
			t.Fatal(err)
		}
		atTeardown(d.stop)
		return d
	}

	cp.etcd = daemon("etcd", etcd, "--data-dir", filepath.Join(dir, "etcd"),
		"--listen-client-urls", etcdClientURL, "--advertise-client-urls", etcdClientURL,
		"--listen-peer-urls", etcdPeerURL, "--initial-advertise-peer-urls", etcdPeerURL,
		"--initial-cluster", "default="+etcdPeerURL, "--unsafe-no-fsync")

	saKey := filepath.Join(pki, "sa.key")
	write(t, saKey, keyPEM(t, newKey(t)))
	serving, servingKey := ca.issue(t, "apiserver", "kube-apiserver", nil,
		"127.0.0.1", nn.HostIP, "10.96.0.1", "kubernetes", "kubernetes.default", "kubernetes.default.svc")
	kubeletClient, kubeletClientKey := ca.issue(t, "apiserver-kubelet-client", "kube-apiserver-kubelet-client", []string{"system:masters"})
	// Bound to the host end of the veth: kubelets in the node namespace
	// reach it there too.
	cp.apiserver = daemon("kube-apiserver", apiserver,
		"--etcd-servers="+etcdClientURL,
		"--bind-address="+nn.HostIP, "--secure-port="+apiserverPort, "--advertise-address="+nn.HostIP,
		"--tls-cert-file="+serving, "--tls-private-key-file="+servingKey,
		"--client-ca-file="+ca.CertFile,
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file="+saKey, "--service-account-signing-key-file="+saKey,
		"--authorization-mode=Node,RBAC",
		"--enable-admission-plugins=NodeRestriction",
		"--kubelet-client-certificate="+kubeletClient, "--kubelet-client-key="+kubeletClientKey,
		"--kubelet-preferred-address-types=InternalIP",
		"--service-cluster-ip-range=10.96.0.0/24",
		// kubeletcfg rollout's Jobs are privileged, as kubeadm's API server allows.
		"--allow-privileged=true")
	cp.Kubeconfig = ca.kubeconfig(t, cp.URL, "admin", "kubeletcfg-e2e-admin", "system:masters")
	cp.Client = cp.client(t, cp.Kubeconfig)
	cp.fast = fastClient(t, cp.Kubeconfig)

	deadline := time.Now().Add(90 * time.Second)
	for {
		code, body := cp.do(t, http.MethodGet, "/readyz", "")
		if code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) || cp.apiserver.exited() {
			t.Fatalf("kube-apiserver not ready within 90 s (%d %s):\n%s", code, body, cp.apiserver.tail())
		}
		time.Sleep(250 * time.Millisecond)
	}

	// Without the controller manager an eviction under a PodDisruptionBudget
	// is always refused, a dead kubelet never turns its Node NotReady, and
	// namespaces get no default ServiceAccount.
	kcmConfig := ca.kubeconfig(t, cp.URL, "controller-manager", "system:kube-controller-manager")
	cp.kcmArgs = []string{"--kubeconfig=" + kcmConfig, "--authentication-kubeconfig=" + kcmConfig, "--authorization-kubeconfig=" + kcmConfig,
		"--bind-address=127.0.0.1", "--secure-port=0", "--leader-elect=false", "--use-service-account-credentials",
		"--service-account-private-key-file=" + saKey, "--root-ca-file=" + ca.CertFile,
		"--node-monitor-grace-period=20s"}
	cp.controllerManager = daemon("kube-controller-manager", kcm, cp.kcmArgs...)
	cp.waitServiceAccount(t, "default", deadline)
	return cp
}

// waitServiceAccount waits until the controllers made ns's default
// ServiceAccount (pods cannot be created in ns before).
func (cp *controlPlane) waitServiceAccount(t testing.TB, ns string, deadline time.Time) {
	t.Helper()
	for {
		if _, err := cp.Client.CoreV1().ServiceAccounts(ns).Get(context.Background(), "default", metav1.GetOptions{}); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("kube-controller-manager made no default ServiceAccount in %s:\n%s", ns, cp.controllerManager.tail())
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// pauseControllerManager stops kube-controller-manager until the test
// ends (a benchmark whose thousands of lease-less Nodes it would turn
// Unknown).
func (cp *controlPlane) pauseControllerManager(t testing.TB) {
	t.Helper()
	cp.controllerManager.stop()
	t.Cleanup(func() {
		d, err := startDaemon("kube-controller-manager", filepath.Join(cp.dir, "kube-controller-manager-2.log"), nil,
			cp.controllerManager.cmd.Path, cp.kcmArgs...)
		if err == nil {
			cp.controllerManager = d
			atTeardown(d.stop)
		}
	})
}

// isolate deletes, when the test ends, what it created of the kinds below.
func (cp *controlPlane) isolate(t testing.TB) {
	cp.mu.Lock()
	done := cp.isolated[t]
	cp.isolated[t] = true
	cp.mu.Unlock()
	if done {
		return
	}
	ctx := context.Background()
	c := cp.fast
	opts := metav1.ListOptions{}
	del := metav1.DeleteOptions{}
	kinds := []struct {
		name string
		list func() ([]string, error)
		del  func(string) error
	}{
		{"node", func() ([]string, error) {
			l, err := c.CoreV1().Nodes().List(ctx, opts)
			if err != nil {
				return nil, err
			}
			return itemNames(l.Items), nil
		}, func(n string) error { return c.CoreV1().Nodes().Delete(ctx, n, del) }},
		{"lease", func() ([]string, error) {
			l, err := c.CoordinationV1().Leases("kube-node-lease").List(ctx, opts)
			if err != nil {
				return nil, err
			}
			return itemNames(l.Items), nil
		}, func(n string) error { return c.CoordinationV1().Leases("kube-node-lease").Delete(ctx, n, del) }},
		{"namespace", func() ([]string, error) {
			l, err := c.CoreV1().Namespaces().List(ctx, opts)
			if err != nil {
				return nil, err
			}
			return itemNames(l.Items), nil
		}, func(n string) error { return c.CoreV1().Namespaces().Delete(ctx, n, del) }},
		{"clusterrole", func() ([]string, error) {
			l, err := c.RbacV1().ClusterRoles().List(ctx, opts)
			if err != nil {
				return nil, err
			}
			return itemNames(l.Items), nil
		}, func(n string) error { return c.RbacV1().ClusterRoles().Delete(ctx, n, del) }},
		{"clusterrolebinding", func() ([]string, error) {
			l, err := c.RbacV1().ClusterRoleBindings().List(ctx, opts)
			if err != nil {
				return nil, err
			}
			return itemNames(l.Items), nil
		}, func(n string) error { return c.RbacV1().ClusterRoleBindings().Delete(ctx, n, del) }},
		{"kube-system configmap", func() ([]string, error) {
			l, err := c.CoreV1().ConfigMaps("kube-system").List(ctx, opts)
			if err != nil {
				return nil, err
			}
			return itemNames(l.Items), nil
		}, func(n string) error { return c.CoreV1().ConfigMaps("kube-system").Delete(ctx, n, del) }},
		{"kube-system role", func() ([]string, error) {
			l, err := c.RbacV1().Roles("kube-system").List(ctx, opts)
			if err != nil {
				return nil, err
			}
			return itemNames(l.Items), nil
		}, func(n string) error { return c.RbacV1().Roles("kube-system").Delete(ctx, n, del) }},
		{"kube-system rolebinding", func() ([]string, error) {
			l, err := c.RbacV1().RoleBindings("kube-system").List(ctx, opts)
			if err != nil {
				return nil, err
			}
			return itemNames(l.Items), nil
		}, func(n string) error { return c.RbacV1().RoleBindings("kube-system").Delete(ctx, n, del) }},
	}
	before := make([]map[string]bool, len(kinds))
	for i, k := range kinds {
		l, err := k.list()
		if err != nil {
			t.Fatalf("list %ss: %v", k.name, err)
		}
		before[i] = map[string]bool{}
		for _, n := range l {
			before[i][n] = true
		}
	}
	t.Cleanup(func() {
		cp.mu.Lock()
		delete(cp.isolated, t)
		delete(cp.nsOf, t)
		cp.mu.Unlock()
		for i, k := range kinds {
			l, err := k.list()
			if err != nil {
				t.Logf("cleanup: list %ss: %v", k.name, err)
				continue
			}
			var wg sync.WaitGroup
			work := make(chan string)
			for range 16 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for n := range work {
						_ = k.del(n)
					}
				}()
			}
			for _, n := range l {
				if !before[i][n] {
					work <- n
				}
			}
			close(work)
			wg.Wait()
		}
	})
}

// itemNames are the names of a list's items.
func itemNames[T any, P interface {
	*T
	metav1.Object
}](items []T) []string {
	out := make([]string, len(items))
	for i := range items {
		out[i] = P(&items[i]).GetName()
	}
	return out
}

var nonName = regexp.MustCompile(`[^a-z0-9-]+`)

// namespace is the test's own namespace (created on first use, deleted
// when the test ends), with its default ServiceAccount.
func (cp *controlPlane) namespace(t testing.TB) string {
	t.Helper()
	cp.mu.Lock()
	ns := cp.nsOf[t]
	cp.mu.Unlock()
	if ns != "" {
		return ns
	}
	ns = strings.Trim(nonName.ReplaceAllString(strings.ToLower(t.Name()), "-"), "-")
	if len(ns) > 50 {
		ns = ns[:50]
	}
	ns = fmt.Sprintf("%s-%d", ns, time.Now().UnixNano()%100000)
	if _, err := cp.Client.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cp.waitServiceAccount(t, ns, time.Now().Add(30*time.Second))
	cp.mu.Lock()
	cp.nsOf[t] = ns
	cp.mu.Unlock()
	return ns
}

// client is a client-go clientset for a kubeconfig.
func (cp *controlPlane) client(t testing.TB, kubeconfig string) kubernetes.Interface {
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

// fastClient is a clientset without client-go's default rate limit (5
// requests a second), for creating or deleting many objects.
func fastClient(t testing.TB, kubeconfig string) kubernetes.Interface {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = -1, 0
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// kubeletKubeconfig is the kubeconfig a kubelet registers NODE with: a
// client certificate for system:node:NODE in system:nodes.
func (cp *controlPlane) kubeletKubeconfig(t testing.TB, node string) string {
	t.Helper()
	return cp.CA.kubeconfig(t, cp.URL, "kubelet-"+node, "system:node:"+node, "system:nodes")
}

// registerNode creates a Node whose status points the API server at the
// kubelet on the host end of the test's veth, port 10250, as the kubelet's
// own registration would.
func (cp *controlPlane) registerNode(t testing.TB, name string) {
	t.Helper()
	cp.registerNodeAt(t, name, cp.Net.HostIP, 10250)
}

// registerNodeAt creates a Node whose kubelet the API server reaches at
// addr:port (an address on the test's veth: see nodeNet.addAddress).
func (cp *controlPlane) registerNodeAt(t testing.TB, name, addr string, port int32) {
	t.Helper()
	ctx := context.Background()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := cp.Client.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create node %s: %v", name, err)
	}
	// The controllers change a new Node too (taints, annotations).
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := cp.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: addr}}
		n.Status.DaemonEndpoints.KubeletEndpoint.Port = port
		_, err = cp.Client.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("node %s status: %v", name, err)
	}
}

// do sends one request as the administrator.
func (cp *controlPlane) do(t testing.TB, method, path, body string) (int, string) {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(filepath.Join(cp.CA.dir, "admin.crt"), filepath.Join(cp.CA.dir, "admin.key"))
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(method, cp.URL+path, bytes.NewBufferString(body))
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
