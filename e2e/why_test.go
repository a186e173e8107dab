//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubeletcfg/kubeletcfg/node"
)

// whyNode is a kit node (newNode) whose command line comes from a unit
// file it does not run (kubeletcfg reads it, as --from does): the unit
// names the config file and the drop-in directory, an environment file adds
// KUBELET_EXTRA_ARGS. The kubelet runs on Debian's containerd 1.6 (no
// RuntimeConfig): the config file's cgroupDriver is the one it runs, as
// preflight reads it without a model of the runtime.
type whyNode struct {
	t                 *testing.T
	n                 *kubeletNode
	minor             string
	unit, env, dropin string
	// base is the config file (n.Base by default).
	base string
}

func newWhyNode(t *testing.T) *whyNode {
	n := newNode(t, nodeOptions{noStart: true, runtime: containerd16NoRuntimeConfig})
	w := &whyNode{t: t, n: n, minor: n.Minor, base: n.Base,
		unit: filepath.Join(n.Dir, "kubelet.service"), env: filepath.Join(n.Dir, "kubelet.env"),
		dropin: filepath.Join(n.ConfigDir, "50-case.conf")}
	w.writeUnit()
	return w
}

// writeUnit writes the unit of the node's kubelet binary.
func (w *whyNode) writeUnit() {
	n := w.n
	write(w.t, w.unit, fmt.Sprintf(`[Service]
Environment="KUBELET_CONFIG_ARGS=--config=%s --config-dir=%s"
EnvironmentFile=%s
ExecStart=%s $KUBELET_CONFIG_ARGS --root-dir=%s --cert-dir=%s $KUBELET_EXTRA_ARGS
`, n.Config, n.ConfigDir, w.env, n.Kubelet, n.RootDir, n.CertDir))
}

// set writes the case's drop-in (its lines from line 3 on), the environment
// file's KUBELET_EXTRA_ARGS (line 1) and the base config file, and gives the
// node the command line the unit makes of them.
func (w *whyNode) set(dropin, extraArgs string) {
	write(w.t, w.dropin, "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"+dropin)
	write(w.t, w.env, "KUBELET_EXTRA_ARGS="+extraArgs+"\n")
	write(w.t, w.n.Config, w.base+"cgroupDriver: cgroupfs\n")
}

// args gives the node the command line the unit makes of its files now.
func (w *whyNode) args() {
	k, err := node.FromFiles("", []string{w.unit})
	if err != nil {
		w.t.Fatal(err)
	}
	w.n.setArgs(w.t, k.Args...)
}

// run starts the kubelet (wrap: a command it runs under, in the restart
// script) and says whether it exited within limit, or stayed healthy for
// healthyFor; then it is stopped.
func (w *whyNode) run(wrap []string, limit, healthyFor time.Duration) (exited, healthy bool) {
	n := w.n
	w.args()
	launch := ""
	if len(wrap) > 0 {
		quoted := []string{}
		for _, a := range append(append(append([]string{}, wrap...), n.Kubelet), n.Args...) {
			quoted = append(quoted, shellQuote(a))
		}
		launch = "setsid " + strings.Join(quoted, " ")
	}
	n.setLaunch(w.t, launch)
	pid := n.launchKubelet(w.t)
	defer func() { n.stop(); time.Sleep(200 * time.Millisecond) }()
	client := &http.Client{Timeout: 200 * time.Millisecond}
	var healthySince time.Time
	for end := time.Now().Add(limit); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if !running(pid) {
			return true, false
		}
		if resp, err := client.Get(n.healthzURL()); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && healthySince.IsZero() {
				healthySince = time.Now()
			}
		}
		if !healthySince.IsZero() && time.Since(healthySince) > healthyFor {
			return false, true
		}
	}
	return false, false
}

type whyExplanation struct {
	Class, Kind, Field, Flag, Value, Fix, Words string
	Origin                                      *whyOrigin
	Problems                                    []struct {
		Field, Flag string
		Origin      *whyOrigin
	}
}

type whyOrigin struct {
	Kind, File, Flag, Variable, Text string
	Line                             int
}

func (w *whyNode) why(wrap ...string) (whyExplanation, string) {
	args := append(append([]string{}, wrap...), kit.kubeletcfg, "why", "--kubelet-version", w.minor, "--kubelet-log", w.n.Log, "--from", w.unit, "-o", "json")
	out, err := exec.Command(args[0], args[1:]...).Output()
	if err != nil && exitCode(w.t, err) == 2 {
		w.t.Fatalf("why: %v %s", err, out)
	}
	var x whyExplanation
	if err := json.Unmarshal(out, &x); err != nil {
		w.t.Fatalf("why: %v\n%s", err, out)
	}
	return x, string(out)
}

type preflightVerdict struct {
	Starts   bool
	Findings []struct{ Class, Status, Fact string }
}

func (w *whyNode) preflight(wrap ...string) preflightVerdict {
	args := append(append([]string{}, wrap...), kit.kubeletcfg, "preflight", "--kubelet-version", w.minor, "--from", w.unit, "-o", "json")
	out, err := exec.Command(args[0], args[1:]...).Output()
	if err != nil && exitCode(w.t, err) == 2 {
		w.t.Fatalf("preflight: %v %s", err, out)
	}
	var v preflightVerdict
	if err := json.Unmarshal(out, &v); err != nil {
		w.t.Fatalf("preflight: %v\n%s", err, out)
	}
	return v
}

// applyFix applies why's fix where it says: a line of a file goes (the
// value falls back to what is below it), a flag leaves the environment
// file; every origin the explanation lists.
func (w *whyNode) applyFix(x whyExplanation) {
	n := w
	origins := []*whyOrigin{x.Origin}
	for _, p := range x.Problems {
		origins = append(origins, p.Origin)
	}
	lines := map[string][]int{}
	for _, o := range origins {
		if o == nil || o.Kind == "default" || o.Kind == "flags-default" {
			continue // a default is not where the node set anything
		}
		switch o.Kind {
		case "file", "dropin":
			lines[o.File] = append(lines[o.File], o.Line)
		case "flag":
			data, err := os.ReadFile(o.File)
			if err != nil {
				n.t.Fatalf("fix: %v", err)
			}
			var kept []string
			for _, w := range strings.Fields(strings.TrimPrefix(strings.TrimSpace(string(data)), o.Variable+"=")) {
				if name, _, _ := strings.Cut(strings.TrimLeft(w, "-"), "="); name != o.Flag {
					kept = append(kept, w)
				}
			}
			write(n.t, o.File, o.Variable+"="+strings.Join(kept, " ")+"\n")
		default:
			n.t.Fatalf("fix: an origin of kind %s is not a place to change", o.Kind)
		}
	}
	for file, nums := range lines {
		data, err := os.ReadFile(file)
		if err != nil {
			n.t.Fatalf("fix: %v", err)
		}
		all := strings.Split(string(data), "\n")
		sort.Sort(sort.Reverse(sort.IntSlice(nums)))
		for _, l := range nums {
			if l >= 1 && l <= len(all) {
				all = append(all[:l-1], all[l:]...)
			}
		}
		write(n.t, file, strings.Join(all, "\n"))
	}
}

// TestWhy produces, on the real kubelet, every class of the start-up table
// this host can produce, with the offending value in a drop-in, the
// environment file or a flag; kubeletcfg why names the class, the field or
// flag and the origin's file and line, and its fix, applied there, makes
// the kubelet start. For the classes that depend on the host, preflight's
// verdict beforehand is the kubelet's.
func TestWhy(t *testing.T) {
	n := newWhyNode(t)
	dir := n.n.Dir
	write(t, filepath.Join(dir, "pod.yaml"), "apiVersion: v1\nkind: Pod\n")
	write(t, filepath.Join(dir, "cp.yaml"), "apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfiguration\nproviders: []\n")
	write(t, filepath.Join(dir, "cp-none.yaml"), "apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfig\nproviders: []\n")
	if err := os.MkdirAll(filepath.Join(dir, "cpbin"), 0o755); err != nil {
		t.Fatal(err)
	}
	swaps := filepath.Join(dir, "swaps")
	write(t, swaps, "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n/swapfile                               file\t\t1048572\t\t0\t\t-2\n")
	// The kubelet and preflight see a swap area in a mount namespace of
	// their own (the machine's swap is never touched).
	withSwap := []string{"unshare", "--mount", "--propagation", "private", "sh", "-c", `mount --bind "$0" /proc/swaps && exec "$@"`, swaps}

	type tc struct {
		name, dropin, env string
		wrap              []string
		// host sets up a host fact and returns its undo (the fix there).
		host             func() func()
		class            string
		field, flag      string
		file             string // the origin's file (dropin, env, default)
		line             int
		fixConfig        string // for a default: what the fix writes into the config file
		preflightRefuses bool   // a host refusal preflight must see
	}
	var busy net.Listener
	cases := []tc{
		{name: "a healthy start leaves a CPU manager checkpoint", class: "none"},
		{name: "unknown flag", env: "--no-such-flag=1", class: "flag-unknown", flag: "no-such-flag", file: "env", line: 1},
		{name: "removed flag", env: "--pod-infra-container-image=registry.k8s.io/pause:3.9", class: "flag-removed", flag: "pod-infra-container-image", file: "env", line: 1},
		{name: "flag value", env: "--max-pods=abc", class: "flag-invalid", flag: "max-pods", field: "maxPods", file: "env", line: 1},
		{name: "invalid value", dropin: "maxPods: -3\n", class: "config-invalid", field: "maxPods", file: "dropin", line: 3},
		{name: "unknown gate", dropin: "featureGates:\n  NoSuchGate: true\n", class: "gate-unknown", field: "featureGates.NoSuchGate", file: "dropin", line: 4},
		{name: "locked gate", env: "--feature-gates=KubeletCgroupDriverFromCRI=false", class: "gate-locked", field: "featureGates.KubeletCgroupDriverFromCRI", file: "env", line: 1},
		{name: "gate dependency", dropin: "featureGates:\n  GracefulNodeShutdown: false\n", class: "gate-dependency", field: "featureGates.GracefulNodeShutdown", file: "dropin", line: 4},
		{name: "config unreadable", env: "--config=" + filepath.Join(dir, "missing.yaml"), class: "config-unreadable", flag: "config", file: "env", line: 1},
		{name: "not a KubeletConfiguration", env: "--config=" + filepath.Join(dir, "pod.yaml"), class: "config-not-kubeletconfiguration", flag: "config", file: "env", line: 1},
		{name: "cgroup v1 with failCgroupV1", dropin: "failCgroupV1: true\n", class: "cgroup-v1", field: "failCgroupV1", file: "dropin", line: 3, preflightRefuses: true},
		{name: "systemd driver without systemd", dropin: "cgroupDriver: systemd\n", class: "cgroup-driver-systemd", field: "cgroupDriver", file: "dropin", line: 3, preflightRefuses: true},
		{name: "reserved beyond capacity", dropin: "kubeReserved:\n  memory: 100Ti\n", class: "reserved-beyond-capacity", field: "kubeReserved.memory", file: "dropin", line: 4, preflightRefuses: true},
		{name: "port 10250 in use", class: "port-in-use", field: "port", file: "default", preflightRefuses: true,
			host: func() func() {
				l, err := net.Listen("tcp", "0.0.0.0:10250")
				if err != nil {
					t.Fatal(err)
				}
				busy = l
				return func() { busy.Close() }
			}},
		{name: "stale CPU manager checkpoint", dropin: "cpuManagerPolicy: static\nreservedSystemCPUs: \"0\"\n", class: "cpu-manager-state", field: "cpuManagerPolicy", file: "dropin", line: 3, preflightRefuses: true},
		{name: "client CA missing", dropin: "authentication:\n  x509:\n    clientCAFile: " + filepath.Join(dir, "missing-ca.crt") + "\n", class: "client-ca-missing", field: "authentication.x509.clientCAFile", file: "dropin", line: 5, preflightRefuses: true},
		{name: "TLS pair missing", dropin: "tlsCertFile: " + filepath.Join(dir, "missing.crt") + "\ntlsPrivateKeyFile: " + filepath.Join(dir, "missing.key") + "\n", class: "tls-pair-missing", field: "tlsCertFile", file: "dropin", line: 3, preflightRefuses: true},
		{name: "kubeconfig missing", env: "--kubeconfig=" + filepath.Join(dir, "missing.conf"), class: "kubeconfig-missing", flag: "kubeconfig", file: "env", line: 1, preflightRefuses: true},
		{name: "credential provider refused", env: "--image-credential-provider-config=" + filepath.Join(dir, "cp.yaml") + " --image-credential-provider-bin-dir=" + filepath.Join(dir, "cpbin"), class: "credential-provider", flag: "image-credential-provider-config", file: "env", line: 1, preflightRefuses: true},
		{name: "credential provider without providers", env: "--image-credential-provider-config=" + filepath.Join(dir, "cp-none.yaml") + " --image-credential-provider-bin-dir=" + filepath.Join(dir, "cpbin"), class: "credential-provider", flag: "image-credential-provider-config", file: "env", line: 1, preflightRefuses: true},
		{name: "swap on", wrap: withSwap, class: "swap-on", field: "failSwapOn", file: "default", fixConfig: "failSwapOn: false\n", preflightRefuses: true},
		{name: "forbidden node label", env: "--node-labels=node-role.kubernetes.io/worker=", class: "node-labels", flag: "node-labels", file: "env", line: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n.t = t
			n.set(c.dropin, c.env)
			undo := func() {}
			if c.host != nil {
				undo = c.host()
			}
			var pf preflightVerdict
			if c.preflightRefuses {
				pf = n.preflight(c.wrap...)
			}
			exited, healthy := n.run(c.wrap, 30*time.Second, time.Second)
			log, _ := os.ReadFile(filepath.Join(dir, "kubelet.log"))
			if c.class == "none" {
				undo()
				if !healthy {
					t.Fatalf("the kubelet did not turn healthy:\n%s", tail(log))
				}
				return
			}
			if !exited {
				undo()
				t.Fatalf("the kubelet did not exit (healthy %v):\n%s", healthy, tail(log))
			}
			if c.preflightRefuses {
				refused := false
				for _, f := range pf.Findings {
					refused = refused || (f.Class == c.class && f.Status == "refused")
				}
				if pf.Starts || !refused {
					t.Errorf("preflight says starts=%v without a %s refusal, the kubelet refused: %+v", pf.Starts, c.class, pf.Findings)
				}
			}
			x, raw := n.why(c.wrap...)
			t.Logf("why: %s at %v: %s\nthe kubelet: %s", x.Class, x.Origin, x.Fix, x.Words)
			if x.Class != c.class || x.Field != c.field || x.Flag != c.flag {
				t.Fatalf("why: %s field %q flag %q, want %s %q %q\n%s\nthe kubelet:\n%s", x.Class, x.Field, x.Flag, c.class, c.field, c.flag, raw, tail(log))
			}
			file := map[string]string{"env": n.env, "dropin": n.dropin}[c.file]
			switch {
			case x.Origin == nil:
				t.Fatalf("why names no origin:\n%s", raw)
			case c.file == "default":
				if x.Origin.Kind != "default" {
					t.Fatalf("origin %+v, want the default", x.Origin)
				}
			case x.Origin.File != file || x.Origin.Line != c.line:
				t.Fatalf("origin %s:%d, want %s:%d\n%s", x.Origin.File, x.Origin.Line, file, c.line, raw)
			}
			// The fix, applied: the kubelet starts.
			undo()
			if c.file != "default" {
				n.applyFix(x)
			} else if c.fixConfig != "" {
				data, _ := os.ReadFile(n.n.Config)
				write(t, n.n.Config, string(data)+c.fixConfig)
			}
			if _, healthy := n.run(c.wrap, 30*time.Second, time.Second); !healthy {
				log, _ := os.ReadFile(filepath.Join(dir, "kubelet.log"))
				t.Fatalf("after the fix (%s) the kubelet does not start:\n%s", x.Fix, tail(log))
			}
		})
	}

	// Runs, never healthy: the healthz port taken.
	t.Run("healthz port in use", func(t *testing.T) {
		n.t = t
		n.set("", "")
		l, err := net.Listen("tcp", "127.0.0.1:10248")
		if err != nil {
			t.Fatal(err)
		}
		pf := n.preflight()
		if exited, _ := n.run(nil, 4*time.Second, time.Second); exited {
			l.Close()
			t.Fatal("the kubelet exited")
		}
		l.Close()
		x, raw := n.why()
		if x.Class != "healthz-port-in-use" || x.Field != "healthzPort" || x.Kind != "never-healthy" {
			t.Errorf("why: %s", raw)
		}
		degraded := false
		for _, f := range pf.Findings {
			degraded = degraded || (f.Class == "healthz-port-in-use" && f.Status == "degraded")
		}
		if !pf.Starts || !degraded {
			t.Errorf("preflight: %+v", pf)
		}
	})

	// Starts, degraded: a staticPodPath that is not there.
	t.Run("static pod path missing", func(t *testing.T) {
		n.t = t
		n.set("staticPodPath: "+filepath.Join(dir, "no-manifests")+"\n", "")
		pf := n.preflight()
		if exited, healthy := n.run(nil, 30*time.Second, time.Second); exited || !healthy {
			t.Fatalf("the kubelet exited %v, healthy %v", exited, healthy)
		}
		degraded := false
		for _, f := range pf.Findings {
			degraded = degraded || (f.Class == "static-pod-path-missing" && f.Status == "degraded")
		}
		if !pf.Starts || !degraded {
			t.Errorf("preflight: %+v", pf)
		}
	})

	// The read-only port taken: the kubelet exits, as for its port.
	t.Run("read-only port in use", func(t *testing.T) {
		n.t = t
		n.set("readOnlyPort: 10255\n", "")
		l, err := net.Listen("tcp", "0.0.0.0:10255")
		if err != nil {
			t.Fatal(err)
		}
		pf := n.preflight()
		exited, _ := n.run(nil, 30*time.Second, time.Second)
		l.Close()
		if !exited {
			t.Fatal("the kubelet did not exit")
		}
		refused := false
		for _, f := range pf.Findings {
			refused = refused || (f.Class == "port-in-use" && f.Status == "refused" && strings.Contains(f.Fact, "10255"))
		}
		if pf.Starts || !refused {
			t.Errorf("preflight: %+v", pf)
		}
	})

	// Killed from outside: the log ends without a fatal error.
	t.Run("killed by a signal", func(t *testing.T) {
		n.t = t
		n.set("", "")
		n.args()
		n.n.setLaunch(t, "")
		pid := n.n.launchKubelet(t)
		n.n.waitHealthy(t)
		_ = syscall.Kill(pid, syscall.SIGKILL)
		for end := time.Now().Add(5 * time.Second); running(pid) && time.Now().Before(end); {
			time.Sleep(20 * time.Millisecond)
		}
		x, raw := n.why()
		if x.Kind != "none" || x.Field != "" {
			t.Errorf("a kubelet killed by SIGKILL: %s", raw)
		}
	})
}

// TestWhyUnderSystemd runs the kubelet as a systemd service in the nspawn
// tree: why reads the unit's journal (inside the tree, and from the host
// with --root on the tree's journal files), names the class and the origin
// in the unit's environment file or a drop-in, and the fix, applied there,
// makes the kubelet start; a kubelet killed by a signal, and one stopped by
// systemd, is said not to be the configuration.
func TestWhyUnderSystemd(t *testing.T) {
	s := useSystemdNode(t, systemdOptions{})
	in := s.in
	write(t, in("/var/lib/kubelet/config.yaml"), s.Base+"failCgroupV1: false\n")
	write(t, in("/etc/default/kubelet"), "KUBELET_EXTRA_ARGS=\n")
	dropin := in("/etc/kubernetes/kubelet.conf.d/50-case.conf")
	// With a --config-dir the kubelet (1.32+) merges the drop-ins onto the
	// file's JSON, where an empty list is left out: the drop-in says it again.
	head := "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncgroupsPerQOS: false\nenforceNodeAllocatable: []\n"
	write(t, dropin, head)
	write(t, in("/etc/systemd/system/kubelet.service"), `[Unit]
Description=kubelet
After=containerd.service
[Service]
EnvironmentFile=-/etc/default/kubelet
ExecStart=/usr/local/bin/kubelet --config=/var/lib/kubelet/config.yaml --config-dir=/etc/kubernetes/kubelet.conf.d $KUBELET_EXTRA_ARGS
Restart=always
RestartSec=2
[Install]
WantedBy=multi-user.target
`)
	// A persistent journal, which the host reads with --root.
	if err := os.MkdirAll(in("/var/log/journal"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		os.RemoveAll(in("/etc/kubernetes/kubelet.conf.d"))
		os.Remove(in("/etc/default/kubelet"))
	})
	inside := func(args ...string) (int, string) { return s.inside(t, args...) }
	for _, cmd := range [][]string{{"journalctl", "--flush"}, {"systemctl", "daemon-reload"}, {"systemctl", "restart", "kubelet"}} {
		if code, out := inside(cmd...); code != 0 {
			t.Fatalf("%s: %s", strings.Join(cmd, " "), out)
		}
	}
	journal := func() string { _, out := inside("journalctl", "-u", "kubelet", "--no-pager", "-n", "30"); return out }
	s.waitHealthy(t)
	rootfs := in("/")

	// why, inside the tree (root "" = the running node), or from the host on
	// the tree's journal files; polled until the kubelet's failure is there.
	whyIn := func(t *testing.T, fromHost bool, want string) (whyExplanation, string) {
		t.Helper()
		var x whyExplanation
		var raw string
		for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(300 * time.Millisecond) {
			var out string
			if fromHost {
				b, _ := exec.Command(kit.kubeletcfg, "why", "--kubelet-version", s.Minor, "--root", rootfs, "-o", "json").Output()
				out = string(b)
			} else {
				_, out = inside("/usr/local/bin/kubeletcfg", "why", "--kubelet-version", s.Minor, "-o", "json")
			}
			raw = out
			if i := strings.Index(out, "{"); i >= 0 {
				out = out[i:]
			}
			x = whyExplanation{}
			if json.Unmarshal([]byte(out), &x) == nil && x.Class == want {
				return x, raw
			}
		}
		t.Fatalf("why did not come to %s:\n%s\nthe journal:\n%s", want, raw, journal())
		return x, raw
	}
	restart := func(t *testing.T) {
		t.Helper()
		if code, out := inside("systemctl", "restart", "kubelet"); code != 0 {
			t.Fatalf("restart: %s", out)
		}
	}

	t.Run("a flag in the unit's environment file", func(t *testing.T) {
		write(t, in("/etc/default/kubelet"), "KUBELET_EXTRA_ARGS=--no-such-flag=1\n")
		restart(t)
		x, raw := whyIn(t, false, "flag-unknown")
		if x.Flag != "no-such-flag" || x.Origin == nil || x.Origin.File != "/etc/default/kubelet" || x.Origin.Line != 1 || x.Origin.Variable != "KUBELET_EXTRA_ARGS" {
			t.Fatalf("why: %s", raw)
		}
		write(t, in("/etc/default/kubelet"), "KUBELET_EXTRA_ARGS=\n")
		restart(t)
		s.waitHealthy(t)
	})

	t.Run("a value in a drop-in, read from the host with --root", func(t *testing.T) {
		write(t, dropin, head+"maxPods: -3\n")
		restart(t)
		x, raw := whyIn(t, true, "config-invalid")
		if x.Field != "maxPods" || x.Origin == nil || x.Origin.File != "/etc/kubernetes/kubelet.conf.d/50-case.conf" || x.Origin.Line != 5 {
			t.Fatalf("why --root: %s", raw)
		}
		if !strings.Contains(raw, `"trusted": true`) {
			t.Errorf("journal input not trusted: %s", raw)
		}
		write(t, dropin, head)
		restart(t)
		s.waitHealthy(t)
	})

	// Without Restart=, what ended the kubelet stays its last start.
	write(t, in("/etc/systemd/system/kubelet.service.d/10-norestart.conf"), "[Service]\nRestart=no\n")
	if code, out := inside("systemctl", "daemon-reload"); code != 0 {
		t.Fatal(out)
	}
	restart(t)
	s.waitHealthy(t)

	t.Run("killed by a signal", func(t *testing.T) {
		if code, out := inside("systemctl", "kill", "--signal=KILL", "kubelet"); code != 0 {
			t.Fatal(out)
		}
		x, raw := whyIn(t, false, "killed-signal")
		if x.Kind != "killed" || x.Field != "" {
			t.Errorf("why: %s", raw)
		}
		if code, _ := inside("/usr/local/bin/kubeletcfg", "why", "--kubelet-version", s.Minor); code != 0 {
			t.Errorf("why exits %d on a kubelet killed from outside, want 0", code)
		}
		restart(t)
		s.waitHealthy(t)
	})

	t.Run("stopped by systemd", func(t *testing.T) {
		if code, out := inside("systemctl", "stop", "kubelet"); code != 0 {
			t.Fatal(out)
		}
		x, raw := whyIn(t, false, "stopped")
		if x.Kind != "killed" {
			t.Errorf("why: %s", raw)
		}
	})
}

// TestWhyOlderMinor runs kubelet 1.34 (KUBELET_134_BIN) where its classes
// differ from 1.37's: no gate dependency check, failCgroupV1 false by
// default (a cgroup v1 host is refused only when it is set), a flag 1.37
// removed still there. preflight for 1.34 says what that kubelet does.
func TestWhyOlderMinor(t *testing.T) {
	old := env(t, "KUBELET_134_BIN")
	n := newWhyNode(t)
	n.n.Kubelet, n.minor = old, "1.34"
	n.writeUnit()
	// The base config of these tests sets failCgroupV1: false; here it is
	// left to the version's default.
	n.base = strings.Replace(n.n.Base, "failCgroupV1: false\n", "", 1)
	starts := func(t *testing.T, dropin, env string) {
		t.Helper()
		n.t = t
		n.set(dropin, env)
		pf := n.preflight()
		if _, healthy := n.run(nil, 30*time.Second, time.Second); !healthy {
			t.Fatalf("kubelet 1.34 does not start:\n%s", tailFile(n.n.Log))
		}
		if !pf.Starts {
			t.Errorf("preflight for 1.34 says it refuses: %+v", pf.Findings)
		}
	}
	t.Run("cgroup v1 host, failCgroupV1 left to 1.34's default: starts", func(t *testing.T) { starts(t, "", "") })
	t.Run("gate dependency: 1.34 has no such check", func(t *testing.T) { starts(t, "featureGates:\n  GracefulNodeShutdown: false\n", "") })
	t.Run("--pod-infra-container-image: still a flag of 1.34", func(t *testing.T) { starts(t, "", "--pod-infra-container-image=registry.k8s.io/pause:3.9") })
	t.Run("failCgroupV1 set: refused, explained, fixed", func(t *testing.T) {
		n.t = t
		n.set("failCgroupV1: true\n", "")
		pf := n.preflight()
		if exited, _ := n.run(nil, 30*time.Second, time.Second); !exited {
			t.Fatal("kubelet 1.34 did not exit")
		}
		if pf.Starts {
			t.Errorf("preflight for 1.34 says it starts: %+v", pf.Findings)
		}
		x, raw := n.why()
		if x.Class != "cgroup-v1" || x.Field != "failCgroupV1" || x.Origin == nil || x.Origin.File != n.dropin || x.Origin.Line != 3 {
			t.Fatalf("why: %s", raw)
		}
		n.applyFix(x)
		if _, healthy := n.run(nil, 30*time.Second, time.Second); !healthy {
			t.Fatal("after the fix kubelet 1.34 does not start")
		}
	})
}
