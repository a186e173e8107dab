package fleet

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"

	"github.com/kubeletcfg/kubeletcfg/apply"
	"github.com/kubeletcfg/kubeletcfg/rollout"
)

// Rollout is the state of the last kubeletcfg rollout of a namespace, as
// its progress ConfigMap says.
type Rollout struct {
	Namespace string `json:"namespace"`
	ID        string `json:"id,omitempty"`
	Change    string `json:"change,omitempty"`
	// Phase is running, done or stopped.
	Phase string `json:"phase,omitempty"`
	// Wave is the wave in progress or next (its name), of Waves.
	Wave    string    `json:"wave,omitempty"`
	Waves   int       `json:"waves,omitempty"`
	Updated time.Time `json:"updated,omitzero"`
	// Counts are the nodes per outcome (pending: not started yet).
	Counts map[string]int `json:"counts,omitempty"`
	// NotTaken are the nodes that refused, rolled back or failed, with why.
	NotTaken []rollout.NodeState `json:"notTaken,omitempty"`
	Stop     string              `json:"stop,omitempty"`
	// Error says why the progress could not be read.
	Error string `json:"error,omitempty"`
}

// readRollout reads namespace ns's rollout progress (nil: none).
func readRollout(ctx context.Context, client rest.Interface, ns string) *Rollout {
	cm := &corev1.ConfigMap{}
	err := client.Get().Namespace(ns).Resource("configmaps").Name(rollout.ObjectName).Do(ctx).Into(cm)
	if apierrors.IsNotFound(err) {
		return nil
	}
	r := &Rollout{Namespace: ns}
	if err != nil {
		r.Error = err.Error()
		return r
	}
	st, err := rollout.DecodeState(cm)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	r.ID, r.Change, r.Phase, r.Waves, r.Updated, r.Stop = st.Spec.ID, st.Spec.Hash, st.Phase, len(st.Spec.Waves), st.Updated, st.Stop
	if st.Wave < len(st.Spec.Waves) {
		r.Wave = st.Spec.Waves[st.Wave].Name
	}
	r.Counts = st.Counts()
	for _, n := range st.Nodes {
		switch n.Outcome {
		case apply.OutcomeRefused, apply.OutcomeRolledBack, apply.OutcomeFailed:
			r.NotTaken = append(r.NotTaken, n)
		}
	}
	return r
}

// String is the rollout in one line.
func (r *Rollout) String() string {
	if r.Error != "" {
		return fmt.Sprintf("rollout (%s): cannot be read: %s", r.Namespace, r.Error)
	}
	s := fmt.Sprintf("rollout %s (%s): %s", r.ID, r.Namespace, r.Phase)
	if r.Phase == rollout.PhaseRunning {
		s += fmt.Sprintf(", wave %s of %d", r.Wave, r.Waves)
	}
	s += fmt.Sprintf(", updated %s;", r.Updated.UTC().Format(time.RFC3339))
	for _, o := range []string{apply.OutcomeApplied, apply.OutcomeUnchanged, rollout.OutcomeRunning, apply.OutcomeRolledBack, apply.OutcomeRefused, apply.OutcomeFailed, rollout.OutcomeNotReached, "pending"} {
		if n := r.Counts[o]; n > 0 {
			s += fmt.Sprintf(" %d %s,", n, o)
		}
	}
	s = s[:len(s)-1]
	if r.Stop != "" {
		s += "; stopped: " + r.Stop
	}
	return s
}
