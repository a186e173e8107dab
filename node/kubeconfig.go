package node

import (
	"fmt"
	"os"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubeletcfg/kubeletcfg/nodefile"
)

// ViaAPIServer says how to reach a node through the API server: a
// kubeconfig, its context, and the node's name. The kubelet's own API is
// kubeletapi's.
type ViaAPIServer struct {
	Kubeconfig string // "" means $KUBECONFIG or ~/.kube/config, as kubectl reads them
	Context    string // "" means the kubeconfig's current context
	Node       string // "" means this host's name, as the kubelet names its node
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
