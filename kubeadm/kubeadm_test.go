package kubeadm

import (
	"bufio"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/kubeletcfg/kubeletcfg/nodefile"
)

func release(t *testing.T, v string) *Release {
	t.Helper()
	r, err := ResolveRelease(v)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// splitDocuments cuts files as apimachinery's YAMLReader, which kubeadm
// uses, cuts them.
func TestSplitDocumentsLikeYAMLReader(t *testing.T) {
	for _, in := range []string{
		"", "a: 1", "a: 1\n", "---\na: 1\n---\nb: 2\n", "a: 1\n---\n", "---\n---\na: 1", "\n\na: 1\n--- # c\nb: 2\n\n",
		"a: 1\r\nb: 2\r\n---\r\nc: 3", "---x\n", "a: |\n  ---\n", "- op: add\n  path: /a\n", "a: 1\n----\n", "a: 1\n---   \nb: 1",
	} {
		want, wantErr := yamlReader(in)
		docs, err := splitDocuments([]byte(in))
		if (err != nil) != (wantErr != nil) {
			t.Errorf("%q: err %v, YAMLReader's %v", in, err, wantErr)
			continue
		}
		var got []string
		for _, d := range docs {
			got = append(got, string(d.Data))
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%q (-YAMLReader +splitDocuments):\n%s", in, d)
		}
	}
	docs, _ := splitDocuments([]byte("# top\na: 1\n---\n\nb: 2\n"))
	if len(docs) != 2 || docs[0].Line != 1 || docs[1].Line != 4 {
		t.Errorf("lines: %+v", docs)
	}
}

func yamlReader(in string) ([]string, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(in)))
	var out []string
	for {
		b, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, string(b))
	}
}

func TestParseName(t *testing.T) {
	for _, c := range []struct {
		rel, name            string
		target, typ, ignored string
		fails                bool
	}{
		{rel: "1.37", name: "kubeletconfiguration.yaml", target: PatchTarget, typ: Strategic},
		{rel: "1.37", name: "kubeletconfiguration+json.json", target: PatchTarget, typ: JSON},
		{rel: "1.37", name: "kubeletconfiguration0+merge.yaml", target: PatchTarget, typ: Merge},
		{rel: "1.37", name: "kubeletconfigurationsuffix+strategic.yaml", target: PatchTarget, typ: Strategic},
		{rel: "1.37", name: "kubeletconfiguration.foo+json.yaml", target: PatchTarget, typ: Strategic}, // the suffix stops at "."
		{rel: "1.37", name: "kubeletconfiguration+jsonx.yaml", target: PatchTarget, typ: JSON},         // only the start must match
		{rel: "1.37", name: "kubeletconfiguration+yaml.yaml", fails: true},
		{rel: "1.37", name: "kubeletconfiguration+.yaml", fails: true},
		{rel: "1.37", name: "etcd+foo.yaml", fails: true},
		{rel: "1.37", name: "kubeletconfiguration.yml", ignored: "extension"},
		{rel: "1.37", name: "Kubeletconfiguration.yaml", ignored: "unknown target"},
		{rel: "1.37", name: "kubelet.yaml", ignored: "unknown target"},
		{rel: "1.37", name: "kubeproxydaemonset.yaml", target: "kubeproxydaemonset", typ: Strategic},
		{rel: "1.36", name: "kubeproxydaemonset.yaml", ignored: "unknown target"},
		{rel: "1.31", name: "corednsdeployment+json.yaml", target: "corednsdeployment", typ: JSON},
		{rel: "1.30", name: "corednsdeployment+json.yaml", ignored: "unknown target"},
	} {
		target, typ, why, err := parseName(c.name, release(t, c.rel))
		switch {
		case c.fails:
			if err == nil {
				t.Errorf("%s %s: kubeadm fails on it; parsed %s %s %s", c.rel, c.name, target, typ, why)
			}
		case c.ignored != "":
			if err != nil || !strings.Contains(why, c.ignored) {
				t.Errorf("%s %s: want ignored (%s), got %q %v", c.rel, c.name, c.ignored, why, err)
			}
		default:
			if err != nil || why != "" || target != c.target || typ != c.typ {
				t.Errorf("%s %s: got %s %s %q %v, want %s %s", c.rel, c.name, target, typ, why, err, c.target, c.typ)
			}
		}
	}
}

func TestPatchOrderAndOrigins(t *testing.T) {
	res, err := renderCase(t, filepath.Join(corpusDir, "patches-order"), release(t, "1.37"))
	if err != nil {
		t.Fatal(err)
	}
	p := "/etc/kubernetes/patches/"
	for field, want := range map[string]string{
		"maxPods":                          "patch " + p + "kubeletconfiguration1+json.yaml:1", // json after the strategic file's two documents
		"evictionHard.memory.available":    "patch " + p + "kubeletconfiguration.yaml:4",
		"evictionHard.imagefs.available":   "patch " + p + "kubeletconfiguration.yaml:5",
		"evictionHard.nodefs.inodesFree":   "patch " + p + "kubeletconfiguration0+merge.json:1",
		"maxPodz":                          "patch " + p + "kubeletconfiguration.yaml:9", // a typo lands in config.yaml
		"clusterDNS":                       "patch " + p + "kubeletconfiguration1+json.yaml:4",
		"kubeReserved.cpu":                 "patch " + p + "kubeletconfiguration1+json.yaml:10",
		"kubeReserved.memory":              "patch " + p + "sub/kubeletconfiguration+strategic.yaml:2",
		"serializeImagePulls":              "patch " + p + "zz/kubeletconfigurationlast+merge.yaml:1",
		"staticPodPath":                    "kubeadm default: kubeadm's manifests directory",
		"authentication.x509.clientCAFile": "kubeadm default from the ClusterConfiguration: ca.crt in ClusterConfiguration certificatesDir",
		"containerRuntimeEndpoint":         "/var/lib/kubelet/instance-config.yaml:1",
		"authentication.webhook.cacheTTL":  "kubeadm's encoding (zero value)",
		"apiVersion":                       "ConfigMap configmap.yaml:1",
	} {
		if got := res.Origins[field].String(); got != want {
			t.Errorf("%s: origin %q, want %q", field, got, want)
		}
	}
	for field, want := range map[string]string{
		"evictionHard.nodefs.available":     "patch " + p + "kubeletconfiguration0+merge.json:1",
		"featureGates.GracefulNodeShutdown": "patch " + p + "kubeletconfiguration0+merge.json:1",
	} {
		if got := res.Removed[field].String(); got != want {
			t.Errorf("%s: removed by %q, want %q", field, got, want)
		}
	}
	var ignored []string
	for _, w := range res.Warnings {
		if strings.Contains(w.Message, "ignores") {
			ignored = append(ignored, filepath.Base(w.File))
		}
	}
	want := []string{"Kubeletconfiguration.yaml", "README.md", "foo.yaml", "kubeletconfiguration.yml", "kubeletconfiguration9.yaml"}
	if d := cmp.Diff(want, ignored); d != "" {
		t.Errorf("ignored files (-want +got):\n%s", d)
	}
	// 1.30 does not know the corednsdeployment target: it ignores that file.
	old, err := renderCase(t, filepath.Join(corpusDir, "patches-order"), release(t, "1.30"))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, w := range old.Warnings {
		found = found || filepath.Base(w.File) == "corednsdeployment.yaml"
	}
	if !found {
		t.Error("kubeadm 1.30 ignores corednsdeployment.yaml: no warning")
	}
}

func TestRefusals(t *testing.T) {
	for name, want := range map[string]string{
		"patch-fails":         "kubeletconfiguration+json.yaml:1: kubeadm 1.37 fails: could not apply the patch",
		"patch-badtype":       "kubeletconfiguration+patch.yaml: kubeadm 1.37 fails: unknown or missing patch type",
		"patch-badyaml-other": "kube-apiserver.yaml:1: kubeadm fails: could not convert patch to JSON",
		"cm-other-kind":       "configmap.yaml: no KubeletConfiguration in it",
		"cm-v1alpha1":         "configmap.yaml:1: kubeadm 1.37 refuses kubelet.config.k8s.io/v1alpha1",
		"cm-no-kind":          "configmap.yaml:1: kubeadm refuses it: a document needs apiVersion",
	} {
		_, err := renderCase(t, filepath.Join(corpusDir, name), release(t, "1.37"))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err %v, want %q", name, err, want)
		}
	}
	// An empty kubeadm-flags.env is where 1.34 fails and 1.37 detects.
	if _, err := renderCase(t, filepath.Join(corpusDir, "instance-missing-empty-env"), release(t, "1.34")); err == nil || !errors.Is(err, ErrNoFlags) {
		t.Errorf("1.34, empty env: err %v", err)
	}
	if _, err := renderCase(t, filepath.Join(corpusDir, "instance-missing-empty-env"), release(t, "1.37")); err != nil {
		t.Errorf("1.37, empty env: %v", err)
	}
}

func TestResolvedUnknownIsACondition(t *testing.T) {
	res, err := renderCase(t, filepath.Join(corpusDir, "cm-only"), release(t, "1.37"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Conditions) != 0 {
		t.Fatalf("conditions with the fact known: %+v", res.Conditions)
	}
	r, _ := nodefile.OpenRoot(t.TempDir())
	defer r.Close()
	cm, _ := os.ReadFile(filepath.Join(corpusDir, "cm-only", "configmap.yaml"))
	res, err = Render(Input{Release: release(t, "1.37"), ConfigMap: Text{Data: cm, File: "cm"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Conditions) != 1 || res.Conditions[0].Field != "resolvConf" || res.Conditions[0].Value != SystemdResolvConf {
		t.Fatalf("conditions: %+v", res.Conditions)
	}
	if _, ok := res.Config["resolvConf"]; ok {
		t.Error("resolvConf rendered as a fact")
	}
}

func TestFormatFlagsEnv(t *testing.T) {
	out, err := FormatFlagsEnv([]string{"--node-ip=10.0.0.1", "--node-labels=a=b", "--flag="})
	if err != nil || string(out) != `KUBELET_KUBEADM_ARGS="--node-ip=10.0.0.1 --node-labels=a=b --flag="`+"\n" {
		t.Fatalf("%q %v", out, err)
	}
	for _, bad := range [][]string{nil, {"--node-ip", "10.0.0.1"}, {"-v=2"}, {"--a=b c"}, {`--a="b"`}, {`--a=$X`}, {"--a=b\n"}, {"--=x"}} {
		if out, err := FormatFlagsEnv(bad); err == nil {
			t.Errorf("%q: wrote %q", bad, out)
		}
	}
	if _, err := FormatFlagsEnv(nil); !errors.Is(err, ErrNoFlags) {
		t.Errorf("empty: %v", err)
	}
}

func TestParseFlagsEnvWarnings(t *testing.T) {
	r := release(t, "1.37")
	for file, want := range map[string]string{
		"two-assignments.env": "kubeadm reads the rest of the file",
		"bool-glued.env":      `kubeadm joins "--fail-swap-on" and the next word`,
		"trailing-word.env":   `kubeadm drops "--register-node"`,
		"duplicates.env":      "--node-ip is given more than once",
		"stray-words.env":     `kubeadm skips "stray=--max-pods=90"`,
	} {
		data, err := os.ReadFile(filepath.Join("../testdata/kubeadm/envfiles", file))
		if err != nil {
			t.Fatal(err)
		}
		env, err := ParseFlagsEnv(data, file, r)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		var all []string
		for _, w := range env.Warnings {
			all = append(all, w.String())
		}
		if !strings.Contains(strings.Join(all, "\n"), want) {
			t.Errorf("%s: warnings %q, want %q", file, all, want)
		}
	}
	_, err := ParseFlagsEnv([]byte("# c\nKUBELET_KUBEADM_ARGS=\"--a=b\"\n"), "f.env", r)
	if err == nil || !strings.Contains(err.Error(), "f.env:1: kubeadm 1.37 refuses the file") {
		t.Errorf("comment first: %v", err)
	}
}

func TestReleaseTable(t *testing.T) {
	if got := strings.Join(Supported(), " "); got != "1.28 1.29 1.30 1.31 1.32 1.33 1.34 1.35 1.36 1.37" {
		t.Fatalf("releases %s", got)
	}
	off := map[string]bool{NodeLocalCRISocket: false}
	on := map[string]bool{NodeLocalCRISocket: true}
	for _, c := range []struct {
		minor           string
		def, gOff, gOn  bool
		emptyFails      bool
		backupTimestamp bool
	}{
		{"1.31", false, false, false, false, false},
		{"1.32", false, false, true, true, false},
		{"1.33", false, false, true, true, false},
		{"1.34", true, false, true, true, false},
		{"1.35", true, false, true, false, true},
		{"v1.35.0", true, false, true, true, true},
		{"1.36", true, false, true, false, true},
		{"1.37", true, true, true, false, true},
	} {
		r := release(t, c.minor)
		if r.AppliesInstanceConfig(nil) != c.def || r.AppliesInstanceConfig(off) != c.gOff || r.AppliesInstanceConfig(on) != c.gOn {
			t.Errorf("%s: instance-config default/off/on %v %v %v", c.minor, r.AppliesInstanceConfig(nil), r.AppliesInstanceConfig(off), r.AppliesInstanceConfig(on))
		}
		if r.EnvEmptyFails != c.emptyFails || (r.Backup == BackupTimestamp) != c.backupTimestamp {
			t.Errorf("%s: empty env fails %v, timestamp backup %v", c.minor, r.EnvEmptyFails, r.Backup == BackupTimestamp)
		}
	}
	if _, err := ResolveRelease("1.27"); err == nil {
		t.Error("1.27 resolved")
	}
}

func TestDetect(t *testing.T) {
	for dir, want := range map[string]bool{"../testdata/nodes/kubeadm-1.31": true, "../testdata/nodes/legacy-1.31": false} {
		r, err := nodefile.OpenRoot(dir)
		if err != nil {
			t.Fatal(err)
		}
		n := Detect(r)
		r.Close()
		if n.Kubeadm != want {
			t.Errorf("%s: kubeadm %v (evidence %v)", dir, n.Kubeadm, n.Evidence)
		}
	}
	if !OwnsConfig("/var/lib/kubelet//config.yaml") || OwnsConfig("/etc/kubernetes/kubelet-config.yaml") {
		t.Error("OwnsConfig")
	}
}

// A patches directory is read inside the node root: a link out of it reads
// the node's own path, never the host's, and a patches directory that is
// itself a link is refused as kubeadm refuses it.
func TestPatchesConfined(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.yaml")
	if err := os.WriteFile(secret, []byte("maxPods: 7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	pd := filepath.Join(root, "etc/kubernetes/patches")
	if err := os.MkdirAll(pd, 0o755); err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(pd, secret)
	for _, target := range []string{secret, rel} {
		link := filepath.Join(pd, "kubeletconfiguration.yaml")
		os.Remove(link)
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		r, _ := nodefile.OpenRoot(root)
		_, err := ReadPatches(r, "/etc/kubernetes/patches", release(t, "1.37"))
		r.Close()
		if err == nil || !strings.Contains(err.Error(), "/etc/kubernetes/patches/kubeletconfiguration.yaml") {
			t.Errorf("link to %s: err %v, want a failure naming the file", target, err)
		}
	}
	if err := os.Symlink("/etc/kubernetes/patches", filepath.Join(root, "patches-link")); err != nil {
		t.Fatal(err)
	}
	r, _ := nodefile.OpenRoot(root)
	defer r.Close()
	if _, err := ReadPatches(r, "/patches-link", release(t, "1.37")); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("patches dir as a link: %v", err)
	}
}

func TestFromManifest(t *testing.T) {
	data := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kubelet-config\ndata:\n  kubelet: |\n    apiVersion: kubelet.config.k8s.io/v1beta1\n    kind: KubeletConfiguration\n    maxPods: 7\n")
	txt, err := FromManifest(data, "cm.yaml", ConfigMapKey)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Render(Input{Release: release(t, "1.37"), ConfigMap: txt, Resolved: No})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Origins["maxPods"].String(); got != "ConfigMap cm.yaml:9" {
		t.Errorf("maxPods from %s", got)
	}
	if _, err := FromManifest([]byte("apiVersion: v1\nkind: ConfigMap\ndata: {}\n"), "cm.yaml", ConfigMapKey); err == nil {
		t.Error("a ConfigMap without the key")
	}
}

func TestOriginsOfDefaultsAndInstanceConfig(t *testing.T) {
	res, err := renderCase(t, filepath.Join(corpusDir, "cm-sparse"), release(t, "1.37"))
	if err != nil {
		t.Fatal(err)
	}
	for field, want := range map[string]string{
		"clusterDNS":                       "kubeadm default from the ClusterConfiguration (cluster.yaml:4): the tenth address of serviceSubnet 10.100.0.0/16 (ClusterConfiguration networking.serviceSubnet)",
		"clusterDomain":                    "kubeadm default from the ClusterConfiguration (cluster.yaml:5): ClusterConfiguration networking.dnsDomain",
		"authentication.x509.clientCAFile": "kubeadm default from the ClusterConfiguration (cluster.yaml:6): ca.crt in ClusterConfiguration certificatesDir",
		"maxPods":                          "ConfigMap configmap.yaml:3",
		"syncFrequency":                    "ConfigMap configmap.yaml:4",
		"evictionHard.memory.available":    "ConfigMap configmap.yaml:6",
		"rotateCertificates":               "kubeadm default: kubeadm forces it (the field is not a pointer, so kubeadm cannot tell false from unset)",
	} {
		if got := res.Origins[field].String(); got != want {
			t.Errorf("%s: %q, want %q", field, got, want)
		}
	}
	if res.Config["clusterDNS"].([]any)[0] != "10.100.0.10" || res.Config["syncFrequency"] != "1m0s" {
		t.Errorf("clusterDNS %v, syncFrequency %v", res.Config["clusterDNS"], res.Config["syncFrequency"])
	}

	res, err = renderCase(t, filepath.Join(corpusDir, "instance-extra"), release(t, "1.37"))
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Origins["maxPods"].String(); got != "/var/lib/kubelet/instance-config.yaml:2" {
		t.Errorf("maxPods from %q: instance-config.yaml comes last", got)
	}
	if got := res.Removed["evictionHard.memory.available"].String(); got != "/var/lib/kubelet/instance-config.yaml:4" {
		t.Errorf("evictionHard.memory.available removed by %q", got)
	}
	found := false
	for _, w := range res.Warnings {
		found = found || (w.Line == 2 && strings.Contains(w.Message, "kubeadm writes only containerRuntimeEndpoint"))
	}
	if !found {
		t.Errorf("no warning for maxPods in instance-config.yaml: %v", res.Warnings)
	}

	// Missing, on 1.34: created from kubeadm-flags.env, which kubeadm rewrites.
	res, err = renderCase(t, filepath.Join(corpusDir, "instance-missing"), release(t, "1.34"))
	if err != nil {
		t.Fatal(err)
	}
	if res.InstanceConfig == nil || res.InstanceConfig.Created != "containerRuntimeEndpoint: \"unix:///run/crio/crio.sock\"\n" ||
		len(res.FlagsEnv) != 1 || res.FlagsEnv[0].After != "KUBELET_KUBEADM_ARGS=\"--node-ip=10.0.0.21 --pod-infra-container-image=registry.k8s.io/pause:3.10\"\n" {
		t.Errorf("1.34 without instance-config.yaml: %+v %+v", res.InstanceConfig, res.FlagsEnv)
	}
	// On 1.35 the post-upgrade phase also drops --pod-infra-container-image.
	res, err = renderCase(t, filepath.Join(corpusDir, "cm-only"), release(t, "1.35"))
	if err != nil || len(res.Failures) == 0 || !strings.Contains(res.Failures[0], "kubeadm-flags.env") {
		t.Errorf("1.35 without kubeadm-flags.env: %v %v", res.Failures, err)
	}
}

// Hostile patch directories: a FIFO named as a patch, too many entries.
func TestPatchesHostile(t *testing.T) {
	root := t.TempDir()
	pd := filepath.Join(root, "p")
	if err := os.MkdirAll(pd, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscallMkfifo(filepath.Join(pd, "kubeletconfiguration.yaml")); err != nil {
		t.Skip(err)
	}
	r, _ := nodefile.OpenRoot(root)
	defer r.Close()
	if _, err := ReadPatches(r, "/p", release(t, "1.37")); err == nil || !strings.Contains(err.Error(), "FIFO") {
		t.Errorf("FIFO: %v", err)
	}
	os.Remove(filepath.Join(pd, "kubeletconfiguration.yaml"))
	defer func(n int) { maxPatchFiles = n }(maxPatchFiles)
	maxPatchFiles = 50
	for i := 0; i <= maxPatchFiles; i++ {
		if err := os.WriteFile(filepath.Join(pd, "x"+strings.Repeat("0", 4)+string(rune('a'+i%26))+itoa(i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ReadPatches(r, "/p", release(t, "1.37")); err == nil || !strings.Contains(err.Error(), "kubeletcfg's limit") {
		t.Errorf("%d files: %v", maxPatchFiles+1, err)
	}
}

func TestDrift(t *testing.T) {
	res, err := renderCase(t, filepath.Join(corpusDir, "patches-order"), release(t, "1.37"))
	if err != nil {
		t.Fatal(err)
	}
	written, err := res.YAML()
	if err != nil {
		t.Fatal(err)
	}
	v, _ := schemaVersion("1.37")
	d, err := CompareDrift(written, "config.yaml", res, v)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Reverts)+len(d.Brings)+len(d.Unknown) != 0 {
		t.Fatalf("kubeadm's own file drifts from itself: %+v", d)
	}
	// Someone edited config.yaml: maxPods changed, clusterDomain removed,
	// syncFrequency written another way (no change), a typo removed.
	edited := strings.NewReplacer("maxPods: 140", "maxPods: 200", "clusterDomain: cluster.local\n", "", "syncFrequency: 0s", "syncFrequency: 0m", "maxPodz: 7\n", "").Replace(string(written))
	d, err = CompareDrift([]byte(edited), "config.yaml", res, v)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Reverts) != 1 || d.Reverts[0].Field != "maxPods" || d.Reverts[0].NowLine == 0 ||
		d.Reverts[0].Origin.String() != "patch /etc/kubernetes/patches/kubeletconfiguration1+json.yaml:1" {
		t.Errorf("reverts: %+v", d.Reverts)
	}
	if len(d.Brings) != 1 || d.Brings[0].Field != "clusterDomain" || d.Brings[0].Next != "cluster.local" {
		t.Errorf("brings: %+v", d.Brings)
	}
	if len(d.Unknown) != 1 || d.Unknown[0] != "maxPodz" {
		t.Errorf("unknown: %v", d.Unknown)
	}
}

// Files an apply is about to write are read as if they were there: a patch
// in a directory that does not exist yet, an instance-config.yaml replaced.
func TestOverlay(t *testing.T) {
	root := t.TempDir()
	r, _ := nodefile.OpenRoot(root)
	defer r.Close()
	cm, _ := os.ReadFile(filepath.Join(corpusDir, "cm-only", "configmap.yaml"))
	res, err := Render(Input{Release: release(t, "1.37"), ConfigMap: Text{Data: cm, File: "cm"}, Root: r, Resolved: No,
		PatchesDir: "/etc/kubernetes/patches", CRISocket: DefaultCRISocket, Overlay: map[string][]byte{
			"/etc/kubernetes/patches/kubeletconfiguration+merge.yaml": []byte("maxPods: 42\n"),
			"/var/lib/kubelet/instance-config.yaml":                   []byte("containerRuntimeEndpoint: unix:///run/x.sock\n"),
		}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Config["maxPods"] != float64(42) || res.Config["containerRuntimeEndpoint"] != "unix:///run/x.sock" {
		t.Errorf("maxPods %v, containerRuntimeEndpoint %v", res.Config["maxPods"], res.Config["containerRuntimeEndpoint"])
	}
	if got := res.Origins["maxPods"].String(); got != "patch /etc/kubernetes/patches/kubeletconfiguration+merge.yaml:1" {
		t.Errorf("maxPods from %s", got)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Errorf("the overlay wrote to the node: %v", entries)
	}
}
