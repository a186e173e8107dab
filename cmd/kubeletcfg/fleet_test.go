package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/kubelet/config/v1beta1"

	"github.com/kubeletcfg/kubeletcfg/fleet/fleettest"
)

func TestFleetExitCodesAndOutput(t *testing.T) {
	sock := "unix:///run/containerd/containerd.sock"
	same := fleettest.Serves(fleettest.KubeadmNode(t, "1.37", sock, nil))
	worker := map[string]string{"role": "worker"}
	api := fleettest.NewAPIServer(t, "v1.37.2", fleettest.KubeadmConfigMap, []fleettest.Node{
		{Name: "w-1", Version: "v1.37.2", Ready: "True", Labels: worker, Answer: same},
		{Name: "w-2", Version: "v1.37.2", Ready: "True", Labels: worker, Answer: same},
		{Name: "w-3", Version: "v1.36.2", Ready: "True", Labels: worker, Answer: fleettest.Serves(fleettest.KubeadmNode(t, "1.36", sock, nil))},
		{Name: "cp-1", Version: "v1.37.2", Ready: "True", Answer: fleettest.Serves(fleettest.KubeadmNode(t, "1.37", sock, func(c *v1beta1.KubeletConfiguration) {
			c.MaxPods = 30
		}))},
		{Name: "gone", Version: "v1.37.2", Ready: "False", Labels: map[string]string{"role": "broken"},
			Answer: fleettest.ProxyError(503, "error trying to reach service: dial tcp 10.213.1.9:10250: connect: connection refused")},
	})
	kc := []string{"fleet", "--kubeconfig", api.Kubeconfig}

	code, out, errOut := runCLI(t, append(kc, "--selector", "role=worker", "--against-configmap")...)
	if code != 0 || !strings.Contains(out, "3 nodes, 3 read, 0 unreadable") || !strings.Contains(out, "group 1: 3 nodes, kubelet 1.36 (1), 1.37 (2): matches") ||
		!strings.Contains(out, "against ConfigMap kube-system/kubelet-config") || !strings.Contains(out, "kubelet 1.36: 1 node: ok") {
		t.Errorf("workers against the ConfigMap: exit %d, want 0\n%s%s", code, out, errOut)
	}
	if strings.Contains(errOut, "nodes read") {
		t.Errorf("progress for a scan of a moment: %s", errOut)
	}

	code, out, errOut = runCLI(t, kc...)
	t.Log(out)
	if code != 1 || !strings.Contains(out, "group 2: 1 node, kubelet 1.37 (1): differs in 1 field") ||
		!strings.Contains(out, "  maxPods: 110 -> 30  [restart]") || !strings.Contains(out, "  gone  refused (NotReady: Ready=False KubeletNotReady: container runtime is down)") {
		t.Errorf("all nodes with each other: exit %d, want 1\n%s%s", code, out, errOut)
	}

	code, out, _ = runCLI(t, append(kc, "-o", "json", "--selector", "role=worker")...)
	var rep struct {
		Nodes []struct {
			Name    string         `json:"name"`
			Group   int            `json:"group"`
			Matches bool           `json:"matches"`
			PerNode map[string]any `json:"perNode"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil || len(rep.Nodes) != 3 || rep.Nodes[0].Group != 1 ||
		!rep.Nodes[0].Matches || rep.Nodes[0].PerNode["containerRuntimeEndpoint"] != sock {
		t.Errorf("-o json: exit %d (%v)\n%s", code, err, out)
	}
	if code, out, _ = runCLI(t, append(kc, "-o", "yaml", "--selector", "role=worker")...); code != 0 || !strings.Contains(out, "apiServerVersion: v1.37.2") {
		t.Errorf("-o yaml: exit %d\n%s", code, out)
	}
	// Nothing read, in JSON: the report, and the reason on stderr only.
	code, out, errOut = runCLI(t, append(kc, "-o", "json", "--selector", "role=broken")...)
	if err := json.Unmarshal([]byte(out), &rep); code != 2 || err != nil || len(rep.Nodes) != 1 || !strings.Contains(errOut, "none of the 1 nodes could be read") {
		t.Errorf("-o json, nothing read: exit %d (%v)\n%s%s", code, err, out, errOut)
	}

	file := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(file, []byte("apiVersion: v1\nkind: Pod\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, args := range map[string][]string{
		"nothing read":    append(kc, "--selector", "role=broken"),
		"no node":         append(kc, "--selector", "role=none"),
		"both references": append(kc, "--against-configmap", "--against", file),
		"bad reference":   append(kc, "--against", file),
		"bad output":      append(kc, "-o", "xml"),
		"bad concurrency": append(kc, "--concurrency", "0"),
		"no kubeconfig":   {"fleet", "--kubeconfig", filepath.Join(t.TempDir(), "nope")},
		"an argument":     append(kc, "extra"),
	} {
		code, out, errOut := runCLI(t, args...)
		t.Log(name, errOut)
		if code != 2 || errOut == "" {
			t.Errorf("%s: exit %d, want 2\n%s%s", name, code, out, errOut)
		}
	}
}

// --direct reads each kubelet on its port, the certificate verified with
// --kubelet-ca; the flags show per group and differ as drift.
func TestFleetDirectFlags(t *testing.T) {
	sock := "unix:///run/containerd/containerd.sock"
	same := fleettest.Serves(fleettest.KubeadmNode(t, "1.37", sock, nil))
	flags := map[string]string{"config": "/var/lib/kubelet/config.yaml"}
	api := fleettest.NewAPIServerWithKubelets(t, "v1.37.2", "", []fleettest.Node{
		{Name: "w-1", Version: "v1.37.2", Ready: "True", Answer: same, Flagz: fleettest.Flagz(t, "1.37", flags)},
		{Name: "w-2", Version: "v1.37.2", Ready: "True", Answer: same, Flagz: fleettest.Flagz(t, "1.37", flags)},
		{Name: "w-3", Version: "v1.37.2", Ready: "True", Answer: same, Flagz: fleettest.Flagz(t, "1.37", map[string]string{"config": "/var/lib/kubelet/config.yaml", "v": "4"})},
		{Name: "w-4", Version: "v1.31.2", Ready: "True", Answer: fleettest.Serves(fleettest.KubeadmNode(t, "1.31", sock, nil))},
	})
	code, out, errOut := runCLI(t, "fleet", "--kubeconfig", api.Kubeconfig, "--direct", "--kubelet-ca", api.KubeletCA)
	for _, want := range []string{
		"4 nodes, 4 read, 0 unreadable (each kubelet directly)",
		"  flags: --config=/var/lib/kubelet/config.yaml\n",
		"  flag --v: (default) -> 4\n",
		"w-4: kubelet 1.31 authorizes /configz as nodes/proxy only",
		"w-4: flags not-served: kubelet 1.31 does not serve /flagz (from 1.33 on)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q", want)
		}
	}
	if code != 1 {
		t.Errorf("exit %d, want 1 (other flags are drift)\n%s%s", code, out, errOut)
	}
	if code, _, errOut := runCLI(t, "fleet", "--kubeconfig", api.Kubeconfig, "--kubelet-ca", api.KubeletCA); code != 2 || !strings.Contains(errOut, "--direct") {
		t.Errorf("--kubelet-ca without --direct: exit %d %s", code, errOut)
	}
}
