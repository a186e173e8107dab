package cluster

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeletcfg/kubeletcfg/apply"
)

// ReadyPod is a pod that was Ready on the node before a restart.
type ReadyPod struct {
	Namespace, Name string
	UID             types.UID
	// Probed: a container has a readiness or startup probe, whose result a
	// restarted kubelet forgets (where its version does).
	Probed bool
	// Period is the longest period of those probes: a restarted kubelet
	// probes again within it.
	Period time.Duration
}

func (p ReadyPod) String() string { return p.Namespace + "/" + p.Name }

// ReadyPods lists the pods bound to the node that are Ready now.
func (n *Node) ReadyPods(ctx context.Context) ([]ReadyPod, error) {
	pods, err := n.api.listPods(ctx, n.Name)
	if err != nil {
		return nil, err
	}
	var out []ReadyPod
	for _, p := range pods {
		// The field selector asks for the node's pods; a fake ignores it.
		if p.Spec.NodeName != n.Name || p.DeletionTimestamp != nil || !podReady(&p) {
			continue
		}
		rp := ReadyPod{Namespace: p.Namespace, Name: p.Name, UID: p.UID}
		for _, c := range p.Spec.Containers {
			for _, pr := range []*corev1.Probe{c.ReadinessProbe, c.StartupProbe} {
				if pr == nil {
					continue
				}
				rp.Probed = true
				period := time.Duration(pr.PeriodSeconds) * time.Second
				if period == 0 {
					period = 10 * time.Second // the API's default
				}
				rp.Period = max(rp.Period, period)
			}
		}
		out = append(out, rp)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out, nil
}

func podReady(p *corev1.Pod) bool {
	c := readyCondition(p)
	return c != nil && c.Status == corev1.ConditionTrue
}

func readyCondition(p *corev1.Pod) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == corev1.PodReady {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// Readiness is where the pods that were Ready before a restart stand.
type Readiness struct {
	// Waiting are the pods not Ready again yet, with what was last seen.
	Waiting []string
	// Gone are pods deleted or replaced since (not waited for).
	Gone []string
}

func (r Readiness) OK() bool { return len(r.Waiting) == 0 }

func (r Readiness) String() string {
	if r.OK() {
		s := "every pod Ready before the restart is Ready again"
		if len(r.Gone) > 0 {
			s += fmt.Sprintf(" (%d gone since)", len(r.Gone))
		}
		return s
	}
	const shown = 5
	w := r.Waiting
	more := ""
	if len(w) > shown {
		w, more = w[:shown], fmt.Sprintf(" and %d more", len(r.Waiting)-shown)
	}
	return fmt.Sprintf("%d pod(s) not Ready again: %s%s", len(r.Waiting), strings.Join(w, ", "), more)
}

// PodsReadyAgain says whether the pods Ready before the kubelet restarted
// at restartedAt are Ready again, as the restarted kubelet reports them.
// With flips (the kubelet's version sets probed containers not ready on a
// restart) a Ready condition older than the restart is the old kubelet's
// and counts only once the pod's probes have had a period to run since the
// restarted kubelet reported (reported: its first heartbeat and Lease
// renewal); a probed pod the kubelet turned not ready and back shows a
// newer transition. Pods deleted or replaced (another UID) are not waited
// for.
func (n *Node) PodsReadyAgain(ctx context.Context, before []ReadyPod, restartedAt, reported time.Time, flips bool) (Readiness, error) {
	var r Readiness
	now := n.now()
	for _, b := range before {
		p, err := n.api.getPod(ctx, b.Namespace, b.Name)
		if err != nil {
			if apierrors.IsNotFound(err) {
				r.Gone = append(r.Gone, b.String())
				continue
			}
			return r, err
		}
		if p.UID != b.UID || p.DeletionTimestamp != nil {
			r.Gone = append(r.Gone, b.String())
			continue
		}
		c := readyCondition(p)
		switch {
		case c == nil || c.Status != corev1.ConditionTrue:
			r.Waiting = append(r.Waiting, b.String()+" (not Ready)")
		// A transition is kept to the second: one in the restart's second
		// may be the old kubelet's.
		case !flips || !b.Probed || c.LastTransitionTime.Time.After(restartedAt):
		case reported.IsZero() || now.Before(reported.Add(b.Period+2*time.Second)):
			r.Waiting = append(r.Waiting, b.String()+" (Ready as before the restart; its probes not run again yet)")
		}
	}
	return r, nil
}

// WaitPodsReady waits until PodsReadyAgain, at most until the deadline of
// ctx; the error says which pods are not Ready again.
func (n *Node) WaitPodsReady(ctx context.Context, before []ReadyPod, restartedAt, reported time.Time, flips bool) (Readiness, error) {
	n.step("waiting for the %d pod(s) Ready before the restart to be Ready again", len(before))
	for {
		r, err := n.PodsReadyAgain(ctx, before, restartedAt, reported, flips)
		if err == nil && r.OK() {
			n.step("%s", r)
			return r, nil
		}
		if sleep(ctx, n.Poll) != nil {
			if err != nil {
				return r, fmt.Errorf("reading the node's pods: %w", err)
			}
			return r, fmt.Errorf("after the restart, %s", r)
		}
	}
}

// readiness holds, across an apply, the pods Ready before its restart, when
// the restarted kubelet sets probed containers not ready (its version and
// the gates of the new configuration: schema.Version.RestartFlipsReadiness).
type readiness struct {
	n      *Node
	flips  bool
	before []ReadyPod
}

// podsBeforePhase notes the pods Ready on the node just before the restart.
type podsBeforePhase struct{ r *readiness }

func (podsBeforePhase) Name() string { return "pods-before" }

func (p podsBeforePhase) Run(ctx context.Context, t *apply.Tx) error {
	plan := t.Plan()
	if plan == nil || plan.Next() == nil {
		return nil
	}
	next := plan.Next()
	if p.r.flips = next.Version.RestartFlipsReadiness(next.Config.FeatureGates); !p.r.flips {
		return nil
	}
	before, err := p.r.n.ReadyPods(ctx)
	if err != nil {
		return fmt.Errorf("listing the node's Ready pods: %w", err)
	}
	p.r.before = before
	p.r.n.step("%d pod(s) Ready before the restart (kubelet %s sets probed containers not ready on a restart)", len(before), next.Version.Minor)
	return nil
}

// podsReadyPhase waits, once the restarted kubelet is healthy and has
// reported, for the pods Ready before the restart to be Ready again, within
// the apply's health timeout: until then the change is not healthy.
type podsReadyPhase struct{ r *readiness }

func (podsReadyPhase) Name() string { return "pods-ready" }

func (p podsReadyPhase) Run(ctx context.Context, t *apply.Tx) error {
	if !p.r.flips || len(p.r.before) == 0 {
		return nil
	}
	reported := time.Now()
	if out := t.Outcome(); out != nil {
		for _, c := range out.Checks {
			if at, ok := c.Answer.Times["renewTime"]; ok && c.Answer.OK {
				reported = at
			}
		}
	}
	ctx, cancel := context.WithTimeout(ctx, t.HealthTimeout())
	defer cancel()
	_, err := p.r.n.WaitPodsReady(ctx, p.r.before, t.RestartedAt(), reported, true)
	return err
}
