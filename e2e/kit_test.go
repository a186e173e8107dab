//go:build e2e

// Package e2e runs kubeletcfg against real parts: the kubelet, kube-apiserver,
// kube-controller-manager, etcd and kubeadm built from their modules by
// `make e2e`, containerd 2 built from its module (Debian's containerd 1.6 as
// the runtime without the CRI RuntimeConfig call), and systemd in a Debian
// tree booted with systemd-nspawn.
//
// The kit (kit_*_test.go) shares what is expensive across the tests of one
// `go test` run: kubeletcfg built once (plain and with failpoints), one
// control plane and one nspawn boot started on first use; every test gets a
// kubelet of its own (newNode, useSystemdNode). README.md says how to write a
// test with it.
package e2e

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// kit is what one `go test` run shares.
var kit struct {
	dir string // the run's scratch directory

	// kubeletcfg built once for the run, and with -tags failpoints
	// (KUBELETCFG_FAILPOINT and KUBELETCFG_HANGPOINT work in it).
	kubeletcfg, kubeletcfgFailpoints string

	mu       sync.Mutex
	teardown []func() // run in reverse order after the last test
}

func TestMain(m *testing.M) {
	os.Exit(runKit(m))
}

func runKit(m *testing.M) int {
	flag.Parse()
	endLeftovers()
	dir, err := os.MkdirTemp("", "kubeletcfg-e2e-run")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	kit.dir = dir
	if err := openRecord(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer closeRecord()
	defer func() { unmountUnder(dir); os.RemoveAll(dir) }()
	defer runTeardown()
	defer saveSysctls()()

	start := time.Now()
	for _, b := range []struct {
		out  *string
		tags []string
	}{{&kit.kubeletcfg, nil}, {&kit.kubeletcfgFailpoints, []string{"-tags", "failpoints"}}} {
		name := "kubeletcfg"
		if b.tags != nil {
			name += "-failpoints"
		}
		*b.out = filepath.Join(dir, "bin", name)
		args := append(append([]string{"build"}, b.tags...), "-o", *b.out, "../cmd/kubeletcfg")
		build := exec.Command("go", args...)
		// Static, as the image make image packs (rolloutImage packs this one).
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "go %s: %v\n%s", strings.Join(args, " "), err, out)
			return 1
		}
	}
	fmt.Fprintf(os.Stderr, "e2e kit: kubeletcfg built (plain and failpoints) in %s\n", time.Since(start).Round(time.Millisecond))
	return m.Run()
}

// atTeardown runs f after the last test of the run (last registered, first
// run): what is shared ends there.
func atTeardown(f func()) {
	kit.mu.Lock()
	defer kit.mu.Unlock()
	kit.teardown = append(kit.teardown, f)
}

func runTeardown() {
	kit.mu.Lock()
	fs := kit.teardown
	kit.teardown = nil
	kit.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
	// Whatever the run started and is still alive (a kubelet a guard
	// restarted after its test ended): by its recorded PID.
	endRecorded(recordPath(os.Getpid()))
}

// env is a setting make e2e gives (a binary's path, the kubelet's minor);
// the test fails without it.
func env(t testing.TB, name string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		t.Fatalf("%s is not set: run make e2e (see e2e/README.md)", name)
	}
	return v
}

// kubeletcfg runs the kubeletcfg of the run (with the failpoints build when
// env carries KUBELETCFG_FAILPOINT or KUBELETCFG_HANGPOINT) and returns its
// exit code (-1 when a signal killed it), stdout and stderr.
func kubeletcfg(t testing.TB, env []string, args ...string) (int, string, string) {
	t.Helper()
	bin := kit.kubeletcfg
	for _, e := range env {
		if strings.HasPrefix(e, "KUBELETCFG_FAILPOINT") || strings.HasPrefix(e, "KUBELETCFG_HANGPOINT") {
			bin = kit.kubeletcfgFailpoints
		}
	}
	cmd := exec.Command(bin, args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	return exitCode(t, cmd.Run()), out.String(), errOut.String()
}

// exitCode is a finished command's exit code (-1 when a signal ended it).
func exitCode(t testing.TB, err error) int {
	t.Helper()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0
}

func write(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// tail is the last 40 lines of a log.
func tail(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 40 {
		lines = lines[len(lines)-40:]
	}
	return strings.Join(lines, "\n")
}

func tailFile(path string) string {
	b, _ := os.ReadFile(path)
	return tail(b)
}

// waitFile waits until the file at p contains s.
func waitFile(t testing.TB, p, s string, d time.Duration) {
	t.Helper()
	for end := time.Now().Add(d); ; time.Sleep(50 * time.Millisecond) {
		if b, _ := os.ReadFile(p); strings.Contains(string(b), s) {
			return
		}
		if time.Now().After(end) {
			b, _ := os.ReadFile(p)
			t.Fatalf("%s does not hold %q after %s:\n%s", p, s, d, b)
		}
	}
}

// waitGone waits until nothing is at p.
func waitGone(t testing.TB, p string, d time.Duration) {
	t.Helper()
	for end := time.Now().Add(d); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Lstat(p); err != nil {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("%s is still there after %s", p, d)
		}
	}
}

func mustInt(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// unmountUnder detaches the mounts below dir (the kubelet bind-mounts its
// root directory onto itself; the nspawn tree is an overlay), deepest first.
func unmountUnder(dir string) {
	raw, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		return
	}
	var mounts []string
	for _, line := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(line); len(f) > 1 && (f[1] == dir || strings.HasPrefix(f[1], dir+"/")) {
			mounts = append(mounts, f[1])
		}
	}
	for i := len(mounts) - 1; i >= 0; i-- {
		_ = syscall.Unmount(mounts[i], syscall.MNT_DETACH)
	}
}

// The kubelet changes these; they are put back after each node and after
// the run.
var sysctls = []string{"vm/overcommit_memory", "kernel/panic", "kernel/panic_on_oops"}

func saveSysctls() (restore func()) {
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
