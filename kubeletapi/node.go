package kubeletapi

import (
	"context"
	"fmt"
	"os"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"

	"github.com/kubeletcfg/kubeletcfg/schema"
)

// AddressTypes are the Node addresses tried for the direct way, in order.
var AddressTypes = []corev1.NodeAddressType{corev1.NodeInternalIP, corev1.NodeExternalIP, corev1.NodeInternalDNS, corev1.NodeExternalDNS, corev1.NodeHostName}

// NodeOf is the kubelet a Node object reports: its version, the address of
// the first of AddressTypes it has, and the kubelet's port.
func NodeOf(n *corev1.Node) Node {
	out := Node{Name: n.Name, Reported: n.Status.NodeInfo.KubeletVersion, Port: n.Status.DaemonEndpoints.KubeletEndpoint.Port}
	if v, err := schema.Resolve(out.Reported); err == nil {
		out.Version = v
	}
	for _, t := range AddressTypes {
		for _, a := range n.Status.Addresses {
			if a.Type == t && a.Address != "" && out.Address == "" {
				out.Address = a.Address
			}
		}
	}
	return out
}

// CoreClient is client-go's REST client for the core/v1 API with only the
// core/v1 types (the generated typed clients bring every API group along).
func CoreClient(cfg *rest.Config) (rest.Interface, error) {
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &corev1.SchemeGroupVersion
	c.APIPath = "/api"
	c.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	// Node lists are large (images, conditions): protobuf is cheaper to
	// encode and decode than JSON, on both ends.
	c.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	if c.UserAgent == "" {
		c.UserAgent = "kubeletcfg"
	}
	return rest.RESTClientFor(c)
}

// GetNode reads one Node (get nodes/NAME), for the direct way to its kubelet.
func GetNode(ctx context.Context, core rest.Interface, name string) (Node, error) {
	n := &corev1.Node{}
	if err := core.Get().Resource("nodes").Name(name).Do(ctx).Into(n); err != nil {
		return Node{}, fmt.Errorf("node %s: %w (the direct way to a kubelet reads its address from its Node: get nodes)", name, err)
	}
	return NodeOf(n), nil
}

// NodeName is name, or the kubelet's default node name: this host's name,
// lower-cased.
func NodeName(name string) (string, error) {
	if name != "" {
		return name, nil
	}
	host, err := os.Hostname()
	if err != nil {
		return "", fmt.Errorf("no node name given (--node) and no hostname: %w", err)
	}
	return strings.ToLower(host), nil
}
