//go:build e2e

package e2e

import (
	"crypto/tls"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubeletcfg/kubeletcfg/internal/testkit"
)

// TestAuditSaysWhatTheKubeletDoes runs the real kubelet on flags alone and
// checks that what audit says of that setup is what the kubelet does: the
// read-only port open, anonymous requests to its API authorized. Then the
// setup migrated with --secure: audit passes, and the kubelet refuses both.
func TestAuditSaysWhatTheKubeletDoes(t *testing.T) {
	n := newNode(t, nodeOptions{noStart: true})
	minor, dir := n.Minor, n.Dir
	// Webhook authentication and authorization need an API client: a
	// kubeconfig naming a loopback port nobody listens on is enough for the
	// kubelet to start and to refuse requests that carry no credentials.
	kubeconfig := filepath.Join(dir, "kubelet.kubeconfig")
	if err := (testkit.Kubeconfig{Server: "https://127.0.0.1:1", Token: "none"}).Write(kubeconfig); err != nil {
		t.Fatal(err)
	}
	legacy := []string{
		"--kubeconfig=" + kubeconfig,
		"--container-runtime-endpoint=unix://" + n.Runtime.sock,
		"--cgroup-driver=cgroupfs",
		"--fail-cgroupv1=false",
		"--root-dir=" + n.RootDir,
		"--cert-dir=" + n.CertDir,
		"--v=2",
	}

	results := audit(t, minor, legacy)
	for id, want := range map[string]string{"4.2.1": "true", "4.2.2": `"AlwaysAllow"`, "4.2.4": "10255"} {
		if r := results[id]; r.Status != "fail" || r.Value != want || r.Origin != "flags-only default" {
			t.Errorf("flags only: %s = %+v, want fail %s from the flags-only default", id, r, want)
		}
	}
	n.setArgs(t, legacy...)
	n.start(t)
	if code, err := get("http://127.0.0.1:10255/pods"); code != http.StatusOK {
		t.Errorf("read-only port: %d %v, want 200 (audit says it is open)", code, err)
	}
	if code, err := get("https://127.0.0.1:10250/pods"); code != http.StatusOK {
		t.Errorf("anonymous request to the kubelet API: %d %v, want 200 (audit says anonymous and AlwaysAllow)", code, err)
	}
	n.stop()

	out := filepath.Join(dir, "migrated")
	if code, stdout, stderr := kubeletcfg(t, nil, append([]string{"migrate", "--secure", "--kubelet-version", minor,
		"--config-path", n.Config, "--output-dir", out, "--"}, legacy...)...); code != 0 {
		t.Fatalf("migrate --secure: exit %d\n%s%s", code, stdout, stderr)
	}
	raw, err := os.ReadFile(filepath.Join(out, "migration.json"))
	if err != nil {
		t.Fatal(err)
	}
	var migration struct {
		Flags []string `json:"flags"`
	}
	if err := json.Unmarshal(raw, &migration); err != nil {
		t.Fatal(err)
	}
	cfg, err := os.ReadFile(filepath.Join(out, "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, n.Config, string(cfg))
	secure := migration.Flags

	results = audit(t, minor, secure)
	for _, id := range []string{"4.2.1", "4.2.2", "4.2.4"} {
		if r := results[id]; r.Status != "pass" || !strings.Contains(r.Origin, "config.yaml") {
			t.Errorf("after migrate --secure: %s = %+v, want pass from the config file", id, r)
		}
	}
	n.setArgs(t, secure...)
	n.start(t)
	if code, err := get("http://127.0.0.1:10255/pods"); code != 0 || !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("read-only port after migrate --secure: %d %v, want the connection refused", code, err)
	}
	if code, err := get("https://127.0.0.1:10250/pods"); code != http.StatusUnauthorized {
		t.Errorf("anonymous request after migrate --secure: %d %v, want 401", code, err)
	}
}

type auditResult struct {
	Status, Value, Origin string
}

// audit runs kubeletcfg audit on a command line and returns its results by id.
func audit(t *testing.T, minor string, args []string) map[string]auditResult {
	t.Helper()
	code, out, errOut := kubeletcfg(t, nil, append([]string{"audit", "--kubelet-version", minor, "--section", "cis", "-o", "json", "--"}, args...)...)
	if code != 0 && code != 1 {
		t.Fatalf("audit: exit %d\n%s%s", code, out, errOut)
	}
	var rep struct {
		Results []struct {
			ID string `json:"id"`
			auditResult
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("audit: %v\n%s", err, out)
	}
	m := map[string]auditResult{}
	for _, r := range rep.Results {
		m[r.ID] = r.auditResult
	}
	return m
}

// get requests a URL on the kubelet without credentials; the status code,
// or 0 and the error.
func get(url string) (int, error) {
	client := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := client.Get(url)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}
