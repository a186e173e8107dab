package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kubeletcfg/kubeletcfg/apply"
	"github.com/kubeletcfg/kubeletcfg/cluster"
	"github.com/kubeletcfg/kubeletcfg/diff"
	"github.com/kubeletcfg/kubeletcfg/internal/printer"
	"github.com/kubeletcfg/kubeletcfg/kubeadm"
	"github.com/kubeletcfg/kubeletcfg/node"
)

// exitRolledBack: the change was applied, failed, and the old one is back.
const exitRolledBack = 3

var errRolledBack = errors.New("rolled back")

// applyFlags bind the options of an apply (opts) and the change it makes
// (change) straight to their flags.
type applyFlags struct {
	setupFlags
	runtimeFlags
	opts        apply.Options
	change      apply.Change
	fromMigrate bool
	fromKubeadm bool
	configPath  string
	// kubelet is the way to the kubelet's API; its kubeconfig is the
	// cluster's.
	kubelet apply.KubeletAccess
	output  *printer.Output
	cluster cluster.Options
	pod     podFlags
	// kubeadm checks a change of kubeadm's config.yaml on a kubeadm node.
	kubeadm apply.KubeadmOptions
}

func newApplyCmd(s streams) *cobra.Command {
	f := &applyFlags{}
	cmd := &cobra.Command{
		Use:   "apply --node NAME (-f NEW.yaml | --patch PATCH.yaml | --dropin NAME=FILE... | --remove-dropin NAME... | --from-migrate) [--restart-command CMD] [-- KUBELET_ARGS]",
		Short: "Change the node's kubelet config file or drop-ins safely: backup, atomic write, restart, health watch, rollback",
		Long: `apply lays NEW.yaml (or the drop-ins, or the migration) over the node's setup,
judges the result as the node's kubelet version does, shows what changes and
what each change takes, then (unless --dry-run) takes the node's lock, backs the
files up (config.yaml.bak.TIME, never overwriting a backup), writes them
atomically keeping owner, mode and extended attributes (SELinux label), restarts
the kubelet, and watches it. If it is not healthy, the old file is put back, the
kubelet restarted and watched again, and the cause is reported.

--patch sets some fields of the current --config file instead of replacing it
(an RFC 7386 merge patch: null removes a field); the result is judged whole.
A file change a flag or a drop-in masks is written all the same, and named in
the output (masked).

The kubelet's command line is read from the node (its unit, drop-ins and env
files, --from files, or after --). --node must name this node.

The watch. The kubelet is restarted through systemd's D-Bus API (--unit), or by
--restart-command, which needs --pid-file. The new process is pinned (its PID;
under systemd also the unit's InvocationID and NRestarts): the old kubelet's
answers never count, and a kubelet that exits or is restarted during the watch
fails it; not being able to read the unit's state fails it too. Health is the
kubelet API's /healthz on its port (10250, with the sync loop) when
--client-cert, --kubelet-ca or --insecure give a way in, else the healthz port
(10248, which answers as soon as the HTTP server runs); with healthzPort 0 only
the process is watched. The kubelet must be healthy within --health-timeout,
then stay so for --stable-for more. The default of --stable-for, 10s, comes
from the kubelet's own start-up failures measured with kubelet 1.37 (a cgroup
driver or cgroup version it cannot use, kubeReserved beyond the machine, its
port in use, a stale CPU manager checkpoint): it exits 0.04-0.95 s after its
start, and where healthz answered first, 0.06-0.1 s before the exit (0.65 s on
a loaded machine). 10s covers that many times over, and a kubelet that dies 5 s
after its healthz first answered is rolled back. A failing kubelet is seen the
moment it exits, so the window lengthens only the good applies; a rollback's
own watch lasts at most 2s (the old configuration ran before).

Safety. The lock, the journal of an apply in progress and the backups' records
live in kubeletcfg's own directory (--state-dir, default /var/lib/kubeletcfg,
inside --root): root's, mode 0700, never followed through a link. Before the
write each old file is hard-linked beside itself, so the rollback is a rename and
needs no free space. Under systemd a guard runs as a transient unit of the host
(kubeletcfg-guard-ID.service), outside the cgroup apply runs in: if apply dies
or hangs past its deadline, the guard puts the old files back and restarts the
kubelet. apply also installs kubeletcfg-recover.service, ordered before the
kubelet's unit, which undoes at boot an apply a reboot interrupted. Without
systemd (or with --root) the guard is a detached process: it survives the shell
and the SSH session, not the cgroup or container apply runs in. An apply that
finds the journal of an earlier one refuses to run: kubeletcfg recover (one
killed before it wrote anything is cleaned up instead). SIGINT or SIGTERM stops
the drain or the watch: what was done is undone (the node uncordoned) and the
result printed; a second signal kills kubeletcfg, and its guard finishes.
With --root every file is opened inside the tree (links resolved inside it),
and nothing of this host is restarted unless --restart-command is given.
With --kubeconfig the API server judges too: the restarted kubelet must turn
its Node Ready with a heartbeat after the restart and renew its Lease
(kube-node-lease/NODE) within --health-timeout, or the change is rolled back;
--verify-configz then reads /configz through the API server's node proxy (get
nodes/proxy: as much as exec in the node's containers), so a kubelet the API
server cannot reach fails; with --direct on the kubelet's own port at the
address its Node reports (get nodes, nodes/configz, nodes/statusz: the
ClusterRole in deploy/rbac.yaml). Where the kubelet serves /statusz (1.33+,
on by default from 1.36) and apply has a way in (--kubeconfig, or
--client-cert, --kubelet-ca or --insecure for --kubelet-url), its start time
before and after proves the restart besides the pinned process: a kubelet
whose /statusz contradicts the process is rolled back. --drain cordons the node and evicts
its pods first, by kubectl drain's rules; the node is uncordoned only once it is
healthy (after a rollback, once the old configuration is), and a node cordoned
before stays cordoned. Progress goes to stderr, with the time since the start.

Exit codes: 0 applied (or nothing to change), 1 a dry run that would change,
2 refused (invalid, wrong node, locked, usage or I/O error), 3 applied, failed
and rolled back.`,
		Example: `  kubeletcfg apply --node node-1 -f new-config.yaml --dry-run
  kubeletcfg apply --node node-1 --patch patch.yaml   # maxPods: 150, containerLogMaxSize: null
  kubeletcfg apply --node node-1 --dropin 50-reserved.conf=reserved.yaml
  kubeletcfg apply --node node-1 --from-migrate
  kubeletcfg apply --node node-1 -f new-config.yaml --restart-command /usr/local/sbin/restart-kubelet --pid-file /run/kubelet.pid`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.finishPod(runApply(cmd, s, f, args))
		},
	}
	bindApplyFlags(cmd, f)
	f.pod.bind(cmd.Flags())
	fl := cmd.Flags()
	fl.StringVarP(&f.change.File, "filename", "f", "", "the new config file")
	fl.StringVar(&f.change.Patch, "patch", "", "a JSON merge patch (RFC 7386, YAML or JSON) onto the --config file instead of -f: the fields it names set, null removes one, the rest kept")
	return cmd
}

// bindRestart binds the flags that say how the kubelet is restarted.
func bindRestart(fl *pflag.FlagSet, command, pidFile, logFile, unit *string) {
	fl.StringVar(command, "restart-command", "", "shell command that restarts the kubelet (default: restart --unit through systemd's D-Bus)")
	fl.StringVar(unit, "unit", "kubelet.service", "the kubelet's systemd unit, restarted over D-Bus and watched (state, main PID, InvocationID, NRestarts) when there is no --restart-command")
	fl.StringVar(pidFile, "pid-file", "", "file where the restart command leaves the kubelet's process ID (required with --restart-command): the new process is pinned, and one that exits is seen at once")
	fl.StringVar(logFile, "kubelet-log", "", "the kubelet's log file, read for the cause of a failure (with --restart-command; under systemd the unit's journal is read)")
}

// newGuardCmd is the process apply leaves behind: it waits for the apply to
// end and undoes a change the apply did not confirm.
func newGuardCmd() *cobra.Command {
	var o apply.GuardOptions
	var r apply.RestartSpec
	var access node.ViaAPIServer
	cmd := &cobra.Command{
		Use:    apply.GuardCommand + " --state-dir DIR --id ID",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Restarter, o.Progress = r.Restarter(), os.Stderr
			if access.Kubeconfig != "" {
				lift, err := cluster.Lifter(access, r.Timeout, os.Stderr)
				if err != nil {
					return err
				}
				o.Uncordon = lift
			}
			return apply.Guard(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&access.Kubeconfig, "kubeconfig", "", "lift the cordon the apply left once the kubelet is healthy again")
	cmd.Flags().StringVar(&access.Context, "context", "", "the kubeconfig context")
	cmd.Flags().StringVar(&access.Node, "node", "", "the node's name on the API server")
	cmd.Flags().StringVar(&o.StateDir, "state-dir", apply.DefaultStateDir, "kubeletcfg's state directory")
	cmd.Flags().StringVar(&o.ID, "id", "", "the apply to guard")
	cmd.Flags().StringVar(&o.Root, "root", "", "the node's tree the apply changes (its journal must be of that tree)")
	bindRestart(cmd.Flags(), &r.Command, &r.PIDFile, &r.Log, &r.Unit)
	cmd.Flags().DurationVar(&r.Timeout, "health-timeout", 30*time.Second, "how long a restart may take")
	return cmd
}

func runApply(cmd *cobra.Command, s streams, f *applyFlags, args []string) error {
	if err := f.checkNonNegative(); err != nil {
		return err
	}
	if len(f.kubelet.InsecureNodes) > 0 && !f.kubelet.Direct {
		return fmt.Errorf("--kubelet-insecure-skip-tls-verify goes with --direct (the kubelet at --kubelet-url: --insecure)")
	}
	if f.kubelet.Direct && f.cluster.Access.Kubeconfig == "" {
		return fmt.Errorf("--direct needs --kubeconfig: the Node says where its kubelet listens")
	}
	if err := f.enterHost(); err != nil {
		return err
	}
	if f.fromMigrate {
		return runApplyMigration(cmd, s, f, args)
	}
	if f.fromKubeadm {
		return runApplyFromKubeadm(cmd, s, f, args)
	}
	if err := f.change.Check(f.opts.Node); err != nil {
		return err
	}
	o := f.opts
	var err error
	if o.Setup, err = f.setup(s, args, cmd.ArgsLenAtDash() >= 0); err != nil {
		return err
	}
	if err := f.runtimeFlags.attach(o.Setup); err != nil {
		return err
	}
	if err := f.change.Into(&o); err != nil {
		return err
	}
	return applyWith(cmd, s, f, o, apply.Run)
}

func bindApplyFlags(cmd *cobra.Command, f *applyFlags) {
	f.setupFlags.bind(cmd.Flags())
	f.runtimeFlags.bind(cmd.Flags())
	fl := cmd.Flags()
	fl.StringVar(&f.opts.Node, "node", "", "the node to change: must be this node")
	fl.BoolVar(&f.opts.DryRun, "dry-run", false, "plan only: validate and show the changes")
	fl.BoolVar(&f.fromKubeadm, "from-kubeadm", false, "on a kubeadm node: write what kubeadm upgrade node writes from its kubelet-config ConfigMap (--kubeconfig or --kubeadm-configmap), this node's patches and instance-config.yaml — the ConfigMap rolled out to this node, with no drift at the next upgrade")
	fl.BoolVar(&f.fromMigrate, "from-migrate", false, "migrate the node's legacy flags: write the config file and rewrite the environment files the flags live in, in one transaction")
	fl.StringVar(&f.configPath, "config-path", "/var/lib/kubelet/config.yaml", "with --from-migrate, the config file to create when the kubelet has no --config")
	stringArrayVar(fl, &f.change.RemoveDropins, "remove-dropin", "NAME: remove the drop-in NAME from the kubelet's --config-dir (alone, or with --dropin); one that is not there is no change; repeatable")
	stringArrayVar(fl, &f.change.Dropins, "dropin", "NAME=FILE: create or replace the drop-in NAME (a .conf file name) in the kubelet's --config-dir with FILE, instead of -f; repeatable")
	fl.BoolVar(&f.opts.Drained, "drained", false, "the node is drained (changes of CPU/memory/topology manager policy need it)")
	fl.BoolVar(&f.opts.AllowInsecure, "allow-insecure", false, "apply a change that makes a CIS kubelet check fail that passes now (kubeletcfg audit); refused without it")
	fl.BoolVar(&f.opts.SkipPreflight, "skip-preflight", false, "apply a change kubeletcfg preflight says the kubelet refuses on this host (the watch and the rollback still guard it); refused without it")
	bindRestart(fl, &f.opts.Restart, &f.opts.PIDFile, &f.opts.KubeletLog, &f.opts.Unit)
	fl.StringVar(&f.opts.StateDir, "state-dir", "", "kubeletcfg's own directory: lock, journal, backups (default "+apply.DefaultStateDir+", inside --root when given)")
	fl.IntVar(&f.opts.KeepBackups, "keep-backups", 10, "how many backups of the config file to keep (0: all)")
	fl.BoolVar(&f.kubelet.Verify, "verify-configz", false, "once stable, the kubelet's /configz must serve the intended configuration (else roll back)")
	fl.StringVar(&f.kubelet.URL, "kubelet-url", "https://127.0.0.1:10250/configz", "the kubelet's /configz, for --verify-configz (and its /statusz beside it)")
	fl.StringVar(&f.kubelet.ClientCert, "client-cert", "", "client certificate the kubelet accepts, for --verify-configz and the health watch")
	fl.StringVar(&f.kubelet.ClientKey, "client-key", "", "key of --client-cert")
	fl.StringVar(&f.kubelet.CA, "kubelet-ca", "", "CA of the kubelet's serving certificate, for --verify-configz")
	fl.BoolVar(&f.kubelet.Insecure, "insecure", false, "do not verify the kubelet's serving certificate at --kubelet-url, for --verify-configz")
	fl.BoolVar(&f.kubelet.Direct, "direct", false, "with --kubeconfig: read /configz and /statusz on the kubelet's own port at the address its Node reports (no nodes/proxy; see deploy/rbac.yaml)")
	stringSliceVar(fl, &f.kubelet.InsecureNodes, "kubelet-insecure-skip-tls-verify", "with --direct: read this node's kubelet with its serving certificate unverified (a self-signed kubelet), by name")
	fl.DurationVar(&f.opts.Timeout, "health-timeout", 30*time.Second, "how long the restarted kubelet has to become healthy")
	fl.DurationVar(&f.opts.StableFor, "stable-for", apply.DefaultStableFor, "how long it must then stay healthy, the same process, counted after --health-timeout's budget (see above for the default)")
	f.output = printer.Flag(fl, printer.Text, printer.JSON)
	c := &f.cluster
	fl.StringVar(&c.Access.Kubeconfig, "kubeconfig", "", "with the API server: the restarted kubelet must also report to it (Node Ready with a heartbeat, Lease renewed after the restart); --drain and --verify-configz go through it")
	fl.StringVar(&c.Access.Context, "context", "", "the kubeconfig context to use (default: its current context)")
	fl.BoolVar(&c.Drain, "drain", false, "with --kubeconfig: cordon and drain the node before the change (Eviction API, PodDisruptionBudgets respected, DaemonSet and static pods left), uncordon it once healthy; a drain that cannot finish stops the apply with nothing written")
	fl.DurationVar(&c.Timeout, "drain-timeout", 5*time.Minute, "how long the drain may take, evictions a PodDisruptionBudget refuses retried until then")
	fl.BoolVar(&c.DeleteEmptyDirData, "delete-emptydir-data", false, "with --drain: evict pods with emptyDir volumes too (their data is lost)")
	fl.BoolVar(&c.Force, "force", false, "with --drain: evict pods no controller recreates too")
	fl.Int64Var(&c.GracePeriodSeconds, "grace-period", -1, "with --drain: seconds each evicted pod has to stop (-1: the pod's own terminationGracePeriodSeconds)")
	k := &f.kubeadm
	fl.StringVar(&k.Persist, "persist", "", "on a kubeadm node, keep a change of /var/lib/kubelet/config.yaml where the next kubeadm upgrade node keeps it too: patch (a kubeadm patch in --patches) or dropin (a --config-dir drop-in)")
	fl.StringVar(&k.PatchesDir, "patches", kubeadm.DefaultPatchesDir, "the --patches directory kubeadm upgrade is run with (kubeadm keeps none of its own)")
	fl.StringVar(&k.ConfigMapFile, "kubeadm-configmap", "", "kubeadm's kubelet-config ConfigMap (its kubelet value, or the ConfigMap) in a file; default: read it with --kubeconfig")
	fl.StringVar(&k.ClusterConfigFile, "kubeadm-cluster-configuration", "", "with --kubeadm-configmap: the kubeadm-config ClusterConfiguration")
	fl.StringVar(&k.Version, "kubeadm-version", "", "the kubeadm that runs the node's next upgrade (default: the kubelet's minor)")
	fl.BoolVar(&k.Force, "force-unmanaged", false, "on a kubeadm node, apply a change the next kubeadm upgrade node reverts (or may: its ConfigMap not given or not readable), saying so")
}

// runApplyFromKubeadm applies what kubeadm would write on this node.
func runApplyFromKubeadm(cmd *cobra.Command, s streams, f *applyFlags, args []string) error {
	c := f.change
	if c.File != "" || c.Patch != "" || len(c.Dropins) > 0 || len(c.RemoveDropins) > 0 || f.opts.Node == "" {
		return fmt.Errorf("--from-kubeadm takes the file from kubeadm's ConfigMap: --node, and no -f, --patch, --dropin or --remove-dropin")
	}
	o := f.opts
	var err error
	if o.Setup, err = f.setup(s, args, cmd.ArgsLenAtDash() >= 0); err != nil {
		return err
	}
	k := f.kubeadm
	k.Kubeconfig, k.Context, k.Progress = f.cluster.Access.Kubeconfig, f.cluster.Access.Context, progressTo(s)
	check, content, name, err := apply.FromKubeadm(cmd.Context(), o.Setup, k)
	if err != nil {
		return err
	}
	defer check.Node.Close()
	o.NewFile, o.NewFileName, o.Kubeadm = content, name, check
	return applyWith(cmd, s, f, o, apply.Run)
}

// runApplyMigration applies kubeletcfg migrate's result to the node: the
// config file, and the environment files rewritten to the remaining flags.
func runApplyMigration(cmd *cobra.Command, s streams, f *applyFlags, args []string) error {
	if f.change.File != "" || f.change.Patch != "" || len(f.change.Dropins) > 0 || len(args) > 0 {
		return fmt.Errorf("--from-migrate takes the flags from the node's unit and env files (or --from): no -f, --patch, --dropin or command line")
	}
	setup, err := f.setup(s, nil, false)
	if err != nil {
		return err
	}
	if err := f.runtimeFlags.attach(setup); err != nil {
		return err
	}
	migration := func(ctx context.Context, o apply.Options) (*apply.Outcome, error) {
		return apply.RunMigration(ctx, setup, f.configPath, o)
	}
	k := f.kubeadm
	k.Kubeconfig, k.Context, k.Progress = f.cluster.Access.Kubeconfig, f.cluster.Access.Context, progressTo(s)
	check, err := apply.NewKubeadmCheck(cmd.Context(), setup, k)
	if err != nil {
		return err
	}
	if check != nil {
		defer check.Node.Close()
	}
	o := f.opts
	o.Setup, o.Kubeadm = setup, check
	return applyWith(cmd, s, f, o, migration)
}

// applyWith runs an apply (run: apply.Run or apply.RunMigration) of o
// with the cluster and the kubelet's API the flags name, and prints it.
func applyWith(cmd *cobra.Command, s streams, f *applyFlags, o apply.Options, run func(context.Context, apply.Options) (*apply.Outcome, error)) error {
	o.Progress = s.ErrOut
	o.StartGuard = apply.GuardStarter(&o, f.cluster.Access.Kubeconfig, f.cluster.Access.Context)
	f.inPod(&o)

	if f.cluster.Drain && f.cluster.Access.Kubeconfig == "" {
		return fmt.Errorf("--drain needs --kubeconfig")
	}
	if o.Setup != nil && o.Kubeadm == nil {
		k := f.kubeadm
		k.Kubeconfig, k.Context, k.Progress = f.cluster.Access.Kubeconfig, f.cluster.Access.Context, progressTo(s)
		check, err := apply.NewKubeadmCheck(cmd.Context(), o.Setup, k)
		if err != nil {
			return err
		}
		if check != nil {
			defer check.Node.Close()
			o.Kubeadm = check
		}
	}
	if f.cluster.Access.Kubeconfig != "" && !o.DryRun {
		f.cluster.Access.Node, f.cluster.Progress = o.Node, s.ErrOut
		attach := func() error { return cluster.Attach(&o, f.cluster) }
		if f.pod.restCfg != nil {
			attach = func() error { return cluster.AttachConfig(&o, f.cluster, f.pod.restCfg) }
		}
		if err := attach(); err != nil {
			return err
		}
	}
	if !o.DryRun {
		k := f.kubelet
		k.Kubeconfig, k.Context, k.RESTConfig = f.cluster.Access.Kubeconfig, f.cluster.Access.Context, f.pod.restCfg
		if err := k.Wire(cmd.Context(), &o); err != nil {
			return err
		}
	}
	// A dry run writes nothing: a signal ends it as it ends any command
	// that only reads (catching one starts threads: more than half a
	// millisecond of a dry run's time).
	ctx, stop := cmd.Context(), func() {}
	if !o.DryRun {
		ctx, stop = interruptible(cmd.Context(), s)
	}
	out, err := run(ctx, o)
	stop()
	f.pod.ran, f.pod.out, f.pod.applyErr = true, out, err
	if out != nil && f.output.JSON() {
		if err := out.FillConfigs(); err != nil {
			return err
		}
	}
	if out != nil {
		werr := f.output.Print(s.Out, out, func() error {
			printChanges(s, out.Changes)
			if len(out.Writes) > 0 && o.DryRun {
				fmt.Fprintf(s.Out, "would write: %s\n", strings.Join(out.Writes, ", "))
			}
			if len(out.Removes) > 0 && o.DryRun {
				fmt.Fprintf(s.Out, "would remove: %s\n", strings.Join(out.Removes, ", "))
			}
			printBreaks(s, out.Breaks)
			for _, m := range out.Masked {
				fmt.Fprintf(s.Out, "masked: %s: the file sets %s, the kubelet runs %s from %s\n", m.Path, diff.Value(m.File), diff.Value(m.Runs), m.From)
			}
			printPreflightWarnings(s, out.Preflight)
			printKubeadmChange(s, out.Kubeadm)
			if out.RolledBack {
				fmt.Fprintf(s.Out, "rolled back to %s: %s\n", out.Backup, out.Cause)
			} else if out.Applied && err == nil {
				fmt.Fprintf(s.Out, "applied %s (backup %s); healthy %.2fs after the restart\n", out.ConfigFile, out.Backup, out.HealthyAfter.Seconds())
			}
			for _, c := range out.Checks {
				fmt.Fprintf(s.Out, "%s: %s\n", c.Name, c.Answer.Detail)
			}
			if out.Statusz != nil {
				fmt.Fprintf(s.Out, "statusz: %s\n", out.Statusz)
			}
			if out.Interrupted && !out.RolledBack {
				fmt.Fprintln(s.Out, "interrupted: nothing was written")
			}
			if out.LeftCordoned != "" {
				fmt.Fprintln(s.Out, out.LeftCordoned)
			}
			return nil
		})
		if werr != nil {
			return werr
		}
	}
	switch {
	case errors.Is(err, apply.ErrRolledBack):
		return errRolledBack
	case err != nil:
		return err
	case o.DryRun && (len(out.Changes) > 0 || len(out.Writes) > 0 || len(out.Removes) > 0):
		return errCheckFailed
	}
	return nil
}

// interruptible is ctx canceled by the first SIGINT or SIGTERM, with the
// signal as its cause: apply then stops its drain or watch and takes its
// one way out (the old files back, the kubelet restarted on them, the node
// uncordoned) and prints its result. A second signal is not caught: it
// kills kubeletcfg, and the guard finishes.
func interruptible(parent context.Context, s streams) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-sigs:
			signal.Stop(sigs)
			name := "SIGTERM"
			if sig == os.Interrupt {
				name = "SIGINT"
			}
			fmt.Fprintf(s.ErrOut, "kubeletcfg: %s: stopping; what this apply did is being undone (another signal kills kubeletcfg, and its guard finishes)\n", name)
			cancel(errors.New(name))
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel(nil)
	}
}

// checkNonNegative refuses negative durations and counts.
func (f *applyFlags) checkNonNegative() error {
	switch {
	case f.opts.Timeout < 0:
		return fmt.Errorf("--health-timeout %v: must not be negative", f.opts.Timeout)
	case f.opts.StableFor < 0:
		return fmt.Errorf("--stable-for %v: must not be negative", f.opts.StableFor)
	case f.opts.KeepBackups < 0:
		return fmt.Errorf("--keep-backups %d: must not be negative (0 keeps all)", f.opts.KeepBackups)
	}
	return nil
}

func progressTo(s streams) func(string, ...any) {
	return func(format string, args ...any) { fmt.Fprintf(s.ErrOut, format+"\n", args...) }
}

// printKubeadmChange says where a change of kubeadm's config.yaml was kept.
func printKubeadmChange(s streams, k *kubeadm.ChangeResult) {
	if k == nil {
		return
	}
	switch {
	case k.PatchFile != "":
		fmt.Fprintf(s.Out, "kubeadm: kept in %s (run kubeadm upgrade with --patches %s)\n", k.PatchFile, strings.TrimSuffix(k.PatchFile, "/"+kubeadm.PatchFileName))
	case k.Persist == kubeadm.PersistDropin:
		fmt.Fprintf(s.Out, "kubeadm: kept in the drop-in %s; config.yaml is what kubeadm writes\n", kubeadm.DropinName)
	case len(k.Reverted) > 0:
		fmt.Fprintf(s.Out, "kubeadm: the next kubeadm upgrade node reverts %d fields (--force-unmanaged)\n", len(k.Reverted))
	}
	if k.InstanceConfigPath != "" {
		fmt.Fprintf(s.Out, "kubeadm: containerRuntimeEndpoint kept in %s\n", k.InstanceConfigPath)
	}
}
