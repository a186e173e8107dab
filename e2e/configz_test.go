//go:build e2e

// Package e2e runs kubeletcfg against a real kubelet (built from
// k8s.io/kubernetes by `make e2e`) and a real containerd from Debian.
package e2e

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubeletcfg/kubeletcfg/config"
	"github.com/kubeletcfg/kubeletcfg/effective"
	"github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

// The kubelet changes these; they are put back after the test.
var sysctls = []string{"vm/overcommit_memory", "kernel/panic", "kernel/panic_on_oops"}

// TestEffectiveEqualsConfigz starts the real kubelet with a config file,
// drop-ins (one nested, one hidden) and flags on top, reads what it serves
// on /configz, and checks that kubeletcfg's effective configuration of the
// same setup is exactly that.
func TestEffectiveEqualsConfigz(t *testing.T) {
	kubelet, minor, dir, sock := kubeletNode(t)
	v, err := schema.Resolve(minor)
	if err != nil {
		t.Fatal(err)
	}

	write(t, filepath.Join(dir, "config.yaml"), `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
containerRuntimeEndpoint: unix://`+sock+`
failCgroupV1: false
cgroupDriver: cgroupfs
authentication:
  anonymous:
    enabled: true
  webhook:
    enabled: false
authorization:
  mode: AlwaysAllow
maxPods: 50
evictionHard:
  memory.available: 50Mi
systemReserved:
  cpu: 100m
logging:
  verbosity: 1
`)
	write(t, filepath.Join(dir, "conf.d", "10-pods.conf"), "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: 60\nkubeReserved:\n  memory: 64Mi\n")
	write(t, filepath.Join(dir, "conf.d", "sub", "20-eviction.conf"), "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nevictionHard:\n  nodefs.available: 5%\nsystemReserved: null\n")
	write(t, filepath.Join(dir, "conf.d", ".hidden.conf"), "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nsyncFrequency: 45s\n")
	write(t, filepath.Join(dir, "conf.d", "ignored.yaml"), "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: 1\n")
	args := []string{
		"--config=" + filepath.Join(dir, "config.yaml"),
		"--config-dir=" + filepath.Join(dir, "conf.d"),
		"--root-dir=" + filepath.Join(dir, "root"),
		"--cert-dir=" + filepath.Join(dir, "pki"),
		"--max-pods=70",
		"--eviction-soft=memory.available<80Mi",
		"--eviction-soft-grace-period=memory.available=30s",
		"--v=2",
	}

	got, stop := runKubelet(t, kubelet, args, filepath.Join(dir, "kubelet.log"))
	defer stop()
	res, err := effective.Compute(effective.Input{Setup: node.Given(v, args...)})
	if err != nil {
		t.Fatal(err)
	}
	want, err := config.JSON(res.Running(), v)
	if err != nil {
		t.Fatal(err)
	}
	var wantMap, gotMap map[string]any
	if err := json.Unmarshal(want, &wantMap); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(got, &gotMap); err != nil {
		t.Fatal(err)
	}
	delete(gotMap, "apiVersion") // /configz serves the type meta too
	delete(gotMap, "kind")
	if diff := cmp.Diff(gotMap, wantMap); diff != "" {
		t.Errorf("kubeletcfg effective differs from the running kubelet's /configz (-configz +kubeletcfg):\n%s", diff)
	}
	if gotMap["maxPods"] != float64(70) {
		t.Errorf("the flag should win: maxPods = %v", gotMap["maxPods"])
	}

	// diff --live, from the command line, against the running kubelet.
	bin := filepath.Join(dir, "kubeletcfg")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/kubeletcfg").CombinedOutput(); err != nil {
		t.Fatalf("build kubeletcfg: %v\n%s", err, out)
	}
	live := []string{"diff", "--live", "--insecure", "--kubelet-version", v.Minor}
	out, err := exec.Command(bin, append(append(live, "--"), args...)...).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "no change") {
		t.Errorf("diff --live of the setup the kubelet runs: %v\n%s", err, out)
	}
	drifted := filepath.Join(dir, "drifted.yaml")
	write(t, drifted, "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncgroupDriver: cgroupfs\nfailCgroupV1: false\nmaxPods: 70\n")
	out, err = exec.Command(bin, append(live, drifted)...).CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), "evictionHard") {
		t.Errorf("diff --live against another file: want exit 1 and evictionHard among the changes, got %v\n%s", err, out)
	}

	// diff --live through a real API server's node proxy, with a kubeconfig.
	api := startAPIServer(t, dir)
	api.registerNode(t, "e2e-node")
	proxied := []string{"diff", "--live", "--kubeconfig", api.Kubeconfig, "--node", "e2e-node", "--kubelet-version", v.Minor}
	out, err = exec.Command(bin, append(append(proxied, "--"), args...)...).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "no change") {
		t.Errorf("diff --live through the API server: %v\n%s", err, out)
	}
	out, err = exec.Command(bin, append(proxied, "-o", "json", drifted)...).Output()
	var report struct {
		Old     string `json:"old"`
		Changes []struct {
			Path string `json:"path"`
		} `json:"changes"`
	}
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || json.Unmarshal(out, &report) != nil ||
		report.Old != api.URL+"/api/v1/nodes/e2e-node/proxy/configz" || !strings.Contains(string(out), `"path": "evictionHard"`) {
		t.Errorf("diff --live through the API server against another file: want exit 1, the proxy URL as old and evictionHard among the changes, got %v\n%s", err, out)
	}
	missing := []string{"diff", "--live", "--kubeconfig", api.Kubeconfig, "--node", "no-such-node", "--kubelet-version", v.Minor, drifted}
	out, err = exec.Command(bin, missing...).CombinedOutput()
	if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(string(out), "404") || !strings.Contains(string(out), "no-such-node") {
		t.Errorf("diff --live for a node the API server does not know: want exit 2 naming the node and 404, got %v\n%s", err, out)
	}
}

// unmountUnder detaches the mounts the kubelet left below dir (it bind-mounts
// its root directory onto itself).
func unmountUnder(dir string) {
	raw, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(line); len(f) > 1 && strings.HasPrefix(f[1], dir) {
			_ = syscall.Unmount(f[1], syscall.MNT_DETACH)
		}
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func saveSysctls(t *testing.T) func() {
	saved := map[string][]byte{}
	for _, s := range sysctls {
		if b, err := os.ReadFile("/proc/sys/" + s); err == nil {
			saved[s] = b
		}
	}
	return func() {
		for s, b := range saved {
			_ = os.WriteFile("/proc/sys/"+s, b, 0o644)
		}
	}
}

// startContainerd runs containerd with its own state and socket; cri is
// more of its CRI plugin's section (keys, then subsections).
func startContainerd(t *testing.T, dir string, cri ...string) string {
	t.Helper()
	sock := filepath.Join(dir, "containerd.sock")
	cfg := filepath.Join(dir, "containerd.toml")
	write(t, cfg, fmt.Sprintf(`version = 2
root = %q
state = %q
[grpc]
  address = %q
[plugins."io.containerd.grpc.v1.cri"]
  restrict_oom_score_adj = true
`, filepath.Join(dir, "containerd-root"), filepath.Join(dir, "containerd-state"), sock)+strings.Join(cri, ""))
	log, err := os.Create(filepath.Join(dir, "containerd.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("containerd", "--config", cfg)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatalf("containerd: %v (make e2e installs it)", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	for start := time.Now(); time.Since(start) < 20*time.Second; time.Sleep(100 * time.Millisecond) {
		if _, err := os.Stat(sock); err == nil {
			return sock
		}
	}
	out, _ := os.ReadFile(filepath.Join(dir, "containerd.log"))
	t.Fatalf("containerd did not open %s:\n%s", sock, tail(out))
	return ""
}

// runKubelet starts the kubelet, waits until it is healthy and stays up,
// reads /configz and stops it.
func runKubelet(t *testing.T, bin string, args []string, logPath string) ([]byte, func()) {
	t.Helper()
	log, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Env = append(os.Environ(), "KUBELET_CONFIG_DROPIN_DIR_ALPHA=")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
		}
		cancel()
	}
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			out, _ := os.ReadFile(logPath)
			stop()
			t.Fatalf("the kubelet exited (%v):\n%s", err, tail(out))
		default:
		}
		resp, err := client.Get("https://127.0.0.1:10250/configz")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				var wrapped struct {
					KubeletConfig json.RawMessage `json:"kubeletconfig"`
				}
				if err := json.Unmarshal(body, &wrapped); err != nil {
					stop()
					t.Fatalf("configz: %v: %s", err, body)
				}
				return wrapped.KubeletConfig, stop
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	out, _ := os.ReadFile(logPath)
	stop()
	t.Fatalf("no /configz within 60 s:\n%s", tail(out))
	return nil, stop
}

func tail(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 40 {
		lines = lines[len(lines)-40:]
	}
	return strings.Join(lines, "\n")
}

// fetchConfigz reads the running kubelet's /configz.
func fetchConfigz(t *testing.T) []byte {
	t.Helper()
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := client.Get("https://127.0.0.1:10250/configz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var wrapped struct {
		KubeletConfig json.RawMessage `json:"kubeletconfig"`
	}
	if err := json.Unmarshal(body, &wrapped); err != nil {
		t.Fatalf("configz: %v: %s", err, body)
	}
	return wrapped.KubeletConfig
}
