package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/kubeletcfg/kubeletcfg/apply"
	"github.com/kubeletcfg/kubeletcfg/node"
)

// Options make an apply cluster-aware.
type Options struct {
	Access node.ViaAPIServer // its Node names the node apply changes
	// Drain cordons and drains the node before anything is written, and
	// uncordons it once it is healthy again.
	Drain bool
	DrainOptions
	Progress io.Writer
}

// Attach connects to the API server and makes o cluster-aware: the
// restarted kubelet must also report to the API server (Node Ready with a
// heartbeat and the Lease renewed after the restart), and with Drain the
// node is cordoned and drained around the change.
func Attach(o *apply.Options, c Options) error {
	n, err := Connect(c.Access, c.Progress)
	if err != nil {
		return err
	}
	return attach(o, n, c)
}

func attach(o *apply.Options, n *Node, c Options) error {
	// The node must exist before anything happens to it.
	if _, err := n.Cordoned(context.Background()); err != nil {
		return err
	}
	o.Checks = append(o.Checks, readyCheck{n}, leaseCheck{n})
	// Where a restart sets probed containers not ready, the pods Ready
	// before it must be Ready again before the change is healthy.
	r := &readiness{n: n}
	o.Hooks = append(o.Hooks, apply.Hook{Before: "restart", Phase: podsBeforePhase{r}}, apply.Hook{Before: "configz", Phase: podsReadyPhase{r}})
	if !c.Drain {
		return nil
	}
	// The drain gate of the plan: this apply drains the node itself.
	o.Drained = true
	o.Hooks = append(o.Hooks, apply.Hook{Before: "backup", Phase: drainPhase{&Maintenance{Node: n, Drain: true, DrainOptions: c.DrainOptions}}})
	return nil
}

// drainPhase cordons and drains the node before anything is written, and
// uncordons it once the transaction has ended with the node healthy.
type drainPhase struct{ m *Maintenance }

func (drainPhase) Name() string { return "drain" }

func (d drainPhase) Run(ctx context.Context, _ *apply.Tx) error { return d.m.Begin(ctx) }

func (d drainPhase) End(ctx context.Context, t *apply.Tx, healthy bool) error {
	left, err := d.m.End(ctx, healthy)
	if out := t.Outcome(); out != nil && left != "" {
		out.LeftCordoned = left // in -o json, not only on stderr
	}
	if err == nil && left != "" && !healthy {
		err = errors.New(left)
	}
	return err
}

type readyCheck struct{ n *Node }

func (readyCheck) Name() string { return "node Ready" }

func (c readyCheck) Check(ctx context.Context, restartedAt time.Time) (apply.Answer, error) {
	h, err := c.n.Health(ctx, restartedAt)
	if err != nil {
		return apply.Answer{}, err
	}
	return apply.Answer{OK: h.ReadyAfter(), Detail: h.ReadyString(),
		Times: map[string]time.Time{"lastHeartbeatTime": h.LastHeartbeat}}, nil
}

type leaseCheck struct{ n *Node }

func (leaseCheck) Name() string { return "lease" }

func (c leaseCheck) Check(ctx context.Context, restartedAt time.Time) (apply.Answer, error) {
	h, err := c.n.Health(ctx, restartedAt)
	if err != nil {
		return apply.Answer{}, err
	}
	return apply.Answer{OK: h.LeaseAfter(), Detail: fmt.Sprintf("%s/%s renewed %s", LeaseNamespace, c.n.Name, since(h.LeaseRenewed, h.Since, time.Microsecond)),
		Times: map[string]time.Time{"renewTime": h.LeaseRenewed}}, nil
}

// Lifter is what recover and the guard run once the old files are back: it
// lifts a cordon kubeletcfg left on the node of a once the kubelet is
// healthy on the API server (Node.LiftAfter within timeout), and says so.
// The kubeconfig is read now; the API server is reached only then.
func Lifter(a node.ViaAPIServer, timeout time.Duration, progress io.Writer) (func(ctx context.Context, restartedAt time.Time) error, error) {
	n, err := Connect(a, progress)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, restartedAt time.Time) error {
		lifted, err := n.LiftAfter(ctx, restartedAt, timeout)
		if lifted {
			n.step("the cordon an interrupted kubeletcfg apply left is lifted")
		}
		return err
	}, nil
}
