package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
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
	err := root.Execute()
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errCheckFailed):
		return exitFailed
	case errors.Is(err, errRolledBack):
		return exitRolledBack
	default:
		fmt.Fprintf(s.ErrOut, "kubeletcfg: %v\n", err)
		return exitUsage
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
		newMigrateCmd(s),
		newDiffCmd(s),
		newFleetCmd(s),
		newApplyCmd(s),
		newRollbackCmd(s),
		newBackupsCmd(s),
		newGuardCmd(),
	)
	return root
}
