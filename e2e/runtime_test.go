//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubeletcfg/kubeletcfg/criruntime"
	"github.com/kubeletcfg/kubeletcfg/nodefile"
)

// TestRuntimeAnswersAsModelled runs the real containerd 2 (v2.4.2) on each
// configuration of criruntime's corpus and asks it RuntimeConfig as the
// kubelet does: its answer is what kubeletcfg's model of config.toml says,
// and a configuration the model says containerd does not start with (or
// serves no CRI with) is one the daemon exits on (or answers no CRI).
func TestRuntimeAnswersAsModelled(t *testing.T) {
	corpus, err := filepath.Abs("../criruntime/testdata/containerd")
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(corpus)
	if err != nil {
		t.Fatal(err)
	}
	root, err := nodefile.OpenRoot("/")
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	bin := filepath.Join(containerd2Dir(t), "containerd")
	env := append(os.Environ(), "PATH="+containerd2Dir(t)+":"+os.Getenv("PATH"))
	agreed := 0
	for _, e := range entries {
		t.Run(e.Name(), func(t *testing.T) {
			dir := t.TempDir()
			if err := copyRewritten(filepath.Join(corpus, e.Name()), dir, "/etc/containerd", filepath.Join(dir, "etc/containerd")); err != nil {
				t.Fatal(err)
			}
			conf := filepath.Join(dir, "etc/containerd/config.toml")
			if _, err := os.Stat(conf); err != nil {
				write(t, conf, "") // no file: an empty one reads as containerd's defaults
			}
			model, merr := criruntime.Containerd(root, criruntime.ContainerdOptions{Path: conf, Host: criruntime.LiveHost()})
			sock := filepath.Join(dir, "c.sock")
			d, err := startDaemon("containerd-"+e.Name(), filepath.Join(dir, "containerd.log"), env, bin,
				"--config", conf, "--address", sock, "--root", filepath.Join(dir, "root"), "--state", filepath.Join(dir, "state"))
			if err != nil {
				t.Fatal(err)
			}
			defer d.stop()
			up := false
			for start := time.Now(); time.Since(start) < 20*time.Second && !d.exited(); time.Sleep(50 * time.Millisecond) {
				if _, err := os.Stat(sock); err == nil {
					up = true
					break
				}
			}
			switch {
			case merr != nil || strings.Contains(model.Fatal, "containerd does not start"):
				for start := time.Now(); time.Since(start) < 5*time.Second && !d.exited(); time.Sleep(50 * time.Millisecond) {
				}
				if !d.exited() {
					t.Fatalf("the model says containerd does not start (%v %v); it runs", merr, model)
				}
				agreed++
				return
			case !up:
				t.Fatalf("containerd did not start (model: %s):\n%s", model, d.tail())
			}
			time.Sleep(300 * time.Millisecond) // its CRI plugin loads after the socket
			live, err := criruntime.Query(context.Background(), "unix://"+sock, criruntime.QueryOptions{Timeout: 10 * time.Second})
			if err != nil {
				t.Fatalf("asking containerd: %v", err)
			}
			switch {
			case model.Fatal != "":
				if live.Fatal == "" {
					t.Fatalf("the model says no CRI (%s); containerd answers %s", model.Fatal, live)
				}
			case live.Driver != model.Driver || model.Condition != "":
				t.Fatalf("containerd answers %s; the model says %s", live, model)
			}
			agreed++
			t.Logf("%s: %s; model: %s", e.Name(), live, model.Why)
		})
	}
	t.Logf("the real containerd 2.4.2 answers as modelled on %d of %d configurations", agreed, len(entries))
}

// copyRewritten copies a tree, replacing old with new in every file.
func copyRewritten(src, dst, old, new string) error {
	return filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(out, bytes.ReplaceAll(data, []byte(old), []byte(new)), 0o644)
	})
}

// effectiveDriver is what kubeletcfg effective -o json --show-origin says
// of the cgroup driver.
type effectiveDriver struct {
	Config map[string]struct {
		Value  any `json:"value"`
		Origin struct {
			Kind string `json:"kind"`
			From string `json:"from"`
		} `json:"origin"`
	} `json:"config"`
	CgroupDriver *criruntime.Decision `json:"cgroupDriver"`
}

func effectiveOf(t *testing.T, args ...string) effectiveDriver {
	t.Helper()
	code, out, errOut := kubeletcfg(t, nil, append([]string{"effective", "-o", "json", "--show-origin"}, args...)...)
	if code != 0 {
		t.Fatalf("effective: exit %d\n%s%s", code, out, errOut)
	}
	var e effectiveDriver
	if err := json.Unmarshal([]byte(out), &e); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return e
}

// TestKubeletRunsItsRuntimesDriver: a kubelet 1.37 whose file says systemd
// on containerd 2 with runc's cgroupfs driver runs cgroupfs (systemd's
// driver would stop it on this host) and serves it on /configz. effective
// says so with the runtime as origin, diff --live finds no drift, and a good
// change applied with --verify-configz is not rolled back — where reading
// the file alone (--runtime none) makes both fail. The values the kubelet
// derives from reservedSystemCPUs are served as effective's running
// configuration says.
func TestKubeletRunsItsRuntimesDriver(t *testing.T) {
	const reserved = "reservedSystemCPUs: \"0\"\nsystemReserved:\n  memory: 100Mi\nkubeReserved:\n  cpu: 100m\n  memory: 50Mi\n"
	n := newNode(t, nodeOptions{config: "cgroupDriver: systemd\nmaxPods: 100\n" + reserved})
	if got := configzField(t, "cgroupDriver"); got != "cgroupfs" {
		t.Fatalf("the kubelet runs the %v driver, want containerd's cgroupfs", got)
	}
	var cz struct {
		SystemReserved map[string]string `json:"systemReserved"`
		KubeReserved   map[string]string `json:"kubeReserved"`
	}
	if err := json.Unmarshal(fetchConfigz(t), &cz); err != nil {
		t.Fatal(err)
	}
	if cz.SystemReserved["cpu"] != "1" || cz.SystemReserved["memory"] != "100Mi" || cz.KubeReserved["cpu"] != "" || cz.KubeReserved["memory"] != "50Mi" {
		t.Errorf("/configz: systemReserved %v, kubeReserved %v: want the reserved CPUs' count in systemReserved, no cpu in kubeReserved", cz.SystemReserved, cz.KubeReserved)
	}

	e := effectiveOf(t, append([]string{"--kubelet-version", n.Minor, "--"}, n.Args...)...)
	cd := e.Config["cgroupDriver"]
	if cd.Value != "cgroupfs" || cd.Origin.Kind != "runtime" || !strings.Contains(cd.Origin.From, n.Runtime.sock) {
		t.Errorf("effective: cgroupDriver %v from %+v", cd.Value, cd.Origin)
	}
	if d := e.CgroupDriver; d == nil || d.Runs != "cgroupfs" || d.Configz != "cgroupfs" || d.Configured != "systemd" || !d.FromRuntime {
		t.Errorf("effective: %+v", e.CgroupDriver)
	}
	// The model of containerd's file says the same as its socket.
	e = effectiveOf(t, append([]string{"--kubelet-version", n.Minor, "--runtime", "config", "--containerd-config", n.Runtime.config, "--"}, n.Args...)...)
	if d := e.CgroupDriver; d == nil || d.Runs != "cgroupfs" || !strings.Contains(d.Source, n.Runtime.config) {
		t.Errorf("effective from containerd's config: %+v", e.CgroupDriver)
	}

	live := func(extra ...string) (int, string) {
		args := append([]string{"diff", "--live", "--insecure", "--kubelet-version", n.Minor}, extra...)
		code, out, errOut := kubeletcfg(t, nil, append(append(args, "--"), n.Args...)...)
		return code, out + errOut
	}
	if code, out := live(); code != 0 {
		t.Errorf("diff --live: exit %d, want no drift:\n%s", code, out)
	}
	if code, out := live("--runtime", "config", "--containerd-config", n.Runtime.config); code != 0 {
		t.Errorf("diff --live from containerd's config: exit %d:\n%s", code, out)
	}
	if code, out := live("--runtime", "none"); code != 1 || !strings.Contains(out, `cgroupDriver: "cgroupfs" -> "systemd"`) {
		t.Errorf("diff --live reading the file alone: exit %d, want the driver as drift:\n%s", code, out)
	}

	// preflight judges the driver the kubelet runs, its runtime's: no
	// refusal of the systemd driver (the kubelet runs, on this host
	// without systemd); on the file alone there is one. (Its ports are
	// taken by this kubelet, whose binary preflight does not take for a
	// kubelet by its name: not judged here.)
	if pf := preflightOf(t, append([]string{"--kubelet-version", n.Minor, "--"}, n.Args...)...); pf.find("cgroup-driver-systemd") != nil {
		t.Errorf("preflight on containerd 2's cgroupfs: %+v, want no refusal of the driver", pf)
	}
	if pf := preflightOf(t, append([]string{"--kubelet-version", n.Minor, "--runtime", "none", "--"}, n.Args...)...); pf.Starts || pf.find("cgroup-driver-systemd") == nil {
		t.Errorf("preflight on the file alone: %+v, want the systemd driver refused", pf)
	}

	// A good change on a node whose file and runtime disagree.
	apply := func(maxPods string, extra ...string) (int, string) {
		file := n.writeNew(t, "cgroupDriver: systemd\nmaxPods: "+maxPods+"\n"+reserved)
		args := append([]string{"-f", file, "--verify-configz", "--insecure", "--stable-for", "2s", "--health-timeout", "30s"}, extra...)
		code, out, errOut := kubeletcfg(t, nil, n.argv("apply", args...)...)
		return code, out + errOut
	}
	if code, out := apply("111"); code != 0 || !strings.Contains(out, "applied") {
		t.Fatalf("good change, file and runtime disagreeing: exit %d, want applied:\n%s", code, out)
	}
	if got := configzMaxPods(t); got != 111 {
		t.Errorf("/configz maxPods %v, want 111", got)
	}
	if code, out := apply("112", "--runtime", "none"); code != 3 || !strings.Contains(out, "cgroupDriver") {
		t.Errorf("the same change judged on the file alone: exit %d, want a rollback on cgroupDriver:\n%s", code, out)
	}
}

// preflightVerdictOf is kubeletcfg preflight -o json's verdict.
type preflightVerdictOf struct {
	Starts   bool
	Findings []struct {
		Class, Status, Fact, Value, Fix string
		Origin                          *struct{ Kind, Text string }
	}
	Notes []string
}

func (p preflightVerdictOf) find(class string) *struct {
	Class, Status, Fact, Value, Fix string
	Origin                          *struct{ Kind, Text string }
} {
	for i := range p.Findings {
		if p.Findings[i].Class == class && p.Findings[i].Status != "ok" {
			return &p.Findings[i]
		}
	}
	return nil
}

func preflightOf(t *testing.T, args ...string) preflightVerdictOf {
	t.Helper()
	code, out, errOut := kubeletcfg(t, nil, append([]string{"preflight", "-o", "json"}, args...)...)
	var p preflightVerdictOf
	if err := json.Unmarshal([]byte(out), &p); err != nil || code == 2 {
		t.Fatalf("preflight: exit %d %v\n%s%s", code, err, out, errOut)
	}
	if (code == 0) != p.Starts {
		t.Errorf("preflight: exit %d, starts %v", code, p.Starts)
	}
	return p
}

// TestPreflightRuntimesSystemdDriver: containerd 2 with runc's
// SystemdCgroup on this host, which has no systemd, and a kubelet 1.37
// whose file says cgroupfs: preflight says it refuses to start, the
// systemd driver from the runtime (the runtime as origin, its
// config.toml:line in the fix), and the real kubelet exits with systemd's
// words; on the file alone (--runtime none) preflight would have said it
// starts. Under --root the runtime's configuration says the same.
func TestPreflightRuntimesSystemdDriver(t *testing.T) {
	n := newNode(t, nodeOptions{noStart: true, systemdCgroup: true})
	pf := preflightOf(t, append([]string{"--kubelet-version", n.Minor, "--"}, n.Args...)...)
	f := pf.find("cgroup-driver-systemd")
	if pf.Starts || f == nil || f.Status != "refused" || f.Value != "systemd" || f.Origin == nil || f.Origin.Kind != "runtime" || !strings.Contains(f.Origin.Text, n.Runtime.sock) {
		t.Fatalf("preflight: %+v, want the runtime's systemd refused", pf)
	}
	t.Logf("preflight: %s; fix: %s", f.Fact, f.Fix)
	pc := preflightOf(t, append([]string{"--kubelet-version", n.Minor, "--runtime", "config", "--containerd-config", n.Runtime.config, "--"}, n.Args...)...)
	if fc := pc.find("cgroup-driver-systemd"); pc.Starts || fc == nil || !strings.Contains(fc.Fix, n.Runtime.config+":") {
		t.Errorf("preflight from containerd's config: %+v", pc)
	}
	if pn := preflightOf(t, append([]string{"--kubelet-version", n.Minor, "--runtime", "none", "--"}, n.Args...)...); !pn.Starts {
		t.Errorf("preflight on the file alone: %+v, want it starts (the file says cgroupfs)", pn)
	}
	pid := n.launchKubelet(t)
	for end := time.Now().Add(30 * time.Second); running(pid) && time.Now().Before(end); {
		time.Sleep(50 * time.Millisecond)
	}
	log, _ := os.ReadFile(n.Log)
	if running(pid) {
		t.Fatalf("the kubelet still runs:\n%s", tail(log))
	}
	if !strings.Contains(string(log), "systemd not running on this host, cannot use systemd cgroups manager") {
		t.Fatalf("the kubelet exited without systemd's words:\n%s", tail(log))
	}
}

// TestKubeletWithoutRuntimeConfig: on Debian's containerd 1.6, which has no
// RuntimeConfig (a pairing kubelet 1.37 does not support, kept as that
// case), the kubelet runs its file's driver; effective says the runtime
// reports none, and audit compares with containerd's configuration.
func TestKubeletWithoutRuntimeConfig(t *testing.T) {
	n := newNode(t, nodeOptions{runtime: containerd16NoRuntimeConfig})
	e := effectiveOf(t, append([]string{"--kubelet-version", n.Minor, "--"}, n.Args...)...)
	if d := e.CgroupDriver; d == nil || d.FromRuntime || d.Runs != "cgroupfs" || !strings.Contains(d.Why, "reports no driver") {
		t.Errorf("effective: %+v", e.CgroupDriver)
	}
	if cd := e.Config["cgroupDriver"]; cd.Origin.Kind != "file" || cd.Value != configzField(t, "cgroupDriver") {
		t.Errorf("effective: cgroupDriver %v from %+v; /configz %v", cd.Value, cd.Origin, configzField(t, "cgroupDriver"))
	}
	code, out, errOut := kubeletcfg(t, nil, append([]string{"diff", "--live", "--insecure", "--kubelet-version", n.Minor, "--"}, n.Args...)...)
	if code != 0 {
		t.Errorf("diff --live: exit %d:\n%s%s", code, out, errOut)
	}
	// A good change there, judged against /configz, is kept.
	file := n.writeNew(t, "cgroupDriver: cgroupfs\nmaxPods: 111\n")
	code, out, errOut = kubeletcfg(t, nil, n.argv("apply", "-f", file, "--verify-configz", "--insecure", "--stable-for", "2s", "--health-timeout", "30s")...)
	if code != 0 || !strings.Contains(out, "applied") || configzMaxPods(t) != 111 {
		t.Errorf("apply --verify-configz on containerd 1.6: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = kubeletcfg(t, nil, append([]string{"audit", "--section", "ops", "-o", "json", "--kubelet-version", n.Minor, "--containerd-config", n.Runtime.config, "--"}, n.Args...)...)
	var rep struct {
		Results []struct {
			ID     string `json:"id"`
			Status string `json:"status"`
			Detail string `json:"detail"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("audit: exit %d %v\n%s%s", code, err, out, errOut)
	}
	for _, r := range rep.Results {
		if r.ID == "ops.cgroupdriver" && (r.Status != "pass" || !strings.Contains(r.Detail, "uses cgroupfs")) {
			t.Errorf("audit ops.cgroupdriver on containerd 1.6: %s (%s)", r.Status, r.Detail)
		}
	}
}

// TestFleetRuntimeDriver: fleet reads a 1.37 node on containerd 2 whose
// /configz shows its runtime's driver (cgroupfs) against a file that says
// systemd: no drift, the driver shown as the node's own.
func TestFleetRuntimeDriver(t *testing.T) {
	n := newNode(t, nodeOptions{cluster: true, config: "cgroupDriver: systemd\nmaxPods: 100\n"})
	code, body := n.API.do(t, "GET", "/api/v1/nodes/"+n.Name+"/proxy/configz", "")
	if code != 200 || !strings.Contains(body, `"cgroupDriver":"cgroupfs"`) {
		t.Fatalf("the kubelet's /configz: %d %s; want containerd's cgroupfs", code, body)
	}
	var out, errOut string
	intended := filepath.Join(n.Dir, "intended.yaml")
	data, err := os.ReadFile(n.Config)
	if err != nil {
		t.Fatal(err)
	}
	write(t, intended, string(data))
	code, out, errOut = kubeletcfg(t, nil, "fleet", "--kubeconfig", n.API.Kubeconfig, "--against", intended, "--selector", "kubernetes.io/hostname="+n.Name, "-o", "json")
	var rep struct {
		Nodes []struct {
			Name    string         `json:"name"`
			Matches bool           `json:"matches"`
			PerNode map[string]any `json:"perNode"`
			Differs []struct {
				Path string `json:"path"`
			} `json:"differs"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("fleet: exit %d %v\n%s%s", code, err, out, errOut)
	}
	found := false
	for _, node := range rep.Nodes {
		if node.Name != n.Name {
			continue
		}
		found = true
		if !node.Matches || node.PerNode["cgroupDriver"] != "cgroupfs" {
			t.Errorf("fleet: %s matches %t, differs %v, per node %v", node.Name, node.Matches, node.Differs, node.PerNode)
		}
	}
	if !found || code != 0 {
		t.Errorf("fleet: exit %d, node %s found %t\n%s%s", code, n.Name, found, out, errOut)
	}
}

// TestSystemdDriverFromTheRuntime: in the nspawn tree (systemd as PID 1),
// containerd 2 with runc's SystemdCgroup: the kubelet whose file says
// cgroupfs runs systemd. effective under --root reads the tree's
// containerd config and says systemd, diff --live finds no drift, and a
// good change applied inside the tree with --verify-configz is kept.
func TestSystemdDriverFromTheRuntime(t *testing.T) {
	s := useSystemdNode(t, systemdOptions{})
	write(t, s.in("/var/lib/kubelet/config.yaml"), strings.Replace(s.Base, "cgroupDriver: systemd", "cgroupDriver: cgroupfs", 1)+"failCgroupV1: false\nmaxPods: 100\n")
	if code, out := s.inside(t, "systemctl", "restart", "kubelet"); code != 0 {
		t.Fatalf("restart: exit %d\n%s", code, out)
	}
	s.waitHealthy(t)
	if got := configzField(t, "cgroupDriver"); got != "systemd" {
		t.Fatalf("the kubelet runs %v, want containerd's systemd", got)
	}
	e := effectiveOf(t, "--root", s.in("/"), "--kubelet-version", s.Minor)
	if cd := e.Config["cgroupDriver"]; cd.Value != "systemd" || cd.Origin.Kind != "runtime" || !strings.Contains(cd.Origin.From, "/etc/containerd/config.toml") {
		t.Errorf("effective --root: cgroupDriver %v from %+v", cd.Value, cd.Origin)
	}
	code, out, errOut := kubeletcfg(t, nil, "diff", "--live", "--insecure", "--root", s.in("/"), "--kubelet-version", s.Minor)
	if code != 0 {
		t.Errorf("diff --live --root: exit %d\n%s%s", code, out, errOut)
	}
	write(t, s.in("/root/good.yaml"), strings.Replace(s.Base, "cgroupDriver: systemd", "cgroupDriver: cgroupfs", 1)+"failCgroupV1: false\nmaxPods: 111\n")
	if code, out := s.inside(t, "/usr/local/bin/kubeletcfg", "apply", "--node", s.Name, "-f", "/root/good.yaml", "--kubelet-version", s.Minor,
		"--verify-configz", "--insecure", "--stable-for", "2s", "--health-timeout", "30s"); code != 0 || !strings.Contains(out, "applied") {
		t.Fatalf("good change under systemd, file and runtime disagreeing: exit %d\n%s", code, out)
	}
	if got := configzMaxPods(t); got != 111 {
		t.Errorf("/configz maxPods %v, want 111", got)
	}
}

// TestApplyWaitsForPodsReadyAgain: a change that turns
// ChangeContainerStatusOnKubeletRestart back on makes the restarted kubelet
// set a probed pod not ready until probed again; diff says so, and apply
// --kubeconfig waits for the pod to be Ready again before it calls the
// change healthy.
func TestApplyWaitsForPodsReadyAgain(t *testing.T) {
	n := newNode(t, nodeOptions{cluster: true})
	ctx := context.Background()
	tmpl := podTemplate("probed")
	// A long period: a restarted kubelet probes first after a random part
	// of it, and the pod is not ready meanwhile.
	tmpl.Spec.Containers[0].ReadinessProbe = &corev1.Probe{PeriodSeconds: 20, ProbeHandler: corev1.ProbeHandler{
		HTTPGet: &corev1.HTTPGetAction{Host: "127.0.0.1", Port: intstr.FromInt32(10248), Path: "/healthz"}}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "probed", Namespace: n.Namespace, Labels: tmpl.Labels}, Spec: tmpl.Spec}
	if _, err := n.API.Client.CoreV1().Pods(n.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	n.bindRunning(t, "probed")
	// Running is not Ready: its first probe may come up to a period later.
	for end := time.Now().Add(40 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		p, err := n.API.Client.CoreV1().Pods(n.Namespace).Get(ctx, "probed", metav1.GetOptions{})
		if err == nil && podReady(p) {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("the probed pod is not Ready 40 s after it runs: %v", err)
		}
	}
	time.Sleep(1500 * time.Millisecond) // its Ready transition a second before the restart's

	file := n.writeNew(t, "cgroupDriver: cgroupfs\nmaxPods: 100\nfeatureGates:\n  ChangeContainerStatusOnKubeletRestart: true\n")
	code, out, errOut := kubeletcfg(t, nil, "diff", "--kubelet-version", n.Minor, file, "--against", n.Config)
	if code != 1 || !strings.Contains(out, "restart: a restart of kubelet "+n.Minor+" can set containers with a readiness or startup probe not ready") {
		t.Errorf("diff: exit %d\n%s%s", code, out, errOut)
	}
	// Watch the pod's Ready condition through the apply.
	var flipped, readyAgain time.Time
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			p, err := n.API.Client.CoreV1().Pods(n.Namespace).Get(ctx, "probed", metav1.GetOptions{})
			if err != nil {
				continue
			}
			for _, c := range p.Status.Conditions {
				switch {
				case c.Type != corev1.PodReady:
				case c.Status != corev1.ConditionTrue && flipped.IsZero():
					flipped = time.Now()
				case c.Status == corev1.ConditionTrue && !flipped.IsZero() && readyAgain.IsZero():
					readyAgain = time.Now()
				}
			}
		}
	}()
	start := time.Now()
	code, out, progress := kubeletcfg(t, nil, n.argv("apply", "-f", file, "--kubeconfig", n.API.Kubeconfig, "--stable-for", "2s", "--health-timeout", "60s")...)
	ended := time.Now()
	took := ended.Sub(start)
	time.Sleep(300 * time.Millisecond)
	close(stop)
	<-done
	if code != 0 {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, progress)
	}
	for _, want := range []string{"1 pod(s) Ready before the restart", "waiting for the 1 pod(s) Ready before the restart to be Ready again", "every pod Ready before the restart is Ready again"} {
		if !strings.Contains(progress, want) {
			t.Errorf("progress lacks %q:\n%s", want, progress)
		}
	}
	p, err := n.API.Client.CoreV1().Pods(n.Namespace).Get(ctx, "probed", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ready := false
	var transition time.Time
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			ready, transition = true, c.LastTransitionTime.Time
		}
	}
	if !ready {
		t.Errorf("the apply ended healthy with the pod not Ready")
	}
	switch {
	case flipped.IsZero() && !transition.After(start) && took < 20*time.Second:
		t.Errorf("no not-ready spell, no new Ready transition, and apply ended at +%s, before the pod's probe period (20 s): the old kubelet's Ready was taken as the new one's", took.Round(time.Millisecond))
	case flipped.IsZero():
		// The restarted kubelet forgot the probe result, probed again and
		// found the pod ready before it wrote the status: the API server
		// saw only a new Ready transition (or nothing, and apply waited the
		// probe period).
		t.Logf("no not-ready spell in the API server; Ready transition at +%s, apply ended at +%s", transition.Sub(start).Round(time.Second), took.Round(time.Millisecond))
	case readyAgain.IsZero() || readyAgain.After(ended):
		t.Errorf("apply ended at +%s, the pod Ready again at +%s: it called the change healthy first", took.Round(time.Millisecond), readyAgain.Sub(start).Round(time.Millisecond))
	default:
		t.Logf("the pod not ready at +%s, Ready again at +%s; apply ended at +%s", flipped.Sub(start).Round(time.Millisecond), readyAgain.Sub(start).Round(time.Millisecond), took.Round(time.Millisecond))
	}
}

// podReady says whether a pod's Ready condition is True.
func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
