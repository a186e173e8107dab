package node

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubeletcfg/kubeletcfg/internal/testkit"
)

// A kubeconfig is loaded as kubectl loads it: its server, its token, the
// context asked for; the node's name defaults to this host's.
func TestViaAPIServerRESTConfig(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := (testkit.Kubeconfig{Server: "https://127.0.0.1:6443/rancher/k8s", Token: "sekrit"}).Write(kubeconfig); err != nil {
		t.Fatal(err)
	}
	cfg, name, err := ViaAPIServer{Kubeconfig: kubeconfig, Node: "worker 1"}.RESTConfig()
	if err != nil || cfg.Host != "https://127.0.0.1:6443/rancher/k8s" || cfg.BearerToken != "sekrit" || name != "worker 1" {
		t.Fatalf("%+v %q %v", cfg, name, err)
	}
	host, _ := os.Hostname()
	if _, name, err := (ViaAPIServer{Kubeconfig: kubeconfig}).RESTConfig(); err != nil || name != strings.ToLower(host) {
		t.Errorf("no node name: %q (%v), want this host's", name, err)
	}
	missing := filepath.Join(t.TempDir(), "nope")
	if _, _, err := (ViaAPIServer{Kubeconfig: missing, Node: "n"}).RESTConfig(); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing kubeconfig: %v", err)
	}
	if _, _, err := (ViaAPIServer{Kubeconfig: kubeconfig, Context: "other", Node: "n"}).RESTConfig(); err == nil || !strings.Contains(err.Error(), "other") {
		t.Errorf("unknown context: %v", err)
	}
}
