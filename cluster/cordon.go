package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// CordonedByAnnotation marks a cordon kubeletcfg made, on the Node itself:
// an apply interrupted after its cordon (Ctrl-C, kill -9, a reboot) leaves
// it, and the next apply, recover and the guard know the cordon is
// kubeletcfg's to lift — a cordon without it is the operator's, and stays.
// A node may set its own annotations (NodeRestriction forbids labels and
// taints, not annotations).
const CordonedByAnnotation = "kubeletcfg.io/cordoned-by"

// Cordoned says whether the node is marked unschedulable.
func (n *Node) Cordoned(ctx context.Context) (bool, error) {
	cordoned, _, err := n.cordonState(ctx)
	return cordoned, err
}

// cordonState says whether the node is cordoned, and whether it bears
// kubeletcfg's mark (ours).
func (n *Node) cordonState(ctx context.Context) (cordoned, ours bool, err error) {
	node, err := n.api.getNode(ctx, n.Name)
	if err != nil {
		return false, false, fmt.Errorf("node %s: %w", n.Name, err)
	}
	_, ours = node.Annotations[CordonedByAnnotation]
	return node.Spec.Unschedulable, ours, nil
}

// Cordon marks the node unschedulable, as kubectl cordon does, with
// kubeletcfg's mark.
func (n *Node) Cordon(ctx context.Context) error {
	host, _ := os.Hostname()
	by, _ := json.Marshal(fmt.Sprintf("kubeletcfg apply on %s, pid %d, at %s", host, os.Getpid(), n.now().UTC().Format(time.RFC3339)))
	return n.patch(ctx, "cordon", "cordoned", `{"metadata":{"annotations":{"`+CordonedByAnnotation+`":`+string(by)+`}},"spec":{"unschedulable":true}}`)
}

// Uncordon makes the node schedulable again, as kubectl uncordon does,
// and removes kubeletcfg's mark.
func (n *Node) Uncordon(ctx context.Context) error {
	return n.patch(ctx, "uncordon", "uncordoned", `{"metadata":{"annotations":{"`+CordonedByAnnotation+`":null}},"spec":{"unschedulable":null}}`)
}

// ReleaseCordon uncordons the node when kubeletcfg cordoned it (its mark)
// and says so; a cordon without the mark is left. A mark left on a
// schedulable node goes.
func (n *Node) ReleaseCordon(ctx context.Context) (bool, error) {
	cordoned, ours, err := n.cordonState(ctx)
	switch {
	case err != nil || !ours:
		return false, err
	case !cordoned:
		return false, n.patch(ctx, "clear kubeletcfg's cordon mark on", "cleared kubeletcfg's stale cordon mark", `{"metadata":{"annotations":{"`+CordonedByAnnotation+`":null}}}`)
	}
	return true, n.Uncordon(ctx)
}

// patch applies a merge patch to the Node: it touches those fields and
// nothing another writer of the Node owns (null is a field's absence).
func (n *Node) patch(ctx context.Context, verb, done, patch string) error {
	if err := n.api.patchNode(ctx, n.Name, []byte(patch)); err != nil {
		return fmt.Errorf("%s node %s: %w", verb, n.Name, err)
	}
	n.step("%s", done)
	return nil
}

// LiftAfter lifts a cordon kubeletcfg left (its mark) once the kubelet is
// healthy again on the API server: restarted at restartedAt, Ready with a
// heartbeat after it and its Lease renewed, within timeout; not restarted
// (zero), Ready now. It says whether it lifted one; a kubelet that does not
// report leaves the node cordoned, and the error says so.
//
// recover and the guard run it without the node's lock (the next apply
// need not wait): the cordon lifted is the one seen first, by its mark's
// value, never the fresh one of an apply that started meanwhile.
func (n *Node) LiftAfter(ctx context.Context, restartedAt time.Time, timeout time.Duration) (bool, error) {
	node, err := n.api.getNode(ctx, n.Name)
	if err != nil {
		return false, fmt.Errorf("node %s: %w", n.Name, err)
	}
	mark, ours := node.Annotations[CordonedByAnnotation]
	if !ours || !node.Spec.Unschedulable {
		if ours {
			_, err = n.releaseIf(ctx, mark) // a stale mark
		}
		return false, err
	}
	if restartedAt.IsZero() {
		h, err := n.Health(ctx, time.Time{})
		if err != nil {
			return false, err
		}
		if h.Ready != corev1.ConditionTrue {
			return false, fmt.Errorf("node %s stays cordoned: it is not Ready (%s); once it is: kubectl uncordon %s", n.Name, h.ReadyString(), n.Name)
		}
	} else if _, err := n.WaitReported(ctx, restartedAt, timeout); err != nil {
		return false, fmt.Errorf("node %s stays cordoned: %w; once it is healthy: kubectl uncordon %s", n.Name, err, n.Name)
	}
	return n.releaseIf(ctx, mark)
}

// releaseIf lifts kubeletcfg's cordon while its mark still says mark: the
// patch carries the Node's resourceVersion, so that a cordon made between
// the read and the patch is not lifted (a conflict is read again).
func (n *Node) releaseIf(ctx context.Context, mark string) (bool, error) {
	for range 5 {
		node, err := n.api.getNode(ctx, n.Name)
		if err != nil {
			return false, fmt.Errorf("node %s: %w", n.Name, err)
		}
		if cur, ok := node.Annotations[CordonedByAnnotation]; !ok || cur != mark {
			return false, nil // lifted meanwhile, or another apply's now
		}
		rv, _ := json.Marshal(node.ResourceVersion)
		spec := `,"spec":{"unschedulable":null}`
		if !node.Spec.Unschedulable {
			spec = ""
		}
		err = n.patch(ctx, "uncordon", "uncordoned", `{"metadata":{"resourceVersion":`+string(rv)+`,"annotations":{"`+CordonedByAnnotation+`":null}}`+spec+`}`)
		if apierrors.IsConflict(err) {
			continue
		}
		return err == nil && node.Spec.Unschedulable, err
	}
	return false, fmt.Errorf("node %s: its cordon changed under each try: left as it is", n.Name)
}
