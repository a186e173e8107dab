package migrate

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/schema"
	"github.com/kubeletcfg/kubeletcfg/warning"
)

// TestRemovedGatesAreLeftOut: gates the target no longer has, in flags and
// in the old config file, are left out and reported with the last kubelet
// that had them and whether dropping them changes anything; a gate only a
// newer kubelet knows is still an error; the migration checks itself.
func TestRemovedGatesAreLeftOut(t *testing.T) {
	v, _ := schema.Resolve("1.37")
	dir := t.TempDir()
	cfg := "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nfeatureGates:\n  DynamicKubeletConfig: true\n  NodeSwap: true\n"
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"--config=config.yaml", "--feature-gates=CSIMigrationAWS=true,CloudDualStackNodeIPs=true"}
	res, err := Run(Options{Setup: &node.Setup{Version: v, Kubelet: node.Kubelet{Args: args}, Dir: dir}, ConfigPath: "/var/lib/kubelet/config.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]string{}
	for _, r := range res.Removed {
		reasons[r.Gate] = r.Reason
	}
	want := map[string]string{
		"CSIMigrationAWS=true (--feature-gates)":                                "the last kubelet with it was 1.26.15, where it was GA and locked to true: dropping the setting changes nothing",
		"CloudDualStackNodeIPs=true (--feature-gates)":                          "the last kubelet with it was 1.31, where it was GA and locked to true: dropping the setting changes nothing",
		"DynamicKubeletConfig=true (" + filepath.Join(dir, "config.yaml") + ")": "where it was DEPRECATED and false by default; this setup sets it to true: dropping the setting changes behaviour",
	}
	for gate, reason := range want {
		if !strings.Contains(reasons[gate], reason) {
			t.Errorf("removed %s: reason %q, want it to say %q (all: %v)", gate, reasons[gate], reason, reasons)
		}
	}
	if len(reasons) != len(want) {
		t.Errorf("removed %v, want exactly %d gates", reasons, len(want))
	}
	if gates, _ := res.Config["featureGates"].(map[string]any); len(gates) != 1 || gates["NodeSwap"] != true {
		t.Errorf("featureGates of the migration: %v, want only NodeSwap", res.Config["featureGates"])
	}
	if err := res.Verify(func(doc []byte) (string, error) {
		p := filepath.Join(t.TempDir(), "config.yaml")
		return p, os.WriteFile(p, doc, 0o600)
	}); err != nil {
		t.Fatal(err)
	}

	old, _ := schema.Resolve("1.31")
	if _, err := Run(Options{Setup: node.Given(old, "--feature-gates=KubeletCrashLoopBackOffMax=true")}); err == nil || !strings.Contains(err.Error(), "unrecognized feature gate: KubeletCrashLoopBackOffMax") {
		t.Errorf("a gate only newer kubelets have: %v, want the kubelet's refusal", err)
	}
}

// TestFlagOnlyValueStaysAFlag: an empty --cgroup-driver cannot move into the
// file (defaulting fills it in); the flag stays, with a warning saying why.
func TestFlagOnlyValueStaysAFlag(t *testing.T) {
	v, _ := schema.Resolve("1.34")
	res, err := Run(Options{Setup: node.Given(v, "--kubeconfig=/etc/kubernetes/kubelet.conf", "--cgroup-driver=")})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(res.Flags, " "); !strings.HasSuffix(got, " --cgroup-driver=") {
		t.Errorf("remaining flags %q, want --cgroup-driver= kept", got)
	}
	if _, ok := res.Config["cgroupDriver"]; ok {
		t.Errorf("the file sets cgroupDriver %v", res.Config["cgroupDriver"])
	}
	if !slices.ContainsFunc(res.Warnings, func(w warning.Warning) bool {
		return w.Code == warning.KeptAsFlag && w.Field == "cgroupDriver" && strings.HasPrefix(w.Message, `kept on the command line as --cgroup-driver=: the config file cannot hold ""`)
	}) {
		t.Errorf("warnings do not say why the flag stays:\n%v", res.Warnings)
	}
	if err := res.Verify(func(doc []byte) (string, error) {
		p := filepath.Join(t.TempDir(), "config.yaml")
		return p, os.WriteFile(p, doc, 0o600)
	}); err != nil {
		t.Fatal(err)
	}
}
