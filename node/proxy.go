package node

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// ViaAPIServer says how to reach a kubelet's /configz through the API
// server's node proxy (GET /api/v1/nodes/NAME/proxy/configz), which needs
// only the credentials of a kubeconfig that may get nodes/proxy.
type ViaAPIServer struct {
	Kubeconfig string // "" means $KUBECONFIG or ~/.kube/config, as kubectl reads them
	Context    string // "" means the kubeconfig's current context
	Node       string // "" means this host's name, as the kubelet names its node
	Timeout    time.Duration
}

// RESTConfig is the client configuration of the kubeconfig, and the node's
// name (the kubelet's default, the host name, when none is given).
func (v ViaAPIServer) RESTConfig() (*rest.Config, string, error) {
	if v.Node == "" {
		host, err := os.Hostname()
		if err != nil {
			return nil, "", fmt.Errorf("no node name given (--node) and no hostname: %w", err)
		}
		v.Node = strings.ToLower(host)
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = v.Kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: v.Context}).ClientConfig()
	if err != nil {
		where := v.Kubeconfig
		if where == "" {
			where = "kubeconfig"
		}
		return nil, "", fmt.Errorf("%s: %w", where, err)
	}
	return cfg, v.Node, nil
}

// url is the node proxy's /configz for the API server the kubeconfig names,
// with the client configuration to reach it.
func (v ViaAPIServer) url() (string, *rest.Config, error) {
	cfg, name, err := v.RESTConfig()
	if err != nil {
		return "", nil, err
	}
	v.Node = name
	host := cfg.Host
	if !strings.Contains(host, "://") {
		host = "https://" + host
	}
	base, err := url.Parse(host)
	if err != nil {
		return "", nil, fmt.Errorf("server %q: %w", cfg.Host, err)
	}
	prefix, rawPrefix := strings.TrimSuffix(base.Path, "/"), strings.TrimSuffix(base.EscapedPath(), "/")
	base.Path = prefix + "/api/v1/nodes/" + v.Node + "/proxy/configz"
	base.RawPath = rawPrefix + "/api/v1/nodes/" + url.PathEscape(v.Node) + "/proxy/configz"
	return base.String(), cfg, nil
}

// ConfigzViaAPIServer fetches a kubelet's /configz through the API server,
// and says the URL it read.
func ConfigzViaAPIServer(ctx context.Context, v ViaAPIServer) ([]byte, string, error) {
	u, cfg, err := v.url()
	if err != nil {
		return nil, "", err
	}
	cfg.Timeout = timeoutOr(v.Timeout)
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, u, fmt.Errorf("kubeconfig credentials: %w", err)
	}
	raw, err := getConfigz(ctx, client, u)
	return raw, u, err
}
