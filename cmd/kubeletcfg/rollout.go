package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubeletcfg/kubeletcfg/apply"
	"github.com/kubeletcfg/kubeletcfg/internal/printer"
	"github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/nodefile"
	"github.com/kubeletcfg/kubeletcfg/rollout"
)

type rolloutFlags struct {
	file, dropin, patch string
	o                   rollout.Options
	kubeconfig, context string
	dryRun              string
	output              *printer.Output
	nodes, versions     []string
}

func newRolloutCmd(s streams) *cobra.Command {
	f := &rolloutFlags{}
	cmd := &cobra.Command{
		Use:   "rollout (-f NEW.yaml | --dropin NAME=FILE | --patch FILE) [--selector L] [--canary N | --canary-selector L] [--batch N|P%] [--soak D] [--image IMG] [--drain ...] [--kubeconfig F] [--dry-run -o yaml] [--resume] [-- KUBELET_ARGS]",
		Short: "Apply a change to many nodes through Kubernetes: one Job per node, a canary, batches, stop at the first rollback",
		Long: `rollout validates the change for every kubelet minor among the selected Nodes,
then runs kubeletcfg apply on each node as a Job (batch/v1, pinned to the node,
privileged, the host's PID namespace, network and / mounted), wave by wave: the
canary, then batches, --soak between waves. The change travels in a Secret the
Jobs mount; each Job's outcome (applied, unchanged, rolled back, refused,
failed) comes from its pod's termination message, and is written to the Node's
kubeletcfg.io/apply annotation. The first node that does not take the change
stops the rollout: no further wave starts, the nodes not reached stay as they
are, and the report names every node's outcome with its cause.

One rollout runs at a time (the Lease kubeletcfg-rollout in --namespace; a
second is refused). Its progress is the ConfigMap kubeletcfg-rollout: if the
process running rollout dies, rollout --resume continues it (after its Lease
went --lease-duration unrenewed); kubeletcfg fleet shows it.

The Jobs run --image (see README: make image, publishing) as the ServiceAccount
kubeletcfg-rollout (deploy/rollout.yaml); they reach the API server at
--api-server (default: the kubeconfig's server, which the nodes must reach) for
apply's Node Ready and Lease checks and --drain. Apply's flags (--restart-command,
--pid-file, --unit, --from, --stable-for, ...) are passed to every Job; $(NODE_NAME)
in a value is the Job's node. On kubeadm nodes add --apply-flag=--persist=patch.

Without --kubeconfig, --node NAME --kubelet-version V (repeatable) describe the
nodes for --dry-run, which prints the Secret and the Jobs in rollout order
(-o yaml); --dry-run=server has the API server admit every object instead.

Exit codes: 0 done (or a dry run), 2 refused (invalid for a minor, another
rollout running, usage) or stopped by a refused or failed node, 3 stopped by a
node whose change was rolled back.`,
		Example: `  kubeletcfg rollout -f new-config.yaml --dry-run --node n1 --kubelet-version 1.37 -o yaml
  kubeletcfg rollout -f new-config.yaml --canary 1 --batch 10% --soak 30s --image registry.example/kubeletcfg:v1
  kubeletcfg rollout --dropin 50-pods.conf=pods.conf --selector node-role.kubernetes.io/worker --drain
  kubeletcfg rollout --resume`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRollout(cmd, s, f, args)
		},
	}
	fl := cmd.Flags()
	o := &f.o
	a := &o.Apply
	fl.StringVarP(&f.file, "filename", "f", "", "the new config file")
	fl.StringVar(&f.dropin, "dropin", "", "NAME=FILE: the drop-in NAME of the kubelets' --config-dir, created or replaced with FILE")
	fl.StringVar(&f.patch, "patch", "", "a merge patch (RFC 7386) onto each node's config file (apply --patch)")
	fl.StringVarP(&o.Selector, "selector", "l", "", "label selector of the Nodes to change (default: all)")
	fl.IntVar(&o.Waves.Canary, "canary", 1, "how many nodes go first, alone in their wave")
	fl.StringVar(&o.Waves.CanarySelector, "canary-selector", "", "label selector of the canary nodes (instead of --canary)")
	fl.StringVar(&o.Waves.Batch, "batch", "10%", "each later wave's size: a count, or a share of the nodes (10%)")
	fl.DurationVar(&o.Soak, "soak", 0, "how long to wait after each wave (its nodes then still Ready) before the next")
	fl.StringVar(&o.Image, "image", rollout.DefaultImage, "kubeletcfg's image the Jobs run (make image)")
	fl.StringVarP(&o.Namespace, "namespace", "n", rollout.DefaultNamespace, "namespace of the Jobs, the Secret, the Lease and the progress")
	fl.StringVar(&o.ServiceAccount, "service-account", rollout.DefaultServiceAccount, "the Jobs' ServiceAccount")
	fl.StringVar(&o.APIServer, "api-server", "", "the API server's address as the nodes reach it, for the Jobs (default: the kubeconfig's server; \"-\": none, no --drain)")
	fl.DurationVar(&o.JobTimeout, "job-timeout", 0, "bound of each Job (default: apply's own bounds and 2m to start)")
	fl.DurationVar(&o.LeaseDuration, "lease-duration", rollout.DefaultLeaseDuration, "how long the rollout's Lease holds unrenewed (--resume takes over after that)")
	fl.DurationVar(&o.Poll, "poll", 2*time.Second, "how often the Jobs are read")
	fl.BoolVar(&o.Resume, "resume", false, "continue the namespace's unfinished rollout, whose process died")
	fl.StringVar(&a.RestartCommand, "restart-command", "", "apply's: a shell command, run on the host, that restarts the kubelet (default: its systemd unit over the host's D-Bus)")
	fl.StringVar(&a.PIDFile, "pid-file", "", "apply's: the restarted kubelet's PID file on the host (with --restart-command)")
	fl.StringVar(&a.KubeletLog, "kubelet-log", "", "apply's: the kubelet's log file on the host (with --restart-command)")
	fl.StringVar(&a.Unit, "unit", "", "apply's: the kubelet's systemd unit (default kubelet.service)")
	fl.StringVar(&a.StateDir, "state-dir", "", "apply's: kubeletcfg's state directory on the host (default "+apply.DefaultStateDir+")")
	stringArrayVar(fl, &a.From, "from", "apply's: read the kubelet's flags from this file on the host; repeatable")
	fl.DurationVar(&a.HealthTimeout, "health-timeout", 30*time.Second, "apply's: how long the restarted kubelet has to become healthy")
	fl.DurationVar(&a.StableFor, "stable-for", apply.DefaultStableFor, "apply's: how long it must then stay healthy")
	fl.BoolVar(&a.Drain, "drain", false, "apply's: cordon and drain each node around its change (the Job's own pod stays), uncordon it once healthy")
	fl.DurationVar(&a.DrainTimeout, "drain-timeout", 5*time.Minute, "apply's: how long a drain may take")
	fl.BoolVar(&a.DeleteEmptyDir, "delete-emptydir-data", false, "apply's: with --drain, evict pods with emptyDir volumes too")
	fl.BoolVar(&a.Force, "force", false, "apply's: with --drain, evict pods no controller recreates too")
	fl.Int64Var(&a.GracePeriod, "grace-period", -1, "apply's: with --drain, seconds each evicted pod has to stop (-1: its own)")
	fl.BoolVar(&a.AllowInsecure, "allow-insecure", false, "apply's: apply a change that makes a passing CIS kubelet check fail")
	fl.BoolVar(&a.Drained, "drained", false, "apply's: the nodes are drained (changes of CPU/memory/topology manager policy need it)")
	fl.BoolVar(&a.VerifyConfigz, "verify-configz", false, "apply's: the restarted kubelet must serve the change on /configz (through the API server's node proxy)")
	stringArrayVar(fl, &a.Flags, "apply-flag", "one more of apply's flags, verbatim (--persist=patch on kubeadm nodes); repeatable")
	fl.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig of the cluster (default: $KUBECONFIG or ~/.kube/config)")
	fl.StringVar(&f.context, "context", "", "the kubeconfig context to use")
	fl.StringVar(&f.dryRun, "dry-run", "", "client: print the objects, touch nothing; server: the API server admits each, nothing is created")
	fl.Lookup("dry-run").NoOptDefVal = "client"
	stringArrayVar(fl, &f.nodes, "node", "with --dry-run and no --kubeconfig: a node to describe (with --kubelet-version); repeatable")
	stringArrayVar(fl, &f.versions, "kubelet-version", "the kubelet version of the --node of the same rank")
	f.output = printer.Flag(fl, printer.Text, printer.JSON, printer.YAML) // yaml: a client dry run's objects
	return cmd
}

func runRollout(cmd *cobra.Command, s streams, f *rolloutFlags, args []string) error {
	o := f.o
	o.Apply.KubeletArgs = args
	o.DryRun = f.dryRun
	if f.output.Format() == printer.YAML && o.DryRun != "client" {
		return fmt.Errorf("-o yaml prints a client dry run's objects: add --dry-run")
	}
	given := 0
	for _, v := range []string{f.file, f.dropin, f.patch} {
		if v != "" {
			given++
		}
	}
	switch {
	case o.Resume && (given > 0 || o.DryRun != ""):
		return fmt.Errorf("--resume continues the rollout as it was started: no change, no --dry-run")
	case !o.Resume && given != 1:
		return fmt.Errorf("give one of -f NEW.yaml, --dropin NAME=FILE or --patch FILE")
	case cmd.Flags().Changed("canary") && o.Waves.CanarySelector != "":
		return fmt.Errorf("--canary and --canary-selector exclude each other")
	case o.Soak < 0 || o.Apply.HealthTimeout < 0 || o.Apply.StableFor < 0:
		return fmt.Errorf("durations must not be negative")
	}
	for _, fl := range o.Apply.Flags {
		if !strings.HasPrefix(fl, "--") {
			return fmt.Errorf("--apply-flag %q: one of apply's flags, --name or --name=value", fl)
		}
	}
	if !o.Resume {
		change, err := readRolloutChange(f)
		if err != nil {
			return err
		}
		o.Change = change
	}
	if len(f.nodes) > 0 || len(f.versions) > 0 {
		if f.kubeconfig != "" || o.DryRun != "client" {
			return fmt.Errorf("--node and --kubelet-version describe nodes for a --dry-run without --kubeconfig")
		}
		if len(f.nodes) != len(f.versions) {
			return fmt.Errorf("give a --kubelet-version for each --node (%d nodes, %d versions)", len(f.nodes), len(f.versions))
		}
		for i, name := range f.nodes {
			n, err := rollout.NewNode(name, f.versions[i], nil)
			if err != nil {
				return err
			}
			o.Nodes = append(o.Nodes, n)
		}
		if o.APIServer == "" {
			o.APIServer = "-"
		}
	} else {
		cfg, err := node.RESTConfig(f.kubeconfig, f.context)
		if err != nil {
			return err
		}
		if o.APIServer == "" {
			o.APIServer = cfg.Host
		}
		if o.API, err = rollout.NewAPI(cfg); err != nil {
			return err
		}
	}
	if o.APIServer == "-" {
		o.APIServer = ""
	}
	o.Progress = s.ErrOut
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := rollout.Run(ctx, o)
	if rep != nil {
		switch {
		case f.output.Format() == printer.YAML:
			if _, werr := s.Out.Write(rep.YAML); werr != nil {
				return werr
			}
		case f.output.JSON():
			if werr := printer.WriteJSON(s.Out, rep); werr != nil {
				return werr
			}
		case rep.YAML != nil:
			fmt.Fprintf(s.Out, "rollout %s: a Secret and %d Jobs in %d waves (-o yaml prints them)\n", rep.ID, countAll(rep.Waves), len(rep.Waves))
		default:
			printRollout(s, rep)
		}
	}
	switch {
	case errors.Is(err, rollout.ErrStopped) && rep != nil && rep.RolledBack():
		return errRolledBack
	case errors.Is(err, rollout.ErrStopped):
		return errReported
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("interrupted: the rollout stays unfinished (kubeletcfg rollout --resume continues it)")
	}
	return err
}

// readRolloutChange reads the change's one file.
func readRolloutChange(f *rolloutFlags) (rollout.Change, error) {
	c := rollout.Change{Kind: rollout.KindFile, File: f.file}
	switch {
	case f.dropin != "":
		name, file, ok := strings.Cut(f.dropin, "=")
		if !ok {
			return c, fmt.Errorf("--dropin %q: NAME=FILE", f.dropin)
		}
		c = rollout.Change{Kind: rollout.KindDropin, Name: name, File: file}
	case f.patch != "":
		c = rollout.Change{Kind: rollout.KindPatch, File: f.patch}
	}
	b, err := nodefile.ReadFile(c.File, nodefile.Config)
	if err != nil {
		return c, err
	}
	c.Content = b
	return c, nil
}

// printRollout prints a rollout's report: each node's outcome in rollout
// order, and how it ended.
func printRollout(s streams, r *rollout.Report) {
	if r.Phase == "" {
		fmt.Fprintf(s.Out, "rollout %s: the API server admits every object (server dry run): a Secret and %d Jobs in %d waves, the Lease and the progress ConfigMap\n", r.ID, countAll(r.Waves), len(r.Waves))
		return
	}
	tw := tabwriter.NewWriter(s.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tWAVE\tOUTCOME\tCAUSE")
	for _, n := range r.Nodes {
		outcome := n.Outcome
		if outcome == "" {
			outcome = "pending"
		}
		cause := strings.ReplaceAll(n.Cause, "\n", " ")
		if len(cause) > 200 {
			cause = cause[:200] + "…"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", n.Name, n.Wave, outcome, cause)
	}
	tw.Flush()
	fmt.Fprintf(s.Out, "rollout %s (%s): %s", r.ID, r.Change, r.Phase)
	if r.Stop != "" {
		fmt.Fprintf(s.Out, ": %s", r.Stop)
	}
	fmt.Fprintln(s.Out)
}

func countAll(waves []rollout.Wave) int {
	n := 0
	for _, w := range waves {
		n += len(w.Nodes)
	}
	return n
}
