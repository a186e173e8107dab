package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"strings"

	"github.com/spf13/cobra"

	"github.com/kubeletcfg/kubeletcfg/config"
	"github.com/kubeletcfg/kubeletcfg/effective"
	"github.com/kubeletcfg/kubeletcfg/internal/printer"
	"github.com/kubeletcfg/kubeletcfg/warning"
)

type effectiveFlags struct {
	setupFlags
	runtimeFlags
	config     string
	configDir  string
	showOrigin bool
	output     *printer.Output
}

func newEffectiveCmd(s streams) *cobra.Command {
	f := &effectiveFlags{}
	cmd := &cobra.Command{
		Use:   "effective [flags] [-- KUBELET_ARGS...]",
		Short: "Show the configuration the kubelet will actually run, and where each value came from",
		Long: `effective layers a kubelet setup exactly as the kubelet version does: its
defaults (or, without --config, the flags-only baseline), the --config file, the
--config-dir drop-ins merged with that version's merge, and the command line on
top. It prints the result as the kubelet would serve it on /configz, then the
flags that have no config field. --show-origin names, for every field, the
default, file and line, or flag it came from.

The kubelet command line goes after -- (a bare -- is an empty command line:
the flags-only baseline); --config and --config-dir here are shorthands for
putting them there. With none of them, effective reads the node's
kubelet.service, its drop-ins and the environment files they name, as systemd
does (under --root for an offline node image).

Exit codes: 0 the kubelet starts with it, 1 the kubelet refuses to start
(its reason on stderr), 2 usage or I/O error.`,
		Example: `  kubeletcfg effective --show-origin
  kubeletcfg effective --root /mnt/node-image --kubelet-version 1.31
  kubeletcfg effective --kubelet-version 1.37 --config /var/lib/kubelet/config.yaml --config-dir /etc/kubernetes/kubelet.conf.d
  kubeletcfg effective --kubelet-version 1.31 --show-origin -- --config=/var/lib/kubelet/config.yaml --max-pods=150
  kubeletcfg effective --kubelet-version 1.30 -o json -- --max-pods=150 --eviction-hard=memory.available<500Mi`,
		RunE: func(cmd *cobra.Command, args []string) error {
			kargs, err := f.commandLine(args)
			if err != nil {
				return err
			}
			setup, err := f.setup(s, kargs, cmd.ArgsLenAtDash() >= 0)
			if err != nil {
				return err
			}
			if err := f.runtimeFlags.attach(setup); err != nil {
				return err
			}
			res, err := effective.Compute(effective.Input{Setup: setup})
			if err != nil {
				return refusal(s, err)
			}
			warning.Print(s.ErrOut, res.Warnings)
			if err := printEffective(s, f.output, res, f.showOrigin, allWarnings(setup.Warnings, res.Warnings)); err != nil {
				return err
			}
			if r := res.Verdict(); r != nil {
				return refusal(s, r)
			}
			return nil
		},
	}
	f.setupFlags.bind(cmd.Flags())
	f.runtimeFlags.bind(cmd.Flags())
	cmd.Flags().StringVar(&f.config, "config", "", "the kubelet's --config file")
	cmd.Flags().StringVar(&f.configDir, "config-dir", "", "the kubelet's --config-dir drop-in directory")
	cmd.Flags().BoolVar(&f.showOrigin, "show-origin", false, "name where every value came from")
	f.output = printer.Flag(cmd.Flags(), printer.YAML, printer.JSON)
	return cmd
}

// commandLine is the kubelet's command line given after --, with the
// --config and --config-dir shorthands put on it.
func (f *effectiveFlags) commandLine(args []string) ([]string, error) {
	kargs := append([]string(nil), args...)
	for _, a := range args {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if (name == "config" && f.config != "") || (name == "config-dir" && f.configDir != "") {
			return nil, fmt.Errorf("--%s is given both as kubeletcfg's flag and in the kubelet's command line after --: give it once", name)
		}
	}
	if f.config != "" {
		kargs = append(kargs, "--config="+f.config)
	}
	if f.configDir != "" {
		kargs = append(kargs, "--config-dir="+f.configDir)
	}
	return kargs, nil
}

func printEffective(s streams, o *printer.Output, res *effective.Result, showOrigin bool, warnings []warning.Warning) error {
	var remaining []string
	for _, fl := range res.Flags {
		remaining = append(remaining, "--"+fl.Flag.Name+"="+fl.Value)
	}
	doc := withRuntime(res, map[string]any{"kubeletVersion": res.Version.Minor, "flags": remaining, "warnings": warnings})
	var entries []effective.Entry
	var raw []byte
	var err error
	if showOrigin {
		if entries, err = res.Entries(); err != nil {
			return err
		}
		m := map[string]effective.Entry{}
		for _, e := range entries {
			m[e.Path] = e
		}
		doc["config"] = m
	} else {
		if raw, err = config.RedactedJSON(res.Runs(), res.Version); err != nil {
			return err
		}
		doc["config"] = json.RawMessage(raw)
	}
	return o.Print(s.Out, doc, func() error {
		if showOrigin {
			fmt.Fprintf(s.Out, "# effective configuration of kubelet %s, field: value  # origin\n", res.Version.Minor)
			for _, e := range entries {
				if m, ok := e.Value.(map[string]any); ok && len(e.Keys) > 0 {
					m = config.RedactValue(e.Path, m).(map[string]any)
					for _, k := range slices.Sorted(maps.Keys(m)) {
						val, _ := json.Marshal(m[k])
						fmt.Fprintf(s.Out, "%s[%q]: %s  # %s\n", e.Path, k, val, origin(e.Keys[k], res.Version.Minor))
					}
					continue
				}
				val, _ := json.Marshal(config.RedactValue(e.Path, e.Value))
				fmt.Fprintf(s.Out, "%s: %s  # %s\n", e.Path, val, origin(e.Origin, res.Version.Minor))
			}
		} else {
			out, err := config.Render(raw, "yaml")
			if err != nil {
				return err
			}
			fmt.Fprintf(s.Out, "# effective configuration of kubelet %s\n", res.Version.Minor)
			if d := res.CgroupDriver; d != nil && d.FromRuntime {
				fmt.Fprintf(s.Out, "# cgroupDriver: %s\n", d.Why)
			}
			fmt.Fprintf(s.Out, "%s", out)
		}
		if len(remaining) > 0 {
			// A comment for people: a megabyte-long flag is shortened (-o json has it whole).
			shown := make([]string, len(remaining))
			for i, r := range remaining {
				shown[i] = warning.Truncate(r, maxErrorLen)
			}
			fmt.Fprintf(s.Out, "# flags without a config field:\n#   %s\n", strings.Join(shown, "\n#   "))
		}
		if cp := res.CredentialProvider; cp != nil && cp.Read != nil {
			fmt.Fprintf(s.Out, "# credential providers (%s, plugins in %s):\n", cp.Config, cp.BinDir)
			for _, p := range cp.Read.Providers {
				fmt.Fprintf(s.Out, "#   %s: %s  # %s:%d\n", p.Name, strings.Join(p.MatchImages, ", "), p.File, p.Line)
			}
		}
		return nil
	})
}

// withRuntime adds to a JSON answer what the runtime decides (the cgroup
// driver) and the credential provider configuration, when read.
func withRuntime(res *effective.Result, m map[string]any) map[string]any {
	if res.CgroupDriver != nil {
		m["cgroupDriver"] = res.CgroupDriver
	}
	if res.CredentialProvider != nil {
		m["credentialProvider"] = res.CredentialProvider
	}
	return m
}

// refusal prints the kubelet's refusal to start, reason by reason, and
// makes the command exit 1; any other error is returned as it is.
func refusal(s streams, err error) error {
	var r *effective.Refused
	if !errors.As(err, &r) {
		return err
	}
	for _, reason := range r.Reasons {
		fmt.Fprintf(s.ErrOut, "kubeletcfg: kubelet %s refuses to start: %s\n", r.Version, warning.Truncate(reason, maxErrorLen))
	}
	return errCheckFailed
}

func origin(o effective.Origin, minor string) string {
	if o.Kind == "default" {
		return "default (" + minor + ")"
	}
	return o.String()
}
