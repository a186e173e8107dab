package diff

import (
	"strings"
	"testing"

	"k8s.io/kubelet/config/v1beta1"

	"github.com/kubeletcfg/kubeletcfg/config"
	"github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

func TestPreflightOfTheSampleNode(t *testing.T) {
	const root = "../testdata/nodes/kubeadm-1.31"
	from, _ := schema.Resolve("1.31")
	setup, err := node.ReadSetupAs(from, node.Source{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	find := func(to string) map[string]Finding {
		v, err := schema.Resolve(to)
		if err != nil {
			t.Fatal(err)
		}
		fs, err := Preflight(PreflightOptions{Setup: setup, To: v})
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]Finding{}
		for _, f := range fs {
			m[f.Subject] = f
		}
		return m
	}
	// kubeadm-flags.env still passes --pod-infra-container-image, which 1.35
	// removed: the upgraded kubelet would not start.
	if f := find("1.37")["--pod-infra-container-image=registry.k8s.io/pause:3.9"]; f.Severity != "blocker" {
		t.Errorf("1.31 -> 1.37: want a blocker for --pod-infra-container-image, got %+v", f)
	}
	if f := find("1.37")["failCgroupV1"]; f.Severity != "change" {
		t.Errorf("1.31 -> 1.37: want failCgroupV1's new default reported, got %+v", f)
	}
	for subject, f := range find("1.32") {
		if f.Severity == "blocker" {
			t.Errorf("1.31 -> 1.32: unexpected blocker %s: %s", subject, f.Message)
		}
	}
}

// TestPreflightRemovedGates: a gate the target no longer has is a blocker
// that says whether dropping it changes anything, and the rest of the upgrade
// is still read; a gate whose dependants stay on is the target's refusal.
func TestPreflightRemovedGates(t *testing.T) {
	from, _ := schema.Resolve("1.31")
	to, _ := schema.Resolve("1.37")
	fs, err := Preflight(PreflightOptions{To: to, Setup: given(t, from, []string{"--feature-gates=CloudDualStackNodeIPs=true", "--max-pods=90"})})
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]Finding{}
	for _, f := range fs {
		m[f.Subject] = f
	}
	g, gone := to.RemovedGate("CloudDualStackNodeIPs")
	if f := m["featureGates.CloudDualStackNodeIPs"]; !gone || f.Severity != "blocker" || !strings.HasPrefix(f.Message, g.Dropping(to, true)) {
		t.Errorf("removed gate: %+v", f)
	}
	if f := m["failCgroupV1"]; f.Severity != "change" {
		t.Errorf("the rest of the upgrade is not read: %+v", fs)
	}
	fs, err = Preflight(PreflightOptions{To: to, Setup: given(t, from, []string{"--feature-gates=GracefulNodeShutdown=false"})})
	if err != nil {
		t.Fatal(err)
	}
	refused := to.SetGates(map[string]bool{"GracefulNodeShutdown": false})
	if len(fs) == 0 || fs[0].Severity != "blocker" || len(refused) == 0 || !strings.Contains(fs[0].Message, refused[0]) {
		t.Errorf("gate dependency on 1.37: %+v, want kubelet 1.37's %q", fs, refused)
	}
}

// TestPreflightRunning reads what a 1.33 kubelet runs (a gate 1.37 no longer
// has turned on, maxPods set) as kubelet 1.37 would.
func TestPreflightRunning(t *testing.T) {
	from, _ := schema.Resolve("1.33")
	to, _ := schema.Resolve("1.37")
	gone := ""
	for _, g := range from.Gates() {
		if _, removed := to.RemovedGate(g.Name); removed && !g.Locked {
			gone = g.Name
			break
		}
	}
	if gone == "" {
		t.Fatal("no gate of 1.33 that 1.37 removed")
	}
	running := config.Default(&v1beta1.KubeletConfiguration{MaxPods: 50, FeatureGates: map[string]bool{gone: true}}, from)
	set := []byte(`{"maxPods":50,"featureGates":{"` + gone + `":true}}`)
	findings, err := PreflightRunning(running, set, from, to)
	if err != nil {
		t.Fatal(err)
	}
	bySubject := map[string]Finding{}
	for _, f := range findings {
		bySubject[f.Subject] = f
	}
	g, _ := to.RemovedGate(gone)
	if f := bySubject["featureGates."+gone]; f.Severity != "blocker" || f.Message != g.Dropping(to, true) {
		t.Errorf("gate %s, gone in 1.37: %+v", gone, f)
	}
	if f := bySubject["failCgroupV1"]; f.Severity != "change" || !strings.HasPrefix(f.Message, "false -> true") {
		t.Errorf("failCgroupV1's default turns true in 1.35: %+v", f)
	}
	if _, ok := bySubject["maxPods"]; ok {
		t.Errorf("maxPods is set, the upgrade keeps it: %+v", bySubject["maxPods"])
	}
}

// given is a setup whose command line is given directly.
func given(t *testing.T, v *schema.Version, args []string) *node.Setup {
	t.Helper()
	s, err := node.ReadSetupAs(v, node.Source{Args: args, Dashed: true})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestPreflightNamesFieldsTheTargetIgnores: a field another kubelet version
// has, which the target does not, is a note; a field no version has is not.
func TestPreflightNamesFieldsTheTargetIgnores(t *testing.T) {
	from, _ := schema.Resolve("1.37")
	to, _ := schema.Resolve("1.28")
	running := config.Default(&v1beta1.KubeletConfiguration{PodLogsDir: "/srv/pod-logs"}, from)
	set := []byte(`{"podLogsDir":"/srv/pod-logs","maxPodz":3}`)
	findings, err := PreflightRunning(running, set, from, to)
	if err != nil {
		t.Fatal(err)
	}
	var notes []Finding
	for _, f := range findings {
		if f.Subject == "config" {
			notes = append(notes, f)
		}
	}
	if len(notes) != 1 || notes[0].Severity != "note" || !strings.Contains(notes[0].Message, "podLogsDir") {
		t.Errorf("notes on fields kubelet 1.28 ignores: %+v, want one on podLogsDir", notes)
	}
}
