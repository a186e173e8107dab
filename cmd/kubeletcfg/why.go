package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubeletcfg/kubeletcfg/internal/printer"
	"github.com/kubeletcfg/kubeletcfg/warning"
	"github.com/kubeletcfg/kubeletcfg/why"
)

type whyFlags struct {
	setupFlags
	unit       string
	kubeletLog string
	output     *printer.Output
	timeout    time.Duration
}

func newWhyCmd(s streams) *cobra.Command {
	f := &whyFlags{}
	cmd := &cobra.Command{
		Use:   "why [flags] [-- KUBELET_ARGS...]",
		Short: "Explain why the kubelet did not start or died: the field, where it was set, and the fix",
		Long: `why reads the kubelet's words since its last start (the unit's journal, or
--kubelet-log), classifies its fatal error or panic with the table of the
kubelet's start-up refusals for its version, and explains it: the class, the
field or flag, its effective value and where it came from (file:line, drop-in,
environment file and variable, flag and the unit line), and the fix. An error
the table does not know is shown verbatim and said to be unknown; a kubelet
killed from outside is said to be that.

Exit codes: 0 nothing to fix in the configuration (no failure, or killed from
outside), 1 a refusal or an unknown error explained, 2 usage or I/O error.`,
		Example: `  kubeletcfg why
  kubeletcfg why -o json
  kubeletcfg why --root /mnt/node-image
  kubeletcfg why --kubelet-log /var/log/kubelet.log -- --config=/etc/kubelet.yaml`,
		RunE: func(cmd *cobra.Command, args []string) error {
			src := f.setupSource(s, args, cmd.ArgsLenAtDash() >= 0)
			src.Notes = nil
			x, err := why.Explain(cmd.Context(), why.Options{Setup: src, Unit: f.unit, KubeletLog: f.kubeletLog, Timeout: f.timeout})
			if err != nil {
				return err
			}
			if err := f.output.Print(s.Out, x, func() error { printWhy(s, x); return nil }); err != nil {
				return err
			}
			if x.Kind == "refusal" || x.Kind == "unknown" || x.Kind == "never-healthy" {
				return errCheckFailed
			}
			return nil
		},
	}
	f.setupFlags.bind(cmd.Flags())
	cmd.Flags().StringVar(&f.unit, "unit", "kubelet.service", "the kubelet's systemd unit, whose journal is read")
	cmd.Flags().StringVar(&f.kubeletLog, "kubelet-log", "", "read this log file of a kubelet run without systemd instead of the journal")
	f.output = printer.Flag(cmd.Flags(), printer.Text, printer.JSON)
	cmd.Flags().DurationVar(&f.timeout, "timeout", why.DefaultTimeout, "the most time spent reading the journal")
	cmd.MarkFlagsMutuallyExclusive("unit", "kubelet-log")
	return cmd
}

func printWhy(s streams, x *why.Explanation) {
	w := s.Out
	fmt.Fprintf(w, "kubelet %s: %s (%s)\n", x.KubeletVersion, x.Title, x.Class)
	if x.Field != "" || x.Flag != "" {
		what := x.Field
		if x.Flag != "" {
			what = "--" + x.Flag
			if x.Field != "" {
				what += " (" + x.Field + ")"
			}
		}
		fmt.Fprintf(w, "  concerns: %s\n", what)
	}
	if x.Value != "" {
		fmt.Fprintf(w, "  value:    %s\n", warning.Truncate(x.Value, maxErrorLen))
	}
	if x.Origin != nil {
		fmt.Fprintf(w, "  from:     %s\n", x.Origin.Text)
	}
	for _, p := range x.Problems {
		line := "  - " + firstNonEmpty(p.Field, "--"+p.Flag)
		if p.Value != "" {
			line += " = " + p.Value
		}
		if p.Origin != nil {
			line += " (" + p.Origin.Text + ")"
		}
		if p.Message != "" {
			line += ": " + p.Message
		}
		fmt.Fprintln(w, warning.Truncate(line, maxErrorLen))
	}
	fmt.Fprintf(w, "  fix:      %s\n", warning.Truncate(x.Fix, maxErrorLen))
	if x.Words != "" {
		fmt.Fprintf(w, "  kubelet:  %s\n", warning.Truncate(strings.ReplaceAll(x.Words, "\n", "\n            "), maxErrorLen))
	}
	if x.Source != "" {
		fmt.Fprintf(w, "  words of: %s\n", x.Source)
	}
	if c := x.Confirmation; c != nil && c.Field != "" {
		state := "agrees with the node's files"
		if !c.Agrees {
			state = "differs from the node's files now"
		}
		fmt.Fprintf(w, "  logged:   the kubelet's effective configuration had %s: %s (%s)\n", c.Field, c.KubeletValue, state)
	}
	if p := x.Process; p != nil {
		fmt.Fprintf(w, "  process:  pid %d", p.PID)
		if p.Exit != "" {
			fmt.Fprintf(w, ", %s", p.Exit)
		}
		if p.PanicLines > 0 {
			fmt.Fprintf(w, ", %d lines of panic trace", p.PanicLines)
		}
		fmt.Fprintln(w)
	}
	for _, n := range x.Notes {
		fmt.Fprintf(s.ErrOut, "note: %s\n", warning.Truncate(n, maxErrorLen))
	}
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" && x != "--" {
			return x
		}
	}
	return ""
}
