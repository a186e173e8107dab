//go:build e2e

package e2e

import (
	"crypto/tls"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestAuditSaysWhatTheKubeletDoes runs the real kubelet on flags alone and
// checks that what audit says of that setup is what the kubelet does: the
// read-only port open, anonymous requests to its API authorized. Then the
// setup migrated with --secure: audit passes, and the kubelet refuses both.
func TestAuditSaysWhatTheKubeletDoes(t *testing.T) {
	kubelet, minor, dir, sock := kubeletNode(t)
	bin := filepath.Join(dir, "kubeletcfg")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/kubeletcfg").CombinedOutput(); err != nil {
		t.Fatalf("build kubeletcfg: %v\n%s", err, out)
	}
	// Webhook authentication and authorization need an API client: a
	// kubeconfig naming a loopback port nobody listens on is enough for the
	// kubelet to start and to refuse requests that carry no credentials.
	kubeconfig := filepath.Join(dir, "kubelet.kubeconfig")
	write(t, kubeconfig, `apiVersion: v1
kind: Config
clusters:
- name: none
  cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}
users:
- name: none
  user: {token: none}
contexts:
- name: none
  context: {cluster: none, user: none}
current-context: none
`)
	legacy := []string{
		"--kubeconfig=" + kubeconfig,
		"--container-runtime-endpoint=unix://" + sock,
		"--cgroup-driver=cgroupfs",
		"--fail-cgroupv1=false",
		"--root-dir=" + filepath.Join(dir, "root"),
		"--cert-dir=" + filepath.Join(dir, "pki"),
		"--v=2",
	}

	results := audit(t, bin, minor, legacy)
	for id, want := range map[string]string{"4.2.1": "true", "4.2.2": `"AlwaysAllow"`, "4.2.4": "10255"} {
		if r := results[id]; r.Status != "fail" || r.Value != want || r.Origin != "flags-only default" {
			t.Errorf("flags only: %s = %+v, want fail %s from the flags-only default", id, r, want)
		}
	}
	stop := startKubelet(t, kubelet, legacy, filepath.Join(dir, "kubelet.log"))
	if code, err := get("http://127.0.0.1:10255/pods"); code != http.StatusOK {
		t.Errorf("read-only port: %d %v, want 200 (audit says it is open)", code, err)
	}
	if code, err := get("https://127.0.0.1:10250/pods"); code != http.StatusOK {
		t.Errorf("anonymous request to the kubelet API: %d %v, want 200 (audit says anonymous and AlwaysAllow)", code, err)
	}
	stop()

	out := filepath.Join(dir, "migrated")
	cmd := exec.Command(bin, append([]string{"migrate", "--secure", "--kubelet-version", minor,
		"--config-path", filepath.Join(dir, "config.yaml"), "--output-dir", out, "--"}, legacy...)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("migrate --secure: %v\n%s", err, b)
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
	write(t, filepath.Join(dir, "config.yaml"), string(cfg))
	secure := migration.Flags

	results = audit(t, bin, minor, secure)
	for _, id := range []string{"4.2.1", "4.2.2", "4.2.4"} {
		if r := results[id]; r.Status != "pass" || !strings.Contains(r.Origin, "config.yaml") {
			t.Errorf("after migrate --secure: %s = %+v, want pass from the config file", id, r)
		}
	}
	stop = startKubelet(t, kubelet, secure, filepath.Join(dir, "kubelet-secure.log"))
	defer stop()
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
func audit(t *testing.T, bin, minor string, args []string) map[string]auditResult {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"audit", "--kubelet-version", minor, "--section", "cis", "-o", "json", "--"}, args...)...)
	out, err := cmd.Output()
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
		t.Fatalf("audit: %v\n%s", err, out)
	}
	var rep struct {
		Results []struct {
			ID string `json:"id"`
			auditResult
		} `json:"results"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("audit: %v\n%s", err, out)
	}
	m := map[string]auditResult{}
	for _, r := range rep.Results {
		m[r.ID] = r.auditResult
	}
	return m
}

// startKubelet runs the kubelet until it is healthy; stop ends it.
func startKubelet(t *testing.T, bin string, args []string, logPath string) (stop func()) {
	t.Helper()
	stop = start(t, logPath, bin, args...)
	waitHealthyAt(t, func() string {
		out, _ := os.ReadFile(logPath)
		return tail(out)
	})
	return stop
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
