package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/kubeletcfg/kubeletcfg/internal/printer"
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

// errCheckFailed is returned by a command whose check failed after it printed
// its result: exit 1, nothing more to print.
var errCheckFailed = errors.New("check failed")

// errReported is returned by a command that printed its result and said on
// stderr why it exits 2: nothing more to print.
var errReported = errors.New("reported")

func run(args []string, s streams) int {
	root := newRootFor(s, args)
	root.SetArgs(args)
	cmd, err := root.ExecuteC()
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errCheckFailed):
		return exitFailed
	case errors.Is(err, errReported):
		return exitUsage
	case errors.Is(err, errRolledBack):
		return exitRolledBack
	default:
		msg := warning.Truncate(err.Error(), maxErrorLen)
		if printer.Of(cmd).JSON() {
			_ = printer.WriteJSON(s.Out, map[string]string{"error": msg})
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

// commands are kubeletcfg's commands by name, in the order help lists them.
var commands = []struct {
	name string
	make func(streams) *cobra.Command
}{
	{"version", newVersionCmd},
	{"validate", newValidateCmd},
	{"defaults", newDefaultsCmd},
	{"explain", newExplainCmd},
	{"effective", newEffectiveCmd},
	{"audit", newAuditCmd},
	{"migrate", newMigrateCmd},
	{"diff", newDiffCmd},
	{"fleet", newFleetCmd},
	{"kubeadm", newKubeadmCmd},
	{"apply", newApplyCmd},
	{"rollout", newRolloutCmd},
	{"rollback", newRollbackCmd},
	{"backups", newBackupsCmd},
	{"__guard", func(streams) *cobra.Command { return newGuardCmd() }},
	{"__in-host", func(streams) *cobra.Command { return newInHostCmd() }},
	{"recover", newRecoverCmd},
	{"why", newWhyCmd},
	{"preflight", newPreflightCmd},
}

// newRootFor is the root with only the command args run, when they name
// one first: building every command and its flags takes a fifth of a
// millisecond. Help, completion and anything else get them all.
func newRootFor(s streams, args []string) *cobra.Command {
	if len(args) > 0 {
		for _, c := range commands {
			if c.name == args[0] {
				return rootWith(s, c.make(s))
			}
		}
	}
	return newRoot(s)
}

func newRoot(s streams) *cobra.Command {
	cmds := make([]*cobra.Command, len(commands))
	for i, c := range commands {
		cmds[i] = c.make(s)
	}
	return rootWith(s, cmds...)
}

func rootWith(s streams, cmds ...*cobra.Command) *cobra.Command {
	root := &cobra.Command{
		Use:   "kubeletcfg",
		Short: "Own a node's kubelet configuration, exactly as its kubelet version reads it",
		Long: `kubeletcfg owns a node's kubelet configuration end to end, exactly as each
kubelet version from 1.28 on reads it (generated from the kubelet's own code):

  validate   check a KubeletConfiguration (and its drop-ins) as a version would
  defaults   print a version's defaults
  explain    explain a field: type, default, versions, flag
  effective  what the kubelet really runs: unit, drop-ins, env files, flags,
             config file and --config-dir merged, with where each value comes from
  audit      the CIS kubelet checks and operational rules on what it runs
  migrate    move command-line flags into the config file, checked equivalent
  diff       compare two configs, the running kubelet (--live), or preflight an
             upgrade (--to-version)
  fleet      every node's running configuration through the API server, grouped
  apply      change the config file or drop-ins (or migrate): backup, write,
             restart, watch, roll back
  rollout    apply a change to many nodes as Kubernetes Jobs: canary, batches,
             soak, stop at the first rollback
  rollback   put a backup back; backups lists them; recover finishes an
             interrupted apply

Every file on the node is read as untrusted: with a size limit, regular files
only, and under --root nothing outside the image. Warnings (what the kubelet or
systemd drops silently) go to stderr, and into -o json.

Exit codes: 0 ok, 1 the check failed (invalid, differs), 2 usage or I/O error
(or kubeletcfg's own refusal, such as a file over its size limit).`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(s.In)
	root.SetOut(s.Out)
	root.SetErr(s.ErrOut)
	root.SetFlagErrorFunc(printer.FlagError)
	root.AddCommand(cmds...)
	strictCompletion(root)
	return root
}
