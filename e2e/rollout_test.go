//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubeletcfg/kubeletcfg/apply"
	"github.com/kubeletcfg/kubeletcfg/rollout"
)

// rolloutKit is the kit's two nodes (containerd 2 each, the second in its
// own network namespace, cgroupRoot and pod network) made ready for
// kubeletcfg rollout: kubeletcfg's image imported into each containerd,
// deploy/rollout.yaml's ServiceAccount and roles in the test's namespace,
// and, for each node, a directory named after it that the rollout's
// $(NODE_NAME) finds: its restart script, pid file, log, command line and
// kubeletcfg's state directory (the two kubelets share this machine's
// file system; on real nodes each has its own /var/lib/kubeletcfg and
// kubelet.service).
type rolloutKit struct {
	first, second *kubeletNode
	cp            *controlPlane
	ns, base      string
	api           rollout.API
}

func newRolloutKit(t *testing.T) *rolloutKit {
	t.Helper()
	began := time.Now()
	k := &rolloutKit{first: newNode(t, nodeOptions{cluster: true})}
	k.second = newNode(t, nodeOptions{second: true})
	k.cp, k.ns = k.first.API, k.first.Namespace
	for _, n := range k.nodes() {
		n.importImage(t)
	}
	k.installRBAC(t)
	k.base = filepath.Join(k.first.Dir, "hosts")
	for _, n := range k.nodes() {
		dir := filepath.Join(k.base, n.Name)
		write(t, filepath.Join(dir, "restart.sh"), "#!/bin/sh\nexec "+n.Restart+"\n")
		if err := os.Chmod(filepath.Join(dir, "restart.sh"), 0o755); err != nil {
			t.Fatal(err)
		}
		quoted := make([]string, len(n.Args))
		for i, a := range n.Args {
			quoted[i] = shellQuote(a)
		}
		write(t, filepath.Join(dir, "kubelet.env"), "KUBELET_ARGS=\""+strings.Join(quoted, " ")+"\"\n")
		for name, target := range map[string]string{"kubelet.pid": n.PidFile, "kubelet.log": n.Log} {
			if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", k.cp.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if k.api, err = rollout.NewAPI(cfg); err != nil {
		t.Fatal(err)
	}
	t.Logf("two nodes ready for rollouts after %s", time.Since(began).Round(time.Millisecond))
	return k
}

func (k *rolloutKit) nodes() []*kubeletNode { return []*kubeletNode{k.first, k.second} }

// installRBAC creates deploy/rollout.yaml's objects, the ServiceAccount in
// the test's namespace.
func (k *rolloutKit) installRBAC(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	raw := readFile(t, "../deploy/rollout.yaml")
	for _, doc := range strings.Split(raw, "\n---\n") {
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode([]byte(doc), nil, nil)
		if err != nil {
			t.Fatalf("deploy/rollout.yaml: %v\n%s", err, doc)
		}
		switch o := obj.(type) {
		case *corev1.ServiceAccount:
			o.Namespace = k.ns
			_, err = k.cp.Client.CoreV1().ServiceAccounts(k.ns).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.ClusterRole:
			_, err = k.cp.Client.RbacV1().ClusterRoles().Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.ClusterRoleBinding:
			for i := range o.Subjects {
				o.Subjects[i].Namespace = k.ns
			}
			_, err = k.cp.Client.RbacV1().ClusterRoleBindings().Create(ctx, o, metav1.CreateOptions{})
		default:
			t.Fatalf("deploy/rollout.yaml: a %T", obj)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// args is a rollout's command line on the kit: apply's flags name each
// node's own files through $(NODE_NAME).
func (k *rolloutKit) args(extra ...string) []string {
	per := filepath.Join(k.base, "$(NODE_NAME)")
	return append([]string{"rollout", "--kubeconfig", k.cp.Kubeconfig, "--namespace", k.ns, "--image", rolloutImageName,
		"--restart-command", per + "/restart.sh", "--pid-file", per + "/kubelet.pid", "--kubelet-log", per + "/kubelet.log",
		"--state-dir", per + "/state", "--from", per + "/kubelet.env",
		"--health-timeout", "20s", "--stable-for", "2s", "--poll", "300ms", "--lease-duration", "6s",
		"--canary", "1", "--batch", "1"}, extra...)
}

// dropin writes a drop-in for the rollouts to change.
func (k *rolloutKit) dropin(t *testing.T, name, content string) string {
	t.Helper()
	file := filepath.Join(k.first.Dir, name)
	write(t, file, "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"+content)
	return file
}

// configz is a node's /configz through the API server's node proxy.
func (k *rolloutKit) configz(t *testing.T, n *kubeletNode) map[string]any {
	t.Helper()
	code, body := k.cp.do(t, http.MethodGet, "/api/v1/nodes/"+n.Name+"/proxy/configz", "")
	var wrapped struct {
		KubeletConfig map[string]any `json:"kubeletconfig"`
	}
	if code != http.StatusOK || json.Unmarshal([]byte(body), &wrapped) != nil {
		t.Fatalf("configz of %s: %d %s", n.Name, code, body)
	}
	return wrapped.KubeletConfig
}

func (k *rolloutKit) state(t *testing.T) *rollout.State {
	t.Helper()
	st, err := rollout.ReadState(context.Background(), k.api, k.ns)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// annotation is a node's kubeletcfg.io/apply annotation.
func (k *rolloutKit) annotation(t *testing.T, n *kubeletNode) map[string]any {
	t.Helper()
	node, err := k.cp.Client.CoreV1().Nodes().Get(context.Background(), n.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var a map[string]any
	_ = json.Unmarshal([]byte(node.Annotations[rollout.AnnotationApply]), &a)
	return a
}

// report runs a rollout to its end and reads its JSON report.
func (k *rolloutKit) run(t *testing.T, args ...string) (int, *rollout.Report, string) {
	t.Helper()
	start := time.Now()
	code, out, errOut := kubeletcfg(t, nil, append(k.args(args...), "-o", "json")...)
	t.Logf("rollout %s: exit %d after %s", strings.Join(args, " "), code, time.Since(start).Round(time.Millisecond))
	var rep rollout.Report
	if out != "" {
		// The report, then (on an error) -o json's error object.
		if err := json.NewDecoder(strings.NewReader(out)).Decode(&rep); err != nil {
			t.Fatalf("rollout's report: %v\n%s\nstderr:\n%s", err, out, errOut)
		}
	}
	return code, &rep, errOut
}

func outcomes(r *rollout.Report) map[string]string {
	m := map[string]string{}
	for _, n := range r.Nodes {
		m[n.Name] = n.Outcome
	}
	return m
}

// TestRollout rolls drop-ins out to the kit's two real nodes through Jobs
// running kubeletcfg's image: refused changes reach no node; a good change
// goes to the canary, then (after the rollout's process is killed between
// the waves and another rollout is refused by the Lease) --resume takes it
// to the second; a change that kills the kubelet is refused by apply's
// preflight on the canary, and past preflight (--skip-preflight) rolled
// back there, each stopping the rollout with the second node untouched; the Job's
// pod killed in the middle of its apply leaves its node healthy on the old
// or the new file; the canary's pod deleted during its apply's watch (its
// SIGTERM) rolls the change back and stops the rollout. The restarts go through a restart command run on the
// host (nsenter into the kubelet's namespaces, the host init's cgroups);
// every object also passes the API server's dry run.
func TestRollout(t *testing.T) {
	k := newRolloutKit(t)
	good := k.dropin(t, "pods.conf", "maxPods: 111\n")

	t.Run("refused before any node", func(t *testing.T) {
		bad := filepath.Join(k.first.Dir, "bad.yaml")
		write(t, bad, "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: -5\n")
		unknown := k.dropin(t, "unknown.conf", "maxPodz: 3\n")
		for _, args := range [][]string{{"-f", bad}, {"--dropin", "50-rollout.conf=" + unknown}} {
			code, _, errOut := k.run(t, args...)
			if code != 2 || !strings.Contains(errOut, "kubelet 1.37") {
				t.Errorf("%v: exit %d, want 2 naming kubelet 1.37:\n%s", args, code, errOut)
			}
		}
		jobs, err := k.api.ListJobs(context.Background(), k.ns, rollout.LabelRollout)
		if err != nil || len(jobs) != 0 || k.state(t) != nil {
			t.Errorf("a refused change made %d Jobs (%v) or a progress", len(jobs), err)
		}
	})

	t.Run("server dry run", func(t *testing.T) {
		code, _, errOut := k.run(t, "--dropin", "50-rollout.conf="+good, "--dry-run=server", "--drain")
		if code != 0 || !strings.Contains(errOut, "admitted by the API server") {
			t.Fatalf("exit %d:\n%s", code, errOut)
		}
	})

	t.Run("canary, killed, refused, resumed", func(t *testing.T) {
		pid2 := readPid(k.second.PidFile)
		logFile := filepath.Join(k.first.Dir, "rollout-1.log")
		r := startDaemonT(t, "rollout", logFile, nil, kit.kubeletcfg, k.args("--dropin", "50-rollout.conf="+good, "--soak", "8s", "--drain", "--drain-timeout", "30s")...)
		deadline := time.Now().Add(90 * time.Second)
		for {
			st := k.state(t)
			if st != nil && st.Wave == 1 && st.SoakUntil != nil {
				break
			}
			if r.exited() || time.Now().After(deadline) {
				t.Fatalf("the canary did not finish:\n%s", r.tail())
			}
			time.Sleep(200 * time.Millisecond)
		}
		t.Logf("canary applied after %s", time.Since(deadline.Add(-90*time.Second)).Round(time.Millisecond))
		if got := k.configz(t, k.first)["maxPods"]; got != float64(111) {
			t.Errorf("canary's maxPods = %v, want 111", got)
		}
		if readPid(k.second.PidFile) != pid2 || k.configz(t, k.second)["maxPods"] != float64(100) {
			t.Error("the second node changed during the canary's wave")
		}
		if a := k.annotation(t, k.first); a["outcome"] != apply.OutcomeApplied {
			t.Errorf("canary's annotation: %v", a)
		}

		if _, out, errOut := kubeletcfg(t, nil, "fleet", "--kubeconfig", k.cp.Kubeconfig, "--rollout-namespace", k.ns); !strings.Contains(out, "running, wave 1 of 2") || !strings.Contains(out, "1 applied, 1 pending") {
			t.Errorf("fleet does not show the rollout soaking after its canary:\n%s%s", out, errOut)
		}

		other := k.dropin(t, "other.conf", "maxPods: 113\n")
		code, _, errOut := k.run(t, "--dropin", "60-other.conf="+other)
		if code != 2 || !strings.Contains(errOut, "another rollout is running") {
			t.Errorf("a second rollout while one runs: exit %d, want 2 (the Lease):\n%s", code, errOut)
		}

		if err := syscall.Kill(r.pid(), syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		for !r.exited() {
			time.Sleep(50 * time.Millisecond)
		}
		code, rep, errOut := k.run(t, "--resume")
		if code != 0 || rep.Phase != rollout.PhaseDone {
			t.Fatalf("--resume: exit %d, phase %s:\n%s", code, rep.Phase, errOut)
		}
		if o := outcomes(rep); o[k.first.Name] != apply.OutcomeApplied || o[k.second.Name] != apply.OutcomeApplied {
			t.Errorf("outcomes %v", o)
		}
		for _, n := range k.nodes() {
			if got := k.configz(t, n)["maxPods"]; got != float64(111) {
				t.Errorf("%s: maxPods = %v, want 111", n.Name, got)
			}
			if n.cordoned(t) {
				t.Errorf("%s is left cordoned", n.Name)
			}
		}
		if !strings.Contains(errOut, "taking it over") {
			t.Errorf("--resume did not wait for the dead rollout's lease:\n%s", errOut)
		}
	})

	t.Run("kubelet-killing change refused by preflight on the canary", func(t *testing.T) {
		pid1, pid2 := readPid(k.first.PidFile), readPid(k.second.PidFile)
		fatal := k.dropin(t, "fatal.conf", fatalAtStart)
		code, rep, errOut := k.run(t, "--dropin", "50-rollout.conf="+fatal)
		if code != 2 || rep.Phase != rollout.PhaseStopped {
			t.Fatalf("exit %d, phase %s, want 2, stopped:\n%s", code, rep.Phase, errOut)
		}
		o := outcomes(rep)
		if o[k.first.Name] != apply.OutcomeRefused || o[k.second.Name] != rollout.OutcomeNotReached {
			t.Errorf("outcomes %v", o)
		}
		if !strings.Contains(rep.Nodes[0].Cause, "preflight") || !strings.Contains(rep.Nodes[0].Cause, "reserved-beyond-capacity") {
			t.Errorf("the canary's cause does not name the preflight class: %q", rep.Nodes[0].Cause)
		}
		if readPid(k.first.PidFile) != pid1 || readPid(k.second.PidFile) != pid2 {
			t.Error("a kubelet was restarted for a change preflight refused")
		}
		if _, err := os.Stat(filepath.Join(k.first.ConfigDir, "50-rollout.conf")); err == nil && strings.Contains(readFile(t, filepath.Join(k.first.ConfigDir, "50-rollout.conf")), "kubeReserved") {
			t.Error("the refused drop-in was written on the canary")
		}
	})

	t.Run("kubelet-killing change rolled back on the canary", func(t *testing.T) {
		pid2 := readPid(k.second.PidFile)
		fatal := k.dropin(t, "fatal.conf", fatalAtStart)
		// Past preflight, to the kubelet: the watch and the rollback.
		code, rep, errOut := k.run(t, "--dropin", "50-rollout.conf="+fatal, "--apply-flag=--skip-preflight")
		if code != 3 || rep.Phase != rollout.PhaseStopped {
			t.Fatalf("exit %d, phase %s, want 3, stopped:\n%s", code, rep.Phase, errOut)
		}
		o := outcomes(rep)
		if o[k.first.Name] != apply.OutcomeRolledBack || o[k.second.Name] != rollout.OutcomeNotReached {
			t.Errorf("outcomes %v", o)
		}
		if rep.Nodes[0].Cause == "" || !strings.Contains(rep.Stop, rep.Nodes[0].Cause) {
			t.Errorf("the report's cause: %q, stop %q", rep.Nodes[0].Cause, rep.Stop)
		}
		// The kubelet's refusal explained (apply's why.Cause) on the node,
		// through the Job's report: the field, and the drop-in's line there.
		if c := rep.Nodes[0].Cause; !strings.Contains(c, "kubeReserved.memory=100Ti from "+filepath.Join(k.first.ConfigDir, "50-rollout.conf")+":") {
			t.Errorf("the canary's cause does not explain the kubelet's refusal: %s", c)
		}
		if readPid(k.second.PidFile) != pid2 || k.configz(t, k.second)["maxPods"] != float64(111) {
			t.Error("the second node was touched")
		}
		if got := k.configz(t, k.first)["maxPods"]; got != float64(111) {
			t.Errorf("the canary runs maxPods %v after the rollback, want 111", got)
		}
		if a := k.annotation(t, k.first); a["outcome"] != apply.OutcomeRolledBack {
			t.Errorf("canary's annotation: %v", a)
		}
		if _, out, errOut := kubeletcfg(t, nil, "fleet", "--kubeconfig", k.cp.Kubeconfig, "--rollout-namespace", k.ns); !strings.Contains(out, "stopped") || !strings.Contains(out, k.first.Name+" (wave canary): rolled back") {
			t.Errorf("fleet does not show the stopped rollout:\n%s%s", out, errOut)
		}
	})

	t.Run("pod killed mid-apply", func(t *testing.T) {
		pid := readPid(k.first.PidFile)
		next := k.dropin(t, "next.conf", "maxPods: 112\n")
		logFile := filepath.Join(k.first.Dir, "rollout-3.log")
		r := startDaemonT(t, "rollout", logFile, nil, kit.kubeletcfg, append(k.args("--dropin", "50-rollout.conf="+next), "--stable-for", "30s")...)
		var applyPid int
		for deadline := time.Now().Add(60 * time.Second); applyPid == 0; time.Sleep(100 * time.Millisecond) {
			if readPid(k.first.PidFile) != pid {
				applyPid = findProcess(t, "--root-is-host", "--node="+k.first.Name)
			}
			if time.Now().After(deadline) || r.exited() {
				t.Fatalf("the canary's kubelet was not restarted:\n%s", r.tail())
			}
		}
		if err := syscall.Kill(applyPid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		killed := time.Now()
		for deadline := time.Now().Add(60 * time.Second); !r.exited(); time.Sleep(100 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the rollout did not stop:\n%s", r.tail())
			}
		}
		st := k.state(t)
		if st.Phase != rollout.PhaseStopped || st.Nodes[0].Outcome != apply.OutcomeFailed || st.Nodes[1].Outcome != rollout.OutcomeNotReached {
			t.Errorf("progress: %s, nodes %+v", st.Phase, st.Nodes)
		}
		dropin := filepath.Join(k.first.ConfigDir, "50-rollout.conf")
		var file string
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
			file = readFile(t, dropin)
			if _, err := os.Stat(filepath.Join(k.base, k.first.Name, "state", "journal.json")); err != nil && k.healthy(k.first) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the node did not settle after its Job's apply was killed:\n%s\nguard log:\n%s", file, tailFile(filepath.Join(k.base, k.first.Name, "state", "guard.log")))
			}
		}
		t.Logf("node settled %s after the kill: %s", time.Since(killed).Round(time.Millisecond), strings.TrimSpace(file[strings.LastIndex(file, "maxPods"):]))
		want := float64(111)
		if strings.Contains(file, "maxPods: 112") {
			want = 112
		}
		k.first.waitReady(t, time.Time{}, 30*time.Second)
		if got := k.configz(t, k.first)["maxPods"]; got != want {
			t.Errorf("the node's file says maxPods %v, its kubelet runs %v", want, got)
		}
	})

	t.Run("pod deleted mid-apply", func(t *testing.T) { testPodDeletedMidApply(t, k) })
}

// The canary's pod deleted (as kubectl delete pod) while its apply watches
// the restarted kubelet: the kubelet sends the apply SIGTERM, the apply
// stops its watch and rolls back; the rollout stops with the second node
// not reached, no second pod is made for the Job, and the canary is
// healthy on the old file.
func testPodDeletedMidApply(t *testing.T, k *rolloutKit) {
	pid, before := readPid(k.first.PidFile), k.configz(t, k.first)["maxPods"]
	next := k.dropin(t, "deleted.conf", "maxPods: 114\n")
	logFile := filepath.Join(k.first.Dir, "rollout-4.log")
	r := startDaemonT(t, "rollout", logFile, nil, kit.kubeletcfg, append(k.args("--dropin", "50-rollout.conf="+next), "--stable-for", "30s")...)
	ctx := context.Background()
	for deadline := time.Now().Add(60 * time.Second); readPid(k.first.PidFile) == pid; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) || r.exited() {
			t.Fatalf("the canary's kubelet was not restarted:\n%s", r.tail())
		}
	}
	pods, err := k.api.ListPods(ctx, k.ns, rollout.LabelRollout)
	if err != nil {
		t.Fatal(err)
	}
	var pod string
	for _, p := range pods {
		if p.Spec.NodeName == k.first.Name && p.Status.Phase == corev1.PodRunning {
			pod = p.Name
		}
	}
	if pod == "" {
		t.Fatalf("no running pod on %s among %d", k.first.Name, len(pods))
	}
	if err := k.cp.Client.CoreV1().Pods(k.ns).Delete(ctx, pod, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	for deadline := time.Now().Add(90 * time.Second); !r.exited(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the rollout did not stop:\n%s", r.tail())
		}
	}
	st := k.state(t)
	t.Logf("rollout stopped %s after the pod's deletion: %s: %s", time.Since(deleted).Round(time.Millisecond), st.Nodes[0].Outcome, st.Nodes[0].Cause)
	if st.Phase != rollout.PhaseStopped || st.Nodes[1].Outcome != rollout.OutcomeNotReached ||
		(st.Nodes[0].Outcome != apply.OutcomeRolledBack && st.Nodes[0].Outcome != apply.OutcomeFailed) {
		t.Errorf("progress: %s, nodes %+v", st.Phase, st.Nodes)
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(k.base, k.first.Name, "state", "journal.json")); err != nil && k.healthy(k.first) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the node did not settle after its pod was deleted:\nguard log:\n%s", tailFile(filepath.Join(k.base, k.first.Name, "state", "guard.log")))
		}
	}
	if file := readFile(t, filepath.Join(k.first.ConfigDir, "50-rollout.conf")); strings.Contains(file, "maxPods: 114") {
		t.Errorf("the deleted pod's change stays on the node:\n%s", file)
	}
	k.first.waitReady(t, time.Time{}, 30*time.Second)
	if got := k.configz(t, k.first)["maxPods"]; got != before {
		t.Errorf("after the pod's deletion the canary runs maxPods %v, want %v (as before)", got, before)
	}
	pods, err = k.api.ListPods(ctx, k.ns, rollout.LabelRollout+"="+st.Spec.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods {
		if p.Name != pod {
			t.Errorf("another pod %s (node %s) after the deletion of %s: the Job ran apply again", p.Name, p.Spec.NodeName, pod)
		}
	}
}

// healthy says whether a node's kubelet answers healthz.
func (k *rolloutKit) healthy(n *kubeletNode) bool {
	resp, err := http.Get(n.healthzURL())
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// findProcess is the PID of the process whose command line has every word.
func findProcess(t *testing.T, words ...string) int {
	t.Helper()
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil {
			continue
		}
		args := strings.Split(string(bytes.TrimRight(raw, "\x00")), "\x00")
		all := true
		for _, w := range words {
			found := false
			for _, a := range args {
				found = found || a == w
			}
			all = all && found
		}
		if all {
			return pid
		}
	}
	return 0
}
