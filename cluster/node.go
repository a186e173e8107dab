// Package cluster is what apply does with the API server around a change of
// a node's kubelet configuration: cordon, drain through the Eviction API
// (kubectl drain's rules), the Node's Ready condition and its Lease after a
// restart, and uncordon only when the node is healthy.
package cluster

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/kubeletcfg/kubeletcfg/node"
)

// Node is one node as the API server knows it.
type Node struct {
	Name string
	api  api
	// Progress gets one line per step, with the time since Start.
	Progress io.Writer
	Start    time.Time
	// Poll is how often Node, Lease and pods are read while waiting;
	// EvictRetry how long to wait after an eviction the API server refused
	// (429: a PodDisruptionBudget), as kubectl drain does.
	Poll, EvictRetry time.Duration
	now              func() time.Time
}

func newNode(a api, name string, progress io.Writer) *Node {
	return &Node{Name: name, api: a, Progress: progress, Start: time.Now(),
		Poll: 250 * time.Millisecond, EvictRetry: 5 * time.Second, now: time.Now}
}

// Connect reaches the node of a kubeconfig (client-go's loading rules: an
// explicit file, $KUBECONFIG, ~/.kube/config; exec plugins, tokens and
// certificates), named as a.Node or as the kubelet names its node.
func Connect(a node.ViaAPIServer, progress io.Writer) (*Node, error) {
	cfg, name, err := a.RESTConfig()
	if err != nil {
		return nil, err
	}
	client, err := newRESTAPI(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig credentials: %w", err)
	}
	return newNode(client, name, progress), nil
}

func (n *Node) step(format string, args ...any) {
	if n.Progress != nil {
		fmt.Fprintf(n.Progress, "node %s +%.1fs: %s\n", n.Name, n.now().Sub(n.Start).Seconds(), fmt.Sprintf(format, args...))
	}
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
