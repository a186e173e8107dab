package fleet

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/kubelet/config/v1beta1"

	"github.com/kubeletcfg/kubeletcfg/fleet/fleettest"
)

// A node whose /configz shows its runtime's cgroup driver (kubelet 1.35+
// on containerd 2) runs what the ConfigMap says even when the driver
// differs: the kubelet took it from the runtime. On containerd 1.x, or
// before 1.35 (/configz shows the configured driver), a different driver
// is the configuration's: drift.
func TestScanCgroupDriverFromTheRuntime(t *testing.T) {
	ep := "unix:///run/containerd/containerd.sock"
	systemd := func(c *v1beta1.KubeletConfiguration) { c.CgroupDriver = "systemd" }
	cgroupfs := func(c *v1beta1.KubeletConfiguration) { c.CgroupDriver = "cgroupfs" }
	nodes := []fleettest.Node{
		{Name: "c2-systemd", Version: "v1.37.2", Runtime: "containerd://2.4.2", Ready: "True", Answer: fleettest.Serves(fleettest.KubeadmNode(t, "1.37", ep, systemd))},
		{Name: "c2-cgroupfs", Version: "v1.37.2", Runtime: "containerd://v2.1.0", Ready: "True", Answer: fleettest.Serves(fleettest.KubeadmNode(t, "1.37", ep, cgroupfs))},
		{Name: "c1-cgroupfs", Version: "v1.37.2", Runtime: "containerd://1.7.24", Ready: "True", Answer: fleettest.Serves(fleettest.KubeadmNode(t, "1.37", ep, cgroupfs))},
		{Name: "old-cgroupfs", Version: "v1.34.1", Runtime: "containerd://2.4.2", Ready: "True", Answer: fleettest.Serves(fleettest.KubeadmNode(t, "1.34", ep, cgroupfs))},
	}
	api := fleettest.NewAPIServer(t, "v1.37.2", fleettest.KubeadmConfigMap, nodes)
	rep, err := Scan(context.Background(), Options{Kubeconfig: api.Kubeconfig, AgainstConfigMap: true})
	if err != nil {
		t.Fatal(err)
	}
	got := byName(rep)
	for _, name := range []string{"c2-systemd", "c2-cgroupfs"} {
		if !got[name].Matches {
			t.Errorf("%s: its runtime's driver is not drift: %+v", name, got[name].Differs)
		}
	}
	if got["c2-cgroupfs"].PerNode["cgroupDriver"] != "cgroupfs" {
		t.Errorf("per node: %v", got["c2-cgroupfs"].PerNode)
	}
	for _, name := range []string{"c1-cgroupfs", "old-cgroupfs"} {
		if got[name].Matches || len(got[name].Differs) != 1 || got[name].Differs[0].Path != "cgroupDriver" {
			t.Errorf("%s: the configured driver differs: %+v", name, got[name].Differs)
		}
	}
}

// The serving certificate a kubelet makes in its --cert-dir when none is
// configured shows on /configz as tlsCertFile and tlsPrivateKeyFile: not
// drift from a reference that configures none, drift from one that does.
func TestScanSelfSignedCertificatePaths(t *testing.T) {
	ep := "unix:///run/containerd/containerd.sock"
	selfSigned := func(c *v1beta1.KubeletConfiguration) {
		c.TLSCertFile, c.TLSPrivateKeyFile = "/var/lib/kubelet/pki/kubelet.crt", "/var/lib/kubelet/pki/kubelet.key"
	}
	nodes := []fleettest.Node{{Name: "n", Version: "v1.37.2", Runtime: "containerd://2.4.2", Ready: "True", Answer: fleettest.Serves(fleettest.KubeadmNode(t, "1.37", ep, selfSigned))}}
	api := fleettest.NewAPIServer(t, "v1.37.2", fleettest.KubeadmConfigMap, nodes)
	rep, err := Scan(context.Background(), Options{Kubeconfig: api.Kubeconfig, AgainstConfigMap: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := byName(rep)["n"]; !got.Matches || got.PerNode["tlsCertFile"] != "/var/lib/kubelet/pki/kubelet.crt" {
		t.Errorf("self-signed paths: %+v per node %v", got.Differs, got.PerNode)
	}
	file := filepath.Join(t.TempDir(), "intended.yaml")
	if err := os.WriteFile(file, []byte(fleettest.KubeadmConfigMap+"tlsCertFile: /etc/kubernetes/pki/kubelet.crt\ntlsPrivateKeyFile: /etc/kubernetes/pki/kubelet.key\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err = Scan(context.Background(), Options{Kubeconfig: api.Kubeconfig, AgainstFile: file})
	if err != nil {
		t.Fatal(err)
	}
	if got := byName(rep)["n"]; got.Matches || len(got.Differs) != 2 {
		t.Errorf("a reference with its own certificate: %+v", got.Differs)
	}
}
