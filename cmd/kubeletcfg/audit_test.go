package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAuditSampleNode(t *testing.T) {
	code, out, errOut := runCLI(t, "audit", "--kubelet-version", "1.31", "--root", sample)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (failures)\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{
		"CIS Kubernetes Benchmark cis-1.11",
		"PASS   4.2.1 ",
		"FAIL   4.2.12 ",
		// --max-pods in /etc/default/kubelet overrides the config file.
		"value: 150  # flag --max-pods (from /etc/default/kubelet:1 ($KUBELET_EXTRA_ARGS))",
		"FAIL   4.1.9 ",
		"fix:   chmod 600 /var/lib/kubelet/config.yaml",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	code, out, _ = runCLI(t, "audit", "--kubelet-version", "1.31", "--root", sample, "--section", "ops", "-o", "json")
	if code != 0 {
		t.Fatalf("ops: exit %d\n%s", code, out)
	}
	var rep struct {
		Benchmark string `json:"benchmark"`
		Results   []struct {
			ID, Section, Status, Value, Origin string
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) == 0 {
		t.Fatal("no results")
	}
	for _, r := range rep.Results {
		if r.Section != "ops" {
			t.Errorf("--section ops gave %+v", r)
		}
	}
	// --fail-on warn: the missing CA file and kubeconfig warn.
	code, _, _ = runCLI(t, "audit", "--kubelet-version", "1.31", "--root", sample, "--section", "ops", "--fail-on", "warn", "--pod-cidr", "10.244.0.0/24")
	if code != 0 {
		t.Errorf("ops with --fail-on warn: exit %d", code)
	}
	for _, bad := range [][]string{{"--benchmark", "cis-0.1"}, {"--section", "nope"}, {"-o", "xml"}, {"--fail-on", "manual"}} {
		if code, _, _ := runCLI(t, append([]string{"audit", "--kubelet-version", "1.31", "--root", sample}, bad...)...); code != 2 {
			t.Errorf("%v: exit %d, want 2", bad, code)
		}
	}
}

func TestAuditFixTo(t *testing.T) {
	dir := t.TempDir()
	fixed := filepath.Join(dir, "fixed.yaml")
	code, _, errOut := runCLI(t, "audit", "--kubelet-version", "1.31", "--root", sample, "--fix-to", fixed)
	if code != 1 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	data, err := os.ReadFile(fixed)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"seccompDefault: true", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "clientCAFile: /etc/kubernetes/pki/ca.crt"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("fixed config lacks %q:\n%s", want, data)
		}
	}
	if code, out, _ := runCLI(t, "validate", "--kubelet-version", "1.31", fixed); code != 0 {
		t.Errorf("the fixed config does not validate:\n%s", out)
	}
	// Never over an existing file.
	if err := os.WriteFile(fixed, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = runCLI(t, "audit", "--kubelet-version", "1.31", "--root", sample, "--fix-to", fixed)
	if code != 2 || !strings.Contains(errOut, "exists") {
		t.Errorf("over an existing file: exit %d %s", code, errOut)
	}
	if data, _ := os.ReadFile(fixed); string(data) != "mine" {
		t.Errorf("overwrote %s", fixed)
	}
}

const legacySample = "../../testdata/nodes/legacy-1.31"

// migrate names the CIS checks the legacy defaults it writes out fail, and
// --secure writes the secure values instead; the audit of the result agrees.
func TestMigrateSecure(t *testing.T) {
	code, out, errOut := runCLI(t, "migrate", "--kubelet-version", "1.31", "--root", legacySample)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	for _, want := range []string{"fails CIS 4.2.1", "fails CIS 4.2.2", "fails CIS 4.2.4", "enabled: true", "mode: AlwaysAllow", "readOnlyPort: 10255"} {
		if !strings.Contains(out, want) {
			t.Errorf("migrate lacks %q:\n%s", want, out)
		}
	}
	dir := t.TempDir()
	code, out, errOut = runCLI(t, "migrate", "--secure", "--kubelet-version", "1.31", "--root", legacySample, "--output-dir", dir)
	if code != 0 {
		t.Fatalf("--secure: exit %d\n%s%s", code, out, errOut)
	}
	cfg, err := os.ReadFile(filepath.Join(dir, "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	report, _ := os.ReadFile(filepath.Join(dir, "report.txt"))
	if strings.Contains(string(report), "authentication.anonymous.enabled: security:") || !strings.Contains(string(report), "secure: authentication.anonymous.enabled: false") {
		t.Errorf("report:\n%s", report)
	}
	code, out, _ = runCLI(t, "audit", "--kubelet-version", "1.31", "--section", "cis", "--", "--config="+filepath.Join(dir, "config.yaml"))
	for _, id := range []string{"4.2.1", "4.2.2", "4.2.4"} {
		if !strings.Contains(out, "PASS   "+id+" ") {
			t.Errorf("after migrate --secure, %s does not pass (exit %d):\n%s\n%s", id, code, out, cfg)
		}
	}
}

// diff names the CIS checks a change breaks, and only those.
func TestDiffBreaks(t *testing.T) {
	cur := sample + "/var/lib/kubelet/config.yaml"
	data, err := os.ReadFile(cur)
	if err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(t.TempDir(), "open.yaml")
	doc := strings.Replace(strings.Replace(string(data), "mode: Webhook", "mode: AlwaysAllow", 1), "maxPods: 110", "maxPods: 120\nreadOnlyPort: 10255", 1)
	if err := os.WriteFile(open, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runCLI(t, "diff", "--kubelet-version", "1.31", open, "--against", cur, "-o", "json")
	if code != 1 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	var res struct {
		Breaks []struct{ ID string } `json:"breaks"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, b := range res.Breaks {
		ids = append(ids, b.ID)
	}
	if strings.Join(ids, " ") != "4.2.2 4.2.4" {
		t.Errorf("breaks %v, want 4.2.2 4.2.4", ids)
	}
	// Back again breaks nothing.
	_, out, _ = runCLI(t, "diff", "--kubelet-version", "1.31", cur, "--against", open)
	if strings.Contains(out, "breaks CIS") {
		t.Errorf("fixing breaks something:\n%s", out)
	}
}

// apply refuses a change that breaks a passing CIS check, before writing
// anything; a dry run names the check.
func TestApplyRefusesInsecure(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	open := filepath.Join(dir, "open.yaml")
	head := "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
	if err := os.WriteFile(cfg, []byte(head+"maxPods: 100\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(open, []byte(head+"maxPods: 100\nauthorization:\n  mode: AlwaysAllow\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	base := []string{"apply", "--node", host, "--kubelet-version", "1.31", "-f", open, "--state-dir", filepath.Join(dir, "state"),
		"--restart-command", "false", "--pid-file", filepath.Join(dir, "kubelet.pid")}
	code, out, errOut := runCLI(t, append(base, "--", "--config="+cfg)...)
	if code != 2 || !strings.Contains(errOut, "CIS 4.2.2") || !strings.Contains(errOut, "--allow-insecure") {
		t.Fatalf("exit %d, want 2 and a refusal naming CIS 4.2.2\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, "security: breaks CIS 4.2.2") {
		t.Errorf("output lacks the broken check:\n%s", out)
	}
	if b, _ := os.ReadFile(cfg); string(b) != head+"maxPods: 100\n" {
		t.Errorf("the refused change was written:\n%s", b)
	}
	code, out, _ = runCLI(t, append(base, "--dry-run", "-o", "json", "--", "--config="+cfg)...)
	var plan struct {
		Breaks []struct{ ID string } `json:"breaks"`
	}
	if err := json.Unmarshal([]byte(out), &plan); err != nil || code != 1 || len(plan.Breaks) != 1 || plan.Breaks[0].ID != "4.2.2" {
		t.Errorf("dry run: exit %d %v %+v\n%s", code, err, plan, out)
	}
}
