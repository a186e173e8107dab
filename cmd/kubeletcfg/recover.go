package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubeletcfg/kubeletcfg/apply"
	"github.com/kubeletcfg/kubeletcfg/cluster"
	"github.com/kubeletcfg/kubeletcfg/node"
)

type recoverFlags struct {
	restart        apply.RestartSpec
	root, stateDir string
	boot           bool
	access         node.ViaAPIServer
}

func newRecoverCmd(s streams) *cobra.Command {
	f := &recoverFlags{}
	cmd := &cobra.Command{
		Use:   "recover [--restart-command CMD --pid-file FILE | --unit UNIT] [--boot]",
		Short: "Finish an apply that was interrupted: its old files back, when they still hold what it wrote",
		Long: `recover reads the journal an apply left in kubeletcfg's state directory when it
was interrupted before it confirmed its change (killed, the machine rebooted, its
guard gone too). When every file the apply changed still holds what the apply
wrote, or what was there before, the old files are put back (renamed from the
copies staged beside them) and the kubelet is restarted; the journal goes. If
someone changed a file since, recover changes nothing and says which file: put
it right by hand, then remove the journal. It runs under the node's lock. The
restart is the one given here, never one read from the journal.

--boot is for the boot-time unit kubeletcfg-recover.service, ordered before
the kubelet's unit: an apply recorded in an earlier boot (its boot ID) is undone
and nothing is restarted (the kubelet starts on the old files next). apply
installs that unit (/etc/systemd/system, enabled in the kubelet unit's .wants)
the first time it runs under systemd without --root.

With --kubeconfig, a cordon kubeletcfg left on the node (the annotation
kubeletcfg.io/cordoned-by: an apply killed after its cordon, even during its
drain with nothing written) is lifted once the kubelet has reported Ready again;
an operator's cordon stays. The guard apply leaves does the same after its own
recovery.

Exit codes: 0 recovered or nothing to recover, 2 refused or failed.`,
		Example: "  kubeletcfg recover\n  kubeletcfg recover --restart-command 'systemctl restart kubelet' --pid-file /run/kubelet.pid",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			o := apply.RecoverOptions{StateDir: apply.StateDirOf(f.root, f.stateDir), Root: f.root, Progress: s.ErrOut, Boot: f.boot}
			if !f.boot {
				if err := f.restart.Check(f.root); err != nil {
					return fmt.Errorf("%w, or --boot to restore without a restart", err)
				}
				o.Restarter = f.restart.Restarter()
			}
			if f.access.Kubeconfig != "" {
				if o.Uncordon, err = cluster.Lifter(f.access, f.restart.Timeout, s.ErrOut); err != nil {
					return err
				}
			}
			j, err := apply.Recover(cmd.Context(), o)
			if err != nil {
				return err
			}
			if j == nil {
				fmt.Fprintf(s.Out, "nothing to recover in %s\n", o.StateDir)
				return nil
			}
			fmt.Fprintf(s.Out, "recovered apply %s of %s: its old files are back\n", j.ID, j.ConfigFile)
			return nil
		},
	}
	fl := cmd.Flags()
	bindRestart(fl, &f.restart.Command, &f.restart.PIDFile, &f.restart.Log, &f.restart.Unit)
	fl.DurationVar(&f.restart.Timeout, "restart-timeout", 2*time.Minute, "how long the restart may take")
	fl.StringVar(&f.root, "root", "", "the node's tree (an image), when not this host")
	fl.StringVar(&f.stateDir, "state-dir", "", "kubeletcfg's own directory (default "+apply.DefaultStateDir+", inside --root when given)")
	fl.BoolVar(&f.boot, "boot", false, "at boot, before the kubelet starts: put the files back, restart nothing")
	fl.StringVar(&f.access.Kubeconfig, "kubeconfig", "", "lift a cordon kubeletcfg left on the node (its kubeletcfg.io/cordoned-by mark) once the kubelet reports Ready again; an operator's cordon stays")
	fl.StringVar(&f.access.Context, "context", "", "the kubeconfig context to use")
	fl.StringVar(&f.access.Node, "node", "", "the node's name on the API server (default: as the kubelet names it)")
	return cmd
}
