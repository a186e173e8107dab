package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kubeletcfg/kubeletcfg/diff"
	"github.com/kubeletcfg/kubeletcfg/internal/printer"
	"github.com/kubeletcfg/kubeletcfg/kubeadm"
	"github.com/kubeletcfg/kubeletcfg/warning"
)

func newKubeadmCmd(s streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "kubeadm",
		Short: "What kubeadm writes to the kubelet's config.yaml, and the cluster's kubelet-config ConfigMap",
		Long: `kubeadm owns /var/lib/kubelet/config.yaml on a node it set up: every
` + "`kubeadm upgrade node`" + ` rewrites it from the kube-system/kubelet-config
ConfigMap, kubeadm's defaults, the node's --patches directory and
instance-config.yaml. These commands model that, kubeadm version by version.`,
	}
	cmd.AddCommand(newKubeadmRenderCmd(s), newKubeadmConfigMapCmd(s))
	return cmd
}

type kubeadmRenderFlags struct {
	versionFlags
	configMap, clusterConfig string
	kubeconfig, kubeContext  string
	patches                  string
	kubeadmVersion           string
	output                   *printer.Output
}

// kubeadmRelease is the kubeadm version to model: the flag, else the node's
// kubelet minor (with a note).
func kubeadmRelease(s streams, given string, vf *versionFlags) (*kubeadm.Release, error) {
	if given != "" {
		return kubeadm.ResolveRelease(given)
	}
	v, err := vf.resolve(s)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(s.ErrOut, "note: kubeadm %s assumed (the kubelet's minor); the kubeadm that runs the next upgrade decides: --kubeadm-version\n", v.Minor)
	return kubeadm.ResolveRelease(v.Minor)
}

func newKubeadmRenderCmd(s streams) *cobra.Command {
	f := &kubeadmRenderFlags{}
	cmd := &cobra.Command{
		Use:   "render [--root DIR] (--configmap FILE [--cluster-configuration FILE] | --kubeconfig F [--context C]) [--patches DIR] [--kubeadm-version W] [-o yaml|json]",
		Short: "The config.yaml `kubeadm upgrade node` of a kubeadm version would write on this node, with the origin of every field",
		Long: `render computes what ` + "`kubeadm upgrade node`" + ` (phase kubelet-config) of kubeadm W
writes to /var/lib/kubelet/config.yaml on this node (--root: an offline image):
the ConfigMap's kubelet value decoded as kubeadm decodes it (fields its types
lack are dropped, with a warning), kubeadm's defaults from the
ClusterConfiguration, resolvConf when systemd-resolved is active, the
kubeletconfiguration patches of --patches DIR in kubeadm's order, then
instance-config.yaml (created first where kubeadm creates it).

  --configmap FILE               the kubelet-config ConfigMap's kubelet value (or the
                                 ConfigMap, as kubectl get -o yaml prints it)
  --cluster-configuration FILE   the kubeadm-config ClusterConfiguration (default: kubeadm's defaults)
  --kubeconfig F                 read both ConfigMaps through the API server instead

-o yaml prints the file; -o json adds the origin of every field (ConfigMap
line, patch file:line, instance-config.yaml, kubeadm default, mutation),
conditions (under --root, systemd-resolved and the CRI socket are facts of the
running node) and what kubeadm does besides (backup, kubeadm-flags.env).

Exit codes: 0 kubeadm writes the file, 2 kubeadm W would fail (the file and
line are named) or a usage error.`,
		Example: `  kubeletcfg kubeadm render --kubeconfig /etc/kubernetes/admin.conf --patches /etc/kubernetes/patches
  kubeletcfg kubeadm render --root /mnt/node --configmap kubelet-config.yaml --kubeadm-version 1.37 -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rel, err := kubeadmRelease(s, f.kubeadmVersion, &f.versionFlags)
			if err != nil {
				return err
			}
			res, _, err := kubeadm.RenderNode(cmd.Context(), kubeadm.NodeOptions{Root: f.root, ConfigMapFile: f.configMap,
				ClusterConfigFile: f.clusterConfig, Kubeconfig: f.kubeconfig, Context: f.kubeContext,
				FromCluster: f.configMap == "", PatchesDir: f.patches, Release: rel})
			if err != nil {
				return err
			}
			printKubeadmNotes(s, res)
			if f.output.JSON() {
				return printer.WriteJSON(s.Out, res)
			}
			out, err := res.YAML()
			if err != nil {
				return err
			}
			_, err = s.Out.Write(out)
			return err
		},
	}
	fl := cmd.Flags()
	f.versionFlags.bind(fl)
	fl.StringVar(&f.configMap, "configmap", "", "the kubelet-config ConfigMap's kubelet value (or the ConfigMap), from a file")
	fl.StringVar(&f.clusterConfig, "cluster-configuration", "", "the kubeadm-config ClusterConfiguration (or that ConfigMap), with --configmap")
	fl.StringVar(&f.kubeconfig, "kubeconfig", "", "read both ConfigMaps through the API server (default: $KUBECONFIG or ~/.kube/config)")
	fl.StringVar(&f.kubeContext, "context", "", "the kubeconfig context to use")
	fl.StringVar(&f.patches, "patches", "", "the --patches directory kubeadm upgrade is given (a node path)")
	fl.StringVar(&f.kubeadmVersion, "kubeadm-version", "", "the kubeadm that will run the upgrade (1.28–1.37); default: the kubelet's minor")
	f.output = printer.Flag(fl, printer.YAML, printer.JSON)
	return cmd
}

// printKubeadmNotes says on stderr what the file does not.
func printKubeadmNotes(s streams, res *kubeadm.Result) {
	warning.Print(s.ErrOut, res.Warnings)
	for _, n := range res.Notes {
		fmt.Fprintf(s.ErrOut, "note: %s\n", n)
	}
	for _, c := range res.Conditions {
		val := "unset"
		if c.Value != nil {
			val = diff.Value(c.Value)
		}
		fmt.Fprintf(s.ErrOut, "condition: if %s: %s is %s (%s)\n", c.When, c.Field, val, c.Origin)
	}
	for _, e := range res.FlagsEnv {
		fmt.Fprintf(s.ErrOut, "note: %s: it rewrites %s as %s", e.Why, e.Path, e.After)
	}
	for _, f := range res.Failures {
		fmt.Fprintf(s.ErrOut, "warning: kubeadm then fails: %s\n", f)
	}
}

type kubeadmConfigMapFlags struct {
	file                    string
	kubeconfig, kubeContext string
	update                  bool
	resourceVersion         string
	output                  *printer.Output
}

func newKubeadmConfigMapCmd(s streams) *cobra.Command {
	f := &kubeadmConfigMapFlags{}
	cmd := &cobra.Command{
		Use:   "configmap -f NEW.yaml [--kubeconfig F] [--update [--resource-version RV]]",
		Short: "Check a new kubelet-config ConfigMap for every kubelet minor of the cluster, and update it safely",
		Long: `configmap checks a new value for kube-system/kubelet-config (key kubelet) for
every kubelet minor the Nodes report: kubeadm of that minor renders it with
the cluster's ClusterConfiguration, the kubelet of that minor judges the
result (its validation and start-up checks), and what those kubelets will run
differently is listed per minor.

--update then writes it, at the resourceVersion read (or --resource-version,
the one you reviewed): an edit made meanwhile is refused, never overwritten.
Nothing changes on the nodes until each is rolled out (kubeletcfg apply
--from-kubeadm on the node, or kubeadm upgrade node). ` + "`kubeadm upgrade apply`" + `
re-uploads the ConfigMap itself, without any precondition.

Exit codes: 0 valid for every minor (and updated, with --update), 1 invalid
for a minor (nothing written), 2 a concurrent edit, a usage or API error.`,
		Example: `  kubeletcfg kubeadm configmap -f kubelet-config.yaml --kubeconfig /etc/kubernetes/admin.conf
  kubeletcfg kubeadm configmap -f kubelet-config.yaml --update --resource-version 81234`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.file == "" {
				return errors.New("-f NEW.yaml is required (the new kubelet value, or the ConfigMap)")
			}
			res, err := kubeadm.CheckConfigMap(cmd.Context(), kubeadm.IntentOptions{File: f.file, Kubeconfig: f.kubeconfig,
				Context: f.kubeContext, Update: f.update, ResourceVersion: f.resourceVersion})
			if err != nil && res == nil {
				return err
			}
			if f.output.JSON() {
				if werr := printer.WriteJSON(s.Out, res); werr != nil {
					return werr
				}
			} else {
				printConfigMapPlan(s, res)
			}
			switch {
			case err != nil:
				return err
			case !kubeadm.Valid(res.Plans):
				return errCheckFailed
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.file, "filename", "f", "", "the new kubelet value (or the ConfigMap)")
	fl.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig of the cluster (default: $KUBECONFIG or ~/.kube/config)")
	fl.StringVar(&f.kubeContext, "context", "", "the kubeconfig context to use")
	fl.BoolVar(&f.update, "update", false, "write it when every minor accepts it, at the resourceVersion read")
	fl.StringVar(&f.resourceVersion, "resource-version", "", "with --update: the resourceVersion the ConfigMap must still be at")
	f.output = printer.Flag(fl, printer.Text, printer.JSON)
	return cmd
}

func printConfigMapPlan(s streams, res *kubeadm.Intent) {
	fmt.Fprintf(s.Out, "ConfigMap %s/%s at resourceVersion %s\n", kubeadm.Namespace, kubeadm.ConfigMapName, res.ResourceVersion)
	for _, p := range res.Plans {
		fmt.Fprintf(s.Out, "\nkubelet %s (%s): ", p.KubeletMinor, count(len(p.Nodes), "node"))
		switch {
		case p.Error != "":
			fmt.Fprintf(s.Out, "cannot render: %s\n", p.Error)
			continue
		case p.Verdict.Valid:
			fmt.Fprintf(s.Out, "valid, %s\n", count(len(p.Changes), "change"))
		default:
			fmt.Fprintf(s.Out, "INVALID\n")
			for _, e := range p.Verdict.Errors {
				fmt.Fprintf(s.Out, "  error: %s\n", e)
			}
		}
		for _, c := range p.Changes {
			fmt.Fprintf(s.Out, "  %s: %s -> %s\n", c.Field, diff.Value(c.Now), diff.Value(c.Next))
		}
	}
	if res.Updated {
		fmt.Fprintf(s.Out, "\nupdated: resourceVersion %s; roll it out node by node (kubeletcfg apply --from-kubeadm)\n", res.NewVersion)
	} else if !kubeadm.Valid(res.Plans) {
		fmt.Fprintln(s.Out, "\nnot updated: invalid for a kubelet minor")
	}
}

// kubeadmSource are the flags that say where kubeadm's ConfigMaps are, for
// a command that compares with what kubeadm writes.
type kubeadmSource struct {
	configMap, clusterConfig string
	patches, version         string
}

func (k *kubeadmSource) bind(fl *pflag.FlagSet) {
	fl.StringVar(&k.configMap, "kubeadm-configmap", "", "kubeadm's kubelet-config ConfigMap (its kubelet value, or the ConfigMap) in a file; default: read it with --kubeconfig")
	fl.StringVar(&k.clusterConfig, "kubeadm-cluster-configuration", "", "with --kubeadm-configmap: the kubeadm-config ClusterConfiguration")
	fl.StringVar(&k.patches, "patches", "", "the --patches directory kubeadm upgrade is run with (default: "+kubeadm.DefaultPatchesDir+" when the node has it)")
	fl.StringVar(&k.version, "kubeadm-version", "", "the kubeadm that runs the node's next upgrade (default: the kubelet's minor)")
}

// options are kubeadm.NodeOptions for the node's next upgrade.
func (k *kubeadmSource) options(kubeconfig, context string) (kubeadm.NodeOptions, error) {
	o := kubeadm.NodeOptions{ConfigMapFile: k.configMap, ClusterConfigFile: k.clusterConfig, PatchesDir: k.patches,
		Kubeconfig: kubeconfig, Context: context, FromCluster: k.configMap == "" && kubeconfig != ""}
	if k.version != "" {
		r, err := kubeadm.ResolveRelease(k.version)
		if err != nil {
			return o, err
		}
		o.Release = r
	}
	return o, nil
}
