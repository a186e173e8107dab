package apply

import (
	"context"
	"testing"

	hostnode "github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

// Wire: no way in and no --verify-configz leaves o as it was; --verify-configz
// alone reads the port as any HTTPS client; credentials give the
// authenticated healthz too.
func TestKubeletAccessWire(t *testing.T) {
	v, err := schema.Resolve("1.37")
	if err != nil {
		t.Fatal(err)
	}
	url := "https://127.0.0.1:10250/configz"
	for _, c := range []struct {
		a                     KubeletAccess
		api, configz, statusz bool
	}{
		{KubeletAccess{URL: url}, false, false, false},
		{KubeletAccess{URL: url, Verify: true}, false, true, true},
		{KubeletAccess{URL: url, Insecure: true}, true, false, true},
		{KubeletAccess{URL: url, Insecure: true, Verify: true}, true, true, true},
	} {
		o := Options{Node: "n", Setup: hostnode.Given(v)}
		if err := c.a.Wire(context.Background(), &o); err != nil {
			t.Fatal(err)
		}
		if (o.KubeletAPI != nil) != c.api || (o.Configz != nil) != c.configz || (o.Statusz != nil) != c.statusz {
			t.Errorf("%+v: api %v configz %v statusz %v", c.a, o.KubeletAPI != nil, o.Configz != nil, o.Statusz != nil)
		}
	}
	if err := (KubeletAccess{URL: url, Kubeconfig: "/nonexistent/kubeconfig"}).Wire(context.Background(), &Options{Setup: hostnode.Given(v)}); err == nil {
		t.Error("a missing kubeconfig accepted")
	}
}
