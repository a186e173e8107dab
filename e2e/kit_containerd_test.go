//go:build e2e

package e2e

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// runtimeKind is the container runtime a kubelet of the kit runs on.
type runtimeKind string

const (
	// containerd2 is containerd v2.4.2 built from its Go module (make
	// containerd; CONTAINERD2_DIR) with Debian's runc: it answers the CRI
	// RuntimeConfig call, so a kubelet >= 1.34 takes its cgroup driver from
	// containerd (the runc options' SystemdCgroup), not from its own
	// cgroupDriver. The kit's default.
	containerd2 runtimeKind = "containerd2"
	// containerd16NoRuntimeConfig is Debian 12's containerd 1.6: it has no RuntimeConfig
	// call, so the kubelet falls back to its own cgroupDriver. A pairing
	// kubelet >= 1.35 does not support, kept as that case.
	containerd16NoRuntimeConfig runtimeKind = "containerd1.6-no-RuntimeConfig"
)

const (
	// podImage is the sandbox image and every test pod's: a static program
	// that waits for SIGTERM, imported (nothing can be pulled here).
	podImage = "e2e.local/pause:1"
	// cniBinDir is where Debian's containernetworking-plugins live.
	cniBinDir = "/usr/lib/cni"
)

// containerdOptions say how to run a containerd.
type containerdOptions struct {
	kind          runtimeKind // "" is containerd2
	systemdCgroup bool        // runc's SystemdCgroup (only under systemd: the nspawn tree)
	pods          *podNetwork // a CNI bridge and the pause image; nil: neither
	netns         string      // a network namespace to run in (its path); "" is this machine's
}

// podNetwork is a node's CNI bridge and pod subnet.
type podNetwork struct {
	bridge, subnet string
}

// containerd is a containerd the kit started, with its own config, socket,
// state and root directories.
type containerd struct {
	kind              runtimeKind
	dir, sock, config string
	ctr               string // the ctr that speaks to it
	d                 *daemon
}

// containerd2Dir is where make containerd put containerd 2, its shim and ctr.
func containerd2Dir(t testing.TB) string {
	t.Helper()
	return env(t, "CONTAINERD2_DIR")
}

// startContainerd runs a containerd in dir for the rest of the test.
func startContainerd(t *testing.T, dir string, o containerdOptions) *containerd {
	t.Helper()
	if o.kind == "" {
		o.kind = containerd2
	}
	c := &containerd{kind: o.kind, dir: dir, sock: filepath.Join(dir, "containerd.sock"), config: filepath.Join(dir, "containerd.toml")}
	write(t, c.config, containerdConfig(t, c, o))
	bin, environ := "containerd", os.Environ()
	c.ctr = "ctr"
	if o.kind == containerd2 {
		d := containerd2Dir(t)
		bin, c.ctr = filepath.Join(d, "containerd"), filepath.Join(d, "ctr")
		// Its own shim first: Debian's containerd-shim-runc-v2 (1.6) may be
		// on the PATH too.
		environ = append(environ, "PATH="+d+":"+os.Getenv("PATH"))
	}
	if o.pods != nil {
		// The network namespaces of pod sandboxes that appear during the
		// test are its own (e2e tests run one at a time).
		before := podNetns()
		t.Cleanup(func() {
			for name := range podNetns() {
				if !before[name] {
					_ = exec.Command("ip", "netns", "del", name).Run()
				}
			}
			_ = inNetns(o.netns, "ip", "link", "del", o.pods.bridge).Run()
		})
	}
	cmd := inNetns(o.netns, bin, "--config", c.config)
	d, err := startDaemon(string(o.kind), filepath.Join(dir, "containerd.log"), environ, cmd.Path, cmd.Args[1:]...)
	if err != nil {
		t.Fatalf("%v (make e2e installs Debian's containerd and builds containerd 2)", err)
	}
	c.d = d
	t.Cleanup(func() {
		c.killTasks()
		d.stop()
	})
	for start := time.Now(); time.Since(start) < 20*time.Second; time.Sleep(100 * time.Millisecond) {
		if _, err := os.Stat(c.sock); err == nil {
			if o.pods != nil {
				c.importPodImage(t)
			}
			return c
		}
		if d.exited() {
			break
		}
	}
	t.Fatalf("%s did not open %s:\n%s", o.kind, c.sock, d.tail())
	return nil
}

// containerdConfig is the config file of a containerd of the kit:
// restrict_oom_score_adj (root here lacks CAP_SYS_RESOURCE), runc's cgroup
// driver, and for pods the CNI bridge and the local sandbox image.
func containerdConfig(t *testing.T, c *containerd, o containerdOptions) string {
	t.Helper()
	var cni string
	if o.pods != nil {
		confDir := filepath.Join(c.dir, "cni")
		write(t, filepath.Join(confDir, "10-e2e.conflist"), fmt.Sprintf(`{"cniVersion": "0.4.0", "name": "e2e-pods", "plugins": [
  {"type": "bridge", "bridge": %q, "isGateway": true, "ipMasq": false,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": %q}]], "dataDir": %q}}]}
`, o.pods.bridge, o.pods.subnet, filepath.Join(c.dir, "cni-ipam")))
		cni = confDir
	}
	return containerdTOML(o.kind, filepath.Join(c.dir, "root"), filepath.Join(c.dir, "state"), c.sock, o.systemdCgroup, cni)
}

// containerdTOML is a containerd config (version 3 for containerd 2, 2 for
// 1.6); cniConfDir "" leaves CNI and the sandbox image at their defaults.
func containerdTOML(kind runtimeKind, root, state, sock string, systemdCgroup bool, cniConfDir string) string {
	var b strings.Builder
	if kind == containerd16NoRuntimeConfig {
		fmt.Fprintf(&b, "version = 2\n")
		if root != "" {
			fmt.Fprintf(&b, "root = %q\nstate = %q\n[grpc]\n  address = %q\n", root, state, sock)
		}
		fmt.Fprintf(&b, `[plugins."io.containerd.grpc.v1.cri"]
  restrict_oom_score_adj = true
`)
		if cniConfDir != "" {
			fmt.Fprintf(&b, "  sandbox_image = %q\n", podImage)
		}
		fmt.Fprintf(&b, `[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
  SystemdCgroup = %t
`, systemdCgroup)
		if cniConfDir != "" {
			fmt.Fprintf(&b, "[plugins.\"io.containerd.grpc.v1.cri\".cni]\n  bin_dir = %q\n  conf_dir = %q\n", cniBinDir, cniConfDir)
		}
		return b.String()
	}
	fmt.Fprintf(&b, "version = 3\n")
	if root != "" {
		fmt.Fprintf(&b, "root = %q\nstate = %q\n[grpc]\n  address = %q\n", root, state, sock)
	}
	fmt.Fprintf(&b, `[plugins.'io.containerd.cri.v1.runtime']
  restrict_oom_score_adj = true
[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
  runtime_type = 'io.containerd.runc.v2'
[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
  SystemdCgroup = %t
[plugins.'io.containerd.nri.v1.nri']
  disable = true
`, systemdCgroup)
	if cniConfDir != "" {
		fmt.Fprintf(&b, `[plugins.'io.containerd.cri.v1.runtime'.cni]
  bin_dirs = [%q]
  conf_dir = %q
[plugins.'io.containerd.cri.v1.images'.pinned_images]
  sandbox = %q
`, cniBinDir, cniConfDir, podImage)
	}
	return b.String()
}

// inNetns is a command that runs in the network namespace at netns (only
// that: nsenter, not ip netns exec, which would hide the cgroup mounts),
// or as it is when netns is "".
func inNetns(netns, bin string, args ...string) *exec.Cmd {
	if netns == "" {
		return exec.Command(bin, args...)
	}
	return exec.Command("nsenter", append([]string{"--net=" + netns, "--", bin}, args...)...)
}

// ctrCmd runs ctr against this containerd in the k8s.io namespace: its
// output (ctr 2 warns on stderr that cgroup v1 is deprecated), or an error
// with what it said on stderr.
func (c *containerd) ctrCmd(args ...string) (string, error) {
	cmd := exec.Command(c.ctr, append([]string{"-a", c.sock, "-n", "k8s.io"}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		err = fmt.Errorf("ctr %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), err
}

// killTasks kills the containers left running.
func (c *containerd) killTasks() {
	out, err := c.ctrCmd("tasks", "ls", "-q")
	if err != nil {
		return
	}
	for _, id := range strings.Fields(out) {
		_, _ = c.ctrCmd("tasks", "kill", "-s", "SIGKILL", id)
	}
	if out != "" {
		time.Sleep(300 * time.Millisecond)
	}
}

// waitNoTasks waits until no container runs, at most d.
func (c *containerd) waitNoTasks(d time.Duration) {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		if out, err := c.ctrCmd("tasks", "ls", "-q"); err != nil || out == "" {
			return
		}
	}
}

// importPodImage imports the pause image into containerd.
func (c *containerd) importPodImage(t *testing.T) {
	t.Helper()
	archive := podImageArchive(t)
	if out, err := c.ctrCmd("images", "import", archive); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}

var pauseImage struct {
	once sync.Once
	path string
	err  error
}

// podImageArchive builds, once a run, a static program that waits for
// SIGTERM and packs it as an image archive (docker save layout).
func podImageArchive(t *testing.T) string {
	t.Helper()
	pauseImage.once.Do(func() { pauseImage.path, pauseImage.err = buildPodImage(filepath.Join(kit.dir, "pause")) })
	if pauseImage.err != nil {
		t.Fatal(pauseImage.err)
	}
	return pauseImage.path
}

func buildPodImage(dir string) (string, error) {
	src := filepath.Join(dir, "main.go")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(src, []byte("package main\n\nimport (\n\t\"os\"\n\t\"os/signal\"\n\t\"syscall\"\n)\n\nfunc main() {\n\tc := make(chan os.Signal, 1)\n\tsignal.Notify(c, syscall.SIGTERM, syscall.SIGINT)\n\t<-c\n}\n"), 0o644); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "pause")
	build := exec.Command("go", "build", "-o", bin, src)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build the pause program: %v\n%s", err, out)
	}
	prog, err := os.ReadFile(bin)
	if err != nil {
		return "", err
	}
	var layer bytes.Buffer
	tw := tar.NewWriter(&layer)
	if err := tw.WriteHeader(&tar.Header{Name: "pause", Mode: 0o755, Size: int64(len(prog)), Typeflag: tar.TypeReg}); err != nil {
		return "", err
	}
	_, _ = tw.Write(prog)
	_ = tw.Close()
	config, _ := json.Marshal(map[string]any{
		"architecture": "amd64", "os": "linux",
		"config": map[string]any{"Entrypoint": []string{"/pause"}},
		"rootfs": map[string]any{"type": "layers", "diff_ids": []string{fmt.Sprintf("sha256:%x", sha256.Sum256(layer.Bytes()))}},
	})
	manifest, _ := json.Marshal([]map[string]any{{"Config": "config.json", "RepoTags": []string{podImage}, "Layers": []string{"layer.tar"}}})
	var image bytes.Buffer
	tw = tar.NewWriter(&image)
	for _, f := range []struct {
		name string
		data []byte
	}{{"layer.tar", layer.Bytes()}, {"config.json", config}, {"manifest.json", manifest}} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.data)), Typeflag: tar.TypeReg}); err != nil {
			return "", err
		}
		_, _ = tw.Write(f.data)
	}
	_ = tw.Close()
	archive := filepath.Join(dir, "image.tar")
	return archive, os.WriteFile(archive, image.Bytes(), 0o644)
}

// podNetns names the network namespaces containerd made for pod sandboxes.
func podNetns() map[string]bool {
	names := map[string]bool{}
	entries, _ := os.ReadDir("/var/run/netns")
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "cni-") {
			names[e.Name()] = true
		}
	}
	return names
}
