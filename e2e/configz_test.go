//go:build e2e

package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubeletcfg/kubeletcfg/config"
	"github.com/kubeletcfg/kubeletcfg/effective"
	"github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

// TestEffectiveEqualsConfigz starts the real kubelet with a config file,
// drop-ins (one nested, one hidden) and flags on top, reads what it serves
// on /configz, and checks that kubeletcfg's effective configuration of the
// same setup is exactly that.
func TestEffectiveEqualsConfigz(t *testing.T) {
	n := newNode(t, nodeOptions{noStart: true})
	v, err := schema.Resolve(n.Minor)
	if err != nil {
		t.Fatal(err)
	}

	write(t, n.Config, n.Base+`cgroupDriver: cgroupfs
maxPods: 50
evictionHard:
  memory.available: 50Mi
systemReserved:
  cpu: 100m
logging:
  verbosity: 1
`)
	dir := n.Dir
	write(t, filepath.Join(dir, "conf.d", "10-pods.conf"), "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: 60\nkubeReserved:\n  memory: 64Mi\n")
	write(t, filepath.Join(dir, "conf.d", "sub", "20-eviction.conf"), "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nevictionHard:\n  nodefs.available: 5%\nsystemReserved: null\n")
	write(t, filepath.Join(dir, "conf.d", ".hidden.conf"), "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nsyncFrequency: 45s\n")
	write(t, filepath.Join(dir, "conf.d", "ignored.yaml"), "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: 1\n")
	args := append(n.Args, "--max-pods=70", "--eviction-soft=memory.available<80Mi", "--eviction-soft-grace-period=memory.available=30s", "--v=2")
	n.setArgs(t, args...)
	n.start(t)
	got := fetchConfigz(t)
	res, err := effective.Compute(effective.Input{Setup: node.Given(v, args...)})
	if err != nil {
		t.Fatal(err)
	}
	want, err := config.JSON(res.Running(), v)
	if err != nil {
		t.Fatal(err)
	}
	var wantMap, gotMap map[string]any
	if err := json.Unmarshal(want, &wantMap); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(got, &gotMap); err != nil {
		t.Fatal(err)
	}
	delete(gotMap, "apiVersion") // /configz serves the type meta too
	delete(gotMap, "kind")
	if diff := cmp.Diff(gotMap, wantMap); diff != "" {
		t.Errorf("kubeletcfg effective differs from the running kubelet's /configz (-configz +kubeletcfg):\n%s", diff)
	}
	if gotMap["maxPods"] != float64(70) {
		t.Errorf("the flag should win: maxPods = %v", gotMap["maxPods"])
	}

	// diff --live, from the command line, against the running kubelet.
	live := []string{"diff", "--live", "--insecure", "--kubelet-version", v.Minor}
	code, out, errOut := kubeletcfg(t, nil, append(append(live, "--"), args...)...)
	if code != 0 || !strings.Contains(out+errOut, "no change") {
		t.Errorf("diff --live of the setup the kubelet runs: exit %d\n%s%s", code, out, errOut)
	}
	drifted := filepath.Join(dir, "drifted.yaml")
	write(t, drifted, "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncgroupDriver: cgroupfs\nfailCgroupV1: false\nmaxPods: 70\n")
	code, out, errOut = kubeletcfg(t, nil, append(live, drifted)...)
	if code != 1 || !strings.Contains(out+errOut, "evictionHard") {
		t.Errorf("diff --live against another file: want exit 1 and evictionHard among the changes, got exit %d\n%s%s", code, out, errOut)
	}

	// diff --live through a real API server's node proxy, with a kubeconfig.
	api := useControlPlane(t)
	api.registerNode(t, "e2e-node")
	proxied := []string{"diff", "--live", "--kubeconfig", api.Kubeconfig, "--node", "e2e-node", "--kubelet-version", v.Minor}
	code, out, errOut = kubeletcfg(t, nil, append(append(proxied, "--"), args...)...)
	if code != 0 || !strings.Contains(out+errOut, "no change") {
		t.Errorf("diff --live through the API server: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = kubeletcfg(t, nil, append(proxied, "-o", "json", drifted)...)
	var report struct {
		Old     string `json:"old"`
		Changes []struct {
			Path string `json:"path"`
		} `json:"changes"`
	}
	if code != 1 || json.Unmarshal([]byte(out), &report) != nil ||
		report.Old != api.URL+"/api/v1/nodes/e2e-node/proxy/configz" || !strings.Contains(out, `"path": "evictionHard"`) {
		t.Errorf("diff --live through the API server against another file: want exit 1, the proxy URL as old and evictionHard among the changes, got exit %d\n%s%s", code, out, errOut)
	}
	missing := []string{"diff", "--live", "--kubeconfig", api.Kubeconfig, "--node", "no-such-node", "--kubelet-version", v.Minor, drifted}
	code, out, errOut = kubeletcfg(t, nil, missing...)
	if code != 2 || !strings.Contains(out+errOut, "404") || !strings.Contains(out+errOut, "no-such-node") {
		t.Errorf("diff --live for a node the API server does not know: want exit 2 naming the node and 404, got exit %d\n%s%s", code, out, errOut)
	}
}
