package cluster

import (
	"fmt"

	"k8s.io/client-go/rest"

	"github.com/kubeletcfg/kubeletcfg/apply"
)

// AttachConfig is Attach with a client configuration loaded beforehand
// (an apply in a pod loads its credentials before it enters the host's
// root, where the pod's files are not): c.Access.Node names the node.
func AttachConfig(o *apply.Options, c Options, cfg *rest.Config) error {
	client, err := newRESTAPI(cfg)
	if err != nil {
		return fmt.Errorf("credentials: %w", err)
	}
	return attach(o, newNode(client, c.Access.Node, c.Progress), c)
}
