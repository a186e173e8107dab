package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/kubeletcfg/kubeletcfg/apply"
	"github.com/kubeletcfg/kubeletcfg/dropins"
)

// configFileOf finds the node's --config file on disk.
func configFileOf(s streams, v versionFlags, src sourceFlags, args []string) (string, dropins.Options, error) {
	ver, err := v.resolve(s)
	if err != nil {
		return "", dropins.Options{}, err
	}
	setup := dropins.Options{Version: ver, Args: args, Root: v.root}
	if len(args) == 0 {
		k, err := src.commandLine(v.root, s)
		if err != nil {
			return "", setup, err
		}
		setup.Args, setup.ArgSources, setup.LookupEnv = k.Args, k.Sources, k.LookupEnv
	}
	res, err := dropins.Effective(setup)
	if err != nil {
		return "", setup, err
	}
	if res.ConfigFile == "" {
		return "", setup, fmt.Errorf("the kubelet runs without --config")
	}
	path := res.ConfigFile
	if v.root != "" {
		path = filepath.Join(v.root, path)
	}
	return path, setup, nil
}

func newBackupsCmd(s streams) *cobra.Command {
	var v versionFlags
	var src sourceFlags
	cmd := &cobra.Command{
		Use:     "backups [-- KUBELET_ARGS]",
		Short:   "List the backups apply made of the node's kubelet config file, oldest first",
		Example: "  kubeletcfg backups\n  kubeletcfg backups --root /mnt/node-image",
		RunE: func(cmd *cobra.Command, args []string) error {
			path, _, err := configFileOf(s, v, src, args)
			if err != nil {
				return err
			}
			list, err := apply.Backups(path)
			if err != nil {
				return err
			}
			for _, b := range list {
				st, err := os.Stat(b)
				if err != nil {
					return err
				}
				fmt.Fprintf(s.Out, "%s\t%s\t%d bytes\n", b, st.ModTime().Format("2006-01-02 15:04:05"), st.Size())
			}
			if len(list) == 0 {
				fmt.Fprintf(s.Out, "no backups of %s\n", path)
			}
			return nil
		},
	}
	v.bind(cmd.Flags())
	src.bind(cmd.Flags())
	return cmd
}

func newRollbackCmd(s streams) *cobra.Command {
	f := &applyFlags{}
	var to string
	cmd := &cobra.Command{
		Use:   "rollback --node NAME [--to BACKUP] [--restart-command CMD] [-- KUBELET_ARGS]",
		Short: "Put a backup of the kubelet config file back, as safely as apply puts a new one",
		Long: `rollback applies a backup (the newest, or --to) the way apply applies a new
file: validated, backed up itself, written atomically, the kubelet restarted and
watched, and rolled back again if it does not come up.`,
		Example: "  kubeletcfg rollback --node node-1 --restart-command 'systemctl restart kubelet'",
		RunE: func(cmd *cobra.Command, args []string) error {
			path, _, err := configFileOf(s, f.versionFlags, f.sourceFlags, args)
			if err != nil {
				return err
			}
			if to == "" {
				list, err := apply.Backups(path)
				if err != nil {
					return err
				}
				if len(list) == 0 {
					return fmt.Errorf("no backups of %s", path)
				}
				to = list[len(list)-1]
			}
			f.file = to
			return runApply(cmd, s, f, args)
		},
	}
	bindApplyFlags(cmd, f)
	cmd.Flags().StringVar(&to, "to", "", "the backup to put back (default: the newest)")
	return cmd
}
