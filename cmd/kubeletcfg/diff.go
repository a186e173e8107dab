package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	"github.com/spf13/cobra"
	"k8s.io/kubelet/config/v1beta1"

	"github.com/kubeletcfg/kubeletcfg/audit"
	"github.com/kubeletcfg/kubeletcfg/config"
	"github.com/kubeletcfg/kubeletcfg/diff"
	"github.com/kubeletcfg/kubeletcfg/internal/printer"
	"github.com/kubeletcfg/kubeletcfg/kubeadm"
	"github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

type diffFlags struct {
	setupFlags
	runtimeFlags
	against   string
	unified   bool
	output    *printer.Output
	live      bool
	liveAt    diff.Live
	toVersion string
	// kubeadm compares config.yaml with what the next kubeadm upgrade
	// node writes.
	kubeadm    bool
	kubeadmSrc kubeadmSource
}

func newDiffCmd(s streams) *cobra.Command {
	f := &diffFlags{}
	cmd := &cobra.Command{
		Use:   "diff [NEW] [--against OLD | --live | --to-version W] [-- KUBELET_ARGS]",
		Short: "Compare configurations as the kubelet runs them, and say what each change takes",
		Long: `diff compares two configurations as effective configurations of the kubelet
version (defaults applied, so maxPods: 110 against an absent maxPods is no
change) and lists every changed field with what it takes: a restart; a drain
and the removal of a state file (the kubelet refuses to start otherwise); a node
registration; a change of security posture; a matching container runtime. A
change that makes a CIS kubelet check fail that passed before is named.

  diff NEW [--against OLD]   NEW against OLD (default: the node's
                             /var/lib/kubelet/config.yaml, under --root)
  diff --live [NEW]          what the running kubelet serves on /configz against
                             NEW, or against the node's own setup (its unit,
                             drop-ins and env files, --from files, or the
                             command line after --): drift. Where the kubelet
                             serves /flagz (1.33+, on by default from 1.36),
                             its command line against the setup's too.
                             Read on the kubelet's port (--kubelet-url), or
                             with --kubeconfig/--node through the API
                             server's node proxy (needs get nodes/proxy, as
                             much as exec in the node's containers), or with
                             --direct on the kubelet's port at the address
                             its Node reports (needs get nodes, and
                             nodes/configz where KubeletFineGrainedAuthz is
                             on; see deploy/rbac.yaml)
  diff --to-version W        upgrade preflight: the node's setup read by kubelet
                             W instead of the current version
  diff --kubeadm             kubeadm drift: the node's /var/lib/kubelet/config.yaml
                             against what the next kubeadm upgrade node writes
                             (from the kubelet-config ConfigMap: --kubeconfig or
                             --kubeadm-configmap; the --patches directory;
                             instance-config.yaml): the fields it reverts and
                             the values it brings, with their origins

Exit codes: 0 no change, 1 changes (or the kubelet would refuse to start with
NEW: its reason on stderr), 2 usage or I/O error.`,
		Example: `  kubeletcfg diff --kubelet-version 1.37 new-config.yaml
  kubeletcfg diff --kubelet-version 1.31 new.yaml --against old.yaml --unified
  kubeletcfg diff --live --insecure
  kubeletcfg diff --live --kubeconfig ~/.kube/config --node worker-3 -- --config=/var/lib/kubelet/config.yaml
  kubeletcfg diff --live --direct --node worker-3 --kubelet-ca /etc/kubernetes/pki/ca.crt
  kubeletcfg diff --kubelet-version 1.31 --to-version 1.34 --root /mnt/node-image`,
		RunE: func(cmd *cobra.Command, args []string) error {
			var kubeletArgs []string
			dashed := cmd.ArgsLenAtDash() >= 0
			if dashed {
				args, kubeletArgs = args[:cmd.ArgsLenAtDash()], args[cmd.ArgsLenAtDash():]
				if !f.live && !f.kubeadm && len(kubeletArgs) > 0 {
					return fmt.Errorf("a kubelet command line after -- goes with --live or --kubeadm only")
				}
			}
			if len(args) > 1 {
				return fmt.Errorf("at most one NEW file, got %d", len(args))
			}
			l := &f.liveAt
			if !f.live && !f.kubeadm && (l.Kubeconfig != "" || l.Context != "" || l.Node != "" || l.Direct) {
				return fmt.Errorf("--kubeconfig, --context, --node and --direct go with --live")
			}
			if len(l.InsecureNodes) > 0 && !l.Direct {
				return fmt.Errorf("--kubelet-insecure-skip-tls-verify goes with --direct (the node's own kubelet at --kubelet-url: --insecure)")
			}
			if l.Direct && l.Insecure {
				return fmt.Errorf("--insecure is for the kubelet at --kubelet-url; with --direct, name the node in --kubelet-insecure-skip-tls-verify")
			}
			v, err := f.resolve(s)
			if err != nil {
				return err
			}
			if f.toVersion != "" {
				return f.preflight(s, v)
			}
			if f.kubeadm {
				return f.kubeadmDrift(cmd, s, v, args, kubeletArgs, dashed)
			}
			req := diff.Request{Version: v, Against: f.against, Source: f.setupSource(s, kubeletArgs, dashed)}
			if req.Runtime, err = f.runtimeFlags.asker(req.Source.Root); err != nil {
				return err
			}
			if len(args) == 1 {
				req.New = args[0]
			}
			if f.live {
				req.Live = l
			}
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			res, err := diff.Run(ctx, req)
			if err != nil {
				return refusal(s, err)
			}
			doc := map[string]any{"kubeletVersion": v.Minor, "old": res.Old.Name, "new": res.New.Name, "changes": res.Changes, "breaks": res.Breaks, "warnings": allWarnings(res.Warnings)}
			if res.Flags != nil {
				doc["flags"] = res.Flags
			}
			if res.Restart != "" {
				doc["restart"] = res.Restart
			}
			err = f.output.Print(s.Out, doc, func() error {
				if f.unified {
					if err := printUnified(s, v, res.Old, res.New); err != nil {
						return err
					}
				} else {
					printChanges(s, res.Changes)
				}
				printBreaks(s, res.Breaks)
				printLiveFlags(s, res.Flags)
				if res.Restart != "" && !f.unified {
					fmt.Fprintf(s.Out, "restart: %s\n", res.Restart)
				}
				return nil
			})
			if err != nil {
				return err
			}
			if res.New.Refused != nil {
				return refusal(s, res.New.Refused)
			}
			if len(res.Changes) > 0 || (res.Flags != nil && len(res.Flags.Differs) > 0) {
				return errCheckFailed
			}
			return nil
		},
	}
	f.setupFlags.bind(cmd.Flags())
	f.runtimeFlags.bind(cmd.Flags())
	fl, l := cmd.Flags(), &f.liveAt
	fl.StringVar(&f.against, "against", "", "the configuration to compare with (default: the node's /var/lib/kubelet/config.yaml)")
	fl.BoolVar(&f.unified, "unified", false, "print a unified diff of the effective configurations")
	f.output = printer.Flag(fl, printer.Text, printer.JSON)
	fl.BoolVar(&f.live, "live", false, "compare with what the running kubelet serves on /configz")
	fl.StringVar(&l.URL, "kubelet-url", "https://127.0.0.1:10250/configz", "the running kubelet's /configz, for --live")
	fl.StringVar(&l.ClientCert, "client-cert", "", "client certificate the kubelet accepts, for --live")
	fl.StringVar(&l.ClientKey, "client-key", "", "key of --client-cert")
	fl.StringVar(&l.CA, "kubelet-ca", "", "CA of the kubelet's serving certificate, for --live")
	fl.BoolVar(&l.Insecure, "insecure", false, "do not verify the kubelet's serving certificate (a self-signed kubelet), for --live")
	fl.StringVar(&l.Kubeconfig, "kubeconfig", "", "for --live: read /configz through the API server this kubeconfig names (\"\" with --node: $KUBECONFIG or ~/.kube/config)")
	fl.StringVar(&l.Context, "context", "", "the kubeconfig context to use (default: its current context)")
	fl.StringVar(&l.Node, "node", "", "for --live through the API server or --direct: the node's name (default: this host's name)")
	fl.BoolVar(&l.Direct, "direct", false, "for --live: read the kubelet on its own port at the address its Node reports, with the kubeconfig's credentials (no nodes/proxy; see deploy/rbac.yaml)")
	stringSliceVar(fl, &l.InsecureNodes, "kubelet-insecure-skip-tls-verify", "with --direct: read these nodes' kubelets with their serving certificate unverified (self-signed kubelets)")
	fl.StringVar(&f.toVersion, "to-version", "", "upgrade preflight: read the node's setup with this kubelet version")
	fl.BoolVar(&f.kubeadm, "kubeadm", false, "kubeadm drift: config.yaml against what the next kubeadm upgrade node writes")
	f.kubeadmSrc.bind(fl)
	return cmd
}

// colours says whether to colour output: a terminal, and no NO_COLOR.
func colours(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("NO_COLOR") != "" {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func printChanges(s streams, changes []diff.Change) {
	if len(changes) == 0 {
		fmt.Fprintln(s.Out, "no change")
		return
	}
	red, green, reset := "", "", ""
	if colours(s.Out) {
		red, green, reset = "\x1b[31m", "\x1b[32m", "\x1b[0m"
	}
	for _, c := range changes {
		var classes []string
		for _, cl := range c.Classes {
			classes = append(classes, string(cl))
		}
		extra := ""
		if c.StateFile != "" {
			extra = ", remove " + c.StateFile
		}
		fmt.Fprintf(s.Out, "%s: %s%s%s -> %s%s%s  [%s%s]\n", c.Path, red, diff.Value(c.Old), reset, green, diff.Value(c.New), reset, strings.Join(classes, ", "), extra)
	}
	fmt.Fprintf(s.Out, "%d changes\n", len(changes))
}

// printBreaks names the checks that pass before the change and fail after.
func printBreaks(s streams, breaks []audit.Result) {
	for _, b := range breaks {
		fmt.Fprintf(s.Out, "security: breaks CIS %s %s: %s\n", b.ID, b.Title, b.Value)
	}
}

func printUnified(s streams, v *schema.Version, old, nw diff.Side) error {
	render := func(c *v1beta1.KubeletConfiguration) (string, error) {
		raw, err := config.RedactedJSON(c, v)
		if err != nil {
			return "", err
		}
		out, err := config.Render(raw, "yaml")
		return string(out), err
	}
	a, err := render(old.Config)
	if err != nil {
		return err
	}
	b, err := render(nw.Config)
	if err != nil {
		return err
	}
	text, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{A: difflib.SplitLines(a), B: difflib.SplitLines(b), FromFile: old.Name, ToFile: nw.Name, Context: 3})
	if err != nil {
		return err
	}
	_, err = fmt.Fprint(s.Out, text)
	return err
}

// preflight reads the node's setup with the current and the target kubelet.
func (f *diffFlags) preflight(s streams, v *schema.Version) error {
	to, err := schema.Resolve(f.toVersion)
	if err != nil {
		return err
	}
	setup, err := node.ReadSetupAs(v, f.setupSource(s, nil, false)) // always the node's
	if err != nil {
		return err
	}
	findings, err := diff.Preflight(diff.PreflightOptions{Setup: setup, To: to})
	if err != nil {
		return err
	}
	doc := map[string]any{"from": v.Minor, "to": to.Minor, "findings": findings, "warnings": allWarnings(setup.Warnings)}
	err = f.output.Print(s.Out, doc, func() error {
		for _, fd := range findings {
			fmt.Fprintf(s.Out, "%-7s %s: %s\n", fd.Severity, fd.Subject, fd.Message)
			if fd.Do != "" {
				fmt.Fprintf(s.Out, "        do: %s\n", fd.Do)
			}
		}
		fmt.Fprintf(s.Out, "%s %s -> %s: %s\n", direction(v, to), v.Minor, to.Minor, count(len(findings), "finding"))
		return nil
	})
	if err != nil {
		return err
	}
	if len(findings) > 0 {
		return errCheckFailed
	}
	return nil
}

// direction names a change of kubelet version.
func direction(from, to *schema.Version) string {
	switch {
	case from.Minor == to.Minor:
		return "same version"
	case to.AtLeast(from.Minor):
		return "upgrade"
	}
	return "downgrade"
}

// kubeadmDrift compares the node's config.yaml with what the next kubeadm
// upgrade node writes.
func (f *diffFlags) kubeadmDrift(cmd *cobra.Command, s streams, v *schema.Version, args, kubeletArgs []string, dashed bool) error {
	if len(args) > 0 || f.live {
		return fmt.Errorf("--kubeadm compares the node's config.yaml: no NEW, no --live")
	}
	o, err := f.kubeadmSrc.options(f.liveAt.Kubeconfig, f.liveAt.Context)
	if err != nil {
		return err
	}
	setup, err := node.ReadSetupAs(v, f.setupSource(s, kubeletArgs, dashed))
	if err != nil {
		return err
	}
	a, err := kubeadm.AssessSetup(cmd.Context(), o, setup, nil)
	if err != nil {
		return err
	}
	if f.output.JSON() {
		if err := printer.WriteJSON(s.Out, map[string]any{"kubeletVersion": v.Minor, "kubeadm": a}); err != nil {
			return err
		}
	} else {
		printKubeadmDrift(s, a)
	}
	switch {
	case !a.Owned || a.Drift == nil:
		fmt.Fprintf(s.ErrOut, "kubeletcfg: %s\n", cmpOr(a.Why, "kubeadm does not rewrite this node's kubelet config file"))
		return errReported
	case len(a.Drift.Reverts)+len(a.Drift.Brings) > 0:
		return errCheckFailed
	}
	return nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func printKubeadmDrift(s streams, a *kubeadm.Assessment) {
	for _, n := range a.Notes {
		fmt.Fprintf(s.ErrOut, "note: %s\n", n)
	}
	if a.Drift == nil {
		return
	}
	if a.Render != nil {
		printKubeadmNotes(s, a.Render)
	}
	d := a.Drift
	for _, c := range d.Reverts {
		fmt.Fprintf(s.Out, "reverts %s: %s -> %s  (%s:%d; kubeadm: %s)\n", c.Field, diff.Value(c.Now), diff.Value(c.Next), d.File, c.NowLine, c.Origin)
	}
	for _, c := range d.Brings {
		fmt.Fprintf(s.Out, "brings %s: %s -> %s  (kubeadm: %s)\n", c.Field, diff.Value(c.Now), diff.Value(c.Next), c.Origin)
	}
	for _, u := range d.Unknown {
		fmt.Fprintf(s.Out, "differs %s (no kubelet field: the kubelet ignores it)\n", u)
	}
	if len(d.Reverts)+len(d.Brings) == 0 {
		fmt.Fprintln(s.Out, "no kubeadm drift: the next kubeadm upgrade node writes what the kubelet runs now")
	} else {
		fmt.Fprintf(s.Out, "%d reverted, %d brought by the next kubeadm upgrade node\n", len(d.Reverts), len(d.Brings))
	}
	fmt.Fprintf(s.ErrOut, "note: %s\n", d.Note)
}
