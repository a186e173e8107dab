package schema

import (
	"strings"
	"testing"
)

// Each meaning is checked, for every version, against the data the
// generator read from that kubelet's code; the expectations below are what
// the kubelets' code was read to do (cmd/kubelet/app/server.go run(),
// pkg/kubelet/prober, the v1beta1 defaults, the validation, the flags).

func meaning(t *testing.T, id string) Meaning {
	t.Helper()
	for _, m := range Meanings {
		if m.ID == id {
			return m
		}
	}
	t.Fatalf("no meaning %s", id)
	return Meaning{}
}

// from is where, along the versions, the meaning starts to read as changed:
// every version before reads before, every one from on reads after.
func checkSteps(t *testing.T, m Meaning, gates map[string]bool, steps map[string]string) {
	t.Helper()
	var last string
	for _, v := range Versions() {
		got := m.Means(v, gates)
		if want, ok := steps[v.Minor]; ok {
			if !strings.Contains(got, want) {
				t.Errorf("%s on kubelet %s: %q, want %q in it", m.ID, v.Minor, got, want)
			}
		} else if last != "" && got != last {
			t.Errorf("%s changes at kubelet %s (%q → %q), where the table says nothing changes", m.ID, v.Minor, last, got)
		}
		last = got
	}
}

func TestMeaningEventRecordQPSZero(t *testing.T) {
	m := meaning(t, "eventRecordQPS-zero")
	for _, v := range Versions() {
		if z := v.EventRecordQPSZero(); z == "" {
			t.Fatalf("kubelet %s: no eventRecordQPSZero trait (make schema)", v.Minor)
		}
	}
	checkSteps(t, m, nil, map[string]string{"1.28": "default of 5 events per second", "1.37": "no limit"})
	n := &NodeView{Config: map[string]any{"eventRecordQPS": float64(0)}}
	if !m.Touches(n) || m.Touches(&NodeView{Config: map[string]any{"eventRecordQPS": float64(50)}}) {
		t.Error("touches only eventRecordQPS 0")
	}
}

func TestMeaningRestartReadiness(t *testing.T) {
	m := meaning(t, "restart-readiness")
	for _, v := range Versions() {
		_, gate := v.Gate("ChangeContainerStatusOnKubeletRestart")
		if (v.RestartReadinessGate() != "") != gate {
			t.Errorf("kubelet %s: the prober checks the gate: %t, the gate exists: %t", v.Minor, v.RestartReadinessGate() != "", gate)
		}
	}
	checkSteps(t, m, nil, map[string]string{"1.28": "not ready until probed again", "1.35": "keeps containers' readiness"})
	// Keyed on the gate: turned back on, the old behaviour is back.
	on := map[string]bool{"ChangeContainerStatusOnKubeletRestart": true}
	for _, v := range Versions() {
		if !v.RestartFlipsReadiness(on) || !strings.Contains(m.Means(v, on), "not ready until probed again") {
			t.Errorf("kubelet %s with the gate on: %q", v.Minor, m.Means(v, on))
		}
	}
}

func TestMeaningFailCgroupV1(t *testing.T) {
	m := meaning(t, "failCgroupV1-default")
	checkSteps(t, m, nil, map[string]string{"1.28": "has no failCgroupV1", "1.31": "unset is false", "1.35": "unset is true: the kubelet refuses"})
	if m.Touches(&NodeView{Set: map[string]bool{"failCgroupV1": true}}) {
		t.Error("a node that sets failCgroupV1 does not depend on the default")
	}
}

func TestMeaningGatedFields(t *testing.T) {
	for field, since := range map[string]string{"crashLoopBackOff.maxContainerRestartPeriod": "1.32", "imagePullCredentialsVerificationPolicy": "1.33"} {
		m := meaning(t, field+"-gate")
		for _, v := range Versions() {
			_, has := v.Field(field)
			if has != v.AtLeast(since) {
				t.Errorf("kubelet %s: %s exists: %t", v.Minor, field, has)
			}
			if has && v.GateRequired(field) == "" {
				t.Errorf("kubelet %s: the kubelet accepts %s with its gate off (make schema)", v.Minor, field)
			}
		}
		checkSteps(t, m, nil, map[string]string{"1.28": "has no " + field, since: "is refused: gate", "1.35": "(gate "})
	}
}

func TestMeaningCadvisorFlags(t *testing.T) {
	m := meaning(t, "cadvisor-flags")
	for _, v := range Versions() {
		var deprecated []string
		for _, f := range v.Flags() {
			if strings.Contains(f.Deprecated, "cadvisor flag") {
				deprecated = append(deprecated, f.Name)
			}
		}
		want := len(cadvisorFlags)
		if v.AtLeast("1.37") {
			want = 0
		}
		if len(deprecated) != want {
			t.Errorf("kubelet %s: %d flags deprecated as cAdvisor's (%v), the table lists %d", v.Minor, len(deprecated), deprecated, want)
		}
		for _, f := range deprecated {
			if !strings.Contains(strings.Join(cadvisorFlags, " "), f) {
				t.Errorf("kubelet %s: %s is missing from the table", v.Minor, f)
			}
		}
	}
	checkSteps(t, m, nil, map[string]string{"1.28": "accepted, deprecated", "1.37": "one on the command line stops it"})
	if !m.Touches(&NodeView{Flags: []string{"containerd"}}) || m.Touches(&NodeView{Flags: []string{"housekeeping-interval"}}) {
		t.Error("touches only cAdvisor's flags")
	}
}

func TestMeaningCgroupDriverFromRuntime(t *testing.T) {
	m := meaning(t, "cgroupDriver-from-runtime")
	for _, v := range Versions() {
		asks, gate := v.CgroupDriverFromCRI()
		g, has := v.Gate("KubeletCgroupDriverFromCRI")
		switch {
		case !asks:
			t.Errorf("kubelet %s never asks the runtime (make schema)", v.Minor)
		case gate != "" && !has:
			t.Errorf("kubelet %s asks under a gate it does not have", v.Minor)
		case gate == "" && has && !g.Locked:
			t.Errorf("kubelet %s always asks, yet its gate can be turned off", v.Minor)
		}
	}
	checkSteps(t, m, nil, map[string]string{
		"1.28": "runs the cgroupDriver it is given (gate KubeletCgroupDriverFromCRI off)",
		"1.31": "/configz still shows the cgroupDriver it was given",
		"1.34": "/configz still shows",
		"1.35": "/configz shows the driver it runs",
	})
	// 1.31–1.33: the gate decides.
	off := map[string]bool{"KubeletCgroupDriverFromCRI": false}
	for _, v := range Versions() {
		_, gate := v.CgroupDriverFromCRI()
		if v.AsksRuntimeForCgroupDriver(off) != (gate == "") {
			t.Errorf("kubelet %s with the gate off: asks %t", v.Minor, v.AsksRuntimeForCgroupDriver(off))
		}
	}
}

func TestMeaningChanges(t *testing.T) {
	var from, to *Version
	for _, v := range Versions() {
		switch v.Minor {
		case "1.34":
			from = v
		case "1.37":
			to = v
		}
	}
	n := &NodeView{Config: map[string]any{"eventRecordQPS": float64(0)}, Set: map[string]bool{"eventRecordQPS": true}, Flags: []string{"log-cadvisor-usage"}}
	got := map[string]bool{}
	for _, c := range MeaningChanges(n, from, nil, to, nil) {
		got[c.ID] = true
		if c.From == c.To {
			t.Errorf("%s: no change", c.ID)
		}
	}
	for _, id := range []string{"eventRecordQPS-zero", "restart-readiness", "failCgroupV1-default", "cadvisor-flags", "cgroupDriver-from-runtime"} {
		if !got[id] {
			t.Errorf("1.34 → 1.37: %s not reported (%v)", id, got)
		}
	}
	if got["crashLoopBackOff.maxContainerRestartPeriod-gate"] {
		t.Error("a field the node does not set is reported")
	}
}
