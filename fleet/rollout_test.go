package fleet

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeletcfg/kubeletcfg/fleet/fleettest"
	"github.com/kubeletcfg/kubeletcfg/rollout"
)

// fleet shows the last rollout of its namespace: phase, wave, the nodes
// per outcome, and the ones that did not take the change with why.
func TestScanShowsTheRollout(t *testing.T) {
	plain := fleettest.KubeadmNode(t, "1.37", "unix:///run/containerd/containerd.sock", nil)
	api := fleettest.NewAPIServer(t, "v1.37.2", "", []fleettest.Node{{Name: "n1", Version: "v1.37.2", Ready: "True", Answer: fleettest.Serves(plain)}})
	rep, err := Scan(context.Background(), Options{Kubeconfig: api.Kubeconfig})
	if err != nil || rep.Rollout != nil {
		t.Fatalf("no rollout: %+v %v", rep.Rollout, err)
	}
	st := rollout.State{Version: 1, Spec: rollout.Spec{ID: "abc", Hash: "sha256:x"}, Phase: rollout.PhaseStopped, Wave: 1,
		Updated: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Stop: "node n2: rolled back: kubelet exited",
		Nodes: []rollout.NodeState{{Name: "n1", Wave: "canary", Outcome: "applied"}, {Name: "n2", Wave: "1", Outcome: "rolled back", Cause: "kubelet exited"},
			{Name: "n3", Wave: "1", Outcome: "applied"}, {Name: "n4", Wave: "2", Outcome: "not reached"}}}
	data, _ := json.Marshal(st)
	api.Serve("/api/v1/namespaces/ops/configmaps/"+rollout.ObjectName, corev1.ConfigMap{TypeMeta: metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: rollout.ObjectName, Namespace: "ops"}, Data: map[string]string{"state.json": string(data)}})
	rep, err = Scan(context.Background(), Options{Kubeconfig: api.Kubeconfig, RolloutNamespace: "ops"})
	if err != nil || rep.Rollout == nil {
		t.Fatalf("%+v %v", rep, err)
	}
	r := rep.Rollout
	if r.ID != "abc" || r.Phase != rollout.PhaseStopped || r.Counts["applied"] != 2 || len(r.NotTaken) != 1 || r.NotTaken[0].Name != "n2" {
		t.Errorf("%+v", r)
	}
	want := "rollout abc (ops): stopped, updated 2026-01-02T03:04:05Z; 2 applied, 1 rolled back, 1 not reached; stopped: node n2: rolled back: kubelet exited"
	if r.String() != want {
		t.Errorf("%s\nwant %s", r, want)
	}
	st.Phase, st.Stop = rollout.PhaseRunning, ""
	data, _ = json.Marshal(st)
	api.Serve("/api/v1/namespaces/ops/configmaps/"+rollout.ObjectName, corev1.ConfigMap{TypeMeta: metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: rollout.ObjectName, Namespace: "ops"}, Data: map[string]string{"state.json": string(data)}})
	rep, _ = Scan(context.Background(), Options{Kubeconfig: api.Kubeconfig, RolloutNamespace: "ops"})
	if s := rep.Rollout.String(); !strings.Contains(s, "running, wave 1 of 3") {
		t.Errorf("%s", s)
	}
}
