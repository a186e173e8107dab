package main

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kubeletcfg/kubeletcfg/audit"
	"github.com/kubeletcfg/kubeletcfg/internal/printer"
	"github.com/kubeletcfg/kubeletcfg/warning"
)

type auditFlags struct {
	setupFlags
	runtimeFlags
	benchmark string
	sections  []string
	output    *printer.Output
	failOn    string
	fixTo     string
	podCIDR   string
	// kubeconfig and kubeContext read kubeadm's ConfigMaps for the
	// ops.kubeadm rule.
	kubeconfig, kubeContext string
	kubeadmSrc              kubeadmSource
}

func newAuditCmd(s streams) *cobra.Command {
	f := &auditFlags{}
	cmd := &cobra.Command{
		Use:   "audit [flags] [-- KUBELET_ARGS...]",
		Short: "Judge the kubelet's effective configuration against the CIS benchmark or the DISA STIG, and operational rules",
		Long: `audit runs the kubelet checks of the CIS Kubernetes Benchmark (4.1: the
kubelet's files on the node, 4.2: its settings) for the benchmark version that
matches the kubelet version, or with --benchmark stig the kubelet rules of the
DISA Kubernetes STIG (release of 2025-05-16: an option on the command line is
itself a finding, a setting counts only in the config file or its drop-ins),
and operational rules an SRE reviewing the node would apply (--section ops). Settings are judged on the effective
configuration, as 'kubeletcfg effective' layers it: command line, config file,
drop-ins and the version's defaults, or the flags-only defaults when there is
no config file. Each result names the value, where it came from and the
change that fixes it; --fix-to writes the config file with every fixable
failure fixed, for review and 'kubeletcfg apply -f'.

On a node kubeadm set up, ops.kubeadm compares config.yaml with what the next
kubeadm upgrade node writes (--kubeconfig, or --kubeadm-configmap FILE): each
value it would revert, with kubeadm's value and where that comes from.

Without a command line after --, audit reads the node's kubelet.service, its
drop-ins and environment files (under --root for an offline node image).

Exit codes: 0 nothing at or above --fail-on, 1 a check failed (or warned,
with --fail-on warn), 2 usage or I/O error.`,
		Example: `  kubeletcfg audit
  kubeletcfg audit --root /mnt/node-image --kubelet-version 1.31 --section cis
  kubeletcfg audit --kubelet-version 1.30 -o json -- --config=/etc/kubelet/config.yaml --kubeconfig=/etc/kubernetes/kubelet.conf
  kubeletcfg audit --root /mnt/node-image --fix-to /tmp/config.fixed.yaml
  kubeletcfg audit --benchmark stig --section stig`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.failOn != "fail" && f.failOn != "warn" {
				return fmt.Errorf("--fail-on %q: must be fail or warn", f.failOn)
			}
			setup, err := f.setup(s, args, cmd.ArgsLenAtDash() >= 0)
			if err != nil {
				return err
			}
			if err := f.runtimeFlags.attach(setup); err != nil {
				return err
			}
			ko, err := f.kubeadmSrc.options(f.kubeconfig, f.kubeContext)
			if err != nil {
				return err
			}
			rep, err := audit.Run(audit.Options{Setup: setup, Benchmark: f.benchmark, Sections: f.sections, PodCIDR: f.podCIDR, Kubeadm: &ko})
			if err != nil {
				return err
			}
			warning.Print(s.ErrOut, rep.Warnings())
			if f.fixTo != "" {
				if err := writeFixed(s, rep, f.fixTo); err != nil {
					return err
				}
			}
			if err := f.output.Print(s.Out, rep, func() error { printAudit(s, rep); return nil }); err != nil {
				return err
			}
			if rep.Count(audit.Fail) > 0 || (f.failOn == "warn" && rep.Count(audit.Warn) > 0) {
				return errCheckFailed
			}
			return nil
		},
	}
	f.setupFlags.bind(cmd.Flags())
	f.runtimeFlags.bind(cmd.Flags())
	fl := cmd.Flags()
	fl.StringVar(&f.benchmark, "benchmark", "auto", "profile: "+strings.Join(audit.Benchmarks(), ", ")+" (auto: the CIS benchmark for the kubelet version)")
	stringSliceVar(fl, &f.sections, "section", "sections to run: the profile's checks (cis, stig or benchmark), ops (default both)")
	f.output = printer.Flag(fl, printer.Text, printer.JSON)
	fl.StringVar(&f.failOn, "fail-on", "fail", "exit 1 on: fail, or warn (fail or warn)")
	fl.StringVar(&f.fixTo, "fix-to", "", "write the config file with every fixable failure fixed to this new file (never over an existing one)")
	fl.StringVar(&f.podCIDR, "pod-cidr", "", "the node's pod CIDR (its spec.podCIDR), for the maxPods rule")
	fl.StringVar(&f.kubeconfig, "kubeconfig", "", "read kubeadm's kubelet-config ConfigMap through the API server, for the ops.kubeadm rule (what the next kubeadm upgrade node reverts)")
	fl.StringVar(&f.kubeContext, "context", "", "the kubeconfig context to use")
	f.kubeadmSrc.bind(fl)
	return cmd
}

// writeFixed writes the fixed config to a new file, never over one.
func writeFixed(s streams, rep *audit.Report, path string) error {
	notes, err := rep.WriteFixed(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return fmt.Errorf("--fix-to: %w", err)
		}
		return fmt.Errorf("--fix-to %w", err)
	}
	fmt.Fprintf(s.ErrOut, "note: wrote %s with %d fixes, valid for kubelet %s (review it, then kubeletcfg apply -f %s)\n", path, len(rep.Fixes()), rep.KubeletVersion, path)
	for _, n := range notes {
		fmt.Fprintf(s.ErrOut, "note: %s\n", n)
	}
	return nil
}

func printAudit(s streams, rep *audit.Report) {
	profile := "CIS Kubernetes Benchmark " + rep.Benchmark
	if rep.Benchmark == "stig" {
		profile = "DISA Kubernetes STIG"
	}
	fmt.Fprintf(s.Out, "# audit of kubelet %s: %s, operational rules\n", rep.KubeletVersion, profile)
	for _, n := range rep.Notes {
		fmt.Fprintf(s.Out, "# note: %s\n", n)
	}
	for _, r := range rep.Results {
		fmt.Fprintf(s.Out, "%-6s %-16s %s\n", strings.ToUpper(string(r.Status)), r.ID, r.Title)
		val := r.Value
		if r.Origin != "" {
			val += "  # " + r.Origin
		}
		fmt.Fprintf(s.Out, "       value: %s\n", val)
		if r.Detail != "" {
			fmt.Fprintf(s.Out, "       found: %s\n", r.Detail)
		}
		if r.Status != audit.Pass {
			if r.Reason != "" {
				fmt.Fprintf(s.Out, "       why:   %s\n", r.Reason)
			}
			if r.Remediation != "" {
				fmt.Fprintf(s.Out, "       fix:   %s\n", r.Remediation)
			}
		}
	}
	fmt.Fprintf(s.Out, "%d pass, %d fail, %d warn, %d manual, %d n/a\n", rep.Count(audit.Pass), rep.Count(audit.Fail), rep.Count(audit.Warn), rep.Count(audit.Manual), rep.Count(audit.NotApplicable))
}
