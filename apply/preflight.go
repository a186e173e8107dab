package apply

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kubeletcfg/kubeletcfg/effective"
	"github.com/kubeletcfg/kubeletcfg/preflight"
	"github.com/kubeletcfg/kubeletcfg/why"
)

// ErrPreflight: the kubelet would refuse to start with the change on this
// host; nothing was written.
var ErrPreflight = errors.New("the kubelet would refuse to start with the change on this host")

// preflightPhase asks preflight whether the kubelet starts with the new
// configuration on this host, before anything is written. A refusal the
// change brings stops the apply; one the running configuration has as
// well is not the change's (the kubelet runs on it): it is only reported.
type preflightPhase struct{}

func (preflightPhase) Name() string { return "preflight" }

func (preflightPhase) Run(ctx context.Context, t *Tx) error {
	if t.o.SkipPreflight || t.plan == nil {
		return nil
	}
	removed := append(append([]string(nil), t.plan.StateFiles...), t.plan.Removes...)
	host := t.preflightHost(ctx)
	rt := preflight.CRI(t.o.Setup.Runtime)
	next, err := preflight.Check(ctx, t.layersOf(t.plan.next), host, rt, removed)
	if err != nil {
		return err
	}
	t.out.Preflight = next
	if next.Starts {
		return nil
	}
	old, err := preflight.Check(ctx, t.layersOf(t.plan.old), host, rt, nil)
	if err != nil {
		return err
	}
	already := map[string]bool{}
	for _, f := range old.Findings {
		if f.Status == preflight.Refused {
			already[findingKey(f)] = true
		}
	}
	var refused []string
	for _, f := range next.Findings {
		if f.Status != preflight.Refused || already[findingKey(f)] {
			continue
		}
		refused = append(refused, describe(f))
	}
	if len(refused) == 0 {
		t.o.progress("preflight: the running configuration meets the same refusals; not the change's")
		return nil
	}
	return fmt.Errorf("%w (kubelet %s): %s (or --skip-preflight)", ErrPreflight, next.KubeletVersion, strings.Join(refused, "; "))
}

// layersOf is res (the plan's before or after) as why reads it, rendered
// as the plan rendered it.
func (t *Tx) layersOf(res *effective.Result) *why.Layers {
	l := why.LayersOf(t.o.Setup, res)
	l.Render = t.plan.render(l.Version)
	return l
}

// preflightHost is the host preflight asks: on the machine itself, the
// ports of the kubelet this apply restarts are that kubelet's (found by its
// PID, as the watch finds it), not another program's.
func (t *Tx) preflightHost(ctx context.Context) preflight.Host {
	if t.o.preflightHost != nil || t.o.Setup.Root != "" || t.o.Restarter == nil {
		return t.o.preflightHost
	}
	if p, err := t.o.Restarter.State(ctx); err == nil && p.Running && p.PID > 0 {
		return preflight.KubeletHost(p.PID)
	}
	return nil
}

func findingKey(f preflight.Finding) string { return f.Class + "\x00" + f.Field + "\x00" + f.Flag }

// describe says a refusal: class, the host fact, the field and its origin,
// the fix.
func describe(f preflight.Finding) string {
	s := f.Class + ": " + f.Fact
	subject := f.Field
	if f.Flag != "" {
		subject = "--" + f.Flag
	}
	if subject != "" {
		s += " (" + subject
		if f.Value != "" {
			s += "=" + f.Value
		}
		if f.Origin != nil {
			s += " from " + f.Origin.Text
		}
		s += ")"
	}
	if f.Fix != "" {
		s += "; fix: " + f.Fix
	}
	return s
}
