//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// simAddr is where the simulated kubelets listen: an address of the test's
// own veth (see nodeNet).
const simAddr = "10.213.14.1"

// fleetReport is what the tests read of fleet -o json.
type fleetReport struct {
	Reference string `json:"reference"`
	Nodes     []struct {
		Name       string `json:"name"`
		Ready      string `json:"ready"`
		Group      int    `json:"group"`
		Matches    bool   `json:"matches"`
		Attempts   int    `json:"attempts"`
		Skew       string `json:"skew"`
		Unreadable *struct {
			Reason  string `json:"reason"`
			Message string `json:"message"`
		} `json:"unreadable"`
		Differs []struct {
			Path string `json:"path"`
			Old  any    `json:"old"`
			New  any    `json:"new"`
		} `json:"differs"`
	} `json:"nodes"`
	Groups []struct {
		ID       int      `json:"id"`
		Count    int      `json:"count"`
		Nodes    []string `json:"nodes"`
		Matches  bool     `json:"matches"`
		Versions []struct {
			Minor string `json:"minor"`
			Count int    `json:"count"`
		} `json:"versions"`
	} `json:"groups"`
	Skew struct {
		APIServerMinor string `json:"apiServerMinor"`
		Minors         []struct {
			Minor   string `json:"minor"`
			Nodes   int    `json:"nodes"`
			Problem string `json:"problem"`
			Upgrade []struct {
				Groups   []int `json:"groups"`
				Findings []struct {
					Severity, Subject, Message string
				} `json:"findings"`
			} `json:"upgrade"`
		} `json:"minors"`
	} `json:"skew"`
}

// uploadKubeletConfig has kubeadm write kube-system/kubelet-config as it
// does at init (init phase upload-config kubelet) for a cluster whose
// KubeletConfiguration sets what testdata/validate/ok-typical.yaml sets;
// kubeadm's own defaults give the rest of that file (cgroupDriver,
// authentication, clusterDNS from the service subnet, staticPodPath) but
// containerRuntimeEndpoint, which kubeadm keeps per node.
func uploadKubeletConfig(t testing.TB, api *controlPlane, dir string) {
	t.Helper()
	bin := os.Getenv("KUBEADM_BIN")
	if bin == "" {
		t.Fatal("KUBEADM_BIN is not set: run make e2e")
	}
	cfg := filepath.Join(dir, "kubeadm.yaml")
	write(t, cfg, `apiVersion: kubeadm.k8s.io/v1beta4
kind: InitConfiguration
localAPIEndpoint:
  advertiseAddress: `+api.Net.HostIP+`
nodeRegistration:
  name: e2e-kubeadm
  criSocket: unix:///var/run/containerd/containerd.sock
---
apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
kubernetesVersion: v1.37.2
networking:
  serviceSubnet: 10.96.0.0/12
  dnsDomain: cluster.local
---
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
evictionHard:
  memory.available: 200Mi
  nodefs.available: 10%
kubeReserved:
  cpu: 100m
  memory: 256Mi
systemReserved:
  cpu: 100m
  memory: 256Mi
maxPods: 250
serverTLSBootstrap: true
tlsMinVersion: VersionTLS12
`)
	out, err := exec.Command(bin, "init", "phase", "upload-config", "kubelet", "--config", cfg, "--kubeconfig", api.Kubeconfig).CombinedOutput()
	if err != nil {
		t.Fatalf("kubeadm init phase upload-config kubelet: %v\n%s", err, out)
	}
	cm, err := api.Client.CoreV1().ConfigMaps("kube-system").Get(context.Background(), "kubelet-config", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("kube-system/kubelet-config as kubeadm wrote it:\n%s", cm.Data["kubelet"])
}

// renewLeases keeps the simulated nodes' Leases fresh, as their kubelets
// would, so that the node lifecycle controller leaves them Ready.
func renewLeases(t testing.TB, c kubernetes.Interface, names []string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	leases := c.CoordinationV1().Leases("kube-node-lease")
	duration := int32(40)
	for _, name := range names {
		holder := name
		now := metav1.NewMicroTime(time.Now())
		l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &duration, RenewTime: &now}}
		if _, err := leases.Create(ctx, l, metav1.CreateOptions{}); err != nil {
			t.Fatalf("lease %s: %v", name, err)
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(4 * time.Second):
			}
			for _, name := range names {
				l, err := leases.Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					continue
				}
				now := metav1.NewMicroTime(time.Now())
				l.Spec.RenewTime = &now
				_, _ = leases.Update(ctx, l, metav1.UpdateOptions{})
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
}

// runFleet runs kubeletcfg fleet and returns its exit code, stdout, stderr.
func runFleet(t testing.TB, args ...string) (int, string, string) {
	t.Helper()
	return kubeletcfg(t, nil, append([]string{"fleet"}, args...)...)
}

func decodeFleet(t testing.TB, out string) fleetReport {
	t.Helper()
	var rep fleetReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("fleet -o json: %v\n%s", err, out)
	}
	return rep
}

// TestFleet scans a real control plane whose nodes are the real kubelet and
// simulated kubelets: some running the same configuration under 1.33, 1.36
// and 1.37 (from the kubelet's own code of each), two drifted, one with
// another runtime socket, and some that cannot be read (hanging, refusing,
// not speaking TLS, NotReady, a kubelet version kubeletcfg does not know).
func TestFleet(t *testing.T) {
	n := newNode(t, nodeOptions{cluster: true})
	api := n.API
	api.Net.addAddress(t, simAddr)
	sims := newSimKubelets(t, simAddr)
	typical := func(minor string) []byte { return referenceEffective(t, minor, "ok-typical.yaml") }
	label := func(role string) map[string]string { return map[string]string{"fleet-e2e": role} }
	nodes := []simNode{
		{name: "typical-37-1", version: "v1.37.2", port: sims.serve(t, typical("1.37")), labels: label("typical")},
		{name: "typical-37-2", version: "v1.37.2", port: sims.serve(t, typical("1.37")), labels: label("typical")},
		{name: "typical-37-3", version: "v1.37.0", port: sims.serve(t, typical("1.37")), labels: label("typical")},
		{name: "typical-36-1", version: "v1.36.4", port: sims.serve(t, typical("1.36")), labels: label("typical")},
		{name: "typical-36-2", version: "v1.36.4", port: sims.serve(t, typical("1.36")), labels: label("typical")},
		{name: "typical-33-1", version: "v1.33.9", port: sims.serve(t, typical("1.33")), labels: label("typical")},
		{name: "crio-37-1", version: "v1.37.2", labels: label("typical"),
			port: sims.serve(t, edited(t, typical("1.37"), map[string]any{"containerRuntimeEndpoint": "unix:///var/run/crio/crio.sock"}))},
		{name: "drift-37-1", version: "v1.37.2", port: sims.serve(t, edited(t, typical("1.37"), map[string]any{"maxPods": 300})), labels: label("drift")},
		{name: "drift-37-2", version: "v1.37.2", port: sims.serve(t, edited(t, typical("1.37"), map[string]any{"maxPods": 300})), labels: label("drift")},
		{name: "hang-1", version: "v1.37.2", port: sims.serve(t, nil), labels: label("broken")},
		{name: "refused-1", version: "v1.37.2", port: sims.refusing(t), labels: label("broken")},
		{name: "plain-1", version: "v1.37.2", port: sims.plainHTTP(t, typical("1.37")), labels: label("broken")},
		{name: "notready-1", version: "v1.37.2", port: sims.refusing(t), ready: corev1.ConditionFalse, labels: label("broken")},
		{name: "future-1", version: "v1.38.0", port: sims.serve(t, typical("1.37")), labels: label("broken")},
	}
	var names []string
	for _, sn := range nodes {
		names = append(names, sn.name)
	}
	createNodes(t, api.Client, simAddr, nodes)
	renewLeases(t, api.Client, names)
	ctx := context.Background()
	uploadKubeletConfig(t, api, n.Dir)

	kc := []string{"--kubeconfig", api.Kubeconfig, "--timeout", "2s"}

	// Every node, compared with each other.
	code, out, errOut := runFleet(t, append(kc, "-o", "json")...)
	if code != 1 {
		t.Fatalf("fleet: exit %d, want 1 (drift)\n%s\n%s", code, out, errOut)
	}
	rep := decodeFleet(t, out)
	byName := map[string]int{}
	for i, nd := range rep.Nodes {
		byName[nd.Name] = i
	}
	if len(rep.Nodes) != len(nodes)+1 {
		t.Errorf("%d nodes in the report, want %d", len(rep.Nodes), len(nodes)+1)
	}
	g1 := rep.Groups[0]
	if g1.Count != 7 || !g1.Matches || fmt.Sprint(g1.Versions) != "[{1.33 1} {1.36 2} {1.37 4}]" ||
		strings.Join(g1.Nodes, ",") != "crio-37-1,typical-33-1,typical-36-1,typical-36-2,typical-37-1,typical-37-2,typical-37-3" {
		t.Errorf("group 1: want the 7 typical nodes of 1.33, 1.36 and 1.37 (crio's socket is its own), got %+v", g1)
	}
	drift := rep.Nodes[byName["drift-37-1"]]
	if drift.Group != 2 || drift.Matches || len(drift.Differs) != 1 || drift.Differs[0].Path != "maxPods" ||
		drift.Differs[0].Old != float64(250) || drift.Differs[0].New != float64(300) {
		t.Errorf("drift-37-1: want group 2, maxPods 250 -> 300, got %+v", drift)
	}
	real := rep.Nodes[byName[n.Name]]
	// Its containerd 2 decides its cgroupDriver (cgroupfs, the ConfigMap's
	// systemd notwithstanding): the node's own, never drift.
	if real.Unreadable != nil || real.Group != 3 || real.Matches || hasPath(real.Differs, "cgroupDriver") || !hasPath(real.Differs, "maxPods") {
		t.Errorf("the real kubelet %s: want read, group 3, differing in maxPods and not in the runtime's cgroupDriver, got %+v", n.Name, real)
	}
	for name, want := range map[string]string{"hang-1": "timeout", "refused-1": "refused", "plain-1": "tls",
		"notready-1": "refused", "future-1": "unsupported-version"} {
		nd := rep.Nodes[byName[name]]
		if nd.Unreadable == nil || nd.Unreadable.Reason != want {
			t.Errorf("%s: want unreadable (%s), got %+v", name, want, nd.Unreadable)
		} else {
			t.Logf("%s: %s: %s", name, nd.Unreadable.Reason, nd.Unreadable.Message)
		}
	}
	if nd := rep.Nodes[byName["notready-1"]]; nd.Ready != "False" || nd.Attempts != 1 {
		t.Errorf("notready-1: Ready=%s after %d attempts, want False and one attempt", nd.Ready, nd.Attempts)
	}
	if nd := rep.Nodes[byName["refused-1"]]; nd.Attempts != 2 {
		t.Errorf("refused-1 (Ready): %d attempts, want 2", nd.Attempts)
	}
	if !strings.Contains(rep.Nodes[byName["typical-33-1"]].Skew, "4 minors older") ||
		!strings.Contains(rep.Nodes[byName["future-1"]].Skew, "newer than the API server") || rep.Nodes[byName["typical-36-1"]].Skew != "" {
		t.Errorf("skew: 1.33 %q, 1.38 %q, 1.36 %q", rep.Nodes[byName["typical-33-1"]].Skew, rep.Nodes[byName["future-1"]].Skew, rep.Nodes[byName["typical-36-1"]].Skew)
	}
	for _, m := range rep.Skew.Minors {
		if m.Minor != "1.33" {
			continue
		}
		found := false
		for _, u := range m.Upgrade {
			for _, f := range u.Findings {
				found = found || f.Subject == "failCgroupV1" && strings.HasPrefix(f.Message, "false -> true")
			}
		}
		if !found {
			t.Errorf("1.33 -> %s: want failCgroupV1 false -> true among the findings, got %+v", rep.Skew.APIServerMinor, m.Upgrade)
		}
	}
	if !strings.Contains(errOut, "nodes read") {
		t.Errorf("a scan of seconds (a hanging node) shows no progress on stderr:\n%s", errOut)
	}

	// The typical nodes against kubeadm's ConfigMap: they run what it says.
	code, out, errOut = runFleet(t, append(kc, "--against-configmap", "--selector", "fleet-e2e=typical")...)
	if code != 0 || !strings.Contains(out, "group 1: 7 nodes, kubelet 1.33 (1), 1.36 (2), 1.37 (4): matches") ||
		!strings.Contains(out, `per node, not compared: containerRuntimeEndpoint = "unix:///var/run/containerd/containerd.sock" (6), "unix:///var/run/crio/crio.sock" (1)`) {
		t.Errorf("typical nodes against the ConfigMap: exit %d, want 0\n%s\n%s", code, out, errOut)
	}
	// All of them: the drifted ones and the real kubelet differ.
	code, out, errOut = runFleet(t, append(kc, "--against-configmap", "-o", "json")...)
	if rep = decodeFleet(t, out); code != 1 || rep.Reference != "ConfigMap kube-system/kubelet-config" {
		t.Errorf("every node against the ConfigMap: exit %d, want 1\n%s", code, errOut)
	}
	// Against the file the typical nodes run.
	code, out, errOut = runFleet(t, append(kc, "--against", "../testdata/validate/ok-typical.yaml", "--selector", "fleet-e2e in (typical,drift)")...)
	if code != 1 || !strings.Contains(out, "maxPods: 250 -> 300  [restart]") || !strings.Contains(out, "group 1: 7 nodes") {
		t.Errorf("against ok-typical.yaml: exit %d, want 1 with maxPods 250 -> 300\n%s\n%s", code, out, errOut)
	}
	t.Logf("fleet --against ok-typical.yaml:\n%s", out)
	// Nothing readable: exit 2.
	if code, out, errOut = runFleet(t, append(kc, "--selector", "fleet-e2e=broken")...); code != 2 || !strings.Contains(errOut, "none of the 5 nodes could be read") {
		t.Errorf("only unreadable nodes: exit %d, want 2\n%s\n%s", code, out, errOut)
	}

	// A user who may list nodes but not get nodes/proxy (RBAC).
	viewer := api.CA.kubeconfig(t, api.URL, "fleet-viewer", "fleet-viewer")
	rbac := api.Client.RbacV1()
	if _, err := rbac.ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "fleet-viewer"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list"}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := rbac.ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "fleet-viewer"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "fleet-viewer"},
		Subjects: []rbacv1.Subject{{Kind: "User", Name: "fleet-viewer"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runFleet(t, "--kubeconfig", viewer, "--selector", "fleet-e2e=typical", "-o", "json")
	rep = decodeFleet(t, out)
	if code != 2 || len(rep.Nodes) != 7 || !strings.Contains(errOut, "none of the 7 nodes could be read") {
		t.Fatalf("without nodes/proxy: exit %d, want 2 with the 7 nodes listed\n%s\n%s", code, out, errOut)
	}
	for _, nd := range rep.Nodes {
		if nd.Unreadable == nil || nd.Unreadable.Reason != "forbidden" || !strings.Contains(nd.Unreadable.Message, "nodes/proxy") {
			t.Errorf("%s without nodes/proxy: %+v", nd.Name, nd.Unreadable)
		}
	}
	if code, _, errOut = runFleet(t, "--kubeconfig", viewer, "--against-configmap"); code != 2 || !strings.Contains(errOut, "kube-system/kubelet-config") {
		t.Errorf("the ConfigMap without get on configmaps: exit %d, want 2 naming it\n%s", code, errOut)
	}
}

func hasPath(changes []struct {
	Path string `json:"path"`
	Old  any    `json:"old"`
	New  any    `json:"new"`
}, path string) bool {
	for _, c := range changes {
		if c.Path == path {
			return true
		}
	}
	return false
}
