package main

import (
	"strings"
	"testing"
)

// Every command that reads the node's kubelet setup reads it the same way:
// the unit and env files under --root, the --from files, or nothing of the
// node when the command line is given.
func TestCommandsReadTheSetupAlike(t *testing.T) {
	v := []string{"--kubelet-version", "1.31", "--root", sample}
	commands := map[string][]string{
		"effective": {"effective"},
		"migrate":   {"migrate"},
		"audit":     {"audit"},
		"preflight": {"diff", "--to-version", "1.31"},
		// The sample is a kubeadm node without its ConfigMap: the change may
		// be reverted, which --force-unmanaged accepts.
		"apply": {"apply", "--dry-run", "--force-unmanaged", "--node", "node-1", "-f", sample + "/new-config.yaml"},
	}
	const unit = "note: the kubelet's command line from /usr/lib/systemd/system/kubelet.service, /etc/systemd/system/kubelet.service.d/10-kubeadm.conf, /var/lib/kubelet/kubeadm-flags.env, /etc/default/kubelet\n"
	for name, cmd := range commands {
		t.Run(name, func(t *testing.T) {
			args := append(append([]string(nil), cmd...), v...)
			code, out, errOut := runCLI(t, args...)
			if code == 2 || !strings.Contains(errOut, unit) {
				t.Errorf("%v: exit %d, want the unit read\n%s%s", args, code, out, errOut)
			}
			code, out, errOut = runCLI(t, append(args, "--from", "/var/lib/kubelet/kubeadm-flags.env")...)
			if !strings.Contains(errOut, "note: the kubelet's command line from /var/lib/kubelet/kubeadm-flags.env\n") {
				t.Errorf("--from: exit %d\n%s%s", code, out, errOut)
			}
			if name != "preflight" { // diff takes a command line with --live only
				code, out, errOut = runCLI(t, append(args, "--", "--config=/var/lib/kubelet/config.yaml")...)
				if code == 2 || strings.Contains(errOut, "command line from") {
					t.Errorf("after --: exit %d\n%s%s", code, out, errOut)
				}
			}
			empty := t.TempDir()
			code, _, errOut = runCLI(t, append(append([]string(nil), cmd...), "--kubelet-version", "1.31", "--root", empty)...)
			if code != 2 || !strings.Contains(errOut, "reading the kubelet's command line (or give it after --)") {
				t.Errorf("an image without a unit: exit %d\n%s", code, errOut)
			}
		})
	}
}
