package main

import (
	"encoding/json"
	"strings"
	"testing"
)

const kubeadmCorpus = "../../testdata/kubeadm/corpus"

func TestKubeadmRender(t *testing.T) {
	code, out, errOut := runCLI(t, "kubeadm", "render", "--root", sample, "--configmap", kubeadmCorpus+"/cm-sparse/configmap.yaml",
		"--cluster-configuration", kubeadmCorpus+"/cm-sparse/cluster.yaml", "--kubeadm-version", "1.34")
	if code != 0 || !strings.Contains(out, "- 10.100.0.10\n") || !strings.Contains(out, "containerRuntimeEndpoint: unix:///var/run/containerd/containerd.sock\n") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	// The sample has no instance-config.yaml: kubeadm 1.34 makes one from
	// kubeadm-flags.env and rewrites that; systemd-resolved is a condition.
	for _, want := range []string{"instance-config.yaml is missing: kubeadm 1.34 creates it", "it rewrites /var/lib/kubelet/kubeadm-flags.env as KUBELET_KUBEADM_ARGS=",
		"condition: if systemd-resolved is active"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	code, out, _ = runCLI(t, "kubeadm", "render", "--root", sample, "--configmap", kubeadmCorpus+"/cm-sparse/configmap.yaml", "--kubeadm-version", "1.37", "-o", "json")
	var res struct {
		Origins map[string]struct {
			Kind string
			Line int
		}
	}
	if err := json.Unmarshal([]byte(out), &res); code != 0 || err != nil || res.Origins["maxPods"].Kind != "configmap" || res.Origins["maxPods"].Line != 3 {
		t.Fatalf("exit %d, %v: %s", code, err, out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--configmap", kubeadmCorpus + "/cm-no-kind/configmap.yaml"}, "cm-no-kind/configmap.yaml:1: kubeadm refuses it"},
		{[]string{"--configmap", kubeadmCorpus + "/cm-only/configmap.yaml", "--patches", "/nonexistent"}, "patches directory /nonexistent"},
		{[]string{"--configmap", kubeadmCorpus + "/cm-only/configmap.yaml", "--kubeadm-version", "1.27"}, "kubeadm version 1.27 is not modelled"},
		{[]string{"--configmap", kubeadmCorpus + "/cm-only/configmap.yaml", "-o", "text"}, `-o: unknown format text (yaml, json)`},
	} {
		code, _, errOut := runCLI(t, append([]string{"kubeadm", "render", "--root", sample, "--kubeadm-version", "1.37"}, tc.args...)...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
}
