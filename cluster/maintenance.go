package cluster

import (
	"context"
	"fmt"

	"github.com/kubeletcfg/kubeletcfg/apply"
)

// Maintenance is a node taken out of scheduling around a change: Begin
// cordons it (and drains it), End makes it schedulable again only when it
// is healthy, and never one that was cordoned before.
type Maintenance struct {
	Node  *Node
	Drain bool
	DrainOptions
	wasCordoned bool
	cordoned    bool // by Begin
}

// Begin cordons the node and, with Drain, evicts its pods. When it fails
// the node is left as it was (uncordoned if it was) and nothing is
// changed.
func (m *Maintenance) Begin(ctx context.Context) error {
	was, ours, err := m.Node.cordonState(ctx)
	if err != nil {
		return err
	}
	switch {
	case was && ours:
		// An apply interrupted after its cordon: not the operator's.
		m.Node.step("cordoned by an earlier kubeletcfg apply that did not end: this apply takes the cordon over")
		m.cordoned = true
	case was:
		m.wasCordoned = true
		m.Node.step("already cordoned; it stays cordoned")
	default:
		if err := m.Node.Cordon(ctx); err != nil {
			return err
		}
		m.cordoned = true
		apply.Failpoint("after-cordon")
	}
	if !m.Drain {
		return nil
	}
	if err := m.Node.Drain(ctx, m.DrainOptions); err != nil {
		if !m.cordoned {
			return err
		}
		// The drain's ctx may be the one that ran out.
		if uerr := m.Node.Uncordon(context.WithoutCancel(ctx)); uerr != nil {
			return fmt.Errorf("%w; and the node stays cordoned: %v (kubectl uncordon %s)", err, uerr, m.Node.Name)
		}
		m.cordoned = false
		return err
	}
	return nil
}

// End makes the node schedulable again if Begin cordoned it and healthy
// says the node is healthy (locally and on the API server). It returns what
// it left undone, with the command that undoes it, or "".
func (m *Maintenance) End(ctx context.Context, healthy bool) (string, error) {
	switch {
	case m.wasCordoned:
		return fmt.Sprintf("node %s was cordoned before and stays cordoned", m.Node.Name), nil
	case !m.cordoned:
		return "", nil
	case !healthy:
		msg := fmt.Sprintf("node %s stays cordoned: it is not healthy; once it is: kubectl uncordon %s", m.Node.Name, m.Node.Name)
		m.Node.step("%s", msg)
		return msg, nil
	}
	apply.Failpoint("before-uncordon")
	if err := m.Node.Uncordon(ctx); err != nil {
		return fmt.Sprintf("node %s stays cordoned: kubectl uncordon %s", m.Node.Name, m.Node.Name), err
	}
	m.cordoned = false
	return "", nil
}
