package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kubeletcfg/kubeletcfg/apply"
)

func newBackupsCmd(s streams) *cobra.Command {
	var root, stateDir string
	cmd := &cobra.Command{
		Use:   "backups",
		Short: "List the backups apply kept (kubeletcfg's own, numbered), oldest first",
		Long: `backups lists the records apply keeps in kubeletcfg's state directory: for each
apply, its number, when and by whom it ran, its ID, how it ended, what it changed
and the files it replaced (with the dated copy it also left beside each file).
rollback --to N puts the config file of record N back. --keep-backups prunes
these records and their dated copies only, never a copy made by hand.`,
		Example: "  kubeletcfg backups\n  kubeletcfg backups --root /mnt/node-image",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir := apply.StateDirOf(root, stateDir)
			list, err := apply.Records(dir)
			if err != nil {
				return err
			}
			for _, r := range list {
				outcome := r.Outcome
				if outcome == "" {
					outcome = "unfinished"
				}
				fmt.Fprintf(s.Out, "%d\t%s\t%s\tapply %s\t%s\t%s\n", r.N, r.Time.Local().Format("2006-01-02 15:04:05"), r.Who, r.ApplyID, outcome, strings.Join(r.Changes, ", "))
				for _, f := range r.Files {
					fmt.Fprintf(s.Out, "\t%s", f.Path)
					if f.Beside != "" {
						fmt.Fprintf(s.Out, " (also %s)", f.Beside)
					}
					if f.Copy == "" {
						fmt.Fprint(s.Out, " (created by the apply)")
					}
					fmt.Fprintln(s.Out)
				}
			}
			if len(list) == 0 {
				fmt.Fprintf(s.Out, "no backups in %s\n", dir)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&root, "root", "", "the node's tree (an image), when not this host")
	cmd.Flags().StringVar(&stateDir, "state-dir", "", "kubeletcfg's own directory (default "+apply.DefaultStateDir+", inside --root when given)")
	return cmd
}

func newRollbackCmd(s streams) *cobra.Command {
	f := &applyFlags{}
	var to string
	cmd := &cobra.Command{
		Use:   "rollback --node NAME [--to N | --to FILE] [--restart-command CMD --pid-file FILE] [-- KUBELET_ARGS]",
		Short: "Put a backup of the kubelet config file back, as safely as apply puts a new one",
		Long: `rollback puts a backup back — record N of kubeletcfg backups (default: the
newest record of a change that took effect, named on stderr), or a file — the
way apply applies a change: validated, backed up itself, written atomically, the
kubelet restarted and watched, and rolled back again if it does not come up.
A record is put back whole, as one transaction: every file it kept (the config
file, drop-ins, the env files a --from-migrate rewrote) gets its old content,
every file its apply created goes, and a migration's command line is the
kubelet's again.`,
		Example: "  kubeletcfg rollback --node node-1\n  kubeletcfg rollback --node node-1 --to 3",
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := strconv.Atoi(to)
			if err != nil && to != "" {
				// A file: applied as apply -f applies it.
				f.change.File = to
				return runApply(cmd, s, f, args)
			}
			if err := f.checkNonNegative(); err != nil {
				return err
			}
			if f.opts.Node == "" {
				return fmt.Errorf("--node is required")
			}
			setup, err := f.setup(s, args, cmd.ArgsLenAtDash() >= 0)
			if err != nil {
				return err
			}
			o := f.opts
			o.Setup = setup
			rec, err := apply.RestoreRecord(apply.StateDirOf(f.root, o.StateDir), n, &o)
			if err != nil {
				return err
			}
			var files []string
			for _, rf := range rec.Files {
				files = append(files, rf.Path)
			}
			fmt.Fprintf(s.ErrOut, "rollback: putting back backup %d (apply %s of %s, %s: %s): %s\n",
				rec.N, rec.ApplyID, rec.Time.Local().Format("2006-01-02 15:04:05"), rec.Outcome, strings.Join(rec.Changes, ", "), strings.Join(files, ", "))
			return applyWith(cmd, s, f, o, apply.Run)
		},
	}
	bindApplyFlags(cmd, f)
	cmd.Flags().StringVar(&to, "to", "", "the backup to put back: a number from kubeletcfg backups, or a file (default: the newest record of a change that took effect)")
	return cmd
}
