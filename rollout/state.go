package rollout

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeletcfg/kubeletcfg/apply"
)

// Phases of a rollout.
const (
	PhaseRunning = "running"
	PhaseDone    = "done"    // every node applied (or unchanged)
	PhaseStopped = "stopped" // a node refused, rolled back or failed: no further wave
)

// Outcomes of a node beyond apply's.
const (
	OutcomeRunning    = "running"     // its Job runs
	OutcomeNotReached = "not reached" // the rollout stopped before its wave
)

// stateKey is the progress's key in the ConfigMap.
const stateKey = "state.json"

// State is a rollout's progress, kept in the namespace's
// kubeletcfg-rollout ConfigMap: what --resume continues from and what
// kubeletcfg fleet shows.
type State struct {
	Version int    `json:"version"`
	Spec    Spec   `json:"spec"`
	Phase   string `json:"phase"`
	// Wave is the index of the wave in progress (or next to start).
	Wave int `json:"wave"`
	// SoakUntil is when the soak after wave Wave-1 ends.
	SoakUntil *time.Time  `json:"soakUntil,omitempty"`
	Started   time.Time   `json:"started"`
	Updated   time.Time   `json:"updated"`
	Holder    string      `json:"holder,omitempty"`
	Nodes     []NodeState `json:"nodes"`
	// Stop says why the rollout stopped.
	Stop string `json:"stop,omitempty"`
}

// NodeState is one node's part of the rollout.
type NodeState struct {
	Name    string `json:"name"`
	Wave    string `json:"wave"`
	Minor   string `json:"minor"`
	Outcome string `json:"outcome,omitempty"` // "" not started yet
	Cause   string `json:"cause,omitempty"`
	// HealthyAfter is seconds from the kubelet's restart to healthy.
	HealthyAfter float64 `json:"healthyAfter,omitempty"`
	// Took is seconds from its Job's creation to its outcome, as this
	// process saw them (none for a Job a resumed rollout found).
	Took float64 `json:"took,omitempty"`
}

// ok: the change holds on the node.
func ok(outcome string) bool {
	return outcome == apply.OutcomeApplied || outcome == apply.OutcomeUnchanged
}

// finished: the node's Job has ended with a verdict.
func finished(outcome string) bool {
	return outcome != "" && outcome != OutcomeRunning && outcome != OutcomeNotReached
}

func newState(spec Spec, now time.Time) *State {
	st := &State{Version: 1, Spec: spec, Phase: PhaseRunning, Started: now, Updated: now}
	for _, w := range spec.Waves {
		for _, n := range w.Nodes {
			st.Nodes = append(st.Nodes, NodeState{Name: n, Wave: w.Name, Minor: spec.node(n).Minor})
		}
	}
	return st
}

// rebuild puts the spec's waves and nodes back from the nodes' states.
func (st *State) rebuild() {
	st.Spec.Waves, st.Spec.Nodes = nil, nil
	for _, n := range st.Nodes {
		if k := len(st.Spec.Waves); k == 0 || st.Spec.Waves[k-1].Name != n.Wave {
			st.Spec.Waves = append(st.Spec.Waves, Wave{Name: n.Wave})
		}
		w := &st.Spec.Waves[len(st.Spec.Waves)-1]
		w.Nodes = append(w.Nodes, n.Name)
		st.Spec.Nodes = append(st.Spec.Nodes, Node{Name: n.Name, Minor: n.Minor})
	}
}

func (st *State) node(name string) *NodeState {
	for i := range st.Nodes {
		if st.Nodes[i].Name == name {
			return &st.Nodes[i]
		}
	}
	return nil
}

// Counts are how many nodes have each outcome ("" as "pending").
func (st *State) Counts() map[string]int {
	out := map[string]int{}
	for _, n := range st.Nodes {
		o := n.Outcome
		if o == "" {
			o = "pending"
		}
		out[o]++
	}
	return out
}

// progressStore keeps the State in the ConfigMap.
type progressStore struct {
	api API
	ns  string
	cm  *corev1.ConfigMap
}

// ReadState reads the rollout progress of namespace ns (nil: none).
func ReadState(ctx context.Context, api API, ns string) (*State, error) {
	st, _, err := readState(ctx, api, ns)
	return st, err
}

func readState(ctx context.Context, api API, ns string) (*State, *corev1.ConfigMap, error) {
	cm, err := api.GetConfigMap(ctx, ns, ObjectName)
	if apierrors.IsNotFound(err) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("configmap %s/%s: %w", ns, ObjectName, err)
	}
	st, err := DecodeState(cm)
	return st, cm, err
}

// DecodeState reads the progress a kubeletcfg-rollout ConfigMap holds.
func DecodeState(cm *corev1.ConfigMap) (*State, error) {
	var st State
	if err := json.Unmarshal([]byte(cm.Data[stateKey]), &st); err != nil {
		return nil, fmt.Errorf("configmap %s/%s: %s: %w", cm.Namespace, cm.Name, stateKey, err)
	}
	if st.Version != 1 {
		return nil, fmt.Errorf("configmap %s/%s: a rollout state of version %d (this kubeletcfg reads 1)", cm.Namespace, cm.Name, st.Version)
	}
	st.rebuild()
	return &st, nil
}

// save writes st (at the ConfigMap's resourceVersion: only the Lease's
// holder writes it).
func (p *progressStore) save(ctx context.Context, st *State, now time.Time) error {
	st.Updated = now
	data, err := encodeState(st)
	if err != nil {
		return err
	}
	if p.cm == nil {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: ObjectName, Namespace: p.ns,
			Labels: map[string]string{labelName: "kubeletcfg", labelComponent: "rollout", LabelRollout: st.Spec.ID}},
			Data: map[string]string{stateKey: string(data)}}
		created, err := p.api.CreateConfigMap(ctx, cm)
		if err != nil {
			return fmt.Errorf("configmap %s/%s: %w", p.ns, ObjectName, err)
		}
		p.cm = created
		return nil
	}
	next := p.cm.DeepCopy()
	next.Data = map[string]string{stateKey: string(data)}
	if next.Labels == nil {
		next.Labels = map[string]string{}
	}
	next.Labels[LabelRollout] = st.Spec.ID
	updated, err := p.api.UpdateConfigMap(ctx, next)
	if err != nil {
		return fmt.Errorf("configmap %s/%s: %w", p.ns, ObjectName, err)
	}
	p.cm = updated
	return nil
}

// maxState is the most of a ConfigMap's 1 MiB the progress takes.
const maxState = 1<<20 - 16<<10

// encodeState is st as the ConfigMap keeps it: when the nodes' causes
// (each up to an apply report's 4 KiB) would take it past maxState — a
// wave of hundreds refused — each is cut shorter (1 KiB, 256, 64 bytes,
// none) until it fits; the run's own report and the Nodes' annotations
// keep them whole.
func encodeState(st *State) ([]byte, error) {
	data, err := json.Marshal(st)
	if err != nil || len(data) <= maxState {
		return data, err
	}
	for _, limit := range []int{1024, 256, 64, 0} {
		short := *st
		short.Nodes = make([]NodeState, len(st.Nodes))
		for i, n := range st.Nodes {
			n.Cause = cutCause(n.Cause, limit)
			short.Nodes[i] = n
		}
		if data, err = json.Marshal(&short); err != nil || len(data) <= maxState {
			return data, err
		}
	}
	return nil, fmt.Errorf("the progress of %d nodes takes %d bytes, more than a ConfigMap holds", len(st.Nodes), len(data))
}

// cutCause is c cut to at most limit bytes, in a whole rune.
func cutCause(c string, limit int) string {
	if len(c) <= limit {
		return c
	}
	if limit == 0 {
		return ""
	}
	cut := limit - len("…")
	for cut > 0 && !utf8.RuneStart(c[cut]) {
		cut--
	}
	return c[:cut] + "…"
}
