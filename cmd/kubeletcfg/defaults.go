package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kubeletcfg/kubeletcfg/config"
	"github.com/kubeletcfg/kubeletcfg/internal/printer"
)

type defaultsFlags struct {
	versionFlags
	flagsBaseline bool
	output        *printer.Output
}

func newDefaultsCmd(s streams) *cobra.Command {
	f := &defaultsFlags{}
	cmd := &cobra.Command{
		Use:   "defaults",
		Short: "Print the configuration a kubelet version runs with when nothing is set",
		Long: `defaults prints the fully defaulted KubeletConfiguration exactly as the kubelet
version fills it in for a --config file that sets nothing. With --flags-baseline
it prints what the kubelet starts from when it has no --config file at all: the
legacy flag defaults (anonymous authentication on, authorization AlwaysAllow,
read-only port 10255, no evictionHard).`,
		Example: `  kubeletcfg defaults --kubelet-version 1.37
  kubeletcfg defaults --kubelet-version 1.30 --flags-baseline -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v, err := f.resolve(s)
			if err != nil {
				return err
			}
			raw := v.Defaults()
			if f.flagsBaseline {
				raw = v.FlagsBaseline()
			}
			out, err := config.Render(raw, string(f.output.Format()))
			if err != nil {
				return err
			}
			_, err = fmt.Fprint(s.Out, string(out))
			return err
		},
	}
	f.bind(cmd.Flags())
	cmd.Flags().BoolVar(&f.flagsBaseline, "flags-baseline", false, "print the baseline of a kubelet run without --config")
	// The document is a KubeletConfiguration, not one of kubeletcfg's shapes.
	f.output = printer.Flag(cmd.Flags(), printer.YAML, printer.JSON)
	return cmd
}
