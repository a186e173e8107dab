package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kubeletcfg/kubeletcfg/internal/printer"
	"github.com/kubeletcfg/kubeletcfg/preflight"
	"github.com/kubeletcfg/kubeletcfg/warning"
)

type preflightFlags struct {
	setupFlags
	runtimeFlags
	failOn  string
	pidFile string
	output  *printer.Output
}

func newPreflightCmd(s streams) *cobra.Command {
	f := &preflightFlags{}
	cmd := &cobra.Command{
		Use:   "preflight [flags] [-- KUBELET_ARGS...]",
		Short: "Say whether this kubelet version will start with this configuration on this host",
		Long: `preflight checks the kubelet's start-up refusals that depend on the host
(cgroup v1 with failCgroupV1, swap with failSwapOn, the systemd cgroup driver
without systemd, its ports taken, files the configuration names missing,
reservations beyond the machine's capacity, a stale CPU or memory manager
checkpoint, the container runtime's socket and its answer, the credential
provider configuration) and what it survives, degraded (a missing
staticPodPath, logind's InhibitDelayMaxSec below shutdownGracePeriod, the
healthz port taken), with the host fact, the field and where it was set.
Under --root only what the image tells is checked: host facts become
conditions. Where the kubelet takes its cgroup driver from the runtime
(--runtime, --containerd-config), the runtime's driver is the one judged.

Exit codes: 1 the kubelet would refuse to start (with --fail-on warn, also when
it starts degraded or an image leaves a condition), 0 otherwise, 2 usage or
I/O error.`,
		Example: `  kubeletcfg preflight
  kubeletcfg preflight --root /mnt/node-image --kubelet-version 1.35
  kubeletcfg preflight --fail-on warn -o json
  kubeletcfg preflight --pid-file /run/kubelet.pid -- /usr/local/bin/kubelet-1.37 --config=/etc/kubelet.yaml
  kubeletcfg preflight --root /mnt/node-image --containerd-config /etc/containerd/config.toml`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.failOn != "refusal" && f.failOn != "warn" {
				return fmt.Errorf("--fail-on %q: must be refusal or warn", f.failOn)
			}
			src := f.setupSource(s, args, cmd.ArgsLenAtDash() >= 0)
			ask, err := f.runtimeFlags.asker(src.Root)
			if err != nil {
				return err
			}
			res, err := preflight.Run(cmd.Context(), preflight.Options{Setup: src, Runtime: preflight.CRI(ask), PIDFile: f.pidFile})
			if err != nil {
				return err
			}
			if err := f.output.Print(s.Out, res, func() error { printPreflight(s, res); return nil }); err != nil {
				return err
			}
			if res.Refused() || (f.failOn == "warn" && res.Warned()) {
				return errCheckFailed
			}
			return nil
		},
	}
	f.setupFlags.bind(cmd.Flags())
	f.runtimeFlags.bind(cmd.Flags())
	cmd.Flags().StringVar(&f.pidFile, "pid-file", "", "file with the running kubelet's PID: the ports it holds are its own (default: a process named kubelet)")
	cmd.Flags().StringVar(&f.failOn, "fail-on", "refusal", "exit 1 on: refusal, or warn (also when it starts degraded or a condition is left)")
	f.output = printer.Flag(cmd.Flags(), printer.Text, printer.JSON)
	return cmd
}

func printPreflight(s streams, r *preflight.Result) {
	w := s.Out
	verdict := "starts"
	if !r.Starts {
		verdict = "REFUSES TO START"
	} else if r.Warned() {
		verdict = "starts (see the warnings)"
	}
	where := "on this host"
	if !r.Live {
		where = "from this image (host facts are conditions)"
	}
	fmt.Fprintf(w, "kubelet %s %s: %s\n", r.KubeletVersion, where, verdict)
	for _, f := range r.Findings {
		subject := f.Field
		if f.Flag != "" {
			subject = "--" + f.Flag
		}
		line := fmt.Sprintf("  %-9s %s: %s", f.Status, f.Class, f.Fact)
		if subject != "" {
			line += fmt.Sprintf(" [%s=%s", subject, f.Value)
			if f.Origin != nil {
				line += " from " + f.Origin.Text
			}
			line += "]"
		}
		fmt.Fprintln(w, warning.Truncate(line, maxErrorLen))
		if f.Fix != "" && f.Status != preflight.OK {
			fmt.Fprintf(w, "            fix: %s\n", warning.Truncate(f.Fix, maxErrorLen))
		}
	}
	for _, n := range r.NotChecked {
		fmt.Fprintf(s.ErrOut, "note: not checked: %s: %s\n", n.Class, n.Why)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(s.ErrOut, "note: %s\n", warning.Truncate(n, maxErrorLen))
	}
}

// printPreflightWarnings says what preflight found the kubelet survives
// (apply's preflight phase: its refusals are the apply's error).
func printPreflightWarnings(s streams, r *preflight.Result) {
	if r == nil {
		return
	}
	for _, f := range r.Findings {
		if f.Status == preflight.Degraded || f.Status == preflight.Condition {
			fmt.Fprintf(s.ErrOut, "preflight: %s %s: %s\n", f.Status, f.Class, warning.Truncate(f.Fact, maxErrorLen))
		}
	}
}
