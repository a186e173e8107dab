//go:build e2e

package e2e

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The run's Debian tree (NSPAWN_ROOTFS, made by debootstrap) booted once
// with systemd-nspawn and shared by the tests that need a real systemd. It
// boots an overlay of the tree (the tree on disk is never written), with
// the kubelet at /usr/local/bin/kubelet, kubeletcfg (the failpoints build)
// at /usr/local/bin/kubeletcfg and containerd 2 at /opt/containerd2 bound
// in. The container shares this machine's network: its kubelet answers on
// 127.0.0.1:10248 and 10250, so no other kubelet may run meanwhile.

// nspawnTree is the booted tree.
type nspawnTree struct {
	dir   string // the overlay the container boots (host path)
	args  []string
	boot  *daemon
	init  int // the container's PID 1, as this machine sees it
	state string
}

var sharedTree struct {
	once sync.Once
	tree *nspawnTree
	err  error
}

// systemdOptions say how useSystemdNode sets the tree up for a test.
type systemdOptions struct {
	// runtime is the tree's containerd.service: containerd 2 ("") or
	// Debian's 1.6 of the tree.
	runtime runtimeKind
	// cgroupfs runs containerd 2's runc with the cgroupfs driver instead of
	// systemd's (containerd 1.6 always runs cgroupfs here).
	cgroupfs bool
}

// systemdNode is the shared tree set up for one test: the kubelet a
// systemd service (kubelet.service, enabled, Restart=always) on a fresh
// /var/lib/kubelet/config.yaml (Base, failCgroupV1 false, maxPods 100),
// containerd.service configured for the runtime and driver asked, no state
// of kubeletcfg; the kubelet healthy. When the test ends the kubelet unit
// and any kubeletcfg unit are stopped and kubeletcfg's state removed.
type systemdNode struct {
	tree         *nspawnTree
	Name, Minor  string
	Runtime      runtimeKind
	CgroupDriver string // what containerd's runc runs: systemd or cgroupfs
	// Base is the config file's lines every change keeps (the runtime
	// socket, cgroupsPerQOS false and no node allocatable enforcement: the
	// tree's cgroup v1 controllers are read-only, anonymous and
	// AlwaysAllow).
	Base string
}

// useSystemdNode boots the shared tree on first use and sets it up for the
// test.
func useSystemdNode(t *testing.T, o systemdOptions) *systemdNode {
	t.Helper()
	sharedTree.once.Do(func() {
		sharedTree.err = fmt.Errorf("the nspawn tree did not boot (see %s)", t.Name())
		sharedTree.tree = bootSharedTree(t)
		sharedTree.err = nil
	})
	if sharedTree.err != nil {
		t.Fatal(sharedTree.err)
	}
	requireNoKubelet(t)
	t.Cleanup(saveSysctls())
	if o.runtime == "" {
		o.runtime = containerd2
	}
	s := &systemdNode{tree: sharedTree.tree, Name: "kcnode", Minor: env(t, "KUBELET_VERSION"), Runtime: o.runtime, CgroupDriver: "systemd"}
	if o.cgroupfs || o.runtime == containerd16NoRuntimeConfig {
		s.CgroupDriver = "cgroupfs"
	}
	s.Base = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncontainerRuntimeEndpoint: unix:///run/containerd/containerd.sock\n" +
		"cgroupDriver: " + s.CgroupDriver + "\ncgroupsPerQOS: false\nenforceNodeAllocatable: []\n" +
		"authentication:\n  anonymous:\n    enabled: true\n  webhook:\n    enabled: false\nauthorization:\n  mode: AlwaysAllow\n"
	t.Cleanup(s.reset)
	s.reset()

	write(t, s.in("/var/lib/kubelet/config.yaml"), s.Base+"failCgroupV1: false\nmaxPods: 100\n")
	containerdUnit := s.in("/etc/systemd/system/containerd.service.d/10-e2e.conf")
	if o.runtime == containerd2 {
		write(t, containerdUnit, "[Service]\nEnvironment=PATH=/opt/containerd2:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\nExecStart=\nExecStart=/opt/containerd2/containerd\n")
	} else {
		os.Remove(containerdUnit)
	}
	write(t, s.in("/etc/containerd/config.toml"), containerdTOML(o.runtime, "", "", "", s.CgroupDriver == "systemd", ""))
	write(t, s.in("/etc/systemd/system/kubelet.service"), `[Unit]
Description=kubelet
After=containerd.service
[Service]
ExecStart=/usr/local/bin/kubelet --config=/var/lib/kubelet/config.yaml
Restart=always
RestartSec=2
[Install]
WantedBy=multi-user.target
`)
	if err := os.Symlink("/etc/systemd/system/kubelet.service", s.in("/etc/systemd/system/multi-user.target.wants/kubelet.service")); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range [][]string{{"systemctl", "daemon-reload"}, {"systemctl", "restart", "containerd"}} {
		if code, out := s.inside(t, cmd...); code != 0 {
			t.Fatalf("%s: exit %d\n%s", strings.Join(cmd, " "), code, out)
		}
	}
	if code, out := s.inside(t, "systemctl", "start", "kubelet"); code != 0 {
		t.Fatalf("systemctl start kubelet: exit %d\n%s", code, out)
	}
	s.waitHealthy(t)
	return s
}

// reset stops the kubelet and kubeletcfg's units, and removes the state of
// the kubelet and kubeletcfg and the units a test wrote.
func (s *systemdNode) reset() {
	for _, cmd := range [][]string{{"systemctl", "stop", "kubelet"}, {"systemctl", "stop", "kubeletcfg-*"},
		{"systemctl", "disable", "kubeletcfg-recover"}, {"systemctl", "reset-failed"}} {
		_, _, _ = s.tree.inside(cmd...)
	}
	for _, stale := range []string{"/var/lib/kubelet", "/var/lib/kubeletcfg", "/etc/systemd/system/kubeletcfg-*",
		"/etc/systemd/system/kubelet.service", "/etc/systemd/system/kubelet.service.d", "/etc/systemd/system/kubelet.service.wants",
		"/etc/systemd/system/multi-user.target.wants/kubelet.service", "/root/*.yaml"} {
		matches, _ := filepath.Glob(s.in(stale))
		for _, m := range matches {
			os.RemoveAll(m)
		}
	}
	_, _, _ = s.tree.inside("systemctl", "daemon-reload")
	removeKubeletCgroups("/")
}

// in is the host path of a path inside the tree.
func (s *systemdNode) in(p string) string { return filepath.Join(s.tree.dir, p) }

// inside runs a command in the tree's namespaces: its exit code and output.
func (s *systemdNode) inside(t testing.TB, args ...string) (int, string) {
	t.Helper()
	code, out, err := s.tree.inside(args...)
	if err != nil {
		t.Fatal(err)
	}
	return code, out
}

// waitHealthy waits until the tree's kubelet is healthy.
func (s *systemdNode) waitHealthy(t testing.TB) {
	t.Helper()
	waitHealthyAt(t, func() string {
		_, out, _ := s.tree.inside("journalctl", "-u", "kubelet", "--no-pager", "-n", "30")
		return out
	})
}

// powerCut kills the container at once (its PID 1: the kernel kills all
// of it), as a power cut would; boot starts it again on the same tree.
func (s *systemdNode) powerCut(t testing.TB) {
	t.Helper()
	s.tree.stop(true)
}

// boot boots the tree again after powerCut.
func (s *systemdNode) boot(t testing.TB) {
	t.Helper()
	if err := s.tree.start(); err != nil {
		t.Fatal(err)
	}
}

// bootSharedTree mounts the overlay and boots it until the end of the run.
func bootSharedTree(t testing.TB) *nspawnTree {
	t.Helper()
	rootfs := env(t, "NSPAWN_ROOTFS")
	base := filepath.Join(kit.dir, "nspawn")
	tree := &nspawnTree{dir: filepath.Join(base, "tree"), state: base}
	for _, d := range []string{"upper", "work", "tree", "containerd"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	opts := fmt.Sprintf("lowerdir=%s,upperdir=%s,workdir=%s", rootfs, filepath.Join(base, "upper"), filepath.Join(base, "work"))
	if err := syscall.Mount("overlay", tree.dir, "overlay", 0, opts); err != nil {
		t.Fatalf("mount the overlay of %s: %v", rootfs, err)
	}
	atTeardown(func() { _ = syscall.Unmount(tree.dir, syscall.MNT_DETACH) })
	write(t, filepath.Join(tree.dir, "/etc/hostname"), "kcnode\n")
	write(t, filepath.Join(tree.dir, "/etc/hosts"), "127.0.0.1 localhost kcnode\n")
	tree.args = []string{"-b", "-D", tree.dir, "--register=no", "--keep-unit",
		"--bind=/dev/kmsg", "--capability=CAP_SYSLOG", "--system-call-filter=@keyring",
		"--bind-ro=" + env(t, "KUBELET_BIN") + ":/usr/local/bin/kubelet",
		"--bind-ro=" + kit.kubeletcfgFailpoints + ":/usr/local/bin/kubeletcfg",
		// containerd's snapshots cannot live on the overlay.
		"--bind=" + filepath.Join(base, "containerd") + ":/var/lib/containerd"}
	if d := os.Getenv("CONTAINERD2_DIR"); d != "" {
		tree.args = append(tree.args, "--bind-ro="+d+":/opt/containerd2")
	}
	if err := tree.start(); err != nil {
		t.Fatal(err)
	}
	atTeardown(func() { tree.stop(false) })
	return tree
}

// start boots the tree and waits until its systemd runs.
func (n *nspawnTree) start() error {
	env := append(os.Environ(), "SYSTEMD_NSPAWN_API_VFS_WRITABLE=1")
	d, err := startDaemon("systemd-nspawn", filepath.Join(n.state, "nspawn.log"), env, "systemd-nspawn", n.args...)
	if err != nil {
		return fmt.Errorf("%v (make e2e installs systemd-container)", err)
	}
	n.boot = d
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline) && !d.exited(); time.Sleep(200 * time.Millisecond) {
		out, _ := exec.Command("pgrep", "-P", fmt.Sprint(d.pid())).Output()
		var pid int
		if _, err := fmt.Sscan(string(out), &pid); err != nil || pid == 0 {
			continue
		}
		state, _ := exec.Command("nsenter", "-t", fmt.Sprint(pid), "-a", "systemctl", "is-system-running").Output()
		if s := strings.TrimSpace(string(state)); s == "running" || s == "degraded" {
			n.init = pid
			record(pid)
			return nil
		}
	}
	d.stop()
	return fmt.Errorf("the container's systemd did not come up:\n%s", d.tail())
}

// stop shuts the tree down (SIGTERM to nspawn), or with kill cuts its power.
func (n *nspawnTree) stop(kill bool) {
	if kill {
		_ = syscall.Kill(n.init, syscall.SIGKILL)
		select {
		case <-n.boot.done:
		case <-time.After(20 * time.Second):
		}
	}
	n.boot.stop()
}

// inside runs a command in the tree's namespaces: its exit code (-1 when a
// signal ended it) and output, or the error that kept it from running.
func (n *nspawnTree) inside(args ...string) (int, string, error) {
	cmd := exec.Command("nsenter", append([]string{"-t", fmt.Sprint(n.init), "-a"}, args...)...)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), string(out), nil
	}
	return 0, string(out), err
}
