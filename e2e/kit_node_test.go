//go:build e2e

package e2e

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// A node is a real kubelet started by hand, the one way the kit starts one
// outside the nspawn tree: its own directory (config file, drop-in
// directory, --root-dir, --cert-dir, pid file, log), its own containerd,
// and a restart script — the command kubeletcfg apply's --restart-command
// runs, which also starts it the first time. When the test ends the
// kubelet is ended by its PID, its containers killed, its cgroups removed
// and the sysctls it changes put back. Only one kubelet runs on this
// machine's network at a time (ports 10248 and 10250).

// clusterNodeName is the name a cluster node registers with.
const clusterNodeName = "e2e-node"

// nodeOptions say how newNode makes a node.
type nodeOptions struct {
	// runtime is the container runtime ("" is containerd 2).
	runtime runtimeKind
	// systemdCgroup sets runc's SystemdCgroup in the runtime's
	// configuration (this host has no systemd: a kubelet that takes the
	// driver from containerd 2 refuses to start).
	systemdCgroup bool
	// cluster registers the kubelet with the run's control plane: x509
	// client certificate, webhook authentication and authorization, a CNI
	// bridge and the pause image, so that the Node turns Ready and pods run.
	cluster bool
	// configDir is the directory of config.yaml ("" is the node's
	// directory): a file system of the test's own.
	configDir string
	// config is what config.yaml holds after Base ("" is cgroupfs and
	// maxPods 100).
	config string
	// noStart leaves the kubelet to n.start, after the test set its command
	// line (setArgs, setLaunch).
	noStart bool
	// second makes the node a second one beside the first, in the kit's
	// node network namespace (its own ports; address 10.213.0.2, the peer
	// end of the veth): Node e2e-node-2 registered with the same control
	// plane (implies cluster), with its own containerd, pod bridge and
	// subnet, cgroupRoot (/e2e-node-2) and pod log directory.
	second bool
}

type kubeletNode struct {
	// Name is the Node's name for a cluster node, else this host's name
	// (what kubeletcfg apply --node takes).
	Name, Minor, Kubelet string
	Dir                  string
	Config, ConfigDir    string // --config and --config-dir
	RootDir, CertDir     string
	PidFile, Log         string
	// Restart stops the kubelet of PidFile and starts the next in the
	// background (apply's --restart-command).
	Restart  string
	StateDir string // kubeletcfg's --state-dir for this node
	// Base is the config file's lines every change keeps: the runtime
	// socket, failCgroupV1 false (this host is cgroup v1), authentication
	// and authorization (anonymous and AlwaysAllow standalone; x509 and
	// webhook in a cluster).
	Base string
	// Args is the kubelet's command line after its binary.
	Args      []string
	Runtime   *containerd
	API       *controlPlane // nil standalone
	Namespace string        // a cluster node's test's namespace
	// Netns is the network namespace the kubelet and its containerd run in
	// (its path; "" is this machine's); IP is where this machine reaches
	// the kubelet's healthz (and, for a second node, its API).
	Netns, IP  string
	CgroupRoot string

	launch, preLaunch string
}

// newNode prepares a node and, unless o.noStart, starts its kubelet and
// waits until it is healthy (a cluster node: until its Node is Ready).
func newNode(t *testing.T, o nodeOptions) *kubeletNode {
	t.Helper()
	n := &kubeletNode{Kubelet: env(t, "KUBELET_BIN"), Minor: env(t, "KUBELET_VERSION"), IP: "127.0.0.1", CgroupRoot: "/"}
	var api *controlPlane
	if o.cluster || o.second {
		api = useControlPlane(t) // before the node's cleanups: it ends after them
	}
	pods := &podNetwork{bridge: "kcfg-pods0", subnet: "10.213.1.0/24"}
	if o.second {
		n.Netns, n.IP, n.CgroupRoot = "/run/netns/"+netNamespace, api.Net.PeerIP, "/e2e-node-2"
		pods = &podNetwork{bridge: "kcfg-pods1", subnet: "10.213.2.0/24"}
	}
	n.requireNoKubelet(t)
	// Not t.TempDir: the kubelet leaves mounts under its root directory.
	dir, err := os.MkdirTemp(kit.dir, "node")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unmountUnder(dir); os.RemoveAll(dir) })
	t.Cleanup(saveSysctls())
	t.Cleanup(func() { removeKubeletCgroups(n.CgroupRoot) })
	if n.CgroupRoot != "/" {
		makeCgroupRoot(t, n.CgroupRoot)
	}
	n.Dir, n.RootDir, n.CertDir = dir, filepath.Join(dir, "root"), filepath.Join(dir, "pki")
	n.PidFile, n.Log, n.Restart, n.StateDir = filepath.Join(dir, "kubelet.pid"), filepath.Join(dir, "kubelet.log"), filepath.Join(dir, "restart.sh"), filepath.Join(dir, "state")
	cfgDir := o.configDir
	if cfgDir == "" {
		cfgDir = dir
	}
	n.Config, n.ConfigDir = filepath.Join(cfgDir, "config.yaml"), filepath.Join(dir, "conf.d")
	if err := os.MkdirAll(n.ConfigDir, 0o755); err != nil {
		t.Fatal(err)
	}

	co := containerdOptions{kind: o.runtime, netns: n.Netns, systemdCgroup: o.systemdCgroup}
	if api != nil {
		co.pods = pods
	}
	n.Runtime = startContainerd(t, filepath.Join(dir, "containerd"), co)

	n.Name, _ = os.Hostname()
	n.Base = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncontainerRuntimeEndpoint: unix://" + n.Runtime.sock +
		"\nfailCgroupV1: false\nauthentication:\n  anonymous:\n    enabled: true\n  webhook:\n    enabled: false\nauthorization:\n  mode: AlwaysAllow\n"
	n.Args = []string{"--config=" + n.Config, "--config-dir=" + n.ConfigDir, "--root-dir=" + n.RootDir, "--cert-dir=" + n.CertDir}
	if api != nil {
		n.API, n.Name, n.Namespace = api, clusterNodeName, api.namespace(t)
		nodeIP := api.Net.HostIP
		n.Base = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncontainerRuntimeEndpoint: unix://" + n.Runtime.sock +
			"\nfailCgroupV1: false\nauthentication:\n  anonymous:\n    enabled: false\n  webhook:\n    enabled: true\n  x509:\n    clientCAFile: " +
			api.CA.CertFile + "\nauthorization:\n  mode: Webhook\n" + noDiskPressure
		if o.second {
			n.Name, nodeIP = clusterNodeName+"-2", n.IP
			n.Base += "cgroupRoot: " + n.CgroupRoot + "\nhealthzBindAddress: 0.0.0.0\npodLogsDir: " + filepath.Join(dir, "pod-logs") + "\n"
		}
		n.Args = append(n.Args, "--kubeconfig="+api.kubeletKubeconfig(t, n.Name), "--hostname-override="+n.Name, "--node-ip="+nodeIP)
	}
	if o.config == "" {
		o.config = "cgroupDriver: cgroupfs\nmaxPods: 100\n"
	}
	write(t, n.Config, n.Base+o.config)
	n.writeRestart(t)
	t.Cleanup(n.cleanup)
	if !o.noStart {
		n.start(t)
	}
	return n
}

// noDiskPressure keeps a cluster node's pods whatever the disk of the
// machine running the tests holds: an evictionHard without disk signals
// (a map without them has none, the defaults are not merged), and image
// GC only on a full disk (the test images are imported, never pulled
// again). A CI machine past 85 % used or 10 % free would otherwise
// refuse or evict every pod with DiskPressure.
const noDiskPressure = "evictionHard:\n  memory.available: 100Mi\nimageGCHighThresholdPercent: 100\nimageGCLowThresholdPercent: 99\n"

// cleanup deletes a cluster node's pods (its kubelet stops their
// containers and tears their network down), then ends the kubelet.
func (n *kubeletNode) cleanup() {
	if n.API != nil {
		ctx := context.Background()
		pods, err := n.API.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + n.Name})
		if err == nil {
			zero := int64(0)
			for _, p := range pods.Items {
				_ = n.API.Client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
			}
		}
		n.Runtime.waitNoTasks(30 * time.Second)
	}
	n.stop()
}

// stop ends the kubelet of the pid file.
func (n *kubeletNode) stop() {
	endPid(readPid(n.PidFile), 10*time.Second)
}

// setArgs replaces the kubelet's command line (after the binary).
func (n *kubeletNode) setArgs(t testing.TB, args ...string) {
	t.Helper()
	n.Args = args
	n.writeRestart(t)
}

// setLaunch replaces the shell lines that start the kubelet (the last one
// runs it, without redirection or &: the restart script adds them); "" is
// the kubelet with n.Args.
func (n *kubeletNode) setLaunch(t testing.TB, lines string) {
	t.Helper()
	n.launch = lines
	n.writeRestart(t)
}

// setPreLaunch sets shell lines the restart script runs after it stopped
// the old kubelet and before it starts the next.
func (n *kubeletNode) setPreLaunch(t testing.TB, lines string) {
	t.Helper()
	n.preLaunch = lines
	n.writeRestart(t)
}

// writeRestart writes the restart script: it stops the kubelet of the pid
// file, waiting until it is gone or a zombie (PID 1 here may not reap it) at
// most 10 s, then makes sure; starts the next one in the background; and
// records it (pid file, and the run's record).
func (n *kubeletNode) writeRestart(t testing.TB) {
	t.Helper()
	launch := n.launch
	if launch == "" {
		quoted := make([]string, len(n.Args))
		for i, a := range n.Args {
			quoted[i] = shellQuote(a)
		}
		launch = "KUBELET_CONFIG_DROPIN_DIR_ALPHA= setsid " + strings.Join(inNetns(n.Netns, n.Kubelet).Args, " ") + " " + strings.Join(quoted, " ")
	}
	write(t, n.Restart, fmt.Sprintf(`#!/bin/sh
pid=%[1]s
if [ -f $pid ]; then
  p=$(cat $pid); kill $p 2>/dev/null; i=0
  while [ -e /proc/$p ] && [ "$(sed 's/.*) //' /proc/$p/stat 2>/dev/null | cut -c1)" != Z ] && [ $i -lt 500 ]; do sleep 0.02; i=$((i+1)); done
  kill -9 $p 2>/dev/null
fi
%[2]s
%[3]s >>%[4]s 2>&1 </dev/null &
echo $! >$pid
%[5]s
`, n.PidFile, n.preLaunch, launch, n.Log, recordLine()))
	if err := os.Chmod(n.Restart, 0o755); err != nil {
		t.Fatal(err)
	}
}

func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=/.:,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// launchKubelet runs the restart script (the old kubelet stopped, a new one
// started) and returns the new kubelet's PID, without waiting for it.
func (n *kubeletNode) launchKubelet(t testing.TB) int {
	t.Helper()
	if out, err := exec.Command(n.Restart).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", n.Restart, err, out)
	}
	return readPid(n.PidFile)
}

// start starts the kubelet and waits until it is healthy, or for a cluster
// node until its Node is Ready.
func (n *kubeletNode) start(t testing.TB) {
	t.Helper()
	n.launchKubelet(t)
	if n.API != nil {
		n.waitReady(t, time.Time{}, 60*time.Second)
		return
	}
	n.waitHealthy(t)
}

// waitHealthy waits until the kubelet's healthz answers 200.
func (n *kubeletNode) waitHealthy(t testing.TB) {
	t.Helper()
	waitHealthyURL(t, n.healthzURL(), func() string { return tailFile(n.Log) })
}

func (n *kubeletNode) healthzURL() string { return "http://" + n.IP + ":10248/healthz" }

// requireNoKubelet fails when a kubelet already answers where this one
// would.
func (n *kubeletNode) requireNoKubelet(t testing.TB) {
	t.Helper()
	if resp, err := http.Get(n.healthzURL()); err == nil {
		resp.Body.Close()
		t.Fatalf("a kubelet already answers on %s: stop it first", n.healthzURL())
	}
}

// command is a command that runs in the node's network namespace (a
// second node's kubeletcfg runs there, as on its own machine).
func (n *kubeletNode) command(bin string, args ...string) *exec.Cmd {
	return inNetns(n.Netns, bin, args...)
}

// applyArgs are the flags every kubeletcfg apply (rollback, recover) of
// this node takes: the node, the kubelet's version, the restart command,
// the pid file, the kubelet's log and kubeletcfg's state directory.
func (n *kubeletNode) applyArgs() []string {
	return []string{"--node", n.Name, "--kubelet-version", n.Minor, "--restart-command", n.Restart,
		"--pid-file", n.PidFile, "--kubelet-log", n.Log, "--state-dir", n.StateDir}
}

// argv is the command line of kubeletcfg CMD (apply, rollback) for this
// node: its flags (applyArgs), extra, and the kubelet's after --.
func (n *kubeletNode) argv(cmd string, extra ...string) []string {
	argv := append(append([]string{cmd}, n.applyArgs()...), extra...)
	return append(append(argv, "--"), n.Args...)
}

// writeNew writes the node's Base and content as new.yaml in its directory.
func (n *kubeletNode) writeNew(t testing.TB, content string) string {
	t.Helper()
	file := filepath.Join(n.Dir, "new.yaml")
	write(t, file, n.Base+content)
	return file
}

// requireNoKubelet fails when a kubelet already answers on this machine.
func requireNoKubelet(t testing.TB) {
	t.Helper()
	(&kubeletNode{IP: "127.0.0.1"}).requireNoKubelet(t)
}

// waitHealthyAt waits until the kubelet of this machine's network answers
// 200 on healthz; diag says why not.
func waitHealthyAt(t testing.TB, diag func() string) {
	t.Helper()
	waitHealthyURL(t, "http://127.0.0.1:10248/healthz", diag)
}

func waitHealthyURL(t testing.TB, url string, diag func() string) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
	}
	t.Fatalf("the kubelet did not become healthy:\n%s", diag())
}

// fetchConfigz reads /configz of the kubelet of this machine's network
// (anonymous: a standalone node's or the nspawn tree's).
func fetchConfigz(t testing.TB) []byte {
	t.Helper()
	code, body, err := getConfigz()
	if err != nil || code != http.StatusOK {
		t.Fatalf("configz: %d %v: %s", code, err, body)
	}
	var wrapped struct {
		KubeletConfig json.RawMessage `json:"kubeletconfig"`
	}
	if err := json.Unmarshal(body, &wrapped); err != nil {
		t.Fatalf("configz: %v: %s", err, body)
	}
	return wrapped.KubeletConfig
}

func getConfigz() (int, []byte, error) {
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := client.Get("https://127.0.0.1:10250/configz")
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}

// configzField is a top-level field of /configz.
func configzField(t testing.TB, field string) any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(fetchConfigz(t), &m); err != nil {
		t.Fatal(err)
	}
	return m[field]
}

func configzMaxPods(t testing.TB) float64 {
	t.Helper()
	n, _ := configzField(t, "maxPods").(float64)
	return n
}

// The change the tests use to kill the kubelet: valid for kubeletcfg and
// for the kubelet's validation, and the kubelet exits about half a second
// after its start (after its healthz first answered) on either runtime, in
// the nspawn tree too. (cgroupDriver: systemd no longer does: with
// containerd 2 the kubelet takes the driver from the runtime.)
const (
	fatalAtStart        = "kubeReserved:\n  memory: 100Ti\n"
	fatalAtStartMessage = "invalid Node Allocatable configuration"
)

// removeKubeletCgroups removes the cgroups a kubelet made below root (its
// cgroupRoot) in every hierarchy: kubepods and what is below, deepest
// first (those that still hold a process stay).
func removeKubeletCgroups(root string) {
	hierarchies, _ := os.ReadDir("/sys/fs/cgroup")
	for _, h := range hierarchies {
		for _, top := range []string{"kubepods", "kubepods.slice"} {
			var dirs []string
			_ = filepath.WalkDir(filepath.Join("/sys/fs/cgroup", h.Name(), root, top), func(p string, d os.DirEntry, err error) error {
				if err == nil && d.IsDir() {
					dirs = append(dirs, p)
				}
				return nil
			})
			for i := len(dirs) - 1; i >= 0; i-- {
				_ = syscall.Rmdir(dirs[i])
			}
		}
		if root != "/" {
			_ = syscall.Rmdir(filepath.Join("/sys/fs/cgroup", h.Name(), root))
		}
	}
}

// makeCgroupRoot creates a kubelet's cgroupRoot in every hierarchy (the
// kubelet refuses one that is not there), cpuset's with the machine's CPUs
// and memory nodes; removeKubeletCgroups removes it.
func makeCgroupRoot(t testing.TB, root string) {
	t.Helper()
	hierarchies, _ := os.ReadDir("/sys/fs/cgroup")
	for _, h := range hierarchies {
		dir := filepath.Join("/sys/fs/cgroup", h.Name(), root)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if h.Name() == "cpuset" {
			for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
				b, _ := os.ReadFile(filepath.Join("/sys/fs/cgroup/cpuset", f))
				if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// waitReady waits until the Node is Ready with a heartbeat not before since
// and says when it saw that.
func (n *kubeletNode) waitReady(t testing.TB, since time.Time, timeout time.Duration) time.Time {
	t.Helper()
	var last string
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		node, err := n.API.Client.CoreV1().Nodes().Get(context.Background(), n.Name, metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			continue
		}
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady {
				last = fmt.Sprintf("Ready=%s (%s) heartbeat %s", c.Status, c.Message, c.LastHeartbeatTime.UTC().Format(time.RFC3339))
				if c.Status == corev1.ConditionTrue && !c.LastHeartbeatTime.Time.Before(since.Truncate(time.Second)) {
					return time.Now()
				}
			}
		}
	}
	t.Fatalf("node %s not Ready within %s (last: %s); kubelet log:\n%s", n.Name, timeout, last, tailFile(n.Log))
	return time.Time{}
}

// replicaSet creates a ReplicaSet of one pod labelled app=NAME in the
// test's namespace, and binds its pod to the node as the scheduler would
// (there is none).
func (n *kubeletNode) replicaSet(t testing.TB, name string) *corev1.Pod {
	t.Helper()
	one := int32(1)
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: n.Namespace},
		Spec: appsv1.ReplicaSetSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: podTemplate(name)},
	}
	if _, err := n.API.Client.AppsV1().ReplicaSets(n.Namespace).Create(context.Background(), rs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return n.bindRunning(t, name)
}

// daemonSet creates a DaemonSet labelled app=NAME and binds its pod.
func (n *kubeletNode) daemonSet(t testing.TB, name string) *corev1.Pod {
	t.Helper()
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: n.Namespace},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: podTemplate(name)},
	}
	if _, err := n.API.Client.AppsV1().DaemonSets(n.Namespace).Create(context.Background(), ds, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return n.bindRunning(t, name)
}

func podTemplate(app string) corev1.PodTemplateSpec {
	no, grace := false, int64(5)
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}},
		Spec: corev1.PodSpec{
			AutomountServiceAccountToken:  &no,
			TerminationGracePeriodSeconds: &grace,
			Containers:                    []corev1.Container{{Name: "main", Image: podImage, ImagePullPolicy: corev1.PullNever}},
		},
	}
}

// bindRunning binds the pending pod labelled app=APP to the node and waits
// until it runs and is ready.
func (n *kubeletNode) bindRunning(t testing.TB, app string) *corev1.Pod {
	t.Helper()
	ctx := context.Background()
	sel := labels.SelectorFromSet(labels.Set{"app": app}).String()
	bound := false
	var last string
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		pods, err := n.API.Client.CoreV1().Pods(n.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil || len(pods.Items) == 0 {
			continue
		}
		p := pods.Items[0]
		if p.Spec.NodeName == "" && !bound {
			b := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace},
				Target: corev1.ObjectReference{Kind: "Node", Name: n.Name}}
			if err := n.API.Client.CoreV1().Pods(p.Namespace).Bind(ctx, b, metav1.CreateOptions{}); err != nil {
				t.Fatalf("bind %s: %v", p.Name, err)
			}
			bound = true
			continue
		}
		last = fmt.Sprintf("%s on %q: %s", p.Name, p.Spec.NodeName, p.Status.Phase)
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				return &p
			}
		}
	}
	t.Fatalf("pod app=%s not running within 60 s (%s); kubelet log:\n%s", app, last, tailFile(n.Log))
	return nil
}

// budget creates a PodDisruptionBudget that keeps one pod labelled app=APP
// available, and waits until the controller manager has counted it (before
// that every eviction is refused for another reason).
func (n *kubeletNode) budget(t testing.TB, app string) {
	t.Helper()
	one := intstr.FromInt32(1)
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: app, Namespace: n.Namespace},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}}}
	if _, err := n.API.Client.PolicyV1().PodDisruptionBudgets(n.Namespace).Create(context.Background(), pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		pdb, err := n.API.Client.PolicyV1().PodDisruptionBudgets(n.Namespace).Get(context.Background(), app, metav1.GetOptions{})
		if err == nil && pdb.Status.ObservedGeneration == pdb.Generation && pdb.Status.CurrentHealthy == 1 {
			return
		}
	}
	t.Fatalf("PodDisruptionBudget %s never counted its pod", app)
}

// cordoned says whether the Node is unschedulable.
func (n *kubeletNode) cordoned(t testing.TB) bool {
	t.Helper()
	node, err := n.API.Client.CoreV1().Nodes().Get(context.Background(), n.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return node.Spec.Unschedulable
}

// watchReady samples the Node's Ready condition every 50 ms from now on;
// the function it returns stops and says how long Ready was not True.
func (n *kubeletNode) watchReady(t testing.TB) func() time.Duration {
	t.Helper()
	stop := make(chan struct{})
	var mu sync.Mutex
	var down time.Duration
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		last := time.Now()
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			ready := false
			if node, err := n.API.Client.CoreV1().Nodes().Get(context.Background(), n.Name, metav1.GetOptions{}); err == nil {
				for _, c := range node.Status.Conditions {
					ready = ready || (c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue)
				}
			}
			now := time.Now()
			if !ready {
				mu.Lock()
				down += now.Sub(last)
				mu.Unlock()
			}
			last = now
		}
	}()
	var once sync.Once
	done := func() time.Duration {
		once.Do(func() { close(stop); wg.Wait() })
		mu.Lock()
		defer mu.Unlock()
		return down
	}
	t.Cleanup(func() { done() })
	return done
}
