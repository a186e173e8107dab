package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kubeletcfg/kubeletcfg/effective"
	"github.com/kubeletcfg/kubeletcfg/internal/printer"
	"github.com/kubeletcfg/kubeletcfg/kubeadm"
	"github.com/kubeletcfg/kubeletcfg/migrate"
	"github.com/kubeletcfg/kubeletcfg/warning"
)

type migrateFlags struct {
	setupFlags
	output     *printer.Output
	configPath string
	noVerify   bool
	outputDir  string
	secure     bool
}

func newMigrateCmd(s streams) *cobra.Command {
	f := &migrateFlags{}
	cmd := &cobra.Command{
		Use:   "migrate [flags] [-- KUBELET_ARGS...]",
		Short: "Turn legacy kubelet flags into a KubeletConfiguration for a kubelet version",
		Long: `migrate reads the kubelet's old command line (and the old --config file and
--config-dir drop-ins it names) the way the target kubelet version would, and
writes the KubeletConfiguration that, with the remaining flags, gives exactly
the same effective configuration: only what differs from the version's
config-file defaults, and only flags without a config field left as flags.
Flags the version no longer has are listed as removed, with the reason. Legacy
flag defaults the old setup relied on (anonymous authentication, AlwaysAllow,
read-only port 10255, no evictionHard) are written out and reported, with the
CIS checks they fail; --secure writes the secure values instead.

Before printing, migrate lays the new setup the way the kubelet would and
checks it gives the old effective configuration. When the target kubelet
would refuse to start with it (as with the old setup), migrate prints the
migration and exits 1 with the kubelet's reason (and writes no --output-dir).`,
		Example: `  kubeletcfg migrate                       # the node's kubelet.service, drop-ins and env files
  kubeletcfg migrate --root /mnt/node-image --kubelet-version 1.31
  kubeletcfg migrate --from /var/lib/kubelet/kubeadm-flags.env --from /etc/default/kubelet
  kubeletcfg migrate --kubelet-version 1.31 -- --kubeconfig=/etc/kubernetes/kubelet.conf --max-pods=150 --eviction-hard=memory.available<500Mi
  kubeletcfg migrate --kubelet-version 1.37 -o json -- $(cat /proc/$(pidof kubelet)/cmdline | tr '\0' ' ' | cut -d' ' -f2-)`,
		RunE: func(cmd *cobra.Command, args []string) error {
			setup, err := f.setup(s, args, cmd.ArgsLenAtDash() >= 0)
			if err != nil {
				return err
			}
			res, err := migrate.Checked(migrate.Options{ConfigPath: f.configPath, Setup: setup},
				migrate.Checks{NoVerify: f.noVerify, Secure: f.secure, Dir: f.outputDir})
			if err != nil && res == nil {
				return refusal(s, err) // the old setup's error, placed on the node
			}
			if r, ok := err.(*effective.Refused); ok {
				return refusal(s, r)
			} else if err != nil {
				return err // a check of the migration failed
			}
			if f.outputDir != "" {
				files := migrate.Files
				if res.KubeadmPatch != nil {
					files = append(append([]string(nil), files...), kubeadm.PatchFileName)
				}
				fmt.Fprintf(s.Out, "wrote %s in %s\n", strings.Join(files, ", "), f.outputDir)
				return nil
			}
			if err := f.output.Print(s.Out, res, func() error { return printMigration(s, res) }); err != nil {
				return err
			}
			if r := res.Refused; r != nil {
				return refusal(s, r)
			}
			return nil
		},
	}
	f.setupFlags.bind(cmd.Flags())
	f.output = printer.Flag(cmd.Flags(), printer.YAML, printer.JSON)
	cmd.Flags().StringVar(&f.configPath, "config-path", "/var/lib/kubelet/config.yaml", "where the new config file will live (named by the remaining --config flag)")
	cmd.Flags().StringVar(&f.outputDir, "output-dir", "", "write config.yaml, kubelet-flags.env (the remaining flags), migration.json and report.txt into this directory (never over existing files)")
	cmd.Flags().BoolVar(&f.noVerify, "no-verify", false, "skip the check that the new setup gives the old effective configuration")
	cmd.Flags().BoolVar(&f.secure, "secure", false, "write the secure values instead of the legacy defaults that fail a CIS check (anonymous authentication, AlwaysAllow, the read-only port): a change of behaviour, unlike the rest of the migration")
	return cmd
}

func printMigration(s streams, res *migrate.Result) error {
	doc, err := res.ConfigYAML()
	if err != nil {
		return err
	}
	fmt.Fprintf(s.Out, "# Remaining flags: %s\n", warning.Truncate(strings.Join(res.Flags, " "), maxErrorLen))
	for _, r := range res.Removed {
		fmt.Fprintf(s.Out, "# Removed: %s: %s\n", r.What(), r.Reason)
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(s.Out, "# Warning: %s\n", warning.Truncate(w.String(), maxErrorLen))
	}
	_, err = s.Out.Write(doc)
	return err
}
