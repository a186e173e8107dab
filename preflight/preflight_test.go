package preflight

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubeletcfg/kubeletcfg/criruntime"
	"github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/why"
)

// fakeHost has the host facts a test gives; its files are those of a
// directory (the node's tree).
type fakeHost struct {
	imageHost
	v1, systemd bool
	swaps       []string
	listeners   map[int]string // port → process ("kubelet (pid 1)" is the kubelet)
	memory      int64
	cpus        int
}

func (f fakeHost) Live() bool              { return true }
func (f fakeHost) CgroupV1() (bool, bool)  { return f.v1, true }
func (f fakeHost) Swaps() ([]string, bool) { return f.swaps, true }
func (f fakeHost) Systemd() (bool, bool)   { return f.systemd, true }
func (f fakeHost) Memory() (int64, bool)   { return f.memory, true }
func (f fakeHost) CPUs() (int, bool)       { return f.cpus, true }
func (f fakeHost) Listener(port int) (string, bool, bool) {
	who := f.listeners[port]
	return who, strings.HasPrefix(who, "kubelet "), true
}

const base = `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
containerRuntimeEndpoint: unix:///c.sock
`

// node writes a node tree: the config file at /etc/kubelet.yaml, plus
// files (path → content).
func nodeTree(t *testing.T, config string, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	all := map[string]string{"etc/kubelet.yaml": base + config}
	for k, v := range files {
		all[k] = v
	}
	for name, content := range all {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The container runtime's socket.
	l, err := net.Listen("unix", filepath.Join(root, "c.sock"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return root
}

func check(t *testing.T, minor, root string, h Host, args ...string) *Result {
	t.Helper()
	res, err := Run(context.Background(), Options{
		Setup: node.Source{Root: root, KubeletVersion: minor, VersionSet: true, Args: append([]string{"--config=/etc/kubelet.yaml"}, args...), Dashed: true},
		Host:  h,
	})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func find(r *Result, class string) *Finding {
	for i := range r.Findings {
		if r.Findings[i].Class == class && r.Findings[i].Status != OK {
			return &r.Findings[i]
		}
	}
	return nil
}

func TestPreflight(t *testing.T) {
	healthy := func(root string) fakeHost {
		return fakeHost{imageHost: imageHost{root: root}, systemd: true, memory: 8 << 30, cpus: 4, listeners: map[int]string{}}
	}
	for _, tc := range []struct {
		name, minor, config string
		files               map[string]string
		args                []string
		host                func(fakeHost) fakeHost
		class, status       string // "" class: nothing refused or degraded
		origin              string
		fact                string
	}{
		{name: "healthy", minor: "1.37", config: "failCgroupV1: false\n", host: func(h fakeHost) fakeHost { h.v1 = true; return h }},
		{name: "cgroup v1, failCgroupV1 by default", minor: "1.37", host: func(h fakeHost) fakeHost { h.v1 = true; return h },
			class: "cgroup-v1", status: Refused, origin: "default (1.37)"},
		{name: "cgroup v1, 1.34 does not refuse it", minor: "1.34", host: func(h fakeHost) fakeHost { h.v1 = true; return h }},
		{name: "swap on", minor: "1.37", config: "failCgroupV1: false\n", host: func(h fakeHost) fakeHost { h.swaps = []string{"/swapfile"}; return h },
			class: "swap-on", status: Refused, fact: "/swapfile"},
		{name: "swap on, failSwapOn false", minor: "1.37", config: "failCgroupV1: false\nfailSwapOn: false\n", host: func(h fakeHost) fakeHost { h.swaps = []string{"/swapfile"}; return h }},
		{name: "systemd driver without systemd", minor: "1.37", config: "cgroupDriver: systemd\n", host: func(h fakeHost) fakeHost { h.systemd = false; return h },
			class: "cgroup-driver-systemd", status: Refused, origin: "/etc/kubelet.yaml:4"},
		{name: "port taken", minor: "1.37", host: func(h fakeHost) fakeHost { h.listeners[10250] = "nginx (pid 7)"; return h },
			class: "port-in-use", status: Refused, fact: "nginx (pid 7)"},
		{name: "port the running kubelet's", minor: "1.37", host: func(h fakeHost) fakeHost { h.listeners[10250] = "kubelet (pid 7)"; return h }},
		{name: "read-only port taken", minor: "1.37", config: "readOnlyPort: 10255\n", host: func(h fakeHost) fakeHost { h.listeners[10255] = "nc (pid 8)"; return h },
			class: "port-in-use", status: Refused, origin: "/etc/kubelet.yaml:4"},
		{name: "healthz port taken: degraded", minor: "1.37", host: func(h fakeHost) fakeHost { h.listeners[10248] = "nc (pid 9)"; return h },
			class: "healthz-port-in-use", status: Degraded},
		{name: "reserved beyond capacity", minor: "1.37", config: "kubeReserved:\n  memory: 10Gi\n",
			class: "reserved-beyond-capacity", status: Refused, origin: "/etc/kubelet.yaml:5", fact: "the host has 8Gi"},
		{name: "client CA missing", minor: "1.37", config: "authentication:\n  x509:\n    clientCAFile: /etc/ca.crt\n",
			class: "client-ca-missing", status: Refused, origin: "/etc/kubelet.yaml:6"},
		{name: "client CA there", minor: "1.37", config: "authentication:\n  x509:\n    clientCAFile: /etc/ca.crt\n", files: map[string]string{"etc/ca.crt": "x"}},
		{name: "kubeconfig missing", minor: "1.37", args: []string{"--kubeconfig=/etc/kubelet.conf"},
			class: "kubeconfig-missing", status: Refused, origin: "flag --kubeconfig"},
		{name: "kubeconfig from bootstrap", minor: "1.37", args: []string{"--kubeconfig=/etc/kubelet.conf", "--bootstrap-kubeconfig=/etc/boot.conf"}, files: map[string]string{"etc/boot.conf": "x"}},
		{name: "stale CPU manager checkpoint", minor: "1.37", config: "cpuManagerPolicy: static\n",
			files: map[string]string{"var/lib/kubelet/cpu_manager_state": `{"policyName":"none","defaultCpuSet":"","checksum":1}`},
			class: "cpu-manager-state", status: Refused, origin: "/etc/kubelet.yaml:4"},
		{name: "static pod path missing: degraded", minor: "1.37", config: "staticPodPath: /etc/kubernetes/manifests\n",
			class: "static-pod-path-missing", status: Degraded},
		{name: "logind's delay below the grace period: degraded", minor: "1.37", config: "shutdownGracePeriod: 30s\n",
			files: map[string]string{"etc/systemd/logind.conf.d/10-x.conf": "[Login]\nInhibitDelayMaxSec=10s\n"},
			class: "logind-inhibit-delay", status: Degraded, fact: "/etc/systemd/logind.conf.d/10-x.conf:2"},
		{name: "logind's delay enough", minor: "1.37", config: "shutdownGracePeriod: 30s\n",
			files: map[string]string{"etc/systemd/logind.conf": "[Login]\nInhibitDelayMaxSec=1min\n"}},
		{name: "invalid configuration: refused on any host", minor: "1.37", config: "maxPods: -3\n",
			class: "config-invalid", status: Refused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := nodeTree(t, tc.config, tc.files)
			h := healthy(root)
			if tc.host != nil {
				h = tc.host(h)
			}
			res := check(t, tc.minor, root, h, tc.args...)
			if tc.class == "" {
				for _, f := range res.Findings {
					if f.Status != OK {
						t.Errorf("unexpected %s %s: %s", f.Status, f.Class, f.Fact)
					}
				}
				if !res.Starts {
					t.Error("refused")
				}
				return
			}
			f := find(res, tc.class)
			if f == nil {
				t.Fatalf("no %s in %+v", tc.class, res.Findings)
			}
			if f.Status != tc.status {
				t.Errorf("status %s, want %s", f.Status, tc.status)
			}
			if res.Starts != (tc.status != Refused) {
				t.Errorf("starts %v with a %s finding", res.Starts, f.Status)
			}
			if tc.origin != "" && (f.Origin == nil || f.Origin.Text != tc.origin) {
				t.Errorf("origin %+v, want %s", f.Origin, tc.origin)
			}
			if !strings.Contains(f.Fact, tc.fact) {
				t.Errorf("fact %q lacks %q", f.Fact, tc.fact)
			}
			if f.Fix == "" {
				t.Error("no fix")
			}
		})
	}
}

// Under --root the host facts are conditions: never a refusal.
func TestPreflightImage(t *testing.T) {
	root := nodeTree(t, "cgroupDriver: systemd\n", nil)
	res := check(t, "1.37", root, nil)
	if !res.Starts || res.Live {
		t.Fatalf("starts %v live %v", res.Starts, res.Live)
	}
	for _, class := range []string{"cgroup-v1", "swap-on", "cgroup-driver-systemd", "port-in-use"} {
		f := find(res, class)
		if f == nil || f.Status != Condition {
			t.Errorf("%s: %+v", class, f)
		}
	}
	if !res.Warned() {
		t.Error("conditions are warnings")
	}
}

func TestTimeSpan(t *testing.T) {
	for in, want := range map[string]time.Duration{"5": 5 * time.Second, "30s": 30 * time.Second, "1min 30s": 90 * time.Second, "2m": 2 * time.Minute, "1.5": 1500 * time.Millisecond} {
		if got, err := timeSpan(in); err != nil || got != want {
			t.Errorf("%q: %v %v", in, got, err)
		}
	}
	if _, err := timeSpan("soon"); err == nil {
		t.Error("soon")
	}
	if got := parseSwaps("Filename Type Size Used Priority\n/swapfile file 1024 0 -2\n"); len(got) != 1 || got[0] != "/swapfile" {
		t.Errorf("swaps %q", got)
	}
	table := "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n   0: 00000000:280A 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 12345 1 0000000000000000 100 0 0 10 0\n"
	if got := listening(table, 10250); len(got) != 1 || got[0] != "12345" {
		t.Errorf("listening %q", got)
	}
}

// fakeRuntime answers RuntimeConfig with a driver.
type fakeRuntime struct{ driver string }

func (f fakeRuntime) Answer(context.Context, string) (*criruntime.Answer, error) {
	return &criruntime.Answer{Source: "fake", Driver: f.driver}, nil
}
func (fakeRuntime) CredentialProvider(*why.Layers, string, string) error { return nil }

// Where the kubelet takes the cgroup driver from the runtime, the
// runtime's answer decides (the seam for the CRI model).
func TestPreflightRuntimeDriver(t *testing.T) {
	root := nodeTree(t, "cgroupDriver: systemd\n", nil)
	h := fakeHost{imageHost: imageHost{root: root}, memory: 8 << 30, cpus: 4, listeners: map[int]string{}}
	for _, tc := range []struct {
		minor, driver string
		refused       bool
	}{
		{"1.37", "cgroupfs", false}, // the file's systemd is overridden
		{"1.37", "systemd", true},
		{"1.37", "", true},         // the runtime reports none: the file's
		{"1.30", "cgroupfs", true}, // 1.30 does not ask the runtime
	} {
		res, err := Check(context.Background(), layers(t, tc.minor, root), h, fakeRuntime{tc.driver}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := find(res, "cgroup-driver-systemd") != nil; got != tc.refused {
			t.Errorf("%s with the runtime's %q: refused %v, want %v", tc.minor, tc.driver, got, tc.refused)
		}
	}
}

// CRI: the runtime's answer read from containerd's configuration in the
// node's tree (criruntime's model) decides the driver a kubelet that asks
// runs, and preflight judges that one: the runtime's systemd on a host
// without systemd is refused with the runtime as origin and its file:line
// in the fix, whatever the kubelet's file says; containerd's cgroupfs
// clears a file's systemd; a containerd without its CRI stops the kubelet;
// containerd without runc options follows the host (no refusal).
func TestPreflightCRIDriver(t *testing.T) {
	const ctrd = "etc/containerd/config.toml"
	for _, tc := range []struct {
		name, minor, file, containerd string
		class, status                 string // "" status: no finding of class
		inFix                         string
	}{
		{"runtime systemd, file cgroupfs", "1.37", "cgroupfs", "version = 3\n[plugins.\"io.containerd.cri.v1.runtime\".containerd.runtimes.runc.options]\n  SystemdCgroup = true\n",
			"cgroup-driver-systemd", Refused, "config.toml:3"},
		{"runtime cgroupfs, file systemd", "1.37", "systemd", "version = 3\n[plugins.\"io.containerd.cri.v1.runtime\".containerd.runtimes.runc.options]\n  SystemdCgroup = false\n",
			"cgroup-driver-systemd", "", ""},
		{"1.30 does not ask", "1.30", "systemd", "version = 3\n[plugins.\"io.containerd.cri.v1.runtime\".containerd.runtimes.runc.options]\n  SystemdCgroup = false\n",
			"cgroup-driver-systemd", Refused, "cgroupDriver: cgroupfs"},
		{"1.30 with the runtime's systemd", "1.30", "cgroupfs", "version = 3\n[plugins.\"io.containerd.cri.v1.runtime\".containerd.runtimes.runc.options]\n  SystemdCgroup = true\n",
			"cgroup-driver-systemd", "", ""},
		{"no runc options: containerd follows the host", "1.37", "systemd", "version = 3\n",
			"cgroup-driver-systemd", "", ""},
		{"CRI disabled", "1.37", "cgroupfs", "version = 3\ndisabled_plugins = [\"io.containerd.grpc.v1.cri\"]\n",
			"runtime-unavailable", Refused, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := nodeTree(t, "cgroupDriver: "+tc.file+"\n", map[string]string{ctrd: tc.containerd})
			h := fakeHost{imageHost: imageHost{root: root}, memory: 8 << 30, cpus: 4, listeners: map[int]string{}}
			ask, err := criruntime.Ask(root, criruntime.AskOptions{Mode: criruntime.Config, ContainerdConfig: "/" + ctrd})
			if err != nil {
				t.Fatal(err)
			}
			res, err := Check(context.Background(), layers(t, tc.minor, root), h, CRI(ask), nil)
			if err != nil {
				t.Fatal(err)
			}
			f := find(res, tc.class)
			switch {
			case tc.status == "" && f != nil:
				t.Fatalf("%s: %+v, want none (notes %q)", tc.class, f, res.Notes)
			case tc.status == "":
				if !res.Starts {
					t.Fatalf("refused: %+v", res.Findings)
				}
				return
			case f == nil || f.Status != tc.status || res.Starts:
				t.Fatalf("%s: %+v, want %s (findings %+v)", tc.class, f, tc.status, res.Findings)
			}
			if !strings.Contains(f.Fix, tc.inFix) {
				t.Errorf("fix %q, want %q in it", f.Fix, tc.inFix)
			}
			if tc.minor == "1.37" && tc.class == "cgroup-driver-systemd" && (f.Value != "systemd" || f.Origin == nil || f.Origin.Kind != "runtime" || !strings.Contains(f.Fact, "runtime answers")) {
				t.Errorf("the runtime's driver: value %q origin %+v fact %q", f.Value, f.Origin, f.Fact)
			}
		})
	}
}

// CRI: the credential provider configuration is validated as the
// kubelet version does, its first problem a refusal.
func TestPreflightCRICredentialProvider(t *testing.T) {
	for _, tc := range []struct {
		name, config string
		refused      bool
	}{
		{"no providers", "apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfig\nproviders: []\n", true},
		{"a plugin not in the bin dir", "apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfig\nproviders:\n- name: ecr\n  apiVersion: credentialprovider.kubelet.k8s.io/v1\n  matchImages: [\"*.example.com\"]\n  defaultCacheDuration: 1m\n", true},
		{"valid", "apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfig\nproviders:\n- name: ecr\n  apiVersion: credentialprovider.kubelet.k8s.io/v1\n  matchImages: [\"*.example.com\"]\n  defaultCacheDuration: 1m\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{"etc/cp.yaml": tc.config}
			if !tc.refused {
				files["cpbin/ecr"] = "#!/bin/sh\n"
			} else {
				files["cpbin/other"] = ""
			}
			root := nodeTree(t, "", files)
			if !tc.refused {
				if err := os.Chmod(filepath.Join(root, "cpbin/ecr"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			h := fakeHost{imageHost: imageHost{root: root}, memory: 8 << 30, cpus: 4, listeners: map[int]string{}}
			src := node.Source{Root: root, KubeletVersion: "1.37", VersionSet: true, Dashed: true,
				Args: []string{"--config=/etc/kubelet.yaml", "--image-credential-provider-config=/etc/cp.yaml", "--image-credential-provider-bin-dir=/cpbin"}}
			v, err := node.ResolveVersion(src)
			if err != nil {
				t.Fatal(err)
			}
			l, err := why.ReadLayers(src, v, nil)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Check(context.Background(), l, h, CRI(nil), nil)
			if err != nil {
				t.Fatal(err)
			}
			var f *Finding
			for i := range res.Findings {
				if res.Findings[i].Class == "credential-provider" {
					f = &res.Findings[i]
				}
			}
			if f == nil {
				t.Fatalf("no credential-provider finding: %+v (not checked %+v)", res.Findings, res.NotChecked)
			}
			if got := f.Status == Refused; got != tc.refused || res.Starts == tc.refused || (!tc.refused && f.Status != OK) {
				t.Fatalf("%+v: refused %v, want %v", f, got, tc.refused)
			}
			if tc.refused && (f.Flag != "image-credential-provider-config" || !strings.Contains(f.Fact, "/etc/cp.yaml")) {
				t.Errorf("%+v", f)
			}
		})
	}
}

func layers(t *testing.T, minor, root string) *why.Layers {
	t.Helper()
	src := node.Source{Root: root, KubeletVersion: minor, VersionSet: true, Args: []string{"--config=/etc/kubelet.yaml"}, Dashed: true}
	v, err := node.ResolveVersion(src)
	if err != nil {
		t.Fatal(err)
	}
	l, err := why.ReadLayers(src, v, nil)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// What the layering refuses on any host is classified with the table as
// the kubelet would say it.
func TestPreflightRefusedOnAnyHost(t *testing.T) {
	root := nodeTree(t, "", nil)
	h := fakeHost{imageHost: imageHost{root: root}, memory: 8 << 30, cpus: 4, listeners: map[int]string{}}
	for _, tc := range []struct {
		args  []string
		class string
	}{
		{[]string{"--no-such=1"}, "flag-unknown"},
		{[]string{"--pod-infra-container-image=x"}, "flag-removed"},
		{[]string{"--max-pods=abc"}, "flag-invalid"},
		{[]string{"--feature-gates=Nope=true"}, "gate-unknown"},
		{[]string{"--config=/nonexistent.yaml"}, "config-unreadable"},
	} {
		res := check(t, "1.37", root, h, tc.args...)
		f := find(res, tc.class)
		if f == nil || f.Status != Refused || res.Starts {
			t.Errorf("%v: %+v", tc.args, res.Findings)
		}
	}
}

// A port this test process listens on is another program's on the live
// host, and the running kubelet's own when the host is told its PID.
func TestLiveHostKnowsTheKubeletByPID(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	who, self, ok := NewHost("").Listener(port)
	if !ok || self || !strings.Contains(who, fmt.Sprintf("(pid %d)", os.Getpid())) {
		t.Errorf("live host: %q self=%v ok=%v, want this process, not the kubelet", who, self, ok)
	}
	if _, self, ok := KubeletHost(os.Getpid()).Listener(port); !ok || !self {
		t.Errorf("told the kubelet's PID: self=%v ok=%v, want the kubelet's own port", self, ok)
	}
	if _, self, _ := KubeletHost(os.Getpid() + 1).Listener(port); self {
		t.Error("another PID's port taken for the kubelet's")
	}
}

// On the live host, --pid-file names the running kubelet: the port this
// test's process holds is refused as another program's without it and is
// the kubelet's own with it; a file without a PID is refused by name.
func TestRunWithPIDFile(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	dir := t.TempDir()
	config := filepath.Join(dir, "kubelet.yaml")
	port := l.Addr().(*net.TCPAddr).Port
	if err := os.WriteFile(config, []byte(fmt.Sprintf("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nport: %d\n", port)), 0o600); err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(dir, "kubelet.pid")
	src := node.Source{KubeletVersion: "1.37", VersionSet: true, Args: []string{"--config=" + config}, Dashed: true}
	portFinding := func(o Options) Finding {
		t.Helper()
		o.Setup = src
		res, err := Run(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range res.Findings {
			if f.Class == "port-in-use" && f.Field == "port" {
				return f
			}
		}
		t.Fatalf("no finding on port %d: %+v", port, res.Findings)
		return Finding{}
	}
	if f := portFinding(Options{}); f.Status != Refused {
		t.Errorf("without --pid-file: %s %s, want refused", f.Status, f.Fact)
	}
	os.WriteFile(pidFile, []byte(fmt.Sprintf("%d\n", os.Getpid())), 0o600)
	if f := portFinding(Options{PIDFile: pidFile}); f.Status != OK {
		t.Errorf("with --pid-file: %s %s, want the kubelet's own port", f.Status, f.Fact)
	}
	os.WriteFile(pidFile, []byte("kubelet\n"), 0o600)
	if _, err := Run(context.Background(), Options{Setup: src, PIDFile: pidFile}); err == nil || !strings.Contains(err.Error(), pidFile) {
		t.Errorf("a pid file without a PID: %v, want an error naming it", err)
	}
}
