package rollout

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
)

func TestValidatePerKind(t *testing.T) {
	for _, c := range []struct {
		name   string
		change Change
		minors []string
		bad    string // "" valid; else in the error
	}{
		{"file", Change{Kind: KindFile, File: "f", Content: []byte(header + "maxPods: 10\n")}, []string{"1.28", "1.37"}, ""},
		{"file invalid for one minor", Change{Kind: KindFile, File: "f", Content: []byte(header + "failCgroupV1: false\n")}, []string{"1.28", "1.37"}, "kubelet 1.28: f:3"},
		{"file refused by validation", Change{Kind: KindFile, File: "f", Content: []byte(header + "maxPods: -1\n")}, []string{"1.37"}, "kubelet 1.37"},
		{"dropin judged by decoding", Change{Kind: KindDropin, Name: "50-a.conf", File: "d", Content: []byte(header + "evictionSoft:\n  memory.available: 1Gi\n")}, []string{"1.37"}, ""},
		{"dropin with a typo", Change{Kind: KindDropin, Name: "50-a.conf", File: "d", Content: []byte(header + "maxPod: 10\n")}, []string{"1.37"}, "maxPod"},
		{"dropin of a wrong type", Change{Kind: KindDropin, Name: "50-a.conf", File: "d", Content: []byte(header + "maxPods: many\n")}, []string{"1.37"}, "kubelet 1.37"},
		{"dropin name", Change{Kind: KindDropin, Name: "../x.conf", File: "d", Content: []byte(header)}, []string{"1.37"}, "not a path"},
		{"patch with a null", Change{Kind: KindPatch, File: "p", Content: []byte("maxPods: 10\nsystemReserved: null\n")}, []string{"1.31", "1.37"}, ""},
		{"patch with a typo", Change{Kind: KindPatch, File: "p", Content: []byte("maxPodz: 10\n")}, []string{"1.37"}, "maxPodz"},
		{"empty", Change{Kind: KindFile, File: "f"}, []string{"1.37"}, "empty"},
		{"unsupported minor", Change{Kind: KindFile, File: "f", Content: []byte(header)}, []string{"1.27"}, "not supported"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.change.Validate(c.minors)
			switch {
			case c.bad == "" && err != nil:
				t.Errorf("refused: %v", err)
			case c.bad != "" && (err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.bad)):
				t.Errorf("%v, want a refusal naming %q", err, c.bad)
			}
		})
	}
}

// The progress of a rollout of 5,000 nodes fits in its ConfigMap (1 MiB),
// every node done.
func TestStateOfManyNodesFitsAConfigMap(t *testing.T) {
	var nodes []Node
	for i := range 5000 {
		n := fmt.Sprintf("ip-10-0-%d-%d.eu-west-1.compute.internal", i/250, i%250)
		nodes = append(nodes, Node{Name: n, KubeletVersion: "v1.37.2", Minor: "1.37"})
	}
	waves, err := Waves{Canary: 1, Batch: "10%"}.Plan(nodes)
	if err != nil {
		t.Fatal(err)
	}
	st := newState(Spec{ID: "x", Waves: waves, Nodes: nodes}, time.Now())
	for i := range st.Nodes {
		st.Nodes[i].Outcome, st.Nodes[i].HealthyAfter = "applied", 1.234
	}
	b, _ := json.Marshal(st)
	var back State
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	back.rebuild()
	if len(back.Spec.Waves) != len(waves) || back.Spec.Waves[3].Nodes[7] != waves[3].Nodes[7] || back.Spec.Nodes[4999].Minor != "1.37" {
		t.Errorf("the waves read back: %d", len(back.Spec.Waves))
	}
	if len(b) > 1<<20-1024 {
		t.Errorf("the state of 5,000 nodes is %d bytes", len(b))
	}
	t.Logf("5,000 nodes: %d bytes", len(b))
}

// A wave of 500 nodes refused with causes of an apply report's 4 KiB
// (2 MB of them) still fits the progress ConfigMap: the stored causes are
// cut, the first bytes kept; a state that fits is stored whole.
func TestStateWithManyLongCausesFitsAConfigMap(t *testing.T) {
	var nodes []Node
	for i := range 5000 {
		nodes = append(nodes, Node{Name: fmt.Sprintf("ip-10-0-%d-%d.eu-west-1.compute.internal", i/250, i%250), Minor: "1.37"})
	}
	waves, err := Waves{Canary: 1, Batch: "10%"}.Plan(nodes)
	if err != nil {
		t.Fatal(err)
	}
	st := newState(Spec{ID: "x", Waves: waves, Nodes: nodes}, time.Now())
	small, err := encodeState(st)
	if err != nil {
		t.Fatal(err)
	}
	cause := "preflight: reserved-beyond-capacity: " + strings.Repeat("é", 2000)
	for i := 1; i <= 500; i++ {
		st.Nodes[i].Outcome, st.Nodes[i].Cause = "refused", cause
	}
	b, err := encodeState(st)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 1<<20-1024 {
		t.Fatalf("%d bytes", len(b))
	}
	back, err := DecodeState(&corev1.ConfigMap{Data: map[string]string{stateKey: string(b)}})
	if err != nil {
		t.Fatal(err)
	}
	got := back.Nodes[1].Cause
	if !strings.HasPrefix(got, "preflight: reserved-beyond-capacity: é") || !strings.HasSuffix(got, "…") || !utf8.ValidString(got) || len(got) > 1024 {
		t.Errorf("a stored cause: %d bytes %q…", len(got), got[:min(60, len(got))])
	}
	if st.Nodes[1].Cause != cause {
		t.Error("the state in memory (the run's report) lost its cause")
	}
	if len(small) >= len(b) {
		t.Errorf("no cause stored: %d, %d bytes", len(small), len(b))
	}
	t.Logf("5,000 nodes, 500 of them refused with 4 KiB causes: %d bytes stored", len(b))
}
