//go:build e2e

package e2e

import (
	"os/exec"
	"strings"
	"testing"
)

// The test's own network: a veth pair whose host end holds HostIP and whose
// peer lives in a network namespace the test creates. The API server refuses
// to proxy to loopback, so a kubelet's node address is HostIP (or another
// address added on the host end), never this machine's own address.
const (
	netNamespace = "kubeletcfg-e2e"
	vethHost     = "kcfg-e2e0"
	vethPeer     = "kcfg-e2e1"
	hostIP       = "10.213.0.1"
	peerIP       = "10.213.0.2"
)

type nodeNet struct {
	HostIP, PeerIP string
}

// startNodeNet creates the namespace and the veth pair (after removing what
// a killed earlier run left), and removes them at the end of the run.
func startNodeNet(t testing.TB) *nodeNet {
	t.Helper()
	if _, err := exec.LookPath("ip"); err != nil {
		t.Fatal("ip is not installed: make e2e installs iproute2")
	}
	removeNodeNet()
	atTeardown(removeNodeNet)
	for _, args := range [][]string{
		{"netns", "add", netNamespace},
		{"link", "add", vethHost, "type", "veth", "peer", "name", vethPeer},
		{"link", "set", vethPeer, "netns", netNamespace},
		{"addr", "add", hostIP + "/30", "dev", vethHost},
		{"link", "set", vethHost, "up"},
		{"-n", netNamespace, "addr", "add", peerIP + "/30", "dev", vethPeer},
		{"-n", netNamespace, "link", "set", vethPeer, "up"},
		{"-n", netNamespace, "link", "set", "lo", "up"},
	} {
		ip(t, args...)
	}
	return &nodeNet{HostIP: hostIP, PeerIP: peerIP}
}

// addAddress puts one more address (10.213.x.y, a /32) on the host end
// until the test ends, for a test that registers several Nodes, each at
// its own address.
func (n *nodeNet) addAddress(t testing.TB, addr string) {
	t.Helper()
	if !strings.HasPrefix(addr, "10.213.") {
		t.Fatalf("address %s is not in the test's own 10.213.0.0/16", addr)
	}
	ip(t, "addr", "add", addr+"/32", "dev", vethHost)
	t.Cleanup(func() { _ = exec.Command("ip", "addr", "del", addr+"/32", "dev", vethHost).Run() })
}

func removeNodeNet() {
	_ = exec.Command("ip", "link", "del", vethHost).Run() // takes its peer along
	_ = exec.Command("ip", "netns", "del", netNamespace).Run()
}

func ip(t testing.TB, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
