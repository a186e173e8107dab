package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kubeletcfg/kubeletcfg/filecheck"
	"github.com/kubeletcfg/kubeletcfg/internal/printer"
	"github.com/kubeletcfg/kubeletcfg/warning"
)

type validateFlags struct {
	versionFlags
	output             *printer.Output
	configDir          string
	allowUnknownFields bool
}

func newValidateCmd(s streams) *cobra.Command {
	f := &validateFlags{}
	cmd := &cobra.Command{
		Use:   "validate FILE",
		Short: "Check a KubeletConfiguration the way a kubelet version would",
		Long: `validate decodes FILE strictly (unknown fields and duplicate keys are errors,
each with its line), applies the kubelet version's defaults, and runs that
version's validation and start-up checks. The verdict is the kubelet's.

Exit codes: 0 valid, 1 invalid, 2 usage or I/O error.`,
		Example: `  kubeletcfg validate --kubelet-version 1.31 /var/lib/kubelet/config.yaml
  kubeletcfg validate -o json config.yaml
  kubeletcfg validate --config-dir /etc/kubernetes/kubelet.conf.d /var/lib/kubelet/config.yaml
  kubeletcfg validate --allow-unknown-fields config.yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			v, err := f.resolve(s)
			if err != nil {
				return err
			}
			res, err := filecheck.File(filecheck.Options{File: args[0], ConfigDir: f.configDir, Version: v, AllowUnknownFields: f.allowUnknownFields})
			if err != nil {
				return err
			}
			err = f.output.Print(s.Out, res, func() error {
				for _, e := range res.Errors {
					fmt.Fprintf(s.Out, "error: %s\n", warning.Truncate(fmt.Sprint(e), maxErrorLen))
				}
				warning.Print(s.ErrOut, res.Warnings)
				fmt.Fprintf(s.Out, "%s: %s\n", args[0], res.Summary())
				return nil
			})
			if err != nil {
				return err
			}
			if !res.Valid {
				return errCheckFailed
			}
			return nil
		},
	}
	f.bind(cmd.Flags())
	f.output = printer.Flag(cmd.Flags(), printer.Text, printer.JSON)
	cmd.Flags().StringVar(&f.configDir, "config-dir", "", "drop-in directory merged over FILE as the kubelet version merges it, before validation")
	cmd.Flags().BoolVar(&f.allowUnknownFields, "allow-unknown-fields", false, "report unknown fields as warnings instead of errors")
	return cmd
}
