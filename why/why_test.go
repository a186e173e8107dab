package why

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	kubeletapis "k8s.io/kubelet/pkg/apis"

	"github.com/kubeletcfg/kubeletcfg/node"
)

// tree is a kubeadm-style node image: the unit, kubeadm's drop-in with its
// environment files, the config file and a drop-in directory.
type tree struct {
	config    string            // /var/lib/kubelet/config.yaml
	dropins   map[string]string // /etc/kubernetes/kubelet.conf.d/NAME
	extraArgs string            // KUBELET_EXTRA_ARGS in /etc/default/kubelet
}

const baseConfig = `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
`

func (tr tree) write(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	configDir := ""
	if tr.dropins != nil {
		configDir = " --config-dir=/etc/kubernetes/kubelet.conf.d"
	}
	files := map[string]string{
		"usr/lib/systemd/system/kubelet.service": "[Service]\nExecStart=/usr/bin/kubelet\n",
		"etc/systemd/system/kubelet.service.d/10-kubeadm.conf": `[Service]
Environment="KUBELET_KUBECONFIG_ARGS=--kubeconfig=/etc/kubernetes/kubelet.conf"
Environment="KUBELET_CONFIG_ARGS=--config=/var/lib/kubelet/config.yaml` + configDir + `"
EnvironmentFile=-/var/lib/kubelet/kubeadm-flags.env
EnvironmentFile=-/etc/default/kubelet
ExecStart=
ExecStart=/usr/bin/kubelet $KUBELET_KUBECONFIG_ARGS $KUBELET_CONFIG_ARGS $KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS
`,
		"var/lib/kubelet/kubeadm-flags.env": "KUBELET_KUBEADM_ARGS=\"--container-runtime-endpoint=unix:///run/containerd/containerd.sock\"\n",
		"etc/default/kubelet":               "KUBELET_EXTRA_ARGS=" + tr.extraArgs + "\n",
		"var/lib/kubelet/config.yaml":       firstOf(tr.config, baseConfig),
		"etc/kubernetes/kubelet.conf":       "apiVersion: v1\nkind: Config\n",
	}
	for name, content := range tr.dropins {
		files["etc/kubernetes/kubelet.conf.d/"+name] = content
	}
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// klogLine is a line as the kubelet writes it.
func klogLine(sev byte, pid int, file, msg string, kv ...string) string {
	s := fmt.Sprintf("%c1203 13:35:43.822523 %7d %s] %q", sev, pid, file, msg)
	for i := 0; i+1 < len(kv); i += 2 {
		s += fmt.Sprintf(" %s=%q", kv[i], kv[i+1])
	}
	return s
}

func commandFailed(pid int, err string) string {
	return klogLine('E', pid, "run.go:72", "command failed", "err", err)
}

func writeLog(t *testing.T, lines ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "kubelet.log")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func explainLog(t *testing.T, minor, root, log string) *Explanation {
	t.Helper()
	x, err := Explain(context.Background(), Options{
		Setup:      node.Source{Root: root, KubeletVersion: minor, VersionSet: true},
		KubeletLog: log,
	})
	if err != nil {
		t.Fatal(err)
	}
	return x
}

type want struct {
	class, field, flag, value, origin string
	fix                               []string // each in the fix
	notes                             []string // each in some note
}

func (w want) check(t *testing.T, x *Explanation) {
	t.Helper()
	if x.Version != ShapeVersion {
		t.Errorf("shape version %d", x.Version)
	}
	if x.Class != w.class {
		t.Errorf("class %q, want %q (words %q)", x.Class, w.class, x.Words)
	}
	if x.Field != w.field {
		t.Errorf("field %q, want %q", x.Field, w.field)
	}
	if x.Flag != w.flag {
		t.Errorf("flag %q, want %q", x.Flag, w.flag)
	}
	if w.value != "" && x.Value != w.value {
		t.Errorf("value %q, want %q", x.Value, w.value)
	}
	got := ""
	if x.Origin != nil {
		got = x.Origin.Text
	}
	if got != w.origin {
		t.Errorf("origin %q, want %q", got, w.origin)
	}
	for _, f := range w.fix {
		if !strings.Contains(x.Fix, f) {
			t.Errorf("fix %q lacks %q", x.Fix, f)
		}
	}
	for _, n := range w.notes {
		found := false
		for _, got := range x.Notes {
			found = found || strings.Contains(got, n)
		}
		if !found {
			t.Errorf("notes %q lack %q", x.Notes, n)
		}
	}
}

func TestExplainFromLog(t *testing.T) {
	for _, tc := range []struct {
		name  string
		minor string
		tree  tree
		lines []string
		want  want
	}{
		{
			name:  "unknown flag in an environment file",
			minor: "1.37",
			tree:  tree{extraArgs: "--no-such-flag=1"},
			lines: []string{commandFailed(970, "failed to parse kubelet flag: unknown flag: --no-such-flag")},
			want: want{class: "flag-unknown", flag: "no-such-flag", value: "1",
				origin: "flag --no-such-flag (from /etc/default/kubelet:1 ($KUBELET_EXTRA_ARGS))",
				fix:    []string{"remove --no-such-flag from /etc/default/kubelet:1 ($KUBELET_EXTRA_ARGS)"}},
		},
		{
			name:  "removed flag",
			minor: "1.37",
			tree:  tree{extraArgs: "--pod-infra-container-image=registry.k8s.io/pause:3.9"},
			lines: []string{commandFailed(971, "failed to parse kubelet flag: unknown flag: --pod-infra-container-image")},
			want: want{class: "flag-removed", flag: "pod-infra-container-image",
				origin: "flag --pod-infra-container-image (from /etc/default/kubelet:1 ($KUBELET_EXTRA_ARGS))",
				fix:    []string{"it was removed in kubelet 1.35"}},
		},
		{
			name:  "invalid flag value",
			minor: "1.37",
			tree:  tree{extraArgs: "--max-pods=abc"},
			lines: []string{commandFailed(972, `failed to parse kubelet flag: invalid argument "abc" for "--max-pods" flag: strconv.ParseInt: parsing "abc": invalid syntax`)},
			want: want{class: "flag-invalid", flag: "max-pods", field: "maxPods", value: "abc",
				origin: "flag --max-pods (from /etc/default/kubelet:1 ($KUBELET_EXTRA_ARGS))"},
		},
		{
			name:  "unknown gate on the command line",
			minor: "1.37",
			tree:  tree{extraArgs: "--feature-gates=NoSuchGate=true"},
			lines: []string{commandFailed(973, "failed to set feature gates from initial flags-based config: unrecognized feature gate: NoSuchGate")},
			want: want{class: "gate-unknown", field: "featureGates.NoSuchGate",
				origin: "flag --feature-gates (from /etc/default/kubelet:1 ($KUBELET_EXTRA_ARGS))",
				fix:    []string{"remove the gate NoSuchGate"}},
		},
		{
			name:  "locked gate in a drop-in: a panic",
			minor: "1.37",
			tree:  tree{dropins: map[string]string{"20-gates.conf": "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nfeatureGates:\n  KubeletCgroupDriverFromCRI: false\n"}},
			lines: []string{
				"panic: failed to merge global and in-flight KubeletConfiguration while setting defaults, error: cannot set feature gate KubeletCgroupDriverFromCRI to false, feature is locked to true",
				"",
				"goroutine 1 [running]:",
				"k8s.io/kubernetes/pkg/kubelet/apis/config/v1beta1.SetDefaults_KubeletConfiguration(0x902eace8a08)",
			},
			want: want{class: "gate-locked", field: "featureGates.KubeletCgroupDriverFromCRI", value: "false",
				origin: "/etc/kubernetes/kubelet.conf.d/20-gates.conf:4",
				fix:    []string{"locks it to true"}},
		},
		{
			name:  "gate dependency",
			minor: "1.37",
			tree:  tree{config: baseConfig + "featureGates:\n  GracefulNodeShutdown: false\n"},
			lines: []string{"panic: failed to merge global and in-flight KubeletConfiguration while setting defaults, error: [GracefulNodeShutdownBasedOnPodPriority is enabled, but depends on features that are disabled: [GracefulNodeShutdown], WindowsGracefulNodeShutdown is enabled, but depends on features that are disabled: [GracefulNodeShutdown]]"},
			want: want{class: "gate-dependency", field: "featureGates.GracefulNodeShutdown", value: "false",
				origin: "/var/lib/kubelet/config.yaml:5",
				fix:    []string{"enable [GracefulNodeShutdown] as well"}},
		},
		{
			name:  "invalid value in the config file",
			minor: "1.37",
			tree:  tree{config: baseConfig + "maxPods: -3\n"},
			lines: []string{commandFailed(974, "failed to validate kubelet configuration, error: invalid configuration: maxPods (--max-pods) -3 must not be a negative number, path: &TypeMeta{Kind:,APIVersion:,}")},
			want: want{class: "config-invalid", field: "maxPods", value: "-3",
				origin: "/var/lib/kubelet/config.yaml:4",
				fix:    []string{"maxPods at /var/lib/kubelet/config.yaml:4"}},
		},
		{
			name:  "cgroup v1 refused by default",
			minor: "1.37",
			tree:  tree{config: "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"},
			lines: []string{commandFailed(975, "failed to validate kubelet configuration, error: kubelet is configured to not run on a host using cgroup v1. cgroup v1 support is unsupported and will be removed in a future release, path: &TypeMeta{Kind:,APIVersion:,}")},
			want: want{class: "cgroup-v1", field: "failCgroupV1", value: "true",
				origin: "default (1.37)",
				fix:    []string{"set failCgroupV1: false in the config file"},
				notes:  []string{"failCgroupV1 is true by default from kubelet 1.35"}},
		},
		{
			name:  "kubelet port in use",
			minor: "1.37",
			lines: []string{klogLine('E', 976, "server.go:213", "Failed to listen and serve", "err", "listen tcp 0.0.0.0:10250: bind: address already in use")},
			want: want{class: "port-in-use", field: "port", value: "10250",
				origin: "default (1.37)",
				fix:    []string{"0.0.0.0:10250"}},
		},
		{
			name:  "read-only port in use",
			minor: "1.37",
			tree:  tree{config: baseConfig + "readOnlyPort: 10255\n"},
			lines: []string{klogLine('E', 977, "server.go:249", "Failed to listen and serve", "err", "listen tcp 0.0.0.0:10255: bind: address already in use")},
			want: want{class: "port-in-use", field: "readOnlyPort", value: "10255",
				origin: "/var/lib/kubelet/config.yaml:4"},
		},
		{
			name:  "client CA missing",
			minor: "1.37",
			tree:  tree{config: baseConfig + "authentication:\n  x509:\n    clientCAFile: /etc/kubernetes/pki/ca.crt\n"},
			lines: []string{commandFailed(978, "failed to run Kubelet: open /etc/kubernetes/pki/ca.crt: no such file or directory")},
			want: want{class: "client-ca-missing", field: "authentication.x509.clientCAFile", value: "/etc/kubernetes/pki/ca.crt",
				origin: "/var/lib/kubelet/config.yaml:6"},
		},
		{
			name:  "stale CPU manager checkpoint",
			minor: "1.37",
			tree:  tree{config: baseConfig + "cpuManagerPolicy: static\n"},
			lines: []string{klogLine('E', 979, "kubelet.go:1845", "Failed to start ContainerManager", "err", `start cpu manager error: could not restore state from checkpoint: configured policy "static" differs from state checkpoint policy "none", please drain this node and delete the CPU manager checkpoint file "/var/lib/kubelet/cpu_manager_state" before restarting Kubelet`)},
			want: want{class: "cpu-manager-state", field: "cpuManagerPolicy", value: "static",
				origin: "/var/lib/kubelet/config.yaml:4",
				fix:    []string{"delete /var/lib/kubelet/cpu_manager_state", "from none to static"}},
		},
		{
			name:  "reserved beyond capacity",
			minor: "1.37",
			tree:  tree{config: baseConfig + "kubeReserved:\n  memory: 1000Gi\n"},
			lines: []string{klogLine('E', 980, "kubelet.go:1845", "Failed to start ContainerManager", "err", `invalid Node Allocatable configuration. Resource "memory" has a reservation of {{1073842270208 0} {<nil>}  BinarySI} but capacity of {{8331350016 0} {<nil>} 8136084Ki BinarySI}. Expected capacity >= reservation.`)},
			want: want{class: "reserved-beyond-capacity", field: "kubeReserved.memory", value: "1048674092Ki",
				origin: "/var/lib/kubelet/config.yaml:5",
				fix:    []string{"8136084Ki", "kubeReserved.memory 1000Gi at /var/lib/kubelet/config.yaml:5"}},
		},
		{
			// The kubelet's sum left int64 (inf.Dec): %v prints a
			// pointer, not the total; the field's own value is said.
			name:  "reserved beyond capacity, the total not printed",
			minor: "1.37",
			tree:  tree{config: baseConfig + "kubeReserved:\n  memory: 100Ti\n"},
			lines: []string{klogLine('E', 980, "kubelet.go:1845", "Failed to start ContainerManager", "err", `invalid Node Allocatable configuration. Resource "memory" has a reservation of {{0 0} {0xc000d2e3a0}  BinarySI} but capacity of {{25275039744 0} {<nil>} 24682656Ki BinarySI}. Expected capacity >= reservation.`)},
			want: want{class: "reserved-beyond-capacity", field: "kubeReserved.memory", value: "100Ti",
				origin: "/var/lib/kubelet/config.yaml:5",
				fix:    []string{"24682656Ki", "kubeReserved.memory 100Ti at /var/lib/kubelet/config.yaml:5"}},
		},
		{
			name:  "systemd driver without systemd",
			minor: "1.34",
			tree:  tree{config: baseConfig + "cgroupDriver: systemd\n"},
			lines: []string{commandFailed(981, "failed to run Kubelet: failed to create kubelet: systemd not running on this host, cannot use systemd cgroups manager")},
			want: want{class: "cgroup-driver-systemd", field: "cgroupDriver", value: "systemd",
				origin: "/var/lib/kubelet/config.yaml:4",
				fix:    []string{"cgroupDriver: cgroupfs at /var/lib/kubelet/config.yaml:4", "takes the driver from the container runtime"}},
		},
		{
			name:  "swap on, 1.28 words",
			minor: "1.28",
			lines: []string{commandFailed(982, "failed to run Kubelet: running with swap on is not supported, please disable swap! or set --fail-swap-on flag to false. /proc/swaps contained: [Filename\tType\tSize\tUsed\tPriority /swapfile file 1024 0 -2]")},
			want: want{class: "swap-on", field: "failSwapOn", value: "true", origin: "default (1.28)",
				fix: []string{"set failSwapOn: false in the config file"}},
		},
		{
			name:  "unknown words: verbatim, never guessed",
			minor: "1.37",
			lines: []string{commandFailed(983, "failed to run Kubelet: something nobody has seen")},
			want:  want{class: "unknown", fix: []string{"does not guess"}},
		},
		{
			name:  "healthz port taken: never healthy",
			minor: "1.37",
			lines: []string{klogLine('E', 984, "server.go:993", "Failed to start healthz server", "err", "listen tcp 127.0.0.1:10248: bind: address already in use")},
			want:  want{class: "healthz-port-in-use", field: "healthzPort", value: "10248", origin: "default (1.37)"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := tc.tree.write(t)
			x := explainLog(t, tc.minor, root, writeLog(t, tc.lines...))
			tc.want.check(t, x)
			if x.Input.Trusted {
				t.Error("a log file is never trusted")
			}
		})
	}
}

// A log with two kubelets' lines: the last to start is explained; a panic
// of 100,000 lines is counted, not kept.
func TestLogLastStartAndLongPanic(t *testing.T) {
	lines := []string{
		klogLine('I', 100, "server.go:1", "Kubelet version", "kubeletVersion", "v1.37.2"),
		commandFailed(100, "failed to parse kubelet flag: unknown flag: --old"),
		klogLine('I', 200, "server.go:1", "Kubelet version", "kubeletVersion", "v1.37.2"),
		"panic: failed to merge global and in-flight KubeletConfiguration while setting defaults, error: unrecognized feature gate: Nope",
		"",
		"goroutine 1 [running]:",
	}
	for i := 0; i < 100000; i++ {
		lines = append(lines, "\tk8s.io/kubernetes/pkg/kubelet.(*Kubelet).Run(0xc000)")
	}
	x := explainLog(t, "1.37", tree{}.write(t), writeLog(t, lines...))
	if x.Class != "gate-unknown" {
		t.Fatalf("class %s (%q)", x.Class, x.Words)
	}
	if x.Process.PanicLines < 100000 || x.Process.PID != 200 {
		t.Errorf("process %+v", x.Process)
	}
	if len(x.Words) > maxPanicMsg {
		t.Errorf("words of %d bytes", len(x.Words))
	}
}

// klog's multi-line values (a value with newlines) are read whole.
func TestMultilineValue(t *testing.T) {
	lines := []string{
		`E1203 13:35:43.822523     300 run.go:72] "command failed" err=<`,
		"\tfailed to validate kubelet flags: unknown 'kubernetes.io' or 'k8s.io' labels specified with --node-labels: [node-role.kubernetes.io/worker]",
		"\t--node-labels in the 'kubernetes.io' namespace must begin with an allowed prefix (" + strings.Join(kubeletapis.KubeletLabelNamespaces(), ", ") + ") or be in the specifically allowed set (" + strings.Join(kubeletapis.KubeletLabels(), ", ") + ")",
		" >",
	}
	root := tree{extraArgs: "--node-labels=node-role.kubernetes.io/worker="}.write(t)
	x := explainLog(t, "1.37", root, writeLog(t, lines...))
	want{class: "node-labels", flag: "node-labels", value: "node-role.kubernetes.io/worker=",
		origin: "flag --node-labels (from /etc/default/kubelet:1 ($KUBELET_EXTRA_ARGS))"}.check(t, x)
}

// apply's restarted kubelet: its lines, on the layers apply planned.
func TestExplainLines(t *testing.T) {
	_, l := layersOn(t, baseConfig+"cgroupDriver: systemd\n")
	x := ExplainLines(l, []string{
		klogLine('I', 5, "server.go:1", "Kubelet version", "kubeletVersion", "v1.37.2"),
		commandFailed(5, "failed to run Kubelet: failed to create kubelet: systemd not running on this host, cannot use systemd cgroups manager"),
	}, Ending{Code: "exited", Status: "1/FAILURE"})
	want{class: "cgroup-driver-systemd", field: "cgroupDriver", value: "systemd", origin: "/var/lib/kubelet/config.yaml:4"}.check(t, x)
	if s := x.Summary(); !strings.Contains(s, "cgroupDriver=systemd from /var/lib/kubelet/config.yaml:4; fix: set cgroupDriver: cgroupfs") {
		t.Errorf("summary %q", s)
	}
	killed := ExplainLines(l, []string{klogLine('I', 5, "server.go:1", "Started kubelet")}, Ending{Code: "killed", Status: "9/KILL"})
	if killed.Class != "killed-signal" {
		t.Errorf("killed: %s", killed.Class)
	}
}
