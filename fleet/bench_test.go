package fleet

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/kubelet/config/v1beta1"

	"github.com/kubeletcfg/kubeletcfg/fleet/fleettest"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

// BenchmarkAnalyse is the cost of reading one node's distinct /configz: a
// fleet whose nodes each serve other bytes (a providerID per node) pays it
// for every node.
func BenchmarkAnalyse(b *testing.B) {
	v, _ := schema.Resolve("1.37")
	body := fleettest.KubeadmNode(b, "1.37", "unix:///run/containerd/containerd.sock", nil)
	raw := body[len(`{"kubeletconfig":`) : len(body)-1]
	var a analyses
	a.of(raw, v, "") // the caches a scan fills at its first node
	b.ReportAllocs()
	for b.Loop() {
		if _, err := a.analyse(raw, v, ""); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScan scans 5,000 nodes of a stand-in API server in this process,
// every node serving its own bytes: the library's own cost per scan.
func BenchmarkScan(b *testing.B) {
	var nodes []fleettest.Node
	for i := range benchNodes {
		minor := []string{"1.37", "1.36"}[i%2]
		body := fleettest.KubeadmNode(b, minor, "unix:///run/containerd/containerd.sock", func(c *v1beta1.KubeletConfiguration) {
			c.ProviderID = fmt.Sprintf("sim://node-%d", i)
		})
		nodes = append(nodes, fleettest.Node{Name: fmt.Sprintf("node-%04d", i), Version: "v" + minor + ".0", Ready: "True", Answer: fleettest.Serves(body)})
	}
	api := fleettest.NewAPIServer(b, "v1.37.2", fleettest.KubeadmConfigMap, nodes)
	b.ReportAllocs()
	for b.Loop() {
		rep, err := Scan(context.Background(), Options{Kubeconfig: api.Kubeconfig, AgainstConfigMap: true})
		if err != nil {
			b.Fatal(err)
		}
		if rep.Read() != benchNodes {
			b.Fatalf("%d read", rep.Read())
		}
	}
}

const benchNodes = 1000
