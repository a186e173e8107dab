package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kubeletcfg/kubeletcfg/warning"
)

// Exit codes every command uses.
const (
	exitOK     = 0
	exitFailed = 1 // the check failed: invalid, or differs
	exitUsage  = 2 // usage or I/O error
)

type streams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// checkFailed is returned by a command whose check failed after it printed
// its result: exit 1, nothing more to print.
var errCheckFailed = errors.New("check failed")

func run(args []string, s streams) int {
	root := newRoot(s)
	root.SetArgs(args)
	cmd, err := root.ExecuteC()
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errCheckFailed):
		return exitFailed
	case errors.Is(err, errRolledBack):
		return exitRolledBack
	default:
		msg := warning.Truncate(err.Error(), maxErrorLen)
		if o := outputFlag(cmd); o != nil && o.Value.String() == "json" {
			enc := json.NewEncoder(s.Out)
			enc.SetIndent("", "  ")
			_ = enc.Encode(map[string]string{"error": msg})
		}
		fmt.Fprintf(s.ErrOut, "kubeletcfg: %s\n", msg)
		return exitUsage
	}
}

// maxErrorLen bounds a printed error: it may quote a hostile file's word.
const maxErrorLen = 2000

// strictCompletion makes "completion SHELL" refuse a shell it does not know
// instead of printing its help.
func strictCompletion(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() == "completion" {
			c.RunE = func(_ *cobra.Command, args []string) error {
				if len(args) == 0 {
					return fmt.Errorf("completion: give a shell: bash, zsh, fish or powershell")
				}
				return fmt.Errorf("completion %s: kubeletcfg completes bash, zsh, fish and powershell", args[0])
			}
		}
	}
}

func newRoot(s streams) *cobra.Command {
	root := &cobra.Command{
		Use:   "kubeletcfg",
		Short: "Own a node's kubelet configuration, exactly as its kubelet version reads it",
		Long: `kubeletcfg knows what each kubelet version from 1.28 on accepts, defaults and
rejects, generated from the kubelet's own code. It validates a KubeletConfiguration
for a version before anything restarts, prints a version's defaults and explains
every field.

Exit codes: 0 ok, 1 the check failed (invalid, differs), 2 usage or I/O error.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(s.In)
	root.SetOut(s.Out)
	root.SetErr(s.ErrOut)
	root.AddCommand(
		newVersionCmd(s),
		newValidateCmd(s),
		newDefaultsCmd(s),
		newExplainCmd(s),
		newEffectiveCmd(s),
		newAuditCmd(s),
		newMigrateCmd(s),
		newDiffCmd(s),
		newFleetCmd(s),
		newApplyCmd(s),
		newRollbackCmd(s),
		newBackupsCmd(s),
		newGuardCmd(),
		newRecoverCmd(s),
	)
	strictCompletion(root)
	return root
}

func outputFlag(cmd *cobra.Command) *pflag.Flag {
	if cmd == nil {
		return nil
	}
	return cmd.Flags().Lookup("output")
}
