package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kubeletcfg/kubeletcfg/explain"
)

func newExplainCmd(s streams) *cobra.Command {
	f := &versionFlags{}
	cmd := &cobra.Command{
		Use:   "explain FIELD",
		Short: "Describe a KubeletConfiguration field in a kubelet version",
		Long: `explain prints a field's type, its default in the kubelet version, the first
version that has it, the command-line flag that used to set it, and its upstream
description. FIELD is a JSON path such as maxPods or authentication.webhook.cacheTTL.`,
		Example: `  kubeletcfg explain evictionHard
  kubeletcfg explain authentication.webhook.cacheTTL --kubelet-version 1.30`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			v, err := f.resolve(s)
			if err != nil {
				return err
			}
			text, err := explain.Field(args[0], v)
			if err != nil {
				return err
			}
			_, err = fmt.Fprint(s.Out, text)
			return err
		},
	}
	f.bind(cmd.Flags())
	return cmd
}
