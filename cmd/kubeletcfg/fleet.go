package main

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubeletcfg/kubeletcfg/diff"
	"github.com/kubeletcfg/kubeletcfg/fleet"
	"github.com/kubeletcfg/kubeletcfg/internal/printer"
)

type fleetFlags struct {
	kubeconfig       string
	kubeContext      string
	selector         string
	againstConfigMap bool
	against          string
	concurrency      int
	timeout          time.Duration
	output           *printer.Output
	kubeletAccess
	rolloutNamespace string
}

// How many node names and values of a field set per node a group lists in
// text before a count.
const (
	shownNodes  = 5
	shownValues = 3
)

func newFleetCmd(s streams) *cobra.Command {
	f := &fleetFlags{}
	var perNode []string
	for _, p := range fleet.PerNodeFields {
		perNode = append(perNode, fmt.Sprintf("  %-26s %s", p.Path, p.Why))
	}
	cmd := &cobra.Command{
		Use:   "fleet [--kubeconfig F] [--selector LABELS] [--against-configmap | --against FILE]",
		Short: "Every node's running kubelet configuration, grouped, with drift and version skew",
		Long: `fleet lists the Nodes (those --selector picks), reads each kubelet's running
configuration on /configz and, where the kubelet serves it (1.33+ under
ComponentFlagz, on by default from 1.36), its command line on /flagz, and
groups the nodes by what their configuration and flags set: a value equal to
the default of the node's own kubelet version counts as unset, so a 1.36 and
a 1.37 node set up alike are one group. Groups are printed largest first with
their kubelet versions and, for each group that does not match, the fields
that differ from the reference — or, without one, from the largest group —
and the flags that differ from the largest group's.

` + kubeletAccessHelp + `
--against-configmap also needs get on the kubelet-config ConfigMap in
kube-system (the Role in deploy/rbac.yaml).

  --against-configmap  compare with kubeadm's kube-system/kubelet-config
                       ConfigMap (key "kubelet"), read by each node's kubelet
                       version with its defaults
  --against FILE       compare with a KubeletConfiguration file the same way

Fields set per node by design are shown apart (their values per group) and
are never drift:
` + strings.Join(perNode, "\n") + `

Version skew: a kubelet newer than the API server, or more minors older than
the skew policy allows (3, or 2 for kubelets older than 1.25), is flagged; for
each older kubelet minor, what running the API server's minor would change in
the nodes' configurations (the config-only part of diff --to-version).

Nodes that cannot be read (timeout, refused, TLS, RBAC 403, NotReady, an
unsupported kubelet version) are listed with the reason and, for a refusal,
the permission the node needs; flags that cannot be read, likewise. Each read gets
--timeout, and a Ready node a second try after a transient failure. Progress
goes to stderr.

Load and memory: through the node proxy every read is the API server's work,
so reads are paced by its latency: 4 at once at first, doubled while reads
keep the first ones' pace, a quarter fewer when they take twice as long, at
most --concurrency (the report says how many it took). Nodes are listed 500
at a time and read as they come; each node's row waits in a temporary file
until the report is written (-o json streams it, -o yaml holds it whole), so
memory grows with the distinct configurations, not with the nodes.

Exit codes: 0 every node read matches (the reference, or each other), 1 drift,
2 no node could be read, or a usage or API error.`,
		Example: `  kubeletcfg fleet
  kubeletcfg fleet --against-configmap --selector node-role.kubernetes.io/worker
  kubeletcfg fleet --kubeconfig admin.conf --against intended.yaml -o json
  kubeletcfg fleet --direct --kubelet-ca /etc/kubernetes/pki/kubelet-serving-ca.crt`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.againstConfigMap && f.against != "" {
				return fmt.Errorf("--against-configmap and --against exclude each other")
			}
			if f.concurrency < 1 {
				return fmt.Errorf("--concurrency %d: must be at least 1", f.concurrency)
			}
			if f.timeout <= 0 {
				return fmt.Errorf("--timeout %s: must be positive", f.timeout)
			}
			scanPace()
			progress := newProgress(s)
			rep, err := fleet.Scan(cmd.Context(), fleet.Options{Kubeconfig: f.kubeconfig, Context: f.kubeContext,
				Selector: f.selector, AgainstConfigMap: f.againstConfigMap, AgainstFile: f.against,
				Concurrency: f.concurrency, Timeout: f.timeout, Progress: progress.update,
				Direct: f.direct, KubeletCA: f.kubeletCA, Insecure: f.insecure, RolloutNamespace: f.rolloutNamespace,
				// YAML is made of the whole report; text and JSON are
				// written from the nodes' rows kept on disk.
				Spill: f.output.Format() != printer.YAML})
			progress.finish()
			if err != nil {
				return err
			}
			defer rep.Close()
			switch f.output.Format() {
			case printer.JSON:
				err = rep.WriteJSON(s.Out) // streamed, in printer.WriteJSON's shape
			case printer.YAML:
				err = printer.WriteYAML(s.Out, rep)
			default:
				if err = printFleet(s, rep); err == nil {
					printFleetRollout(s, rep)
				}
			}
			// The report is out: say on stderr why there is nothing to compare.
			switch {
			case err != nil:
				return err
			case rep.Total() == 0:
				fmt.Fprintf(s.ErrOut, "kubeletcfg: no node matches the selector %q\n", f.selector)
				return errReported
			case rep.Read() == 0:
				fmt.Fprintf(s.ErrOut, "kubeletcfg: none of the %d nodes could be read\n", rep.Total())
				return errReported
			case rep.Drift():
				return errCheckFailed
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig of the cluster (default: $KUBECONFIG or ~/.kube/config)")
	fl.StringVar(&f.kubeContext, "context", "", "the kubeconfig context to use (default: its current context)")
	fl.StringVarP(&f.selector, "selector", "l", "", "label selector of the nodes to read (default: all)")
	fl.BoolVar(&f.againstConfigMap, "against-configmap", false, "compare with kubeadm's kube-system/kubelet-config ConfigMap")
	fl.StringVar(&f.against, "against", "", "compare with this KubeletConfiguration file")
	fl.IntVar(&f.concurrency, "concurrency", fleet.DefaultConcurrency, "nodes read at once, at most (through the proxy, fewer when the API server slows down)")
	fl.DurationVar(&f.timeout, "timeout", fleet.DefaultTimeout, "time for one read of a node's /configz")
	f.output = printer.Flag(fl, printer.Text, printer.JSON, printer.YAML)
	f.kubeletAccess.bind(fl)
	fl.StringVar(&f.rolloutNamespace, "rollout-namespace", "kube-system", "where kubeletcfg rollout keeps its progress: its state is shown after the groups")
	return cmd
}

// progress prints "nodes read / total, elapsed" on stderr, at most once a
// second, once a scan has taken a second.
type progress struct {
	s          streams
	mu         sync.Mutex
	start      time.Time
	last       time.Time
	done, all  int
	printedAny bool
}

func newProgress(s streams) *progress {
	now := time.Now()
	return &progress{s: s, start: now, last: now}
}

func (p *progress) update(done, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done, p.all = done, total
	if now := time.Now(); now.Sub(p.last) >= time.Second {
		p.last = now
		p.print()
	}
}

func (p *progress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.printedAny {
		p.print()
	}
}

func (p *progress) print() {
	p.printedAny = true
	fmt.Fprintf(p.s.ErrOut, "fleet: %d/%d nodes read, %.1fs\n", p.done, p.all, time.Since(p.start).Seconds())
}

// scanPace gives a scan the collector's usual pace (GOGC 100, unless
// GOGC is set): unlike the other commands, it runs for minutes over
// thousands of answers, and the first collection at 16 MiB and a goal of
// five times the live heap (gc.go) would let its memory grow for nothing.
func scanPace() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(100)
	}
}

func printFleet(s streams, rep *fleet.Report) error {
	out := s.Out
	against := "compared with each other (the largest group)"
	if rep.Reference != "" {
		against = "against " + rep.Reference
	}
	via := "through the API server's node proxy"
	if rep.Via == "direct" {
		via = "each kubelet directly"
	}
	fmt.Fprintf(out, "%s, %d read, %d unreadable (%s); API server %s %s; %s\n",
		count(rep.Total(), "node"), rep.Read(), rep.Total()-rep.Read(), via, rep.APIServer, rep.APIServerVersion, against)
	if c := rep.Concurrency; c != nil && c.Min < c.Max {
		fmt.Fprintf(out, "reads at once through the API server: %d to %d of --concurrency %d, as its latency allowed (%.1f ms at first)\n", c.Min, c.Final, c.Max, c.BaseLatency)
	}
	for _, g := range rep.Groups {
		var versions []string
		for _, v := range g.Versions {
			versions = append(versions, fmt.Sprintf("%s (%d)", v.Minor, v.Count))
		}
		verdict := "matches"
		if !g.Matches {
			verdict = "differs in " + count(len(g.Differs), "field")
		}
		fmt.Fprintf(out, "\ngroup %d: %s, kubelet %s: %s\n", g.ID, count(g.Count, "node"), strings.Join(versions, ", "), verdict)
		fmt.Fprintf(out, "  nodes: %s\n", names(g.Nodes))
		for _, c := range g.Differs {
			fmt.Fprintf(out, "  %s: %s -> %s  [%s]\n", c.Path, diff.Value(c.Old), diff.Value(c.New), classes(c))
		}
		printGroupFlags(out, rep, g)
		for _, path := range rep.PerNodeFields {
			printPerNode(out, path, g.PerNode[path], g.PerNodeMore[path])
		}
	}
	if unread := rep.Total() - rep.Read(); unread > 0 {
		fmt.Fprintf(out, "\nunreadable: %s\n", count(unread, "node"))
		err := rep.EachNode(func(n fleet.Node) error {
			if n.Unreadable == nil {
				return nil
			}
			ready := ""
			if n.Ready != "True" {
				ready = fmt.Sprintf(" (NotReady: Ready=%s %s)", orNone(n.Ready), n.ReadyReason)
			}
			fmt.Fprintf(out, "  %s  %s%s: %s\n", n.Name, n.Unreadable.Reason, ready, n.Unreadable.Message)
			return nil
		})
		if err != nil {
			return err
		}
	}
	if err := printNodeNotes(out, rep); err != nil {
		return err
	}
	if rep.Skew.APIServerMinor == "" {
		return nil
	}
	fmt.Fprintf(out, "\nversion skew against the API server's %s:\n", rep.Skew.APIServerMinor)
	for _, m := range rep.Skew.Minors {
		problem := "ok"
		if m.Problem != "" {
			problem = m.Problem
		}
		fmt.Fprintf(out, "  kubelet %s: %s: %s\n", m.Minor, count(m.Nodes, "node"), problem)
		if m.UpgradeNote != "" {
			fmt.Fprintf(out, "    upgrade to %s: %s\n", rep.Skew.APIServerMinor, m.UpgradeNote)
		}
		for _, u := range m.Upgrade {
			fmt.Fprintf(out, "    upgrade to %s, group %s: %s\n", rep.Skew.APIServerMinor, ints(u.Groups), count(len(u.Findings), "finding"))
			for _, fd := range u.Findings {
				fmt.Fprintf(out, "      %-7s %s: %s\n", fd.Severity, fd.Subject, fd.Message)
			}
		}
	}
	return nil
}

// printGroupFlags prints a group's flags (its /flagz), how they differ
// from the largest group's, and the flags set per node.
func printGroupFlags(out io.Writer, rep *fleet.Report, g fleet.Group) {
	if !g.FlagsRead {
		fmt.Fprintf(out, "  flags: not read (see the nodes below)\n")
		return
	}
	var set []string
	for _, f := range g.Flags {
		set = append(set, "--"+f.Name+"="+f.Value)
	}
	if len(set) == 0 {
		set = []string{"(all at their defaults)"}
	}
	fmt.Fprintf(out, "  flags: %s\n", strings.Join(set, " "))
	for _, c := range g.FlagsDiffer {
		fmt.Fprintf(out, "  flag --%s: %s -> %s\n", c.Name, orDefault(c.Old), orDefault(c.New))
	}
	for _, name := range rep.PerNodeFlags {
		printPerNode(out, "--"+name, g.PerNodeFlags[name], g.PerNodeFlagsMore[name])
	}
}

// printPerNode prints the values a field or flag set per node has in a
// group, the most common first.
func printPerNode(out io.Writer, what string, vals []fleet.ValueCount, uncounted int) {
	if len(vals) == 0 {
		return
	}
	var shown []string
	for _, v := range vals[:min(len(vals), shownValues)] {
		shown = append(shown, fmt.Sprintf("%s (%d)", v.Value, v.Count))
	}
	shown = append(shown, moreValues(vals, uncounted)...)
	fmt.Fprintf(out, "  per node, not compared: %s = %s\n", what, strings.Join(shown, ", "))
}

// printNodeNotes prints what could not be read of the nodes' flags, and
// what reading a node took beyond the usual, alike nodes together (their
// names, and how many beyond a few).
func printNodeNotes(out io.Writer, rep *fleet.Report) error {
	type alike struct {
		names []string // the first shownNodes
		count int
	}
	byLine := map[string]*alike{}
	var lines []string
	add := func(line, node string) {
		a := byLine[line]
		if a == nil {
			a = &alike{}
			byLine[line] = a
			lines = append(lines, line)
		}
		if a.count++; len(a.names) < shownNodes {
			a.names = append(a.names, node)
		}
	}
	err := rep.EachNode(func(n fleet.Node) error {
		if n.Unreadable == nil && n.FlagsUnread != nil {
			add(fmt.Sprintf("flags %s: %s", n.FlagsUnread.Reason, n.FlagsUnread.Message), n.Name)
		}
		for _, note := range n.Notes {
			add(note, n.Name)
		}
		return nil
	})
	if err != nil || len(lines) == 0 {
		return err
	}
	fmt.Fprintf(out, "\nper node:\n")
	for _, l := range lines {
		a := byLine[l]
		shown := strings.Join(a.names, ", ")
		if a.count > len(a.names) {
			shown = fmt.Sprintf("%s and %d more", shown, a.count-len(a.names))
		}
		fmt.Fprintf(out, "  %s: %s\n", shown, l)
	}
	return nil
}

// moreValues says what of a field's values per node is not shown: the
// values counted beyond shownValues, and the nodes whose values were not
// counted one by one.
func moreValues(vals []fleet.ValueCount, uncounted int) []string {
	var out []string
	switch more := len(vals) - shownValues; {
	case more > 0 && uncounted > 0:
		out = append(out, fmt.Sprintf("and %d more values, and other values on %s", more, count(uncounted, "node")))
	case more > 0:
		out = append(out, fmt.Sprintf("and %d more values", more))
	case uncounted > 0:
		out = append(out, fmt.Sprintf("and other values on %s", count(uncounted, "node")))
	}
	return out
}

func orDefault(s string) string {
	if s == "" {
		return "(default)"
	}
	return s
}

// count says "1 node", "2 nodes".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func names(all []string) string {
	if len(all) <= shownNodes {
		return strings.Join(all, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(all[:shownNodes], ", "), len(all)-shownNodes)
}

func classes(c diff.Change) string {
	var out []string
	for _, cl := range c.Classes {
		out = append(out, string(cl))
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

func ints(xs []int) string {
	var out []string
	for _, x := range xs {
		out = append(out, fmt.Sprint(x))
	}
	return strings.Join(out, ", ")
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
