//go:build ansible

package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kubeletcfg/kubeletcfg/ansible/tests/harness"
)

func TestDocRenders(t *testing.T) {
	e := env
	cmd := exec.Command("ansible-doc", "kubeletcfg.kubelet.kubelet_config")
	cmd.Env = e.Environ(filepath.Join(e.Dir, "record"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("ansible-doc: %v\n%s", err, out)
	}
	for _, want := range []string{"restart_command", "check_mode", "diff_mode", "EXAMPLES", "RETURN VALUES", "rolled_back", "restart_to_healthy_s", "config_patch", "async"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("ansible-doc output lacks %q", want)
		}
	}
	cmd = exec.Command("ansible-doc", "-t", "role", "kubeletcfg.kubelet.install")
	cmd.Env = e.Environ(filepath.Join(e.Dir, "record"))
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "kubeletcfg_src") {
		t.Errorf("ansible-doc of the install role: %v\n%s", err, out)
	}
}

// TestFleet rolls changes over four stand-in nodes with the collection's
// rollout playbook: a canary, then batches of two (from the inventory's
// group variables).
func TestFleet(t *testing.T) {
	e := env
	calls := e.FakeKubectl(t)
	sample, err := os.ReadFile(filepath.Join(repo, "testdata/nodes/kubeadm-1.31/var/lib/kubelet/config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	base := strings.Replace(string(sample), "cgroupDriver: systemd", "cgroupDriver: cgroupfs", 1)
	names := []string{"node-1", "node-2", "node-3", "node-4"}
	var hosts []harness.Host
	roots := map[string]string{}
	for _, n := range names {
		vars := e.StandIn(t, n, base)
		roots[n] = vars["kubelet_root"].(string)
		hosts = append(hosts, harness.Host{Name: n, Vars: vars})
	}
	inv := e.GroupInventory(t, hosts, map[string]any{"kubelet_batch": 2, "kubelet_canary": 1, "kubelet_drain": false})
	config := func(t *testing.T, yamlText string) map[string]any {
		raw, err := yaml.YAMLToJSON([]byte(yamlText))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	changed := base + "containerLogMaxSize: 20Mi\n"
	rollout := func(t *testing.T, vars map[string]any, args ...string) *harness.Run {
		return e.Playbook(t, inv, "kubeletcfg.kubelet.rollout", vars, args...)
	}
	// summary is the rollout's closing summary: outcome -> hosts.
	summary := func(t *testing.T, r *harness.Run) map[string][]string {
		t.Helper()
		var out map[string][]string
		for _, ev := range r.Events {
			if strings.HasPrefix(ev.Task, "Summarize the rollout") && ev.Status == "ok" {
				raw, _ := json.Marshal(ev.Result["msg"])
				if err := json.Unmarshal(raw, &out); err != nil {
					t.Fatalf("the summary: %v\n%s", err, ev)
				}
			}
		}
		if out == nil {
			t.Errorf("no summary at the end of the rollout:\n%s", r.Output)
		}
		return out
	}
	wantSummary := func(t *testing.T, r *harness.Run, want map[string][]string) {
		t.Helper()
		got := summary(t, r)
		for _, k := range []string{"changed", "unchanged", "rolled_back", "failed", "not_reached"} {
			if strings.Join(got[k], ",") != strings.Join(want[k], ",") {
				t.Errorf("summary %s: %v, want %v", k, got[k], want[k])
			}
		}
	}
	files := func() map[string]string {
		out := map[string]string{}
		for _, n := range names {
			b, _ := os.ReadFile(filepath.Join(roots[n], "var/lib/kubelet/config.yaml"))
			backups, _ := filepath.Glob(filepath.Join(roots[n], "var/lib/kubelet/config.yaml.bak.*"))
			out[n] = string(b) + strings.Join(backups, ",")
		}
		return out
	}
	restarts := func() map[string]int {
		out := map[string]int{}
		for _, n := range names {
			out[n] = harness.Restarts(t, roots[n])
		}
		return out
	}
	same := func(t *testing.T, what string, before, after map[string]string) {
		t.Helper()
		for n := range before {
			if before[n] != after[n] {
				t.Errorf("%s changed the node tree of %s", what, n)
			}
		}
	}

	t.Run("check and diff mode change nothing and report the change", func(t *testing.T) {
		before, started := files(), restarts()
		r := rollout(t, map[string]any{"kubelet_config": config(t, changed), "kubelet_keep_backups": 7,
			"kubelet_url": "https://127.0.0.1:10250/configz", "kubelet_unit": "kubelet.service"}, "--check", "--diff")
		if r.Code != 0 {
			t.Fatalf("exit %d\n%s", r.Code, r.Output)
		}
		for _, n := range names {
			if plan := r.One(t, n, "Plan the change"); plan.Changed() {
				t.Errorf("the plan of %s counts as a change:\n%s", n, plan)
			}
			if st := r.Stats[n]; st["changed"] != 1 {
				t.Errorf("%s: %d changes in the recap, want one (%v)", n, st["changed"], st)
			}
			ev := r.One(t, n, "Apply the change")
			args, _ := ev.Result["invocation"].(map[string]any)["module_args"].(map[string]any)
			if args["keep_backups"] != 7.0 || args["kubelet_url"] == nil || args["unit"] != "kubelet.service" {
				t.Errorf("%s: the playbook's variables did not reach the module: %v", n, args)
			}
			changes, _ := ev.Result["changes"].([]any)
			if !ev.Changed() || len(changes) != 1 || !strings.Contains(ev.String(), `"path":"containerLogMaxSize"`) || !strings.Contains(ev.String(), `"classes":["restart"]`) {
				t.Errorf("check mode on %s: want changed and one classified change of containerLogMaxSize:\n%s", n, ev)
			}
		}
		for _, want := range []string{"-containerLogMaxSize: 10Mi", "+containerLogMaxSize: 20Mi", "(effective, kubelet 1.31)"} {
			if !strings.Contains(r.Output, want) {
				t.Errorf("the diff lacks %q:\n%s", want, r.Output)
			}
		}
		// The effective configuration, not the file: maxPods comes from the
		// --max-pods flag of the node and is in both sides unchanged.
		d, _ := r.One(t, "node-1", "Apply the change").Result["diff"].(map[string]any)
		if b, _ := d["before"].(string); !strings.Contains(b, "\nmaxPods: 150\n") || !strings.Contains(b, "\nsyncFrequency: 1m0s\n") {
			t.Errorf("the diff is not of the effective configuration (maxPods 150 from the flags, syncFrequency defaulted):\n%s", b)
		}
		same(t, "check mode", before, files())
		if got := restarts(); got["node-1"] != started["node-1"] {
			t.Errorf("check mode restarted the kubelet: %v -> %v", started, got)
		}
		wantSummary(t, r, map[string][]string{"changed": names})
	})

	t.Run("a change applied on all hosts in batches", func(t *testing.T) {
		started := restarts()
		r := rollout(t, map[string]any{"kubelet_config": config(t, changed)})
		if r.Code != 0 {
			t.Fatalf("exit %d\n%s", r.Code, r.Output)
		}
		for _, n := range names {
			ev := r.One(t, n, "Apply the change")
			if !ev.Changed() || ev.Result["backup_file"] == nil || ev.Result["kubelet_version"] != "1.31" || ev.Result["rolled_back"] != false {
				t.Errorf("%s: want changed, a backup, kubelet 1.31, not rolled back:\n%s", n, ev)
			}
			if !ev.Become {
				t.Errorf("%s: the change ran without become", n)
			}
			b, _ := os.ReadFile(filepath.Join(roots[n], "var/lib/kubelet/config.yaml"))
			if !strings.Contains(string(b), "containerLogMaxSize: 20Mi") {
				t.Errorf("%s: config file after the rollout:\n%s", n, b)
			}
			if got := harness.Restarts(t, roots[n]); got != started[n]+1 {
				t.Errorf("%s: %d restarts, want one", n, got-started[n])
			}
		}
		// Batches: node-1 alone, then node-2 and node-3 together, then node-4.
		applied := func(n string) int { return r.Index(n, "Apply the change") }
		planned := func(n string) int { return r.Index(n, "Plan the change") }
		if !(applied("node-1") < planned("node-2") && planned("node-3") < applied("node-2") &&
			applied("node-2") < planned("node-4") && applied("node-3") < planned("node-4")) {
			t.Errorf("not canary, then batches of two (kubelet_batch in the group's variables):\n%s", r.Output)
		}
		wantSummary(t, r, map[string][]string{"changed": names})
	})

	t.Run("the same configuration again changes nothing", func(t *testing.T) {
		// Another text of the same configuration: keys in another order, a
		// comment, and a default written out.
		lines := strings.Split(strings.TrimSpace(changed), "\n")
		var reordered []string
		for i := len(lines) - 1; i >= 0; i-- {
			if !strings.HasPrefix(lines[i], " ") && !strings.HasPrefix(lines[i], "-") {
				j := i + 1
				for j < len(lines) && (strings.HasPrefix(lines[j], " ") || strings.HasPrefix(lines[j], "-")) {
					j++
				}
				reordered = append(reordered, lines[i:j]...)
			}
		}
		text := "# the same configuration, written otherwise\n" + strings.Join(reordered, "\n") + "\nimageMaximumGCAge: 0s\n"
		src := filepath.Join(e.Dir, "same-config.yaml")
		if err := os.WriteFile(src, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		before, started := files(), restarts()
		// -e kubelet_batch wins over the group's variable: batches of 3.
		r := rollout(t, map[string]any{"kubelet_config_src": src, "kubelet_batch": 3})
		if r.Code != 0 {
			t.Fatalf("exit %d\n%s", r.Code, r.Output)
		}
		if !(r.Index("node-1", "Apply the change") < r.Index("node-2", "Plan the change") &&
			r.Index("node-4", "Plan the change") < r.Index("node-2", "Apply the change")) {
			t.Errorf("not canary, then one batch of three (-e kubelet_batch):\n%s", r.Output)
		}
		wantSummary(t, r, map[string][]string{"unchanged": names})
		for _, n := range names {
			if ev := r.One(t, n, "Apply the change"); ev.Changed() || ev.Msg() != "no change" {
				t.Errorf("second run on %s: want changed false, no change:\n%s", n, ev)
			}
		}
		same(t, "the second run", before, files())
		for n, c := range restarts() {
			if c != started[n] {
				t.Errorf("the second run restarted the kubelet of %s", n)
			}
		}
	})

	t.Run("an invalid configuration is refused before anything is written", func(t *testing.T) {
		before := files()
		r := rollout(t, map[string]any{"kubelet_config": config(t, changed+"imageGCHighThresholdPercent: 200\n")})
		if r.Code == 0 {
			t.Fatalf("exit 0 for an invalid configuration\n%s", r.Output)
		}
		ev := r.One(t, "node-1", "Plan the change")
		if ev.Status != "failed" || ev.Changed() || !strings.Contains(ev.Msg(), "imageGCHighThresholdPercent") {
			t.Errorf("the canary: want failed, not changed, naming the field:\n%s", ev)
		}
		for _, n := range names[1:] {
			if evs := r.Of(n, ""); len(evs) != 0 {
				t.Errorf("%s ran tasks after the canary failed: %v", n, evs)
			}
		}
		same(t, "an invalid configuration", before, files())
		wantSummary(t, r, map[string][]string{"failed": names[:1], "not_reached": names[1:]})
	})

	t.Run("a change that makes a CIS check fail is refused without allow_insecure", func(t *testing.T) {
		before := files()
		r := rollout(t, map[string]any{"kubelet_config": config(t, strings.Replace(changed, "anonymous:\n    enabled: false", "anonymous:\n    enabled: true", 1))})
		if r.Code == 0 {
			t.Fatalf("exit 0 for a change that breaks CIS 4.2.1\n%s", r.Output)
		}
		plan := r.One(t, "node-1", "Plan the change")
		if plan.Status != "ok" || !strings.Contains(plan.String(), `"breaks":[{`) || !strings.Contains(plan.String(), `"id":"4.2.1"`) ||
			!strings.Contains(plan.String(), `"CIS 4.2.1 would fail`) {
			t.Errorf("the plan: want the broken check returned and warned about:\n%s", plan)
		}
		ev := r.One(t, "node-1", "Apply the change")
		if ev.Status != "failed" || ev.Changed() || !strings.Contains(ev.Msg(), "allow_insecure") {
			t.Errorf("the canary: want refused, not changed, naming allow_insecure:\n%s", ev)
		}
		for _, n := range names[1:] {
			if evs := r.Of(n, ""); len(evs) != 0 {
				t.Errorf("%s ran tasks after the canary was refused", n)
			}
		}
		same(t, "a refused insecure change", before, files())
	})

	t.Run("with kubelet_kubeconfig the module drains through kubeletcfg, not kubectl", func(t *testing.T) {
		before := files()
		kubeconfig := filepath.Join(e.Dir, "no-such-kubeconfig")
		vars := map[string]any{"kubelet_config": config(t, changed+"cpuManagerPolicy: static\nreservedSystemCPUs: \"0\"\n")}
		vars["kubelet_drain"] = true
		vars["kubelet_kubeconfig"] = kubeconfig
		vars["kubelet_drain_timeout"] = 9
		r := e.Playbook(t, inv, "kubeletcfg.kubelet.rollout", vars)
		if r.Code == 0 {
			t.Fatalf("exit 0 with a kubeconfig that does not exist\n%s", r.Output)
		}
		if evs := r.Of("node-1", "Cordon and drain the node (its change needs it)"); len(evs) != 1 || evs[0].Status != "skipped" {
			t.Errorf("kubectl's drain task: want skipped, got %v", evs)
		}
		ev := r.One(t, "node-1", "Apply the change")
		if ev.Status != "failed" || ev.Changed() || !strings.Contains(ev.Msg(), kubeconfig) ||
			!strings.Contains(ev.String(), `"--kubeconfig"`) || !strings.Contains(ev.String(), `"--drain"`) || !strings.Contains(ev.String(), `"--drain-timeout","9s"`) {
			t.Errorf("the canary: want kubeletcfg apply --kubeconfig --drain refused, naming the kubeconfig:\n%s", ev)
		}
		same(t, "a change whose drain cannot start", before, files())
	})

	t.Run("a configuration that kills the kubelet is rolled back and the rollout stops", func(t *testing.T) {
		before := files()
		started := restarts()
		r := rollout(t, map[string]any{"kubelet_config": config(t, strings.Replace(changed, "cgroupDriver: cgroupfs", "cgroupDriver: systemd", 1))})
		if r.Code == 0 {
			t.Fatalf("exit 0 for a change that kills the kubelet\n%s", r.Output)
		}
		ev := r.One(t, "node-1", "Apply the change")
		if _, ok := ev.Result["restart_to_healthy_s"]; ok || ev.Result["rc"] != 3.0 {
			t.Errorf("the canary: want rc 3 and no restart_to_healthy_s after a rollback (RETURN):\n%s", ev)
		}
		// The message explains the kubelet's error: the field, its value
		// and the node's file and line that set it, the fix; the result
		// has the explanation in kubeletcfg why's shape.
		if ev.Status != "failed" || ev.Result["rolled_back"] != true || !ev.Changed() ||
			!strings.Contains(ev.Msg(), "rolled back to ") || !strings.Contains(ev.Msg(), "cgroupDriver=systemd from /var/lib/kubelet/config.yaml:") ||
			!strings.Contains(ev.Msg(), "fix: ") || !strings.Contains(fmt.Sprint(ev.Result["cause"]), "cgroupDriver=systemd from ") {
			t.Errorf("the canary: want failed, rolled back, with the kubelet's error explained:\n%s", ev)
		}
		x, _ := ev.Result["explanation"].(map[string]any)
		origin, _ := x["origin"].(map[string]any)
		if x["class"] != "cgroup-driver-systemd" || x["field"] != "cgroupDriver" || x["value"] != "systemd" ||
			origin["file"] != "/var/lib/kubelet/config.yaml" || origin["line"] == nil || !strings.Contains(fmt.Sprint(x["words"]), "systemd not running on this host") {
			t.Errorf("the canary's explanation (RETURN: explanation):\n%s", ev)
		}
		for _, n := range names[1:] {
			if evs := r.Of(n, ""); len(evs) != 0 {
				t.Errorf("%s: the next batch started after a rollback: %v", n, evs)
			}
		}
		after := files()
		b, _ := os.ReadFile(filepath.Join(roots["node-1"], "var/lib/kubelet/config.yaml"))
		if !strings.Contains(string(b), "containerLogMaxSize: 20Mi") || strings.Contains(string(b), "cgroupDriver: systemd") {
			t.Errorf("node-1's config file after the rollback:\n%s", b)
		}
		if got := harness.Restarts(t, roots["node-1"]); got != started["node-1"]+2 {
			t.Errorf("node-1: %d restarts, want two (the change, the rollback)", got-started["node-1"])
		}
		pid, _ := os.ReadFile(filepath.Join(roots["node-1"], "kubelet.pid"))
		if n, err := strconv.Atoi(strings.TrimSpace(string(pid))); err != nil || syscall.Kill(n, 0) != nil {
			t.Errorf("node-1's stand-in kubelet is not running after the rollback (pid %q)", pid)
		}
		for _, n := range names[1:] {
			if before[n] != after[n] {
				t.Errorf("%s was touched", n)
			}
		}
		wantSummary(t, r, map[string][]string{"rolled_back": names[:1], "not_reached": names[1:]})
	})

	// Without kubelet_kubeconfig the playbook drains with kubectl on the
	// controller, and whatever happens never leaves a node cordoned that it
	// cordoned: a change that needs the drain and kills the kubelet is
	// rolled back, and the node is uncordoned.
	drainChange := changed + "cpuManagerPolicy: static\nreservedSystemCPUs: \"0\"\n"
	t.Run("kubectl's drain: a rolled-back node is uncordoned, emptyDir data kept by default", func(t *testing.T) {
		kills := strings.Replace(drainChange, "cgroupDriver: cgroupfs", "cgroupDriver: systemd", 1)
		r := rollout(t, map[string]any{"kubelet_config": config(t, kills), "kubelet_drain": true})
		if r.Code == 0 {
			t.Fatalf("exit 0 for a change that kills the kubelet\n%s", r.Output)
		}
		if ev := r.One(t, "node-1", "Apply the change"); ev.Result["rolled_back"] != true {
			t.Errorf("the canary: want rolled back:\n%s", ev)
		}
		log, _ := os.ReadFile(calls)
		if !strings.Contains(string(log), "drain node-1 --ignore-daemonsets") || strings.Contains(string(log), "--delete-emptydir-data") {
			t.Errorf("kubectl: want a drain of node-1 without --delete-emptydir-data:\n%s", log)
		}
		if e.Cordoned("node-1") {
			t.Errorf("node-1 left cordoned after its rollback; kubectl calls:\n%s", log)
		}
		wantSummary(t, r, map[string][]string{"rolled_back": names[:1], "not_reached": names[1:]})
	})
	t.Run("kubectl's drain: a node the operator cordoned stays cordoned", func(t *testing.T) {
		e.Cordon(t, "node-1")
		defer e.Uncordon(t, "node-1")
		r := rollout(t, map[string]any{"kubelet_config": config(t, drainChange), "kubelet_drain": true, "kubelet_delete_emptydir_data": true, "kubelet_batch": 3})
		if r.Code != 0 {
			t.Fatalf("exit %d\n%s", r.Code, r.Output)
		}
		log, _ := os.ReadFile(calls)
		if !strings.Contains(string(log), "drain node-2 --ignore-daemonsets --delete-emptydir-data") {
			t.Errorf("kubectl: want --delete-emptydir-data with kubelet_delete_emptydir_data:\n%s", log)
		}
		if !e.Cordoned("node-1") {
			t.Error("the playbook uncordoned node-1, which the operator had cordoned")
		}
		for _, n := range names[1:] {
			if e.Cordoned(n) {
				t.Errorf("%s left cordoned", n)
			}
		}
		wantSummary(t, r, map[string][]string{"changed": names})
	})
}

// TestBuild: the collection builds with ansible-galaxy, and the artifact
// carries the licence.
func TestBuild(t *testing.T) {
	out, err := exec.Command("ansible-galaxy", "collection", "build", "--force", "--output-path", env.Dir, filepath.Join(repo, "ansible")).CombinedOutput()
	if err != nil {
		t.Fatalf("ansible-galaxy collection build: %v\n%s", err, out)
	}
	tarballs, _ := filepath.Glob(filepath.Join(env.Dir, "kubeletcfg-kubelet-*.tar.gz"))
	if len(tarballs) != 1 {
		t.Fatalf("built %v", tarballs)
	}
	list, err := exec.Command("tar", "tzf", tarballs[0]).Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"LICENSE", "MANIFEST.json", "plugins/modules/kubelet_config.py", "changelogs/changelog.yaml"} {
		if !strings.Contains("\n"+string(list), "\n"+want+"\n") && !strings.Contains(string(list), "/"+want+"\n") {
			t.Errorf("the artifact lacks %s:\n%s", want, list)
		}
	}
	for _, bad := range []string{"tests/", ".pyc"} {
		if strings.Contains(string(list), bad) {
			t.Errorf("the artifact carries %s:\n%s", bad, list)
		}
	}
}
