package apply

import (
	"context"
	"strings"

	"k8s.io/client-go/rest"

	"github.com/kubeletcfg/kubeletcfg/kubeletapi"
	hostnode "github.com/kubeletcfg/kubeletcfg/node"
)

// KubeletAccess says how an apply reads the node's kubelet API: on its
// port at URL (its /configz) with a client certificate, a CA, or Insecure;
// with Kubeconfig (its Context) through the API server's node proxy, or,
// Direct, on its port at the address its Node reports (verified by CA,
// else the kubeconfig's cluster CA; the nodes named in InsecureNodes
// unverified). Verify asks for /configz once the kubelet is stable.
type KubeletAccess struct {
	URL, ClientCert, ClientKey, CA string
	Insecure                       bool
	Kubeconfig, Context            string
	// RESTConfig is the API server's client configuration, loaded before
	// (an apply in a pod: the pod's files are out of reach once in the
	// host's root); it stands for Kubeconfig.
	RESTConfig    *rest.Config
	Direct        bool
	InsecureNodes []string
	Verify        bool
}

// given says the operator gave a way into the kubelet's own port.
func (a KubeletAccess) given() bool { return a.ClientCert != "" || a.CA != "" || a.Insecure }

// Wire sets o's ways to the kubelet's API: KubeletAPI (the authenticated
// /healthz) with credentials for its port, Configz with Verify, and
// Statusz (the restart's proof) whenever the kubelet can be reached.
func (a KubeletAccess) Wire(ctx context.Context, o *Options) error {
	var c *kubeletapi.Client
	var n kubeletapi.Node
	var err error
	base := strings.TrimSuffix(a.URL, "/configz")
	if a.given() {
		local, err := kubeletapi.NewLocal(base, a.ClientCert, a.ClientKey, a.CA, a.Insecure)
		if err != nil {
			return err
		}
		o.KubeletAPI = local.HTTP("")
		c, n = local, kubeletapi.Node{Version: o.Setup.Version}
	}
	if a.Kubeconfig != "" || a.RESTConfig != nil {
		cfg := a.RESTConfig
		if cfg == nil {
			if cfg, err = hostnode.RESTConfig(a.Kubeconfig, a.Context); err != nil {
				return err
			}
		}
		n = kubeletapi.Node{Name: o.Node, Version: o.Setup.Version}
		opts := kubeletapi.Options{Via: kubeletapi.Proxy, Insecure: a.InsecureNodes}
		if a.Direct {
			opts.Via, opts.KubeletCA = kubeletapi.Direct, a.CA
			core, err := kubeletapi.CoreClient(cfg)
			if err != nil {
				return err
			}
			if n, err = kubeletapi.GetNode(ctx, core, o.Node); err != nil {
				return err
			}
			n.Version = o.Setup.Version
		}
		if c, err = kubeletapi.New(cfg, opts); err != nil {
			return err
		}
	}
	if c == nil {
		if !a.Verify {
			return nil
		}
		// No credentials: the kubelet's port as any HTTPS client.
		if c, err = kubeletapi.NewLocal(base, "", "", "", false); err != nil {
			return err
		}
		n = kubeletapi.Node{Version: o.Setup.Version}
	}
	if a.Verify {
		o.Configz = func(ctx context.Context) ([]byte, error) {
			raw, _, err := c.Configz(ctx, n)
			return raw, err
		}
	}
	o.Statusz = func(ctx context.Context) (*kubeletapi.Status, error) { return c.Statusz(ctx, n) }
	return nil
}
