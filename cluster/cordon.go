package cluster

import (
	"context"
	"fmt"
)

// Cordoned says whether the node is marked unschedulable.
func (n *Node) Cordoned(ctx context.Context) (bool, error) {
	node, err := n.api.getNode(ctx, n.Name)
	if err != nil {
		return false, fmt.Errorf("node %s: %w", n.Name, err)
	}
	return node.Spec.Unschedulable, nil
}

// Cordon marks the node unschedulable, as kubectl cordon does.
func (n *Node) Cordon(ctx context.Context) error {
	return n.setUnschedulable(ctx, true)
}

// Uncordon makes the node schedulable again, as kubectl uncordon does.
func (n *Node) Uncordon(ctx context.Context) error {
	return n.setUnschedulable(ctx, false)
}

func (n *Node) setUnschedulable(ctx context.Context, on bool) error {
	// A merge patch touches that one field and nothing another writer of
	// the Node owns; false is the field's absence.
	patch := []byte(`{"spec":{"unschedulable":null}}`)
	verb := "uncordon"
	if on {
		patch, verb = []byte(`{"spec":{"unschedulable":true}}`), "cordon"
	}
	if err := n.api.patchNode(ctx, n.Name, patch); err != nil {
		return fmt.Errorf("%s node %s: %w", verb, n.Name, err)
	}
	n.step("%sed", verb)
	return nil
}

// CordonedByAnnotation marks a cordon kubeletcfg made (not yet used).
const CordonedByAnnotation = "kubeletcfg.io/cordoned-by"

// ReleaseCordon (not yet): uncordons the node when kubeletcfg cordoned it.
func (n *Node) ReleaseCordon(ctx context.Context) (bool, error) { return false, nil }
