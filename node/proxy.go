package node

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubeletcfg/kubeletcfg/nodefile"
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

// RESTConfig loads a kubeconfig as kubectl does (client-go's loading rules:
// $KUBECONFIG, ~/.kube/config, exec plugins, tokens, certificates).
func RESTConfig(kubeconfig, context string) (*rest.Config, error) {
	if kubeconfig != "" {
		if err := nodefile.Check(kubeconfig, nodefile.Kubeconfig); err != nil {
			return nil, err
		}
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
	if err != nil {
		where := kubeconfig
		if where == "" {
			where = "kubeconfig"
		}
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	return cfg, nil
}

// RESTConfig is the client configuration of v's kubeconfig, and the node's
// name (the kubelet's default, the host name, when none is given).
func (v ViaAPIServer) RESTConfig() (*rest.Config, string, error) {
	name, err := v.nodeName()
	if err != nil {
		return nil, "", err
	}
	cfg, err := RESTConfig(v.Kubeconfig, v.Context)
	return cfg, name, err
}

// nodeName is v.Node, or the kubelet's default node name: the host name.
func (v ViaAPIServer) nodeName() (string, error) {
	if v.Node != "" {
		return v.Node, nil
	}
	host, err := os.Hostname()
	if err != nil {
		return "", fmt.Errorf("no node name given (--node) and no hostname: %w", err)
	}
	return strings.ToLower(host), nil
}

// Proxy reads kubelets' /configz through one API server's node proxy, all
// requests sharing one client (one connection pool, one TLS session).
type Proxy struct {
	client *http.Client
	base   *url.URL
}

// NewProxy makes a Proxy for the API server cfg names. The client has no
// overall timeout: each Configz call is bounded by its context.
func NewProxy(cfg *rest.Config) (*Proxy, error) {
	host := cfg.Host
	if !strings.Contains(host, "://") {
		host = "https://" + host
	}
	base, err := url.Parse(host)
	if err != nil {
		return nil, fmt.Errorf("server %q: %w", cfg.Host, err)
	}
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig credentials: %w", err)
	}
	return &Proxy{client: client, base: base}, nil
}

// URL is the node proxy's /configz of a node.
func (p *Proxy) URL(node string) string {
	u := *p.base
	prefix, rawPrefix := strings.TrimSuffix(u.Path, "/"), strings.TrimSuffix(u.EscapedPath(), "/")
	u.Path = prefix + "/api/v1/nodes/" + node + "/proxy/configz"
	u.RawPath = rawPrefix + "/api/v1/nodes/" + url.PathEscape(node) + "/proxy/configz"
	return u.String()
}

// Configz fetches a node's /configz through the API server, and says the URL
// it read.
func (p *Proxy) Configz(ctx context.Context, node string) ([]byte, string, error) {
	u := p.URL(node)
	raw, err := getConfigz(ctx, p.client, u)
	return raw, u, err
}

// ConfigzViaAPIServer fetches a kubelet's /configz through the API server,
// and says the URL it read.
func ConfigzViaAPIServer(ctx context.Context, v ViaAPIServer) ([]byte, string, error) {
	cfg, name, err := v.RESTConfig()
	if err != nil {
		return nil, "", err
	}
	cfg.Timeout = timeoutOr(v.Timeout)
	p, err := NewProxy(cfg)
	if err != nil {
		return nil, "", err
	}
	return p.Configz(ctx, name)
}
