//go:build ansible

package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/kubeletcfg/kubeletcfg/ansible/tests/harness"
)

// BenchmarkNoChange is the module's own cost on a node where nothing
// changes, against kubeletcfg run directly on the same node tree, in one
// run: go test -tags ansible -bench NoChange -benchtime 5x ./ansible/tests/
//
//   - diff: kubeletcfg diff of the desired file (what an operator runs by hand)
//   - apply-dry-run: what the module runs
//   - playbook-1-host: ansible-playbook, one host, one kubelet_config task
//   - playbook-20-hosts: the same over 20 hosts (default forks, 5);
//     ns/host is the per-host cost
//   - rollout-1-host, rollout-20-hosts: the rollout playbook (a canary,
//     then one batch of the others), nothing to change; -no-become without
//     privilege escalation (su on the test machine)
//
// cpu-ns/host is the user and system time of ansible-playbook and all it
// ran (the module, kubeletcfg) per host: what the controller and node spend,
// whatever else loads the machine.
func BenchmarkNoChange(b *testing.B) {
	e := env
	sample, err := os.ReadFile(filepath.Join(repo, "testdata/nodes/kubeadm-1.31/var/lib/kubelet/config.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	var hosts []harness.Host
	for i := 1; i <= 20; i++ {
		n := fmt.Sprintf("node-%02d", i)
		hosts = append(hosts, harness.Host{Name: n, Vars: e.StandIn(b, n, string(sample))})
	}
	desired := filepath.Join(e.Dir, "desired.yaml")
	if err := os.WriteFile(desired, sample, 0o644); err != nil {
		b.Fatal(err)
	}
	root := hosts[0].Vars["kubelet_root"].(string)
	play := filepath.Join(e.Dir, "no-change.yml")
	if err := os.WriteFile(play, []byte(`- hosts: kubelet_nodes
  gather_facts: false
  tasks:
    - name: Apply the change
      kubeletcfg.kubelet.kubelet_config:
        src: `+desired+`
        root: "{{ kubelet_root }}"
        kubelet_version: "1.31"
        restart_command: "{{ kubelet_restart_command }}"
        pid_file: "{{ kubelet_pid_file }}"
        kubeletcfg_binary: "{{ kubeletcfg_binary }}"
`), 0o644); err != nil {
		b.Fatal(err)
	}
	run := func(b *testing.B, args ...string) {
		for i := 0; i < b.N; i++ {
			// exit 0: no change (diff and a dry run exit 1 on a change)
			if out, err := exec.Command(e.Bin, args...).CombinedOutput(); err != nil {
				b.Fatalf("%v: %v\n%s", args, err, out)
			}
		}
	}
	b.Run("diff", func(b *testing.B) {
		run(b, "diff", "--kubelet-version", "1.31", "--root", root, desired)
	})
	b.Run("apply-dry-run", func(b *testing.B) {
		run(b, "apply", "--node", "node-01", "--kubelet-version", "1.31", "--root", root, "-f", desired, "--dry-run", "-o", "json")
	})
	playbook := func(b *testing.B, hosts []harness.Host, play string, extra map[string]any) {
		inv := e.Inventory(b, hosts)
		var cpu time.Duration
		for i := 0; i < b.N; i++ {
			r := e.Playbook(b, inv, play, extra)
			cpu += r.CPU
			if r.Code != 0 {
				b.Fatalf("exit %d\n%s", r.Code, r.Output)
			}
			for _, h := range hosts {
				if ev := r.One(b, h.Name, "Apply the change"); ev.Changed() {
					b.Fatalf("%s changed", h.Name)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(hosts)), "ns/host")
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/float64(len(hosts)), "cpu-ns/host")
	}
	b.Run("playbook-1-host", func(b *testing.B) { playbook(b, hosts[:1], play, nil) })
	b.Run("playbook-20-hosts", func(b *testing.B) { playbook(b, hosts, play, nil) })
	// The rollout playbook (plan, drain check, apply, uncordon per host):
	// the canary, then the 19 others in one batch.
	rollout := map[string]any{"kubelet_config_src": desired, "kubelet_batch": "100%", "kubelet_drain": false}
	b.Run("rollout-1-host", func(b *testing.B) { playbook(b, hosts[:1], "kubeletcfg.kubelet.rollout", rollout) })
	b.Run("rollout-20-hosts", func(b *testing.B) { playbook(b, hosts, "kubeletcfg.kubelet.rollout", rollout) })
	// The same without become: what taking root (su here) costs per host.
	plain := map[string]any{"kubelet_become": false}
	for k, v := range rollout {
		plain[k] = v
	}
	b.Run("rollout-20-hosts-no-become", func(b *testing.B) { playbook(b, hosts, "kubeletcfg.kubelet.rollout", plain) })
}
