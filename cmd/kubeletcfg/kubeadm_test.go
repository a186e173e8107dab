package main

import (
	"encoding/json"
	"os"
	"path/filepath"
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

// apply on a kubeadm node: a change the next kubeadm upgrade node may
// revert is refused, naming the fields and the choices; --persist patch
// writes kubeletcfg's kubeadm patch with the change.
func TestApplyOnKubeadmNode(t *testing.T) {
	base := []string{"apply", "--dry-run", "--node", "node-1", "-f", sample + "/new-config.yaml", "--kubelet-version", "1.31", "--root", sample}
	code, out, errOut := runCLI(t, base...)
	if code != 2 || !strings.Contains(errOut, "kubeadm: the next kubeadm upgrade node reverts the change") ||
		!strings.Contains(errOut, `tlsMinVersion: "VersionTLS13" here, "VersionTLS12" after the upgrade`) || !strings.Contains(errOut, "--persist patch") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, append(base, "--persist", "patch")...)
	if code != 1 || !strings.Contains(out, "etc/kubernetes/patches/"+"kubeletconfigurationzz-kubeletcfg+merge.yaml") ||
		!strings.Contains(errOut, "run kubeadm upgrade node (and apply) with --patches /etc/kubernetes/patches") {
		t.Fatalf("--persist patch: exit %d\n%s\n%s", code, out, errOut)
	}
	code, _, errOut = runCLI(t, append(base, "--persist", "elsewhere")...)
	if code != 2 || !strings.Contains(errOut, `--persist "elsewhere"`) {
		t.Errorf("--persist elsewhere: exit %d %s", code, errOut)
	}
	// A node kubeadm did not set up takes no --persist.
	code, _, errOut = runCLI(t, "apply", "--dry-run", "--node", "n1", "-f", sample+"/new-config.yaml", "--kubelet-version", "1.31", "--persist", "patch", "--", "--config="+sample+"/var/lib/kubelet/config.yaml", "--hostname-override=n1")
	if code != 2 || !strings.Contains(errOut, "for a node kubeadm set up") {
		t.Errorf("not kubeadm: exit %d %s", code, errOut)
	}
}

// apply --from-kubeadm writes what kubeadm writes from the ConfigMap: the
// kubeadm phase finds nothing to revert.
func TestApplyFromKubeadm(t *testing.T) {
	code, out, errOut := runCLI(t, "apply", "--dry-run", "--node", "node-1", "--from-kubeadm", "--kubeadm-configmap", kubeadmCorpus+"/cm-sparse/configmap.yaml",
		"--kubeadm-version", "1.31", "--kubelet-version", "1.31", "--root", sample, "-o", "json")
	var res struct {
		Changes []struct{ Path string }
		Kubeadm *struct{ Reverted []any }
		Writes  []string
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 1 || res.Kubeadm == nil || len(res.Kubeadm.Reverted) != 0 || len(res.Writes) != 1 {
		t.Fatalf("exit %d %v\n%s\n%s", code, err, out, errOut)
	}
	found := false
	for _, c := range res.Changes {
		found = found || c.Path == "serverTLSBootstrap"
	}
	if !found {
		t.Errorf("serverTLSBootstrap, which the ConfigMap leaves out, is not among the changes: %s", out)
	}
	code, _, errOut = runCLI(t, "apply", "--dry-run", "--node", "node-1", "--from-kubeadm", "--kubelet-version", "1.31", "--root", sample)
	if code != 2 || !strings.Contains(errOut, "--from-kubeadm needs kubeadm's ConfigMap") {
		t.Errorf("no ConfigMap: exit %d %s", code, errOut)
	}
}

// kubeadm drift in diff and audit: what the next kubeadm upgrade node
// reverts of the kubelet's configuration (a value a flag sets is none), with
// kubeadm's value and its origin.
func TestKubeadmDrift(t *testing.T) {
	args := []string{"--kubelet-version", "1.31", "--root", sample, "--kubeadm-configmap", kubeadmCorpus + "/cm-sparse/configmap.yaml"}
	code, out, errOut := runCLI(t, append([]string{"diff", "--kubeadm"}, args...)...)
	if code != 1 || !strings.Contains(out, `reverts tlsMinVersion: "VersionTLS12" -> (unset)  (/var/lib/kubelet/config.yaml:56; kubeadm: the kubelet's default (kubeadm leaves it unset))`) ||
		strings.Contains(out, "maxPods") || !strings.Contains(errOut, "re-uploads the kubelet-config ConfigMap") {
		t.Fatalf("diff --kubeadm: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, _ = runCLI(t, append([]string{"diff", "--kubeadm", "-o", "json"}, args...)...)
	var res struct {
		Kubeadm struct {
			Owned bool
			Drift struct {
				Reverts []struct {
					Field   string
					NowLine int
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &res); code != 1 || err != nil || !res.Kubeadm.Owned || len(res.Kubeadm.Drift.Reverts) != 8 {
		t.Fatalf("json: exit %d %v %s", code, err, out)
	}
	// The kubelet's command line given after --: a value a flag sets is no
	// drift.
	code, out, errOut = runCLI(t, append(append([]string{"diff", "--kubeadm"}, args...), "--", "--config=/var/lib/kubelet/config.yaml", "--tls-min-version=VersionTLS12")...)
	if code != 1 || strings.Contains(out, "tlsMinVersion") || !strings.Contains(out, "reverts") {
		t.Errorf("diff --kubeadm -- ARGS: exit %d\n%s\n%s", code, out, errOut)
	}
	code, _, errOut = runCLI(t, "diff", "--kubeadm", "--kubelet-version", "1.31", "--root", sample)
	if code != 2 || !strings.Contains(errOut, "kubeadm's kubelet-config ConfigMap is not known") {
		t.Errorf("without the ConfigMap: exit %d %s", code, errOut)
	}
	code, out, _ = runCLI(t, append([]string{"audit", "--section", "ops"}, args...)...)
	if code != 0 || !strings.Contains(out, "WARN   ops.kubeadm") || !strings.Contains(out, "tlsMinVersion VersionTLS12 -> (unset)") {
		t.Errorf("audit: exit %d\n%s", code, out)
	}
}

// migrate --output-dir on a kubeadm node also writes the kubeadm patch that
// keeps the moved values at the next upgrade; the env file is kubeadm's form.
func TestMigrateOnKubeadmNode(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	code, out, errOut := runCLI(t, "migrate", "--kubelet-version", "1.31", "--root", sample, "--output-dir", dir)
	if code != 0 || !strings.Contains(out, "kubeletconfigurationzz-kubeletcfg+merge.yaml") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	patch, _ := os.ReadFile(filepath.Join(dir, "kubeletconfigurationzz-kubeletcfg+merge.yaml"))
	if !strings.Contains(string(patch), "maxPods: 150") || !strings.Contains(string(patch), "memory.available: 500Mi") {
		t.Errorf("patch:\n%s", patch)
	}
	env, _ := os.ReadFile(filepath.Join(dir, "kubelet-flags.env"))
	if strings.Count(string(env), "\n") != 1 || !strings.HasPrefix(string(env), `KUBELET_KUBEADM_ARGS="--`) {
		t.Errorf("env file:\n%s", env)
	}
}
