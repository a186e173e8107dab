package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const sample = "../../testdata/nodes/kubeadm-1.31"

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	return code, out.String(), errOut.String()
}

func TestValidateExitCodes(t *testing.T) {
	cases := []struct {
		name     string
		args     []string
		code     int
		contains []string
	}{
		{"valid", []string{"validate", "--kubelet-version", "1.31", sample + "/var/lib/kubelet/config.yaml"}, 0,
			[]string{"valid for kubelet 1.31"}},
		{"invalid", []string{"validate", "--kubelet-version", "v1.31.4", sample + "/broken-config.yaml"}, 1, []string{
			`broken-config.yaml:5:1: evictionHrad: unknown field "evictionHrad" (did you mean "evictionHard"?)`,
			`broken-config.yaml:7:1: MaxPods: unknown field "MaxPods" (did you mean "maxPods"?)`,
			"NoSuchGate",
			"invalid for kubelet 1.31",
		}},
		{"missing file", []string{"validate", "--kubelet-version", "1.31", "/nonexistent/config.yaml"}, 2, nil},
		{"unsupported version", []string{"validate", "--kubelet-version", "1.19", sample + "/var/lib/kubelet/config.yaml"}, 2, nil},
		{"bad output", []string{"validate", "-o", "xml", "--kubelet-version", "1.31", sample + "/var/lib/kubelet/config.yaml"}, 2, nil},
		{"no args", []string{"validate"}, 2, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out, errOut)
			}
			for _, c := range tc.contains {
				if !strings.Contains(out, c) {
					t.Errorf("output lacks %q:\n%s", c, out)
				}
			}
		})
	}
}

func TestValidateJSON(t *testing.T) {
	code, out, _ := runCLI(t, "validate", "-o", "json", "--kubelet-version", "1.31", sample+"/broken-config.yaml")
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	var res struct {
		Valid          bool   `json:"valid"`
		KubeletVersion string `json:"kubeletVersion"`
		Errors         []struct {
			Field, Message, File string
			Line                 int
		} `json:"errors"`
		Warnings []any `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if res.Valid || res.KubeletVersion != "1.31" || len(res.Errors) == 0 || res.Warnings == nil {
		t.Fatalf("unexpected result %+v", res)
	}
	if e := res.Errors[0]; e.Field != "evictionHrad" || e.Line != 5 || !strings.HasSuffix(e.File, "broken-config.yaml") {
		t.Errorf("first error %+v, want evictionHrad at line 5", e)
	}
}

func TestDefaults(t *testing.T) {
	code, out, _ := runCLI(t, "defaults", "--kubelet-version", "1.31")
	if code != 0 || !strings.Contains(out, "kind: KubeletConfiguration") || strings.Contains(out, "readOnlyPort: 10255") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if !strings.Contains(out, "memory.available: 100Mi") {
		t.Errorf("--config defaults lack the eviction defaults:\n%s", out)
	}
	code, out, _ = runCLI(t, "defaults", "--kubelet-version", "1.31", "--flags-baseline", "-o", "json")
	var m map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &m) != nil {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if m["readOnlyPort"] != float64(10255) || m["evictionHard"] != nil {
		t.Errorf("flags baseline: readOnlyPort=%v evictionHard=%v, want 10255 and none", m["readOnlyPort"], m["evictionHard"])
	}
	if mode := m["authorization"].(map[string]any)["mode"]; mode != "AlwaysAllow" {
		t.Errorf("flags baseline authorization.mode = %v, want AlwaysAllow", mode)
	}
}

func TestExplain(t *testing.T) {
	code, out, _ := runCLI(t, "explain", "evictionHard", "--kubelet-version", "1.37")
	for _, want := range []string{"FIELD:    evictionHard", "TYPE:     map[string]string", `"memory.available":"100Mi"`, "FLAG:     --eviction-hard", "SINCE:    kubelet 1.28 or earlier"} {
		if !strings.Contains(out, want) {
			t.Errorf("explain output lacks %q:\n%s", want, out)
		}
	}
	if code != 0 {
		t.Errorf("exit %d", code)
	}
	code, _, errOut := runCLI(t, "explain", "MaxPods", "--kubelet-version", "1.37")
	if code != 2 || !strings.Contains(errOut, `did you mean "maxPods"`) {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	code, _, errOut = runCLI(t, "explain", "mergeDefaultEvictionSettings", "--kubelet-version", "1.30")
	if code != 2 || !strings.Contains(errOut, "from 1.33 on") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

func TestVersion(t *testing.T) {
	code, out, _ := runCLI(t, "version")
	if code != 0 || !strings.Contains(out, "1.28, 1.29, 1.30, 1.31, 1.32, 1.33, 1.34, 1.35, 1.36, 1.37") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

func TestBadInputIsRefusedClearly(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	gx := write("gx.yaml", "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nfeatureGates:\n  NoSuchFeature: true\nimageGCHighThresholdPercent: 200\n")
	write("dd/10.conf", "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nbogusField: 1\n")
	big := write("big.yaml", "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n#"+strings.Repeat("x", 5<<20)+"\n")
	cases := []struct {
		name     string
		args     []string
		code     int
		contains string
		count    map[string]int // substrings of stdout and on how many lines they must appear
	}{
		{name: "a bad gate does not hide the rest of validation under --config-dir",
			args: []string{"validate", "--kubelet-version", "1.31", "--config-dir", filepath.Join(dir, "dd"), gx}, code: 1,
			count: map[string]int{"NoSuchFeature": 1, "imageGCHighThresholdPercent": 1, "bogusField": 1}},
		{name: "a missing drop-in directory is an I/O error",
			args: []string{"validate", "--kubelet-version", "1.31", "--config-dir", filepath.Join(dir, "nope"), gx}, code: 2},
		{name: "a misspelt flag is not taken for a removed one",
			args: []string{"migrate", "--kubelet-version", "1.31", "--", "--max-pod=150"}, code: 2, contains: "did you mean --max-pods"},
		{name: "a command line after -- needs --live",
			args: []string{"diff", "--kubelet-version", "1.31", gx, "--against", gx, "--", "--max-pods=5"}, code: 2},
		{name: "--kubeconfig needs --live",
			args: []string{"diff", "--kubelet-version", "1.31", gx, "--kubeconfig", gx}, code: 2, contains: "go with --live"},
		{name: "a kubeconfig that cannot be read is named",
			args: []string{"diff", "--kubelet-version", "1.31", "--live", "--kubeconfig", filepath.Join(dir, "no-kubeconfig"), "--node", "n", gx}, code: 2, contains: filepath.Join(dir, "no-kubeconfig")},
		{name: "--config given twice",
			args: []string{"effective", "--kubelet-version", "1.31", "--config", gx, "--", "--config=" + gx}, code: 2},
		{name: "a huge file is kubeletcfg's refusal", args: []string{"validate", "--kubelet-version", "1.31", big}, code: 2, contains: "kubeletcfg's limit, not the kubelet's"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out, errOut)
			}
			if tc.contains != "" && !strings.Contains(out+errOut, tc.contains) {
				t.Errorf("output lacks %q:\n%s%s", tc.contains, out, errOut)
			}
			for s, n := range tc.count {
				lines := 0
				for _, l := range strings.Split(out, "\n") {
					if strings.Contains(l, s) {
						lines++
					}
				}
				if lines != n {
					t.Errorf("%q is on %d lines, want %d:\n%s", s, lines, n, out)
				}
			}
		})
	}
}

func TestApplyPlanning(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	head := "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
	mustWrite := func(p, c string) {
		if err := os.WriteFile(p, []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	mustWrite(cfg, head+"maxPods: 100\n")
	same := filepath.Join(dir, "same.yaml")
	mustWrite(same, head+"maxPods: 100\n")
	changed := filepath.Join(dir, "changed.yaml")
	mustWrite(changed, head+"maxPods: 120\ncpuManagerPolicy: static\nreservedSystemCPUs: \"0\"\n")
	invalid := filepath.Join(dir, "invalid.yaml")
	mustWrite(invalid, head+"imageGCHighThresholdPercent: 200\n")
	host, _ := os.Hostname()
	run := func(extra ...string) (int, string) {
		args := append([]string{"apply", "--kubelet-version", "1.37"}, extra...)
		args = append(args, "--", "--config="+cfg)
		code, out, errOut := runCLI(t, args...)
		return code, out + errOut
	}
	if code, out := run("--node", host, "-f", same, "--dry-run"); code != 0 || !strings.Contains(out, "no change") {
		t.Errorf("same file: exit %d\n%s", code, out)
	}
	if code, out := run("--node", host, "-f", changed, "--dry-run"); code != 1 || !strings.Contains(out, "cpuManagerPolicy") {
		t.Errorf("changed file, dry run: exit %d\n%s", code, out)
	}
	if code, out := run("--node", host, "-f", changed, "--restart-command", "true", "--pid-file", filepath.Join(dir, "pid"), "--state-dir", filepath.Join(dir, "state")); code != 2 || !strings.Contains(out, "drained") {
		t.Errorf("a change that needs a drain: exit %d\n%s", code, out)
	}
	restart := []string{"--restart-command", "true", "--pid-file", filepath.Join(dir, "pid"), "--state-dir", filepath.Join(dir, "state")}
	if code, out := run(append([]string{"--node", host, "-f", changed, "--drain"}, restart...)...); code != 2 || !strings.Contains(out, "--drain needs --kubeconfig") {
		t.Errorf("--drain without --kubeconfig: exit %d\n%s", code, out)
	}
	missing := filepath.Join(dir, "no-such.kubeconfig")
	if code, out := run(append([]string{"--node", host, "-f", changed, "--drain", "--kubeconfig", missing}, restart...)...); code != 2 || !strings.Contains(out, missing) {
		t.Errorf("a kubeconfig that is not there: exit %d\n%s", code, out)
	}
	if code, out := run("--node", "some-other-node", "-f", changed, "--dry-run"); code != 2 || !strings.Contains(out, "refusing to touch it") {
		t.Errorf("wrong node: exit %d\n%s", code, out)
	}
	if code, out := run("--node", host, "-f", invalid, "--dry-run"); code != 2 || !strings.Contains(out, "imageGCHighThresholdPercent") {
		t.Errorf("invalid file: exit %d\n%s", code, out)
	}
	if b, _ := os.ReadFile(cfg); string(b) != head+"maxPods: 100\n" {
		t.Errorf("planning changed the config file:\n%s", b)
	}
	if list, _ := filepath.Glob(cfg + ".bak.*"); len(list) != 0 {
		t.Errorf("planning made backups: %v", list)
	}
}

func TestColoursOnlyOnATerminal(t *testing.T) {
	if colours(&bytes.Buffer{}) {
		t.Error("a buffer is no terminal")
	}
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if colours(f) {
		t.Error("a regular file is no terminal")
	}
	tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no terminal here")
	}
	defer tty.Close()
	t.Setenv("NO_COLOR", "1")
	if colours(tty) {
		t.Error("NO_COLOR is set")
	}
}

func TestApplyDropinPlanning(t *testing.T) {
	dir := t.TempDir()
	head := "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
	cfg := filepath.Join(dir, "config.yaml")
	confd := filepath.Join(dir, "conf.d")
	if err := os.MkdirAll(confd, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte(head+"maxPods: 100\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	drop := filepath.Join(dir, "drop.yaml")
	if err := os.WriteFile(drop, []byte(head+"maxPods: 130\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	run := func(extra ...string) (int, string) {
		args := append([]string{"apply", "--node", host, "--kubelet-version", "1.37", "--dry-run"}, extra...)
		args = append(args, "--", "--config="+cfg, "--config-dir="+confd)
		code, out, errOut := runCLI(t, args...)
		return code, out + errOut
	}
	if code, out := run("--dropin", "50-pods.conf="+drop); code != 1 || !strings.Contains(out, "maxPods: 100 -> 130") {
		t.Errorf("a new drop-in, dry run: exit %d\n%s", code, out)
	}
	for _, bad := range []string{"../x.conf=" + drop, "50-pods.yaml=" + drop, ".hidden.conf=" + drop, "50-pods.conf"} {
		if code, out := run("--dropin", bad); code != 2 {
			t.Errorf("--dropin %s: exit %d, want 2\n%s", bad, code, out)
		}
	}
	if entries, _ := os.ReadDir(confd); len(entries) != 0 {
		t.Errorf("planning wrote into the drop-in directory: %v", entries)
	}
}

// TestEffectiveShowsKeyOrigins runs effective --show-origin on the sample
// node: each key of a map names its own origin, in text and in JSON.
func TestEffectiveShowsKeyOrigins(t *testing.T) {
	code, out, errOut := runCLI(t, "effective", "--kubelet-version", "1.31", "--root", sample, "--show-origin")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	config := filepath.Join(sample, "var/lib/kubelet/config.yaml")
	for _, line := range []string{
		`evictionHard["memory.available"]: "500Mi"  # flag --eviction-hard (from /etc/default/kubelet:1 ($KUBELET_EXTRA_ARGS))`,
		`systemReserved["cpu"]: "500m"  # ` + config + `:51`,
		`kubeReserved["memory"]: "256Mi"  # ` + config + `:55`,
	} {
		if !strings.Contains(out, line+"\n") {
			t.Errorf("output lacks %q:\n%s", line, out)
		}
	}

	code, out, errOut = runCLI(t, "effective", "--kubelet-version", "1.31", "--root", sample, "--show-origin", "-o", "json")
	var doc struct {
		Config map[string]struct {
			Keys map[string]struct {
				Kind string `json:"kind"`
				Line int    `json:"line"`
			} `json:"keys"`
		} `json:"config"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &doc) != nil {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	if k := doc.Config["systemReserved"].Keys["memory"]; k.Kind != "file" || k.Line != 52 {
		t.Errorf("systemReserved.memory origin = %+v, want file line 52", k)
	}
	if k := doc.Config["evictionHard"].Keys["memory.available"]; k.Kind != "flag" {
		t.Errorf("evictionHard.memory.available origin = %+v, want the flag", k)
	}
}

// TestEffectiveCarriesTheVerdict: effective exits 1 with the kubelet's reason
// when that version refuses the setup, whether it refuses while layering (a
// gate whose dependants stay on) or the result (an empty eviction quantity);
// a bare -- is an empty command line, not the node's.
func TestEffectiveCarriesTheVerdict(t *testing.T) {
	dir := t.TempDir()
	gates := filepath.Join(dir, "gates.yaml")
	empty := filepath.Join(dir, "empty-quantity.yaml")
	header := "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
	if err := os.WriteFile(gates, []byte(header+"featureGates:\n  GracefulNodeShutdown: false\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(empty, []byte(header+"evictionHard:\n  imagefs.available: null\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args   []string
		code   int
		reason string
	}{
		{[]string{"--kubelet-version", "1.37", "--", "--config=" + gates}, 1,
			"kubelet 1.37 refuses to start: failed to load kubelet config file: the kubelet panics while defaulting: GracefulNodeShutdownBasedOnPodPriority is enabled, but depends on features that are disabled: [GracefulNodeShutdown]"},
		{[]string{"--kubelet-version", "1.37", "--", "--feature-gates=GracefulNodeShutdown=false"}, 1,
			"kubelet 1.37 refuses to start: failed to set feature gates from initial flags-based config: GracefulNodeShutdownBasedOnPodPriority is enabled"},
		{[]string{"--kubelet-version", "1.34", "--", "--config=" + gates}, 0, ""},
		{[]string{"--kubelet-version", "1.31", "--", "--config=" + empty}, 1,
			"kubelet 1.31 refuses to start: failed to run Kubelet: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$' (evictionHard.imagefs.available from " + empty + ":4)"},
		{[]string{"--kubelet-version", "1.28", "--root", dir, "--"}, 0, ""},
	}
	for _, c := range cases {
		code, out, errOut := runCLI(t, append([]string{"effective"}, c.args...)...)
		if c.code == 0 && !strings.Contains(out, "# effective configuration of kubelet") {
			t.Errorf("effective %v: no configuration printed:\n%s", c.args, out)
		}
		if code != c.code || !strings.Contains(errOut, c.reason) {
			t.Errorf("effective %v: exit %d, want %d with %q; stderr:\n%s", c.args, code, c.code, c.reason, errOut)
		}
	}
	// migrate and diff carry it too.
	code, out, errOut := runCLI(t, "migrate", "--kubelet-version", "1.37", "--", "--kubeconfig=/etc/kubernetes/kubelet.conf", "--feature-gates=GracefulNodeShutdown=false")
	if code != 1 || !strings.Contains(errOut, "kubelet 1.37 refuses to start: failed to set feature gates from initial flags-based config: GracefulNodeShutdownBasedOnPodPriority is enabled") {
		t.Errorf("migrate: exit %d; stderr:\n%s", code, errOut)
	}
	if code, out, errOut = runCLI(t, "migrate", "--kubelet-version", "1.31", "--root", dir, "--"); code != 0 || !strings.Contains(out, "# Remaining flags: --config=/var/lib/kubelet/config.yaml\n") {
		t.Errorf("migrate of an empty command line: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut = runCLI(t, "diff", "--kubelet-version", "1.31", empty, "--against", gates); code != 1 || !strings.Contains(errOut, "kubelet 1.31 refuses to start: failed to run Kubelet: quantities must match") {
		t.Errorf("diff to a configuration the kubelet refuses: exit %d; stderr:\n%s", code, errOut)
	}
}

// TestApplyJSONCarriesEffectiveConfigurations: apply -o json gives the
// kubelet version it judged for and the effective configuration before and
// after the change, defaults included (what a caller such as the Ansible
// module shows as its diff), the files it would write, and a semantically
// equal file plans nothing.
func TestApplyJSONCarriesEffectiveConfigurations(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	head := "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
	for p, c := range map[string]string{
		cfg: head + "maxPods: 100\n",
		// the same configuration: other key order, a comment, a default written out
		filepath.Join(dir, "same.yaml"): "# pods\nmaxPods: 100\nkind: KubeletConfiguration\napiVersion: kubelet.config.k8s.io/v1beta1\nsyncFrequency: 1m0s\n",
		filepath.Join(dir, "new.yaml"):  head + "maxPods: 120\n",
	} {
		if err := os.WriteFile(p, []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	host, _ := os.Hostname()
	plan := func(file string) (int, map[string]any) {
		code, out, errOut := runCLI(t, "apply", "--node", host, "--kubelet-version", "1.31", "-f", file, "--dry-run", "-o", "json", "--", "--config="+cfg)
		var got map[string]any
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("%s: exit %d, not JSON: %v\n%s%s", file, code, err, out, errOut)
		}
		return code, got
	}
	code, got := plan(filepath.Join(dir, "new.yaml"))
	if code != 1 || got["kubeletVersion"] != "1.31" {
		t.Errorf("exit %d, kubeletVersion %v; want 1, 1.31", code, got["kubeletVersion"])
	}
	if w, _ := got["writes"].([]any); len(w) != 1 || w[0] != cfg {
		t.Errorf("writes %v, want [%s]", got["writes"], cfg)
	}
	before, _ := got["before"].(map[string]any)
	after, _ := got["after"].(map[string]any)
	if before["maxPods"] != 100.0 || after["maxPods"] != 120.0 {
		t.Errorf("maxPods before %v after %v, want 100 and 120", before["maxPods"], after["maxPods"])
	}
	if before["syncFrequency"] != "1m0s" || after["cgroupDriver"] != "cgroupfs" {
		t.Errorf("before/after lack the defaults: syncFrequency %v, cgroupDriver %v", before["syncFrequency"], after["cgroupDriver"])
	}
	if code, got := plan(filepath.Join(dir, "same.yaml")); code != 0 || len(got["changes"].([]any)) != 0 || len(got["writes"].([]any)) != 0 {
		t.Errorf("a semantically equal file: exit %d, changes %v, writes %v; want 0 and none", code, got["changes"], got["writes"])
	}
}

// TestApplyFromMigrateDryRunOnTheSample: a migration of the kubeadm sample
// moves flags out of kubeadm-flags.env and /etc/default/kubelet and leaves
// the unit drop-in's Environment= lines, whose flags all stay, as written; a
// dry run says which files it would write and exits 1, writing nothing.
func TestApplyFromMigrateDryRunOnTheSample(t *testing.T) {
	root := filepath.Join(t.TempDir(), "root")
	if err := os.CopyFS(root, os.DirFS("../../testdata/nodes/kubeadm-1.31")); err != nil {
		t.Fatal(err)
	}
	dropin := filepath.Join(root, "etc/systemd/system/kubelet.service.d/10-kubeadm.conf")
	before, err := os.ReadFile(dropin)
	if err != nil {
		t.Fatal(err)
	}
	// The sample is a kubeadm node: the values the migration moves into
	// config.yaml are kept where the next kubeadm upgrade node keeps them too
	// (without --persist the migration is refused, see TestApplyOnKubeadmNode).
	code, out, errOut := runCLI(t, "apply", "--root", root, "--kubelet-version", "1.31", "--node", "node-1", "--from-migrate", "--dry-run", "--persist", "patch")
	if code != 1 || !strings.Contains(out, "would write: ") || !strings.Contains(out, "/etc/default/kubelet") ||
		!strings.Contains(out, "kubeadm-flags.env") || strings.Contains(out, "10-kubeadm.conf") || !strings.Contains(out, "/etc/kubernetes/patches/kubeletconfigurationzz-kubeletcfg+merge.yaml") {
		t.Fatalf("exit %d, want 1 naming the env files it would write and not the unit drop-in:\n%s%s", code, out, errOut)
	}
	if after, _ := os.ReadFile(dropin); string(after) != string(before) {
		t.Error("a dry run changed the unit drop-in")
	}
}

// TestBareDashIsAnEmptyCommandLine: audit and apply, like effective, take a
// bare -- as the kubelet's command line with nothing on it (the flags-only
// kubelet), not as "read the node's".
func TestBareDashIsAnEmptyCommandLine(t *testing.T) {
	sample := "../../testdata/nodes/kubeadm-1.31"
	_, node, _ := runCLI(t, "audit", "--kubelet-version", "1.31", "--root", sample, "-o", "json")
	_, bare, _ := runCLI(t, "audit", "--kubelet-version", "1.31", "--root", sample, "-o", "json", "--")
	if !strings.Contains(node, `/var/lib/kubelet/config.yaml`) || strings.Contains(bare, `/var/lib/kubelet/config.yaml`) {
		t.Errorf("audit: the node's setup names its config file and a bare -- must not:\nnode: %.300s\nbare: %.300s", node, bare)
	}
	code, out, errOut := runCLI(t, "apply", "--kubelet-version", "1.31", "--root", sample, "--node", "node-1", "-f", sample+"/new-config.yaml", "--dry-run", "--")
	if code != 2 || !strings.Contains(out+errOut, "without --config") {
		t.Errorf("apply with a bare --: exit %d, want 2 (a kubelet without --config):\n%s%s", code, out, errOut)
	}
}

// TestUnknownFormat: every command with -o refuses a format it does not
// offer, before doing anything, with one message naming those it offers.
func TestUnknownFormat(t *testing.T) {
	root := newRoot(streams{})
	n := 0
	for _, c := range root.Commands() {
		o := c.Flags().Lookup("output")
		if o == nil {
			continue
		}
		n++
		code, out, errOut := runCLI(t, c.Name(), "-o", "xml", "--node", "n", "--dry-run", "-f", "/nonexistent")
		if c.Name() != "apply" {
			code, out, errOut = runCLI(t, c.Name(), "-o", "xml")
		}
		want := "kubeletcfg: -o: unknown format xml (" + strings.TrimPrefix(o.Usage, "output format: ") + ")\n"
		if code != 2 || out != "" || errOut != want {
			t.Errorf("%s -o xml: exit %d, stdout %q, stderr %q, want %q", c.Name(), code, out, errOut, want)
		}
	}
	if n < 10 {
		t.Errorf("%d commands with -o, want at least 10", n)
	}
}
