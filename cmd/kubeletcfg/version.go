package main

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kubeletcfg/kubeletcfg/schema"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = ""

func newVersionCmd(s streams) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print kubeletcfg's version and the kubelet versions it knows",
		Example: "  kubeletcfg version",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := version
			if v == "" {
				v = "(devel)"
				if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
					v = bi.Main.Version
				}
			}
			fmt.Fprintf(s.Out, "kubeletcfg %s\nkubelet versions: %s\n", v, strings.Join(schema.Supported(), ", "))
			return nil
		},
	}
}
