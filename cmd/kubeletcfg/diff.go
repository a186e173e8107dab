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
	"github.com/kubeletcfg/kubeletcfg/kubeletapi"
	"github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/nodefile"
	"github.com/kubeletcfg/kubeletcfg/schema"
	"github.com/kubeletcfg/kubeletcfg/warning"
)

type diffFlags struct {
	setupFlags
	against  string
	unified  bool
	output   *printer.Output
	live     bool
	liveURL  string
	liveCert string
	liveKey  string
	liveCA   string
	insecure bool
	// kubeconfig, kubeContext and node reach /configz through the API
	// server's node proxy instead of the kubelet's own port.
	kubeconfig  string
	kubeContext string
	node        string
	// direct reads the kubelet on its own port at the address its Node
	// reports (with the kubeconfig's credentials); insecureNodes are read
	// with their serving certificate unverified.
	direct        bool
	insecureNodes []string
	toVersion     string
	// setup is the node's setup when NEW is not given; cmdline what the
	// running kubelet's /flagz says against it.
	setup   *node.Setup
	cmdline *liveFlags
	// kubeletArgs is the command line given after -- (dashed: -- was
	// given, even with nothing after it).
	kubeletArgs []string
	dashed      bool
	// warnings are those of the node's setup, for -o json.
	warnings []warning.Warning
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

Exit codes: 0 no change, 1 changes (or the kubelet would refuse to start with
NEW: its reason on stderr), 2 usage or I/O error.`,
		Example: `  kubeletcfg diff --kubelet-version 1.37 new-config.yaml
  kubeletcfg diff --kubelet-version 1.31 new.yaml --against old.yaml --unified
  kubeletcfg diff --live --insecure
  kubeletcfg diff --live --kubeconfig ~/.kube/config --node worker-3 -- --config=/var/lib/kubelet/config.yaml
  kubeletcfg diff --live --direct --node worker-3 --kubelet-ca /etc/kubernetes/pki/ca.crt
  kubeletcfg diff --kubelet-version 1.31 --to-version 1.34 --root /mnt/node-image`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if dash := cmd.ArgsLenAtDash(); dash >= 0 {
				args, f.kubeletArgs, f.dashed = args[:dash], args[dash:], true
				if !f.live && len(f.kubeletArgs) > 0 {
					return fmt.Errorf("a kubelet command line after -- goes with --live only")
				}
			}
			if len(args) > 1 {
				return fmt.Errorf("at most one NEW file, got %d", len(args))
			}
			if !f.live && (f.kubeconfig != "" || f.kubeContext != "" || f.node != "" || f.direct) {
				return fmt.Errorf("--kubeconfig, --context, --node and --direct go with --live")
			}
			if len(f.insecureNodes) > 0 && !f.direct {
				return fmt.Errorf("--kubelet-insecure-skip-tls-verify goes with --direct (the node's own kubelet at --kubelet-url: --insecure)")
			}
			if f.direct && f.insecure {
				return fmt.Errorf("--insecure is for the kubelet at --kubelet-url; with --direct, name the node in --kubelet-insecure-skip-tls-verify")
			}
			v, err := f.resolve(s)
			if err != nil {
				return err
			}
			if f.toVersion != "" {
				return f.preflight(s, v)
			}
			old, nw, err := f.sides(cmd.Context(), s, v, args)
			if err != nil {
				return refusal(s, err)
			}
			c, err := diff.Compare(old, nw, v)
			if err != nil {
				return err
			}
			doc := map[string]any{"kubeletVersion": v.Minor, "old": old.Name, "new": nw.Name, "changes": c.Changes, "breaks": c.Breaks, "warnings": allWarnings(f.warnings)}
			if f.cmdline != nil {
				doc["flags"] = f.cmdline
			}
			err = f.output.Print(s.Out, doc, func() error {
				if f.unified {
					if err := printUnified(s, v, old, nw); err != nil {
						return err
					}
				} else {
					printChanges(s, c.Changes)
				}
				printBreaks(s, c.Breaks)
				f.cmdline.print(s)
				return nil
			})
			if err != nil {
				return err
			}
			if nw.Refused != nil {
				return refusal(s, nw.Refused)
			}
			if len(c.Changes) > 0 || (f.cmdline != nil && len(f.cmdline.Differs) > 0) {
				return errCheckFailed
			}
			return nil
		},
	}
	f.setupFlags.bind(cmd.Flags())
	fl := cmd.Flags()
	fl.StringVar(&f.against, "against", "", "the configuration to compare with (default: the node's /var/lib/kubelet/config.yaml)")
	fl.BoolVar(&f.unified, "unified", false, "print a unified diff of the effective configurations")
	f.output = printer.Flag(fl, printer.Text, printer.JSON)
	fl.BoolVar(&f.live, "live", false, "compare with what the running kubelet serves on /configz")
	fl.StringVar(&f.liveURL, "kubelet-url", "https://127.0.0.1:10250/configz", "the running kubelet's /configz, for --live")
	fl.StringVar(&f.liveCert, "client-cert", "", "client certificate the kubelet accepts, for --live")
	fl.StringVar(&f.liveKey, "client-key", "", "key of --client-cert")
	fl.StringVar(&f.liveCA, "kubelet-ca", "", "CA of the kubelet's serving certificate, for --live")
	fl.BoolVar(&f.insecure, "insecure", false, "do not verify the kubelet's serving certificate (a self-signed kubelet), for --live")
	fl.StringVar(&f.kubeconfig, "kubeconfig", "", "for --live: read /configz through the API server this kubeconfig names (\"\" with --node: $KUBECONFIG or ~/.kube/config)")
	fl.StringVar(&f.kubeContext, "context", "", "the kubeconfig context to use (default: its current context)")
	fl.StringVar(&f.node, "node", "", "for --live through the API server or --direct: the node's name (default: this host's name)")
	fl.BoolVar(&f.direct, "direct", false, "for --live: read the kubelet on its own port at the address its Node reports, with the kubeconfig's credentials (no nodes/proxy; see deploy/rbac.yaml)")
	fl.StringSliceVar(&f.insecureNodes, "kubelet-insecure-skip-tls-verify", nil, "with --direct: read these nodes' kubelets with their serving certificate unverified (self-signed kubelets)")
	fl.StringVar(&f.toVersion, "to-version", "", "upgrade preflight: read the node's setup with this kubelet version")
	return cmd
}

// kubelet says how to read the running kubelet: on its port at
// --kubelet-url, through the API server's node proxy, or (--direct) on its
// port at the address its Node reports.
func (f *diffFlags) kubelet(ctx context.Context, v *schema.Version) (*kubeletapi.Client, kubeletapi.Node, error) {
	if f.kubeconfig == "" && f.node == "" && f.kubeContext == "" && !f.direct {
		c, err := kubeletapi.NewLocal(strings.TrimSuffix(f.liveURL, "/configz"), f.liveCert, f.liveKey, f.liveCA, f.insecure)
		return c, kubeletapi.Node{Version: v}, err
	}
	name, err := kubeletapi.NodeName(f.node)
	if err != nil {
		return nil, kubeletapi.Node{}, err
	}
	cfg, err := node.RESTConfig(f.kubeconfig, f.kubeContext)
	if err != nil {
		return nil, kubeletapi.Node{}, err
	}
	if !f.direct {
		c, err := kubeletapi.New(cfg, kubeletapi.Options{Via: kubeletapi.Proxy})
		return c, kubeletapi.Node{Name: name, Version: v}, err
	}
	core, err := kubeletapi.CoreClient(cfg)
	if err != nil {
		return nil, kubeletapi.Node{}, err
	}
	n, err := kubeletapi.GetNode(ctx, core, name)
	if err != nil {
		return nil, n, err
	}
	n.Version = v
	c, err := kubeletapi.New(cfg, kubeletapi.Options{Via: kubeletapi.Direct, KubeletCA: f.liveCA, Insecure: f.insecureNodes})
	return c, n, err
}

// sides picks the two configurations to compare.
func (f *diffFlags) sides(ctx context.Context, s streams, v *schema.Version, args []string) (diff.Side, diff.Side, error) {
	if f.live {
		if ctx == nil {
			ctx = context.Background()
		}
		c, n, err := f.kubelet(ctx, v)
		if err != nil {
			return diff.Side{}, diff.Side{}, err
		}
		raw, from, err := c.Configz(ctx, n)
		if err != nil {
			return diff.Side{}, diff.Side{}, err
		}
		running, err := diff.LiveSide(raw, from, v)
		if err != nil {
			return diff.Side{}, diff.Side{}, err
		}
		nw, err := f.newSide(s, v, args)
		if err != nil {
			return running, nw, err
		}
		f.cmdline, err = readLiveFlags(ctx, c, n, raw, f.setup)
		return running, nw, err
	}
	if len(args) == 0 {
		return diff.Side{}, diff.Side{}, fmt.Errorf("give NEW, or --live, or --to-version")
	}
	against := f.against
	if against == "" {
		var err error
		if against, err = nodefile.HostPath(f.root, "/var/lib/kubelet/config.yaml"); err != nil {
			return diff.Side{}, diff.Side{}, err
		}
	}
	old, err := diff.FileSide(against, v, false)
	if err != nil {
		return diff.Side{}, diff.Side{}, err
	}
	old.Refused = nil // only NEW's refusal counts
	nw, err := diff.FileSide(args[0], v, false)
	return old, nw, err
}

// newSide is NEW as the started kubelet would serve it, or the node's setup.
func (f *diffFlags) newSide(s streams, v *schema.Version, args []string) (diff.Side, error) {
	if len(args) == 1 {
		return diff.FileSide(args[0], v, true)
	}
	setup, err := f.setupAs(s, v, f.kubeletArgs, f.dashed)
	if err != nil {
		return diff.Side{}, err
	}
	f.setup = setup
	return diff.SetupSide(setup)
}

// setupAs reads the node's setup as kubelet v: args (dashed: after a --),
// or the node's command line.
func (f *diffFlags) setupAs(s streams, v *schema.Version, args []string, dashed bool) (*node.Setup, error) {
	setup, err := node.ReadSetupAs(v, f.setupSource(s, args, dashed))
	if err == nil {
		f.warnings = setup.Warnings
	}
	return setup, err
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
	setup, err := f.setupAs(s, v, nil, false) // always the node's
	if err != nil {
		return err
	}
	findings, err := diff.Preflight(diff.PreflightOptions{Setup: setup, To: to})
	if err != nil {
		return err
	}
	doc := map[string]any{"from": v.Minor, "to": to.Minor, "findings": findings, "warnings": allWarnings(f.warnings)}
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
