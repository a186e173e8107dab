package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubeletcfg/kubeletcfg/fleet/fleettest"
)

// diff --live --direct reads the kubelet at its Node's address, and its
// /flagz against the command line given; through the proxy the same; a
// refusal names what the node needs.
func TestDiffLiveDirectFlags(t *testing.T) {
	sock := "unix:///run/containerd/containerd.sock"
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte(fleettest.KubeadmConfigMap), 0o600); err != nil {
		t.Fatal(err)
	}
	api := fleettest.NewAPIServerWithKubelets(t, "v1.37.2", "", []fleettest.Node{
		{Name: "w-1", Version: "v1.37.2", Ready: "True", Answer: fleettest.Serves(fleettest.KubeadmNode(t, "1.37", sock, nil)),
			Flagz: fleettest.Flagz(t, "1.37", map[string]string{"config": cfg, "max-pods": "44", "node-labels": "team=a"})},
		{Name: "rbac", Version: "v1.37.2", Ready: "True", Answer: func(_ int, w http.ResponseWriter) {
			http.Error(w, "Forbidden (user=viewer, verb=get, resource=nodes, subresource(s)=[configz proxy])", http.StatusForbidden)
		}},
	})
	live := []string{"diff", "--live", "--kubelet-version", "1.37", "--kubeconfig", api.Kubeconfig}
	crio := "unix:///var/run/crio/crio.sock"
	cmdline := []string{"--", "--config=" + cfg, "--max-pods=50", "--container-runtime-endpoint=" + crio}
	for _, way := range [][]string{{"--direct", "--kubelet-ca", api.KubeletCA}, nil} {
		args := append(append(append(append([]string{}, live...), way...), "--node", "w-1"), cmdline...)
		code, out, errOut := runCLI(t, args...)
		for _, want := range []string{
			"flag --max-pods: running 44, 50 (on the command line)",
			"flag --node-labels: running team=a, not given (default none)",
			"flag --container-runtime-endpoint: running " + sock + ", " + crio + " (on the command line)",
			"3 flag differences against the node's command line",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("%v: lacks %q\n%s%s", way, want, out, errOut)
			}
		}
		if code != 1 {
			t.Errorf("%v: exit %d, want 1", way, code)
		}
	}
	if api.Direct["w-1"].Load() == 0 {
		t.Error("--direct did not read w-1's kubelet on its port")
	}
	// -o json carries them.
	code, out, _ := runCLI(t, append(append(append([]string{}, live...), "--direct", "--kubelet-ca", api.KubeletCA, "--node", "w-1", "-o", "json"), cmdline...)...)
	var rep struct {
		Flags struct {
			Form    string `json:"form"`
			Differs []struct {
				Name, Running, Given string
			} `json:"differs"`
		} `json:"flags"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 1 || rep.Flags.Form != "config.k8s.io/v1beta1 Flagz" || len(rep.Flags.Differs) != 3 {
		t.Errorf("-o json: exit %d %v\n%s", code, err, out)
	}
	// Refused: the node and the permission named.
	code, _, errOut := runCLI(t, append(append([]string{}, live...), "--direct", "--kubelet-ca", api.KubeletCA, "--node", "rbac", "--")...)
	if code != 2 || !strings.Contains(errOut, "node rbac") || !strings.Contains(errOut, "needs get nodes/configz (or nodes/proxy)") {
		t.Errorf("refused: exit %d %s", code, errOut)
	}
	// Usage.
	for _, bad := range [][]string{
		{"diff", "--direct", "x.yaml"},
		append(append([]string{}, live...), "--node", "w-1", "--kubelet-insecure-skip-tls-verify", "w-1", "--"),
		append(append([]string{}, live...), "--direct", "--insecure", "--node", "w-1", "--"),
	} {
		if code, _, errOut := runCLI(t, bad...); code != 2 || errOut == "" {
			t.Errorf("%v: exit %d %s", bad, code, errOut)
		}
	}
}

// apply's ways to the kubelet: --direct needs the Node (--kubeconfig), the
// per-node insecure flag goes with --direct.
func TestApplyKubeletAccessUsage(t *testing.T) {
	for _, args := range [][]string{
		{"apply", "--node", "n1", "-f", "x.yaml", "--dry-run", "--direct"},
		{"apply", "--node", "n1", "-f", "x.yaml", "--dry-run", "--kubelet-insecure-skip-tls-verify", "n1"},
	} {
		code, _, errOut := runCLI(t, args...)
		if code != 2 || !strings.Contains(errOut, "--direct") {
			t.Errorf("%v: exit %d %s", args, code, errOut)
		}
	}
}
