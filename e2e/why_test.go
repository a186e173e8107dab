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

// whyNode is a kubelet started by hand from a unit file it does not run
// (kubeletcfg reads the command line from it, as --from does): the unit
// names the config file and the drop-in directory, an environment file
// adds KUBELET_EXTRA_ARGS.
type whyNode struct {
	t                      *testing.T
	kubelet, dir, sock     string
	minor                  string
	unit, env, cfg, dropin string
	bin                    string
}

func newWhyNode(t *testing.T) *whyNode {
	kubelet, minor, dir, sock := kubeletNode(t)
	n := &whyNode{t: t, kubelet: kubelet, minor: minor, dir: dir, sock: sock,
		unit: filepath.Join(dir, "kubelet.service"), env: filepath.Join(dir, "kubelet.env"),
		cfg: filepath.Join(dir, "config.yaml"), dropin: filepath.Join(dir, "conf.d", "50-case.conf")}
	write(t, n.cfg, trustBase(sock))
	write(t, n.unit, fmt.Sprintf(`[Service]
Environment="KUBELET_CONFIG_ARGS=--config=%s --config-dir=%s"
EnvironmentFile=%s
ExecStart=%s $KUBELET_CONFIG_ARGS --root-dir=%s --cert-dir=%s $KUBELET_EXTRA_ARGS
`, n.cfg, filepath.Dir(n.dropin), n.env, kubelet, filepath.Join(dir, "root"), filepath.Join(dir, "pki")))
	n.bin = filepath.Join(dir, "kubeletcfg")
	if out, err := exec.Command("go", "build", "-o", n.bin, "../cmd/kubeletcfg").CombinedOutput(); err != nil {
		t.Fatalf("build kubeletcfg: %v\n%s", err, out)
	}
	return n
}

// set writes the case's drop-in (its lines from line 3 on) and the
// environment file's KUBELET_EXTRA_ARGS (line 1).
func (n *whyNode) set(dropin, extraArgs string) {
	write(n.t, n.dropin, "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"+dropin)
	write(n.t, n.env, "KUBELET_EXTRA_ARGS="+extraArgs+"\n")
	write(n.t, n.cfg, trustBase(n.sock))
}

// args is the kubelet's command line as the unit gives it.
func (n *whyNode) args() []string {
	k, err := node.FromFiles("", []string{n.unit})
	if err != nil {
		n.t.Fatal(err)
	}
	return k.Args
}

// run starts the kubelet (wrap: a command it runs under) and returns
// whether it exited within limit, after which it is stopped.
func (n *whyNode) run(wrap []string, limit time.Duration, healthyFor time.Duration) (exited, healthy bool) {
	log := filepath.Join(n.dir, "kubelet.log")
	_ = os.Remove(log)
	f, err := os.Create(log)
	if err != nil {
		n.t.Fatal(err)
	}
	defer f.Close()
	argv := append(append(append([]string{}, wrap...), n.kubelet), n.args()...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		n.t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	client := &http.Client{Timeout: 200 * time.Millisecond}
	var healthySince time.Time
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			return true, false
		default:
		}
		if resp, err := client.Get("http://127.0.0.1:10248/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && healthySince.IsZero() {
				healthySince = time.Now()
			}
		}
		if !healthySince.IsZero() && time.Since(healthySince) > healthyFor {
			healthy = true
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Stop it (its process group: a wrapper's too).
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
	time.Sleep(200 * time.Millisecond) // ports released
	return false, healthy
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

func (n *whyNode) why(wrap ...string) (whyExplanation, string) {
	args := append(append([]string{}, wrap...), n.bin, "why", "--kubelet-version", n.minor, "--kubelet-log", filepath.Join(n.dir, "kubelet.log"), "--from", n.unit, "-o", "json")
	out, err := exec.Command(args[0], args[1:]...).Output()
	if err != nil && exitCode(n.t, err) == 2 {
		n.t.Fatalf("why: %v %s", err, out)
	}
	var x whyExplanation
	if err := json.Unmarshal(out, &x); err != nil {
		n.t.Fatalf("why: %v\n%s", err, out)
	}
	return x, string(out)
}

type preflightVerdict struct {
	Starts   bool
	Findings []struct{ Class, Status, Fact string }
}

func (n *whyNode) preflight(wrap ...string) preflightVerdict {
	args := append(append([]string{}, wrap...), n.bin, "preflight", "--kubelet-version", n.minor, "--from", n.unit, "-o", "json")
	out, err := exec.Command(args[0], args[1:]...).Output()
	if err != nil && exitCode(n.t, err) == 2 {
		n.t.Fatalf("preflight: %v %s", err, out)
	}
	var v preflightVerdict
	if err := json.Unmarshal(out, &v); err != nil {
		n.t.Fatalf("preflight: %v\n%s", err, out)
	}
	return v
}

// applyFix applies why's fix where it says: a line of a file goes (the
// value falls back to what is below it), a flag leaves the environment
// file; every origin the explanation lists.
func (n *whyNode) applyFix(x whyExplanation) {
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
	dir := n.dir
	write(t, filepath.Join(dir, "pod.yaml"), "apiVersion: v1\nkind: Pod\n")
	write(t, filepath.Join(dir, "cp.yaml"), "apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfiguration\nproviders: []\n")
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
		{name: "credential provider refused", env: "--image-credential-provider-config=" + filepath.Join(dir, "cp.yaml") + " --image-credential-provider-bin-dir=" + filepath.Join(dir, "cpbin"), class: "credential-provider", flag: "image-credential-provider-config", file: "env", line: 1},
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
				data, _ := os.ReadFile(n.cfg)
				write(t, n.cfg, string(data)+c.fixConfig)
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

	// Killed from outside: the log ends without a fatal error.
	t.Run("killed by a signal", func(t *testing.T) {
		n.t = t
		n.set("", "")
		log := filepath.Join(dir, "kubelet.log")
		f, _ := os.Create(log)
		cmd := exec.Command(n.kubelet, n.args()...)
		cmd.Stdout, cmd.Stderr = f, f
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waitHealthyAt(t, func() string { b, _ := os.ReadFile(log); return tail(b) })
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		f.Close()
		time.Sleep(200 * time.Millisecond)
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
	rootfs := os.Getenv("NSPAWN_ROOTFS")
	kubelet := os.Getenv("KUBELET_BIN")
	if rootfs == "" || kubelet == "" {
		t.Fatal("NSPAWN_ROOTFS and KUBELET_BIN are not set: run make e2e")
	}
	requireNoKubelet(t)
	defer saveSysctls(t)()
	bin := filepath.Join(t.TempDir(), "kubeletcfg")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/kubeletcfg").CombinedOutput(); err != nil {
		t.Fatalf("build kubeletcfg: %v\n%s", err, out)
	}
	in := func(p string) string { return filepath.Join(rootfs, p) }
	base := `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
containerRuntimeEndpoint: unix:///run/containerd/containerd.sock
cgroupDriver: cgroupfs
cgroupsPerQOS: false
enforceNodeAllocatable: []
failCgroupV1: false
authentication:
  anonymous:
    enabled: true
  webhook:
    enabled: false
authorization:
  mode: AlwaysAllow
`
	write(t, in("/var/lib/kubelet/config.yaml"), base)
	write(t, in("/etc/containerd/config.toml"), "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\"]\n  restrict_oom_score_adj = true\n")
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
	write(t, in("/etc/hostname"), "kcnode\n")
	write(t, in("/etc/hosts"), "127.0.0.1 localhost kcnode\n")
	os.Remove(in("/etc/systemd/system/multi-user.target.wants/kubelet.service"))
	if err := os.Symlink("/etc/systemd/system/kubelet.service", in("/etc/systemd/system/multi-user.target.wants/kubelet.service")); err != nil {
		t.Fatal(err)
	}
	// A persistent journal, which the host reads with --root.
	if err := os.MkdirAll(in("/var/log/journal"), 0o755); err != nil {
		t.Fatal(err)
	}
	defer func() {
		os.RemoveAll(in("/var/log/journal"))
		os.RemoveAll(in("/etc/kubernetes/kubelet.conf.d"))
		os.Remove(in("/etc/default/kubelet"))
		os.RemoveAll(in("/etc/systemd/system/kubelet.service.d"))
	}()

	tree := bootTree(t, rootfs, kubelet, bin)
	defer func() { tree.stop(false) }()
	inside := func(args ...string) (int, string) { return tree.inside(t, args...) }
	journal := func() string { _, out := inside("journalctl", "-u", "kubelet", "--no-pager", "-n", "30"); return out }
	waitHealthyAt(t, journal)

	// why, inside the tree (root "" = the running node), or from the host on
	// the tree's journal files; polled until the kubelet's failure is there.
	whyIn := func(t *testing.T, fromHost bool, want string) (whyExplanation, string) {
		t.Helper()
		var x whyExplanation
		var raw string
		for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(300 * time.Millisecond) {
			var out string
			if fromHost {
				b, _ := exec.Command(bin, "why", "--kubelet-version", "1.37", "--root", rootfs, "-o", "json").Output()
				out = string(b)
			} else {
				_, out = inside("/usr/local/bin/kubeletcfg", "why", "--kubelet-version", "1.37", "-o", "json")
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
		waitHealthyAt(t, journal)
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
		waitHealthyAt(t, journal)
	})

	// Without Restart=, what ended the kubelet stays its last start.
	write(t, in("/etc/systemd/system/kubelet.service.d/10-norestart.conf"), "[Service]\nRestart=no\n")
	if code, out := inside("systemctl", "daemon-reload"); code != 0 {
		t.Fatal(out)
	}
	restart(t)
	waitHealthyAt(t, journal)

	t.Run("killed by a signal", func(t *testing.T) {
		if code, out := inside("systemctl", "kill", "--signal=KILL", "kubelet"); code != 0 {
			t.Fatal(out)
		}
		x, raw := whyIn(t, false, "killed-signal")
		if x.Kind != "killed" || x.Field != "" {
			t.Errorf("why: %s", raw)
		}
		if code, _ := inside("/usr/local/bin/kubeletcfg", "why", "--kubelet-version", "1.37"); code != 0 {
			t.Errorf("why exits %d on a kubelet killed from outside, want 0", code)
		}
		restart(t)
		waitHealthyAt(t, journal)
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
	old := os.Getenv("KUBELET_134_BIN")
	if old == "" {
		t.Fatal("KUBELET_134_BIN is not set: make kubelet E2E_MINOR=1.34")
	}
	n := newWhyNode(t)
	n.kubelet, n.minor = old, "1.34"
	// The base config of these tests sets failCgroupV1: false; here it is
	// left to the version's default.
	trust := func() string { return strings.Replace(trustBase(n.sock), "failCgroupV1: false\n", "", 1) }
	starts := func(t *testing.T, dropin, env string) {
		t.Helper()
		n.t = t
		n.set(dropin, env)
		write(t, n.cfg, trust())
		pf := n.preflight()
		if _, healthy := n.run(nil, 30*time.Second, time.Second); !healthy {
			log, _ := os.ReadFile(filepath.Join(n.dir, "kubelet.log"))
			t.Fatalf("kubelet 1.34 does not start:\n%s", tail(log))
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
		write(t, n.cfg, trust())
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
