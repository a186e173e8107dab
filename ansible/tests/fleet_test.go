//go:build ansible

// The collection with the real ansible-playbook (Debian's ansible-core),
// against four hosts on this machine: `make ansible-test`.
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

const repo = "../.."

func TestDocRenders(t *testing.T) {
	e := harness.Setup(t, repo, t.TempDir())
	cmd := exec.Command("ansible-doc", "kubeletcfg.kubelet.kubelet_config")
	cmd.Env = e.Environ(filepath.Join(e.Dir, "record"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("ansible-doc: %v\n%s", err, out)
	}
	for _, want := range []string{"restart_command", "check_mode", "diff_mode", "EXAMPLES", "RETURN VALUES", "rolled_back", "restart_to_healthy_s"} {
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
// rollout playbook: a canary, then batches of two.
func TestFleet(t *testing.T) {
	e := harness.Setup(t, repo, t.TempDir())
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
	inv := e.Inventory(t, hosts)
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
		vars["kubelet_batch"] = 2
		vars["kubelet_drain"] = false
		return e.Playbook(t, inv, "kubeletcfg.kubelet.rollout", vars, args...)
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
		r := rollout(t, map[string]any{"kubelet_config": config(t, changed)}, "--check", "--diff")
		if r.Code != 0 {
			t.Fatalf("exit %d\n%s", r.Code, r.Output)
		}
		for _, n := range names {
			ev := r.One(t, n, "Apply the change")
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
			t.Errorf("not canary, then batches of two:\n%s", r.Output)
		}
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
		r := rollout(t, map[string]any{"kubelet_config_src": src})
		if r.Code != 0 {
			t.Fatalf("exit %d\n%s", r.Code, r.Output)
		}
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
	})

	t.Run("a change that makes a CIS check fail is refused without allow_insecure", func(t *testing.T) {
		before := files()
		r := rollout(t, map[string]any{"kubelet_config": config(t, strings.Replace(changed, "anonymous:\n    enabled: false", "anonymous:\n    enabled: true", 1))})
		if r.Code == 0 {
			t.Fatalf("exit 0 for a change that breaks CIS 4.2.1\n%s", r.Output)
		}
		plan := r.One(t, "node-1", "Plan the change")
		if plan.Status != "ok" || !strings.Contains(plan.String(), `"breaks":[{`) || !strings.Contains(plan.String(), `"id":"4.2.1"`) ||
			!strings.Contains(plan.String(), `"warnings":["CIS 4.2.1 would fail`) {
			t.Errorf("the plan: want the broken check returned and warned about:\n%s", plan)
		}
		ev := r.One(t, "node-1", "Apply the change")
		if ev.Status != "failed" || ev.Changed() || !strings.Contains(ev.Msg(), "--allow-insecure") {
			t.Errorf("the canary: want refused, not changed, naming --allow-insecure:\n%s", ev)
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
		vars["kubelet_batch"] = 2
		vars["kubelet_drain"] = true
		vars["kubelet_kubeconfig"] = kubeconfig
		r := e.Playbook(t, inv, "kubeletcfg.kubelet.rollout", vars)
		if r.Code == 0 {
			t.Fatalf("exit 0 with a kubeconfig that does not exist\n%s", r.Output)
		}
		if evs := r.Of("node-1", "Cordon and drain the node (its change needs it)"); len(evs) != 1 || evs[0].Status != "skipped" {
			t.Errorf("kubectl's drain task: want skipped, got %v", evs)
		}
		ev := r.One(t, "node-1", "Apply the change")
		if ev.Status != "failed" || ev.Changed() || !strings.Contains(ev.Msg(), kubeconfig) ||
			!strings.Contains(ev.String(), `"--kubeconfig"`) || !strings.Contains(ev.String(), `"--drain"`) {
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
		if ev.Status != "failed" || ev.Result["rolled_back"] != true || !ev.Changed() ||
			!strings.Contains(ev.Msg(), "rolled back: ") || !strings.Contains(ev.Msg(), "cgroups manager") {
			t.Errorf("the canary: want failed, rolled back, with the kubelet's error:\n%s", ev)
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
	})
}

// TestInstallRoleAndMissingBinary: the install role puts the binary from the
// controller on the node, and the module uses it; without a binary, or with
// one too old to speak JSON, the task fails saying how to install it.
func TestInstallRoleAndMissingBinary(t *testing.T) {
	e := harness.Setup(t, repo, t.TempDir())
	if out, err := exec.Command("ansible-galaxy", "collection", "build", "--output-path", e.Dir, filepath.Join(repo, "ansible")).CombinedOutput(); err != nil {
		t.Errorf("ansible-galaxy collection build: %v\n%s", err, out)
	}
	sample, err := os.ReadFile(filepath.Join(repo, "testdata/nodes/kubeadm-1.31/var/lib/kubelet/config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	vars := e.StandIn(t, "node-1", string(sample))
	installed := filepath.Join(e.Dir, "node-bin", "kubeletcfg")
	old := filepath.Join(e.Dir, "old-kubeletcfg")
	// A kubeletcfg from before apply spoke JSON, as cobra refuses the flag.
	if err := os.WriteFile(old, []byte("#!/bin/sh\necho \"Error: unknown shorthand flag: 'o' in -o\" >&2\nexit 2\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(installed), 0o755); err != nil {
		t.Fatal(err)
	}
	inv := e.Inventory(t, []harness.Host{{Name: "node-1", Vars: vars}})
	play := filepath.Join(e.Dir, "install.yml")
	task := `
      kubeletcfg.kubelet.kubelet_config:
        config: {maxPods: 120}
        root: "{{ kubelet_root }}"
        kubelet_version: "1.31"
        restart_command: "{{ kubelet_restart_command }}"
        kubeletcfg_binary: %s
      check_mode: true
      ignore_errors: true`
	if err := os.WriteFile(play, []byte(`- hosts: kubelet_nodes
  gather_facts: false
  tasks:
    - name: Missing`+fmt.Sprintf(task, filepath.Join(e.Dir, "none"))+`
    - name: Too old`+fmt.Sprintf(task, old)+`
    - name: Install
      ansible.builtin.include_role:
        name: kubeletcfg.kubelet.install
      vars:
        kubeletcfg_src: `+e.Bin+`
        kubeletcfg_dest: `+installed+`
    - name: Installed`+fmt.Sprintf(task, installed)+`
    - name: No such src
      kubeletcfg.kubelet.kubelet_config:
        src: no-such-config.yaml
        root: "{{ kubelet_root }}"
        kubeletcfg_binary: `+installed+`
      ignore_errors: true
`), 0o644); err != nil {
		t.Fatal(err)
	}
	r := e.Playbook(t, inv, play, nil)
	if r.Code != 0 {
		t.Fatalf("exit %d\n%s", r.Code, r.Output)
	}
	for _, c := range []struct{ task, want string }{
		{"Missing", "is not an executable file"},
		{"Too old", "too old for this collection"},
		{"No such src", "src no-such-config.yaml: "},
	} {
		ev := r.One(t, "node-1", c.task)
		if ev.Status != "failed" || !strings.Contains(ev.Msg(), c.want) || (c.task != "No such src" && !strings.Contains(ev.Msg(), "kubeletcfg.kubelet.install")) {
			t.Errorf("%s: want failed with %q and how to install:\n%s", c.task, c.want, ev)
		}
	}
	if st, err := os.Stat(installed); err != nil || st.Mode().Perm() != 0o755 {
		t.Errorf("the role did not install the binary: %v", err)
	}
	if ev := r.One(t, "node-1", "Installed"); ev.Status != "ok" || !ev.Changed() {
		t.Errorf("the installed binary: want a planned change:\n%s", ev)
	}
}
