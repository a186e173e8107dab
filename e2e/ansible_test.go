//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubeletcfg/kubeletcfg/ansible/tests/harness"
)

// TestAnsibleRollout runs the collection's rollout playbook with the real
// ansible-playbook over three hosts: the canary drives the real kubelet,
// the two others are stand-in node trees. A good change ends live on the
// kubelet's /configz on every host; a change that kills the kubelet is
// rolled back on the canary, its task fails with the kubelet's own error,
// the kubelet is healthy on the old file, and no other host is touched.
// Then a drop-in through the module, live on /configz.
func TestAnsibleRollout(t *testing.T) {
	k := newNode(t, nodeOptions{})
	minor, dir, base, cfg, args, restart := k.Minor, k.Dir, k.Base, k.Config, k.Args, k.Restart

	e := harness.Setup(t, "..", dir)
	sample, err := os.ReadFile("../testdata/nodes/kubeadm-1.31/var/lib/kubelet/config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	standInBase := strings.Replace(string(sample), "cgroupDriver: systemd", "cgroupDriver: cgroupfs", 1)
	real := map[string]any{
		"kubelet_node_name": k.Name, "kubelet_version": minor, "kubelet_args": args,
		"kubelet_restart_command": restart, "kubelet_pid_file": k.PidFile,
		"kubelet_log": k.Log, "kubelet_stable_for": 2, "kubelet_health_timeout": 20,
		"kubelet_verify_configz": true, "kubelet_insecure_skip_tls_verify": true,
		"kubeletcfg_state_dir": k.StateDir,
	}
	standIns := map[string]map[string]any{"node-1": e.StandIn(t, "node-1", standInBase), "node-2": e.StandIn(t, "node-2", standInBase)}
	// Each host's desired configuration is a host variable: the real
	// kubelet's setup differs from the stand-ins'.
	inventory := func(realConfig, standInConfig string) string {
		real["kubelet_config_src"] = filepath.Join(dir, "real-desired.yaml")
		write(t, real["kubelet_config_src"].(string), realConfig)
		hosts := []harness.Host{{Name: "node-0", Vars: real}}
		for _, n := range []string{"node-1", "node-2"} {
			vars := standIns[n]
			vars["kubelet_config_src"] = filepath.Join(dir, "stand-in-desired.yaml")
			hosts = append(hosts, harness.Host{Name: n, Vars: vars})
		}
		write(t, filepath.Join(dir, "stand-in-desired.yaml"), standInConfig)
		return e.Inventory(t, hosts)
	}
	extra := map[string]any{"kubelet_batch": 2, "kubelet_drain": false}

	inv := inventory(base+"cgroupDriver: cgroupfs\nmaxPods: 111\n", standInBase+"containerLogMaxSize: 20Mi\n")
	r := e.Playbook(t, inv, "kubeletcfg.kubelet.rollout", extra)
	if r.Code != 0 {
		t.Fatalf("good change: exit %d\n%s", r.Code, r.Output)
	}
	ev := r.One(t, "node-0", "Apply the change")
	if !ev.Changed() || !strings.Contains(ev.Result["stderr"].(string), "serves the intended configuration") {
		t.Errorf("the real kubelet's change was not applied and verified on /configz:\n%s", ev)
	}
	if got := configzMaxPods(t); got != 111 {
		t.Errorf("after the play /configz maxPods = %v, want 111", got)
	}
	t.Logf("good change: playbook %s for three hosts; real kubelet healthy %vs after its restart", r.Took.Round(time.Millisecond), ev.Result["restart_to_healthy_s"])
	for _, n := range []string{"node-1", "node-2"} {
		if ev := r.One(t, n, "Apply the change"); !ev.Changed() {
			t.Errorf("%s: not changed:\n%s", n, ev)
		}
	}

	// The same again: nothing changes, the kubelet is not restarted.
	pid, _ := os.ReadFile(k.PidFile)
	r = e.Playbook(t, inv, "kubeletcfg.kubelet.rollout", extra)
	if r.Code != 0 {
		t.Fatalf("second run: exit %d\n%s", r.Code, r.Output)
	}
	for _, n := range []string{"node-0", "node-1", "node-2"} {
		if ev := r.One(t, n, "Apply the change"); ev.Changed() {
			t.Errorf("second run on %s: changed\n%s", n, ev)
		}
	}
	if again, _ := os.ReadFile(k.PidFile); string(again) != string(pid) {
		t.Errorf("the second run restarted the kubelet (pid %s -> %s)", pid, again)
	}

	// config_patch: one field set on every node, the rest of each file
	// left; live on the real kubelet's /configz; the same again is no
	// change and no restart.
	patchInv := func() string {
		var hosts []harness.Host
		for _, h := range []struct {
			name string
			vars map[string]any
		}{{"node-0", real}, {"node-1", standIns["node-1"]}, {"node-2", standIns["node-2"]}} {
			vars := map[string]any{}
			for k, v := range h.vars {
				if k != "kubelet_config_src" {
					vars[k] = v
				}
			}
			vars["kubelet_config_patch"] = map[string]any{"containerLogMaxSize": "25Mi"}
			hosts = append(hosts, harness.Host{Name: h.name, Vars: vars})
		}
		return e.Inventory(t, hosts)
	}()
	r = e.Playbook(t, patchInv, "kubeletcfg.kubelet.rollout", extra)
	if r.Code != 0 {
		t.Fatalf("config_patch: exit %d\n%s", r.Code, r.Output)
	}
	if ev := r.One(t, "node-0", "Apply the change"); !ev.Changed() || !strings.Contains(ev.String(), `"path":"containerLogMaxSize"`) || strings.Contains(ev.String(), `"path":"maxPods"`) {
		t.Errorf("config_patch on the real kubelet: want containerLogMaxSize changed, nothing else:\n%s", ev)
	}
	live := configzField(t, "containerLogMaxSize")
	if live != "25Mi" || configzMaxPods(t) != 111 {
		t.Errorf("after config_patch /configz: containerLogMaxSize %v (want 25Mi), maxPods %v (want 111, left)", live, configzMaxPods(t))
	}
	if got := readFile(t, cfg); !strings.Contains(got, "maxPods: 111") || !strings.Contains(got, "containerLogMaxSize: 25Mi") || !strings.Contains(got, "failCgroupV1: false") {
		t.Errorf("the config file after config_patch:\n%s", got)
	}
	pid, _ = os.ReadFile(k.PidFile)
	r = e.Playbook(t, patchInv, "kubeletcfg.kubelet.rollout", extra)
	if r.Code != 0 {
		t.Fatalf("config_patch again: exit %d\n%s", r.Code, r.Output)
	}
	for _, n := range []string{"node-0", "node-1", "node-2"} {
		if ev := r.One(t, n, "Apply the change"); ev.Changed() {
			t.Errorf("config_patch again on %s: changed\n%s", n, ev)
		}
	}
	if again, _ := os.ReadFile(k.PidFile); string(again) != string(pid) {
		t.Errorf("config_patch again restarted the kubelet (pid %s -> %s)", pid, again)
	}

	// Valid, fatal at start on this host: rolled back on the canary, and the
	// next batch is not started.
	standInFiles := func() string {
		var all string
		for _, n := range []string{"node-1", "node-2"} {
			b, _ := os.ReadFile(filepath.Join(standIns[n]["kubelet_root"].(string), "var/lib/kubelet/config.yaml"))
			all += string(b)
		}
		return all
	}
	before := standInFiles()
	inv = inventory(base+"cgroupDriver: cgroupfs\nmaxPods: 122\ncontainerLogMaxSize: 25Mi\n"+fatalAtStart, standInBase+"containerLogMaxSize: 30Mi\n")
	r = e.Playbook(t, inv, "kubeletcfg.kubelet.rollout", extra)
	if r.Code == 0 {
		t.Fatalf("fatal change: exit 0\n%s", r.Output)
	}
	// Refused before anything is written, at the dry run (kubeletcfg's
	// preflight: the reservation is beyond this machine), with the field
	// and where it is.
	ev = r.One(t, "node-0", "Plan the change")
	if ev.Status != "failed" || ev.Result["rolled_back"] == true || !strings.Contains(ev.Msg(), "reserved-beyond-capacity") || !strings.Contains(ev.Msg(), "kubeReserved.memory=100Ti from ") {
		t.Errorf("the canary: want failed, refused by preflight, with the field and its origin:\n%s", ev)
	}
	for _, n := range []string{"node-1", "node-2"} {
		if evs := r.Of(n, ""); len(evs) != 0 {
			t.Errorf("%s: the next batch started after a rollback", n)
		}
	}
	if standInFiles() != before {
		t.Error("the stand-in nodes were touched after the canary's rollback")
	}
	if got, _ := os.ReadFile(cfg); !strings.Contains(string(got), "maxPods: 111") || !strings.Contains(string(got), "containerLogMaxSize: 25Mi") || strings.Contains(string(got), "kubeReserved") {
		t.Errorf("after the rollback the config file is:\n%s", got)
	}
	k.waitHealthy(t)
	if got := configzMaxPods(t); got != 111 {
		t.Errorf("after the rollback /configz maxPods = %v, want 111", got)
	}
	t.Logf("fatal change: %s", ev.Msg())

	// The same with kubelet_skip_preflight (the module's skip_preflight):
	// written, the real kubelet refuses it at start, rolled back on the
	// canary; the task's message explains the kubelet's own error: the
	// field, its value and the node's file and line that set it (not the
	// module's copy of kubelet_config_src), and the fix.
	real["kubelet_skip_preflight"] = true
	inv = inventory(base+"cgroupDriver: cgroupfs\nmaxPods: 122\ncontainerLogMaxSize: 25Mi\n"+fatalAtStart, standInBase+"containerLogMaxSize: 30Mi\n")
	delete(real, "kubelet_skip_preflight")
	r = e.Playbook(t, inv, "kubeletcfg.kubelet.rollout", extra)
	ev = r.One(t, "node-0", "Apply the change")
	line := strings.Count(base, "\n") + 5 // base, cgroupDriver, maxPods, containerLogMaxSize, kubeReserved:, memory
	where := fmt.Sprintf(" from %s:%d; fix: ", cfg, line)
	x, _ := ev.Result["explanation"].(map[string]any)
	origin, _ := x["origin"].(map[string]any)
	if r.Code == 0 || ev.Status != "failed" || ev.Result["rolled_back"] != true || ev.Result["rc"] != 3.0 ||
		!strings.Contains(ev.Msg(), "kubeReserved.memory=") || !strings.Contains(ev.Msg(), where) || !strings.Contains(fmt.Sprint(ev.Result["cause"]), where) ||
		x["class"] != "reserved-beyond-capacity" || x["field"] != "kubeReserved.memory" || origin["file"] != cfg || origin["line"] != float64(line) ||
		!strings.Contains(fmt.Sprint(x["words"]), fatalAtStartMessage) {
		t.Errorf("the canary with skip_preflight: want failed, rolled back (rc 3), the kubelet's error explained (kubeReserved.memory%s...):\n%s", where, ev)
	}
	for _, n := range []string{"node-1", "node-2"} {
		if evs := r.Of(n, ""); len(evs) != 0 {
			t.Errorf("%s: the next batch started after a rollback", n)
		}
	}
	if got, _ := os.ReadFile(cfg); strings.Contains(string(got), "kubeReserved") {
		t.Errorf("after the rollback the config file is:\n%s", got)
	}
	k.waitHealthy(t)
	if got := configzMaxPods(t); got != 111 {
		t.Errorf("after the rollback /configz maxPods = %v, want 111", got)
	}
	t.Logf("rolled back through the module: %s", ev.Msg())

	// A drop-in of the kubelet's --config-dir, through the module.
	play := filepath.Join(dir, "dropin.yml")
	write(t, play, `- hosts: node-0
  gather_facts: false
  tasks:
    - name: Apply a drop-in
      kubeletcfg.kubelet.kubelet_config:
        dropins:
          50-pods.conf: {maxPods: 133}
        node_name: "{{ kubelet_node_name }}"
        kubelet_version: "{{ kubelet_version }}"
        kubelet_args: "{{ kubelet_args }}"
        restart_command: "{{ kubelet_restart_command }}"
        pid_file: "{{ kubelet_pid_file }}"
        kubelet_log: "{{ kubelet_log }}"
        state_dir: "{{ kubeletcfg_state_dir }}"
        kubeletcfg_binary: "{{ kubeletcfg_binary }}"
        stable_for: 2
`)
	r = e.Playbook(t, inv, play, nil)
	if ev := r.One(t, "node-0", "Apply a drop-in"); r.Code != 0 || !ev.Changed() {
		t.Fatalf("drop-in: exit %d\n%s", r.Code, ev)
	}
	if b, err := os.ReadFile(filepath.Join(k.ConfigDir, "50-pods.conf")); err != nil || !strings.Contains(string(b), "maxPods: 133") {
		t.Errorf("the drop-in: %v\n%s", err, b)
	}
	if got := configzMaxPods(t); got != 133 {
		t.Errorf("after the drop-in /configz maxPods = %v, want 133", got)
	}

	// The same drop-in removed (state: absent), then removed again: no change.
	remove := strings.Replace(strings.Replace(readFile(t, play), "{maxPods: 133}", "{state: absent}", 1), "Apply a drop-in", "Remove the drop-in", 1)
	write(t, play, remove)
	r = e.Playbook(t, inv, play, nil)
	if ev := r.One(t, "node-0", "Remove the drop-in"); r.Code != 0 || !ev.Changed() || !strings.Contains(ev.String(), `"removes":["`) {
		t.Fatalf("removing the drop-in: exit %d\n%s", r.Code, ev)
	}
	if _, err := os.Stat(filepath.Join(k.ConfigDir, "50-pods.conf")); !os.IsNotExist(err) {
		t.Errorf("the drop-in is still there: %v", err)
	}
	if got := configzMaxPods(t); got != 111 {
		t.Errorf("after removing the drop-in /configz maxPods = %v, want 111", got)
	}
	r = e.Playbook(t, inv, play, nil)
	if ev := r.One(t, "node-0", "Remove the drop-in"); r.Code != 0 || ev.Changed() {
		t.Errorf("removing an absent drop-in: exit %d, want unchanged\n%s", r.Code, ev)
	}
}
