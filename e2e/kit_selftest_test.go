//go:build e2e

package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestKitSecondNode checks the kit's second node: two real kubelets on the
// one control plane at once, the second in its own network namespace with
// its own containerd, cgroupRoot and pod network; a pod runs on each, the
// API server reaches both kubelets, and kubeletcfg apply run in the second
// node's namespace changes its kubelet (Ready and Lease checked) while the
// first runs on.
func TestKitSecondNode(t *testing.T) {
	began := time.Now()
	first := newNode(t, nodeOptions{cluster: true})
	t.Logf("first node Ready after %s", time.Since(began).Round(time.Millisecond))
	second := newNode(t, nodeOptions{second: true})
	t.Logf("second node Ready after %s", time.Since(began).Round(time.Millisecond))
	if first.Namespace != second.Namespace {
		t.Errorf("the nodes of one test are in namespaces %s and %s", first.Namespace, second.Namespace)
	}
	one, two := first.replicaSet(t, "one"), second.replicaSet(t, "two")
	t.Logf("a pod on each after %s", time.Since(began).Round(time.Millisecond))
	if one.Spec.NodeName != first.Name || two.Spec.NodeName != second.Name || !strings.HasPrefix(two.Status.PodIP, "10.213.2.") {
		t.Errorf("pods: %s on %s at %s, %s on %s at %s", one.Name, one.Spec.NodeName, one.Status.PodIP, two.Name, two.Spec.NodeName, two.Status.PodIP)
	}
	configzOf := func(n *kubeletNode) map[string]any {
		code, body := n.API.do(t, http.MethodGet, "/api/v1/nodes/"+n.Name+"/proxy/configz", "")
		var wrapped struct {
			KubeletConfig map[string]any `json:"kubeletconfig"`
		}
		if code != http.StatusOK || json.Unmarshal([]byte(body), &wrapped) != nil {
			t.Fatalf("configz of %s through the API server: %d %s", n.Name, code, body)
		}
		return wrapped.KubeletConfig
	}
	if got := configzOf(second)["cgroupRoot"]; got != "/e2e-node-2" {
		t.Errorf("the second node's cgroupRoot = %v, want /e2e-node-2", got)
	}
	if got, set := configzOf(first)["cgroupRoot"]; set {
		t.Errorf("the first node's cgroupRoot = %v, want none (/)", got)
	}

	firstPid := readPid(first.PidFile)
	apply := second.command(kit.kubeletcfg, second.argv("apply", "-f", second.writeNew(t, "maxPods: 42\n"),
		"--kubeconfig", second.API.Kubeconfig, "--stable-for", "2s", "--health-timeout", "30s")...)
	start := time.Now()
	if out, err := apply.CombinedOutput(); err != nil {
		t.Fatalf("apply in the second node's namespace: %v\n%s", err, out)
	}
	t.Logf("apply on the second node: %s", time.Since(start).Round(time.Millisecond))
	if got := configzOf(second)["maxPods"]; got != float64(42) {
		t.Errorf("the second node's maxPods = %v after the apply, want 42", got)
	}
	if readPid(first.PidFile) != firstPid || !running(firstPid) {
		t.Error("the first node's kubelet did not run on through the second's apply")
	}
}

// TestKitSystemdRuntimes checks the runtimes the nspawn tree can run: with
// containerd 2 the kubelet runs the cgroup driver of containerd's runc
// options whatever its config file says, with either driver; with
// containerd 1.6 (no RuntimeConfig) the one its file says.
func TestKitSystemdRuntimes(t *testing.T) {
	for _, c := range []struct {
		name       string
		o          systemdOptions
		file, want string
	}{
		{"containerd2-systemd", systemdOptions{}, "cgroupfs", "systemd"},
		{"containerd2-cgroupfs", systemdOptions{cgroupfs: true}, "systemd", "cgroupfs"},
		{"containerd1.6-no-RuntimeConfig", systemdOptions{runtime: containerd16NoRuntimeConfig}, "systemd", "systemd"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := useSystemdNode(t, c.o)
			if code, out := s.inside(t, "sh", "-c", "sed -i 's/^cgroupDriver: .*/cgroupDriver: "+c.file+"/' /var/lib/kubelet/config.yaml && systemctl restart kubelet"); code != 0 {
				t.Fatalf("exit %d\n%s", code, out)
			}
			s.waitHealthy(t)
			if got := configzField(t, "cgroupDriver"); got != c.want {
				t.Errorf("%s, the kubelet's file saying %s: it runs %v, want %s", c.name, c.file, got, c.want)
			}
			_, version := s.inside(t, "sh", "-c", "systemctl show containerd -p ExecStart --value | grep -o 'path=[^ ;]*'; runc --version | head -1")
			t.Logf("%s: file %s, runs %s (%s)", c.name, c.file, c.want, strings.Join(strings.Fields(version), " "))
		})
	}
}
