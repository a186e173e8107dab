//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/yaml"

	"github.com/kubeletcfg/kubeletcfg/ansible/tests/harness"
)

// kubeadmNode is the nspawn tree made a kubeadm node of the control plane:
// the real kubeadm at /usr/local/bin/kubeadm, an administrator's kubeconfig
// at /etc/kubernetes/admin.conf, the cluster's CA, the Node of its host
// name, and kube-system's kubelet-config and kubeadm-config ConfigMaps as
// kubeadm's own upload-config phases write them.
type kubeadmNode struct {
	*systemdNode
	cp       *controlPlane
	host     string
	kubeadm  string // the host's kubeadm binary
	kubelet0 string // the ConfigMap's kubelet value as kubeadm uploaded it

	lastUpgrade time.Time
}

const kubeadmAdmin = "/etc/kubernetes/admin.conf"

func newKubeadmNode(t *testing.T) *kubeadmNode {
	t.Helper()
	cp := useControlPlane(t)
	s := useSystemdNode(t, systemdOptions{})
	k := &kubeadmNode{systemdNode: s, cp: cp, kubeadm: env(t, "KUBEADM_BIN")}
	t.Cleanup(func() {
		for _, p := range []string{"/etc/kubernetes", "/usr/local/bin/kubeadm", "/etc/systemd/system/systemd-resolved.service"} {
			os.RemoveAll(s.in(p))
		}
		_, _, _ = s.tree.inside("systemctl", "daemon-reload")
	})
	copyExecutable(t, k.kubeadm, s.in("/usr/local/bin/kubeadm"))
	cfg, err := clientcmd.LoadFromFile(cp.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if err := clientcmdapi.FlattenConfig(cfg); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(s.in("/etc/kubernetes/pki"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := clientcmd.WriteToFile(*cfg, s.in(kubeadmAdmin)); err != nil {
		t.Fatal(err)
	}
	write(t, s.in("/etc/kubernetes/pki/ca.crt"), readFile(t, cp.CA.CertFile))
	_, host := s.inside(t, "hostname")
	k.host = strings.TrimSpace(host)
	cp.registerNode(t, k.host)

	// The cluster's intent, uploaded by kubeadm itself: what the tree's
	// kubelet needs to run here (anonymous and AlwaysAllow: kubeadm keeps
	// them, warning; enforceNodeAllocatable [none], as kubeadm's encoding
	// drops an empty list) plus a few values of the cluster's own.
	uploadKubeadmConfigs(t, cp, k.kubeadm, k.host, `cgroupDriver: systemd
cgroupsPerQOS: false
enforceNodeAllocatable: [none]
failCgroupV1: false
maxPods: 100
authentication:
  anonymous:
    enabled: true
  webhook:
    enabled: false
authorization:
  mode: AlwaysAllow
`)
	k.kubelet0 = k.configMap(t)
	return k
}

// uploadKubeadmConfigs has kubeadm's own upload-config phases write
// kube-system's kubelet-config (from the KubeletConfiguration lines given)
// and kubeadm-config (serviceSubnet 10.100.0.0/16, dnsDomain e2e.local).
func uploadKubeadmConfigs(t *testing.T, cp *controlPlane, kubeadmBin, node, kubelet string) {
	t.Helper()
	cfgFile := filepath.Join(t.TempDir(), "kubeadm.yaml")
	write(t, cfgFile, `apiVersion: kubeadm.k8s.io/v1beta4
kind: InitConfiguration
localAPIEndpoint:
  advertiseAddress: `+cp.Net.HostIP+`
nodeRegistration:
  name: `+node+`
  criSocket: unix:///var/run/containerd/containerd.sock
---
apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
kubernetesVersion: v1.37.2
networking:
  serviceSubnet: 10.100.0.0/16
  dnsDomain: e2e.local
---
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
`+kubelet)
	for _, what := range []string{"kubelet", "kubeadm"} {
		if out, err := exec.Command(kubeadmBin, "init", "phase", "upload-config", what, "--config", cfgFile, "--kubeconfig", cp.Kubeconfig).CombinedOutput(); err != nil {
			t.Fatalf("kubeadm init phase upload-config %s: %v\n%s", what, err, out)
		}
	}
}

// configMap is kube-system/kubelet-config's kubelet value now.
func (k *kubeadmNode) configMap(t *testing.T) string {
	t.Helper()
	cm, err := k.cp.Client.CoreV1().ConfigMaps("kube-system").Get(context.Background(), "kubelet-config", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cm.Data["kubelet"]
}

// upgrade runs kubeadm upgrade node phase kubelet-config in the tree and
// returns config.yaml as it wrote it.
func (k *kubeadmNode) upgrade(t *testing.T, args ...string) map[string]any {
	t.Helper()
	// kubeadm 1.35+ names its backup directory by the second and fails if
	// it exists (os.Mkdir): one run per second.
	time.Sleep(time.Until(k.lastUpgrade.Add(1100 * time.Millisecond)))
	defer func() { k.lastUpgrade = time.Now() }()
	cmd := append([]string{"/usr/local/bin/kubeadm", "upgrade", "node", "phase", "kubelet-config", "--kubeconfig", kubeadmAdmin}, args...)
	if code, out := k.inside(t, cmd...); code != 0 {
		t.Fatalf("%s: exit %d\n%s", strings.Join(cmd, " "), code, out)
	}
	var m map[string]any
	if err := yaml.Unmarshal([]byte(readFile(t, k.in("/var/lib/kubelet/config.yaml"))), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// render is kubeletcfg's prediction, made in the tree (the running node:
// systemd-resolved and the CRI socket asked as kubeadm asks them).
func (k *kubeadmNode) render(t *testing.T, args ...string) (map[string]any, map[string]any) {
	t.Helper()
	cmd := append([]string{"/usr/local/bin/kubeletcfg", "kubeadm", "render", "--kubeconfig", kubeadmAdmin, "--kubeadm-version", "1.37", "-o", "json"}, args...)
	code, out := k.inside(t, cmd...)
	if code != 0 {
		t.Fatalf("%s: exit %d\n%s", strings.Join(cmd, " "), code, out)
	}
	// inside merges stdout and stderr: the JSON is the object on stdout.
	start, end := strings.Index(out, "{\n"), strings.LastIndex(out, "\n}")
	if start < 0 || end < start {
		t.Fatalf("kubeadm render printed no JSON:\n%s", out)
	}
	var res struct {
		Config  map[string]any `json:"config"`
		Origins map[string]any `json:"origins"`
	}
	if err := json.Unmarshal([]byte(out[start:end+2]), &res); err != nil {
		t.Fatalf("kubeadm render: %v\n%s", err, out)
	}
	return res.Config, res.Origins
}

// TestKubeadmUpgradeNodeKubeletConfig: kubeletcfg's prediction of what
// `kubeadm upgrade node phase kubelet-config` writes equals (decoded) what
// the real kubeadm 1.37.2 then writes on a node of the real control plane:
// the ConfigMap alone, each patch type in kubeadm's order, without
// instance-config.yaml, with systemd-resolved active. A change kept with
// --persist patch survives kubeadm on config.yaml and /configz; a plain
// change is refused naming its fields; a migrated kubeadm-flags.env is read
// by kubeadm 1.34's parser and kubeadm 1.37's upgrade keeps the migration.
func TestKubeadmUpgradeNodeKubeletConfig(t *testing.T) {
	k := newKubeadmNode(t)
	in, inside := k.in, func(args ...string) (int, string) { return k.inside(t, args...) }
	compare := func(what string, predicted, written map[string]any) {
		t.Helper()
		if d := cmp.Diff(written, predicted); d != "" {
			t.Errorf("%s: kubeletcfg's prediction differs from what kubeadm wrote (-kubeadm +kubeletcfg):\n%s", what, d)
		}
	}
	write(t, in("/var/lib/kubelet/instance-config.yaml"), "containerRuntimeEndpoint: \"unix:///run/containerd/containerd.sock\"\n")

	// The ConfigMap alone.
	predicted, origins := k.render(t)
	compare("ConfigMap only", predicted, k.upgrade(t))
	// kubeadm's upload-config already wrote its defaults into the ConfigMap.
	if o, _ := origins["clusterDNS"].(map[string]any); o["kind"] != "configmap" {
		t.Errorf("clusterDNS comes from %v, want the ConfigMap (kubeadm's upload wrote its default there)", o)
	}
	if o, _ := origins["containerRuntimeEndpoint"].(map[string]any); o["kind"] != "instance-config" {
		t.Errorf("containerRuntimeEndpoint comes from %v, want instance-config.yaml", o)
	}
	if dns, _ := predicted["clusterDNS"].([]any); len(dns) != 1 || dns[0] != "10.100.0.10" {
		t.Errorf("clusterDNS %v, want the tenth address of 10.100.0.0/16", predicted["clusterDNS"])
	}

	// Every patch type, in kubeadm's walk order, and files it ignores.
	patches := "/etc/kubernetes/patches"
	write(t, in(patches+"/kubeletconfiguration.yaml"), "maxPods: 120\nevictionHard:\n  memory.available: 200Mi\n---\nmaxPods: 121\n")
	write(t, in(patches+"/kubeletconfiguration0+merge.json"), `{"evictionHard": {"nodefs.available": "7%"}, "imageGCHighThresholdPercent": 90}`+"\n")
	write(t, in(patches+"/kubeletconfiguration1+json.yaml"), "- op: replace\n  path: /maxPods\n  value: 130\n- op: add\n  path: /evictionHard/imagefs.available\n  value: 12%\n")
	write(t, in(patches+"/sub/kubeletconfiguration+strategic.yaml"), "imageGCLowThresholdPercent: 70\n")
	write(t, in(patches+"/kubeletconfiguration.yml"), "maxPods: 1\n")
	write(t, in(patches+"/notes.txt"), "not a patch\n")
	predicted, origins = k.render(t, "--patches", patches)
	compare("with patches", predicted, k.upgrade(t, "--patches", patches))
	if o, _ := origins["maxPods"].(map[string]any); o["file"] != patches+"/kubeletconfiguration1+json.yaml" || o["line"] != float64(1) {
		t.Errorf("maxPods comes from %v, want the JSON patch, applied after the strategic file", o)
	}
	os.RemoveAll(in(patches))

	// No instance-config.yaml: kubeadm 1.37 detects the CRI socket.
	os.Remove(in("/var/lib/kubelet/instance-config.yaml"))
	predicted, _ = k.render(t)
	compare("without instance-config.yaml", predicted, k.upgrade(t))
	if b := readFile(t, in("/var/lib/kubelet/instance-config.yaml")); !strings.Contains(b, "containerd.sock") {
		t.Errorf("kubeadm created instance-config.yaml with %q", b)
	}

	// systemd-resolved active (a unit of that name, for systemd to answer
	// kubeadm's systemctl is-active and kubeletcfg's D-Bus question alike).
	write(t, in("/etc/systemd/system/systemd-resolved.service"), "[Service]\nExecStart=/bin/sleep infinity\n")
	for _, c := range [][]string{{"systemctl", "daemon-reload"}, {"systemctl", "start", "systemd-resolved"}} {
		if code, out := inside(c...); code != 0 {
			t.Fatalf("%v: exit %d\n%s", c, code, out)
		}
	}
	predicted, _ = k.render(t)
	written := k.upgrade(t)
	compare("systemd-resolved active", predicted, written)
	if written["resolvConf"] != "/run/systemd/resolve/resolv.conf" {
		t.Errorf("kubeadm wrote resolvConf %v", written["resolvConf"])
	}
	inside("systemctl", "stop", "systemd-resolved")
	os.Remove(in("/etc/systemd/system/systemd-resolved.service"))
	inside("systemctl", "daemon-reload")

	// The kubelet runs on what kubeadm wrote.
	k.upgrade(t)
	if code, out := inside("systemctl", "restart", "kubelet"); code != 0 {
		t.Fatalf("restart: %d %s", code, out)
	}
	k.waitHealthy(t)
	write(t, in("/root/kubelet-config.yaml"), k.kubelet0)
	offline := []string{"--kubeadm-configmap", "/root/kubelet-config.yaml", "--kubeadm-version", "1.37"}
	code, out, _ := kubeletcfgAt(k, "diff", "--kubeadm", "--kubelet-version", k.Minor, "--kubeadm-configmap", "/root/kubelet-config.yaml", "--kubeadm-version", "1.37")
	if code != 0 {
		t.Errorf("diff --kubeadm right after kubeadm: exit %d\n%s", code, out)
	}

	// A plain change of config.yaml is refused, its field named.
	write(t, in("/root/new.yaml"), strings.Replace(readFile(t, in("/var/lib/kubelet/config.yaml")), "maxPods: 100\n", "maxPods: 123\n", 1))
	apply := func(extra ...string) (int, string) {
		return inside(append([]string{"/usr/local/bin/kubeletcfg", "apply", "--node", k.Name, "-f", "/root/new.yaml", "--kubelet-version", k.Minor,
			"--stable-for", "2s", "--health-timeout", "30s"}, append(offline, extra...)...)...)
	}
	if code, out := apply(); code != 2 || !strings.Contains(out, "kubeadm: the next kubeadm upgrade node reverts the change") ||
		!strings.Contains(out, "maxPods: 123 here, 100 after the upgrade") {
		t.Fatalf("a plain change on a kubeadm node: exit %d\n%s", code, out)
	}
	if got := configzMaxPods(t); got != 100 {
		t.Errorf("after the refusal /configz maxPods = %v", got)
	}
	// --persist patch: applied, and kubeadm keeps it.
	if code, out := apply("--persist", "patch"); code != 0 || !strings.Contains(out, "kubeadm: kept in "+patches+"/kubeletconfigurationzz-kubeletcfg+merge.yaml") {
		t.Fatalf("--persist patch: exit %d\n%s", code, out)
	}
	if got := configzMaxPods(t); got != 123 {
		t.Errorf("after apply --persist patch /configz maxPods = %v, want 123", got)
	}
	if got := k.upgrade(t, "--patches", patches)["maxPods"]; got != float64(123) {
		t.Errorf("after kubeadm upgrade node --patches, config.yaml maxPods = %v, want 123", got)
	}
	if code, out := inside("systemctl", "restart", "kubelet"); code != 0 {
		t.Fatalf("restart: %d %s", code, out)
	}
	k.waitHealthy(t)
	if got := configzMaxPods(t); got != 123 {
		t.Errorf("after kubeadm and a restart /configz maxPods = %v, want 123", got)
	}
	// Without --patches kubeadm reverts it, as kubeletcfg said it would.
	if got := k.upgrade(t)["maxPods"]; got != float64(100) {
		t.Errorf("kubeadm without --patches wrote maxPods %v, want the ConfigMap's 100", got)
	}

	// A migrated kubeadm-flags.env: kubeadm's parsers read it, and kubeadm's
	// upgrade keeps the moved values through kubeletcfg's patch.
	k.upgrade(t, "--patches", patches)
	write(t, in("/etc/systemd/system/kubelet.service.d/10-kubeadm.conf"), "[Service]\nEnvironmentFile=-/var/lib/kubelet/kubeadm-flags.env\nExecStart=\nExecStart=/usr/local/bin/kubelet --config=/var/lib/kubelet/config.yaml $KUBELET_KUBEADM_ARGS\n")
	write(t, in("/var/lib/kubelet/kubeadm-flags.env"), "KUBELET_KUBEADM_ARGS=\"--node-labels=e2e=kubeadm --max-pods 140 --serialize-image-pulls=false\"\n")
	for _, c := range [][]string{{"systemctl", "daemon-reload"}, {"systemctl", "restart", "kubelet"}} {
		if code, out := inside(c...); code != 0 {
			t.Fatalf("%v: exit %d\n%s", c, code, out)
		}
	}
	k.waitHealthy(t)
	code, out = inside(append([]string{"/usr/local/bin/kubeletcfg", "apply", "--node", k.Name, "--from-migrate", "--persist", "patch", "--kubelet-version", k.Minor,
		"--stable-for", "2s", "--health-timeout", "30s"}, offline...)...)
	if code != 0 {
		t.Fatalf("apply --from-migrate --persist patch: exit %d\n%s", code, out)
	}
	envFile := readFile(t, in("/var/lib/kubelet/kubeadm-flags.env"))
	if envFile != "KUBELET_KUBEADM_ARGS=\"--node-labels=e2e=kubeadm\"\n" {
		t.Errorf("migrated kubeadm-flags.env:\n%s", envFile)
	}
	if ref := env(t, "KUBEADM134_REF"); fileExists(ref) {
		dir := t.TempDir()
		write(t, filepath.Join(dir, "kubeadm-flags.env"), envFile)
		b, err := exec.Command(ref, "env", dir).Output()
		if err != nil || !strings.Contains(string(b), `"--node-labels=e2e=kubeadm"`) || strings.Contains(string(b), `"error": true`) {
			t.Errorf("kubeadm 1.34's parser on the migrated file: %v\n%s", err, b)
		}
	} else {
		t.Errorf("no kubeadm 1.34 harness at %s: make e2e builds it", ref)
	}
	if code, out := inside("/usr/local/bin/kubeadm", "upgrade", "node", "phase", "post-upgrade", "--kubeconfig", kubeadmAdmin); code != 0 {
		t.Errorf("kubeadm 1.37 post-upgrade on the migrated env file: exit %d\n%s", code, out)
	}
	if got := k.upgrade(t, "--patches", patches); got["maxPods"] != float64(140) || got["serializeImagePulls"] != false {
		t.Errorf("kubeadm after the migration wrote maxPods %v serializeImagePulls %v, want the moved 140 and false", got["maxPods"], got["serializeImagePulls"])
	}
	if code, out := inside("systemctl", "restart", "kubelet"); code != 0 {
		t.Fatalf("restart: %d %s", code, out)
	}
	k.waitHealthy(t)
	if got := configzMaxPods(t); got != 140 {
		t.Errorf("after the migration and kubeadm /configz maxPods = %v, want 140", got)
	}
}

// TestKubeadmConfigMapRollout: a new kubelet-config value checked for the
// two kubelet minors of the cluster, written at the resourceVersion read
// (an edit made meanwhile refused, not overwritten), then rolled out to the
// node with apply --from-kubeadm: no kubeadm drift afterwards.
func TestKubeadmConfigMapRollout(t *testing.T) {
	k := newKubeadmNode(t)
	cp := k.cp
	ctx := context.Background()
	setVersion := func(name, version string) {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			n, err := cp.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			n.Status.NodeInfo.KubeletVersion = version
			_, err = cp.Client.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	setVersion(k.host, "v1.37.2")
	cp.registerNode(t, "kubeadm-old")
	setVersion("kubeadm-old", "v1.35.4")

	dir := t.TempDir()
	next := strings.Replace(k.kubelet0, "maxPods: 100", "maxPods: 111", 1) + "tlsCurvePreferences: [29]\n"
	write(t, filepath.Join(dir, "next.yaml"), next)
	code, out, errOut := kubeletcfg(t, nil, "kubeadm", "configmap", "-f", filepath.Join(dir, "next.yaml"), "--kubeconfig", cp.Kubeconfig, "-o", "json")
	var plan struct {
		ResourceVersion string `json:"resourceVersion"`
		Minors          []struct {
			KubeletMinor string   `json:"kubeletMinor"`
			Nodes        []string `json:"nodes"`
			Changes      []struct {
				Field string `json:"field"`
			} `json:"changes"`
		} `json:"minors"`
	}
	if err := json.Unmarshal([]byte(out), &plan); code != 0 || err != nil || len(plan.Minors) != 2 {
		t.Fatalf("kubeadm configmap: exit %d %v\n%s\n%s", code, err, out, errOut)
	}
	for _, m := range plan.Minors {
		var fields []string
		for _, c := range m.Changes {
			fields = append(fields, c.Field)
		}
		// kubeadm 1.35's types have no tlsCurvePreferences: it drops it.
		want := map[string]string{"1.37": "maxPods tlsCurvePreferences", "1.35": "maxPods"}[m.KubeletMinor]
		if strings.Join(fields, " ") != want {
			t.Errorf("kubelet %s (%v): changes %v", m.KubeletMinor, m.Nodes, fields)
		}
	}
	// Someone edits the ConfigMap after the review.
	cm, err := cp.Client.CoreV1().ConfigMaps("kube-system").Get(ctx, "kubelet-config", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["kubelet"] += "# edited by someone else\n"
	if _, err := cp.Client.CoreV1().ConfigMaps("kube-system").Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = kubeletcfg(t, nil, "kubeadm", "configmap", "-f", filepath.Join(dir, "next.yaml"), "--kubeconfig", cp.Kubeconfig,
		"--update", "--resource-version", plan.ResourceVersion)
	if code != 2 || !strings.Contains(errOut, "the ConfigMap changed since it was read") {
		t.Fatalf("a concurrent edit: exit %d\n%s", code, errOut)
	}
	if got := k.configMap(t); !strings.Contains(got, "# edited by someone else") {
		t.Fatalf("the concurrent edit was overwritten:\n%s", got)
	}
	if code, out, errOut := kubeletcfg(t, nil, "kubeadm", "configmap", "-f", filepath.Join(dir, "next.yaml"), "--kubeconfig", cp.Kubeconfig, "--update"); code != 0 || !strings.Contains(out, "updated: resourceVersion") {
		t.Fatalf("update: exit %d\n%s\n%s", code, out, errOut)
	}

	// The node gets exactly what kubeadm writes from it.
	write(t, k.in("/var/lib/kubelet/instance-config.yaml"), "containerRuntimeEndpoint: \"unix:///run/containerd/containerd.sock\"\n")
	write(t, k.in("/root/kubelet-config.yaml"), k.configMap(t))
	offline := []string{"--kubeadm-configmap", "/root/kubelet-config.yaml", "--kubeadm-version", "1.37", "--kubelet-version", k.Minor}
	code, out = k.inside(t, append([]string{"/usr/local/bin/kubeletcfg", "apply", "--node", k.Name, "--from-kubeadm", "--stable-for", "2s", "--health-timeout", "30s"}, offline...)...)
	if code != 0 {
		t.Fatalf("apply --from-kubeadm: exit %d\n%s", code, out)
	}
	if got := configzMaxPods(t); got != 111 {
		t.Errorf("after the rollout /configz maxPods = %v, want 111", got)
	}
	if code, out := k.inside(t, append([]string{"/usr/local/bin/kubeletcfg", "diff", "--kubeadm"}, offline...)...); code != 0 {
		t.Errorf("kubeadm drift after the rollout: exit %d\n%s", code, out)
	}
	if got := k.upgrade(t)["maxPods"]; got != float64(111) {
		t.Errorf("kubeadm upgrade node after the rollout wrote maxPods %v", got)
	}
}

// kubeletcfgAt runs kubeletcfg in the tree: exit code and output.
func kubeletcfgAt(k *kubeadmNode, args ...string) (int, string, string) {
	code, out, _ := k.tree.inside(append([]string{"/usr/local/bin/kubeletcfg"}, args...)...)
	return code, out, ""
}

func copyExecutable(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// TestAnsibleKubeadmConfigMap: the collection's kubeadm_configmap playbook
// with the real ansible-playbook on the real control plane: a new
// kubelet-config value checked for the two kubelet minors of the cluster,
// updated, rolled out to a kubeadm node whose real kubelet runs on the
// tree's /var/lib/kubelet/config.yaml, live on /configz, and no kubeadm
// drift afterwards; a run over a ConfigMap edited after the review is
// refused, the edit kept and no node touched.
func TestAnsibleKubeadmConfigMap(t *testing.T) {
	cp := useControlPlane(t)
	tree := t.TempDir()
	kdir := filepath.Join(tree, "var/lib/kubelet")
	if err := os.MkdirAll(kdir, 0o755); err != nil {
		t.Fatal(err)
	}
	n := newNode(t, nodeOptions{cluster: true, configDir: kdir, noStart: true})
	// The tree is a kubeadm node: instance-config.yaml with the node's
	// socket, its host name, the CA its ConfigMap names.
	write(t, filepath.Join(kdir, "instance-config.yaml"), "containerRuntimeEndpoint: \"unix://"+n.Runtime.sock+"\"\n")
	write(t, filepath.Join(tree, "etc/hostname"), n.Name+"\n")
	write(t, filepath.Join(tree, cp.CA.CertFile), readFile(t, cp.CA.CertFile))
	kubelet := "cgroupDriver: cgroupfs\nfailCgroupV1: false\nmaxPods: 100\nauthentication:\n  x509:\n    clientCAFile: " + cp.CA.CertFile + "\n"
	uploadKubeadmConfigs(t, cp, env(t, "KUBEADM_BIN"), n.Name, kubelet)
	// The kubelet starts on what kubeadm writes from it.
	cfg := func() string {
		code, out, errOut := kubeletcfg(t, nil, "kubeadm", "render", "--root", tree, "--kubeconfig", cp.Kubeconfig, "--kubeadm-version", "1.37")
		if code != 0 {
			t.Fatalf("kubeadm render: exit %d\n%s", code, errOut)
		}
		return out
	}
	write(t, n.Config, cfg())
	n.start(t)
	// /configz through the API server: the kubelet authenticates and
	// authorizes as kubeadm sets it up (webhook, no anonymous).
	maxPods := func() float64 {
		t.Helper()
		code, body := n.API.do(t, http.MethodGet, "/api/v1/nodes/"+n.Name+"/proxy/configz", "")
		var wrapped struct {
			KubeletConfig struct {
				MaxPods float64 `json:"maxPods"`
			} `json:"kubeletconfig"`
		}
		if code != http.StatusOK || json.Unmarshal([]byte(body), &wrapped) != nil {
			t.Fatalf("configz through the API server: %d %s", code, body)
		}
		return wrapped.KubeletConfig.MaxPods
	}
	ctx := context.Background()
	cp.registerNode(t, "kubeadm-old")
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		o, err := cp.Client.CoreV1().Nodes().Get(ctx, "kubeadm-old", metav1.GetOptions{})
		if err != nil {
			return err
		}
		o.Status.NodeInfo.KubeletVersion = "v1.35.4"
		_, err = cp.Client.CoreV1().Nodes().UpdateStatus(ctx, o, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	e := harness.Setup(t, "..", n.Dir)
	dir := t.TempDir()
	cm, err := cp.Client.CoreV1().ConfigMaps("kube-system").Get(ctx, "kubelet-config", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "next.yaml"), strings.Replace(cm.Data["kubelet"], "maxPods: 100", "maxPods: 111", 1))
	inv := e.Inventory(t, []harness.Host{{Name: "node-0", Vars: map[string]any{
		"kubelet_node_name": n.Name, "kubelet_version": n.Minor, "kubelet_root": tree,
		"kubelet_args": []string{"--config=/var/lib/kubelet/config.yaml"}, "kubelet_kubeconfig": cp.Kubeconfig,
		"kubelet_restart_command": n.Restart, "kubelet_pid_file": n.PidFile, "kubelet_log": n.Log,
		"kubelet_stable_for": 2, "kubelet_health_timeout": 30, "kubelet_kubeadm_version": "1.37",
		"kubeletcfg_state_dir": n.StateDir, "kubelet_become": false,
	}}})
	extra := map[string]any{"kubeadm_kubelet_config_src": filepath.Join(dir, "next.yaml"), "kubeadm_admin_kubeconfig": cp.Kubeconfig,
		"kubeletcfg_controller_binary": e.Bin, "kubelet_batch": 1, "kubelet_canary": 0, "kubelet_drain": false}

	// Reviewed at this version, edited by someone else, then run: refused.
	extra["kubeadm_resource_version"] = cm.ResourceVersion
	cm.Data["kubelet"] += "# edited by someone else\n"
	if _, err := cp.Client.CoreV1().ConfigMaps("kube-system").Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	r := e.Playbook(t, inv, "kubeletcfg.kubelet.kubeadm_configmap", extra)
	if r.Code == 0 || !strings.Contains(r.Output, "the ConfigMap changed since it was read") || r.Index("node-0", "Apply the change") >= 0 {
		t.Fatalf("a concurrent edit: exit %d\n%s", r.Code, r.Output)
	}
	if got := maxPods(); got != 100 {
		t.Errorf("after the refused run /configz maxPods = %v", got)
	}
	if got, _ := cp.Client.CoreV1().ConfigMaps("kube-system").Get(ctx, "kubelet-config", metav1.GetOptions{}); !strings.Contains(got.Data["kubelet"], "# edited by someone else") {
		t.Fatalf("the concurrent edit was overwritten:\n%s", got.Data["kubelet"])
	}

	// Reviewed again, run: checked for 1.37 and 1.35, updated, rolled out.
	delete(extra, "kubeadm_resource_version")
	r = e.Playbook(t, inv, "kubeletcfg.kubelet.kubeadm_configmap", extra)
	if r.Code != 0 {
		t.Fatalf("the rollout: exit %d\n%s", r.Code, r.Output)
	}
	for _, minor := range []string{`"kubeletMinor": "1.37"`, `"kubeletMinor": "1.35"`} {
		if !strings.Contains(r.Output, minor) {
			t.Errorf("the check does not name %s:\n%s", minor, r.Output)
		}
	}
	if ev := r.One(t, "node-0", "Apply the change"); !ev.Changed() {
		t.Errorf("the node was not changed:\n%s", ev)
	}
	if got := maxPods(); got != 111 {
		t.Errorf("after the rollout /configz maxPods = %v, want 111", got)
	}
	code, out, errOut := kubeletcfg(t, nil, "diff", "--kubeadm", "--root", tree, "--kubeconfig", cp.Kubeconfig, "--kubeadm-version", "1.37",
		"--kubelet-version", n.Minor, "--", "--config=/var/lib/kubelet/config.yaml")
	if code != 0 {
		t.Errorf("kubeadm drift after the rollout: exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestKubeadmPersistDropin: a change of config.yaml applied with --persist
// dropin on a kubeadm node whose kubelet runs with --config-dir (from
// /etc/default/kubelet, which kubeadm never rewrites) is on /configz, leaves
// config.yaml as kubeadm writes it, and survives the real kubeadm 1.37.2's
// upgrade node phase kubelet-config run without --patches: still on
// /configz after the kubelet restarts, and no kubeadm drift.
func TestKubeadmPersistDropin(t *testing.T) {
	k := newKubeadmNode(t)
	inside := func(args ...string) (int, string) { return k.inside(t, args...) }
	write(t, k.in("/var/lib/kubelet/instance-config.yaml"), "containerRuntimeEndpoint: \"unix:///run/containerd/containerd.sock\"\n")
	confD := "/etc/kubernetes/kubelet.conf.d"
	if err := os.MkdirAll(k.in(confD), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, k.in("/etc/default/kubelet"), "KUBELET_EXTRA_ARGS=--config-dir="+confD+"\n")
	write(t, k.in("/etc/systemd/system/kubelet.service.d/10-kubeadm.conf"), "[Service]\nEnvironmentFile=-/etc/default/kubelet\nExecStart=\nExecStart=/usr/local/bin/kubelet --config=/var/lib/kubelet/config.yaml $KUBELET_EXTRA_ARGS\n")
	t.Cleanup(func() { os.Remove(k.in("/etc/default/kubelet")) })
	written := k.upgrade(t)
	for _, c := range [][]string{{"systemctl", "daemon-reload"}, {"systemctl", "restart", "kubelet"}} {
		if code, out := inside(c...); code != 0 {
			t.Fatalf("%v: exit %d\n%s", c, code, out)
		}
	}
	k.waitHealthy(t)
	if got := configzMaxPods(t); got != 100 || written["maxPods"] != float64(100) {
		t.Fatalf("on what kubeadm wrote: /configz maxPods %v, config.yaml %v", got, written["maxPods"])
	}

	write(t, k.in("/root/kubelet-config.yaml"), k.kubelet0)
	offline := []string{"--kubeadm-configmap", "/root/kubelet-config.yaml", "--kubeadm-version", "1.37", "--kubelet-version", k.Minor}
	write(t, k.in("/root/new.yaml"), strings.Replace(readFile(t, k.in("/var/lib/kubelet/config.yaml")), "maxPods: 100\n", "maxPods: 124\n", 1))
	code, out := inside(append([]string{"/usr/local/bin/kubeletcfg", "apply", "--node", k.Name, "-f", "/root/new.yaml", "--persist", "dropin",
		"--stable-for", "2s", "--health-timeout", "30s"}, offline...)...)
	if code != 0 || !strings.Contains(out, "kubeadm: kept in the drop-in") {
		t.Fatalf("apply --persist dropin: exit %d\n%s", code, out)
	}
	dropin := readFile(t, k.in(confD+"/90-kubeletcfg-kubeadm.conf"))
	if !strings.Contains(dropin, "maxPods: 124") {
		t.Errorf("the drop-in:\n%s", dropin)
	}
	if got := configzMaxPods(t); got != 124 {
		t.Errorf("after apply --persist dropin /configz maxPods = %v, want 124", got)
	}
	if got := k.upgrade(t)["maxPods"]; got != float64(100) {
		t.Errorf("kubeadm upgrade node wrote maxPods %v, want the ConfigMap's 100 (the change is in the drop-in)", got)
	}
	if code, out := inside("systemctl", "restart", "kubelet"); code != 0 {
		t.Fatalf("restart: %d %s", code, out)
	}
	k.waitHealthy(t)
	if got := configzMaxPods(t); got != 124 {
		t.Errorf("after kubeadm upgrade node and a restart /configz maxPods = %v, want 124", got)
	}
	if code, out := inside(append([]string{"/usr/local/bin/kubeletcfg", "diff", "--kubeadm"}, offline...)...); code != 0 {
		t.Errorf("kubeadm drift after kubeadm: exit %d\n%s", code, out)
	}
}
