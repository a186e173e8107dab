package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/kubelet/config/v1beta1"

	"github.com/kubeletcfg/kubeletcfg/diff"
	"github.com/kubeletcfg/kubeletcfg/kubeletapi"
	"github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

// Defaults of Options.
const (
	DefaultConcurrency = 16
	DefaultTimeout     = 5 * time.Second
)

// Options say which cluster and nodes to scan, and what to compare with.
type Options struct {
	Kubeconfig string // "" means $KUBECONFIG or ~/.kube/config
	Context    string // "" means the kubeconfig's current context
	Selector   string // label selector of the Nodes; "" means all
	// AgainstConfigMap compares with kubeadm's kube-system/kubelet-config
	// ConfigMap; AgainstFile with a KubeletConfiguration file. Neither
	// compares the nodes with each other.
	AgainstConfigMap bool
	AgainstFile      string
	Concurrency      int           // reads at once; DefaultConcurrency when 0
	Timeout          time.Duration // per read attempt; DefaultTimeout when 0
	// Direct reads each kubelet on its own port (needs get nodes/configz,
	// not nodes/proxy, where KubeletFineGrainedAuthz is on), its serving
	// certificate verified against the kubeconfig's cluster CA or
	// KubeletCA; the nodes named in Insecure are read unverified. Without
	// it, through the API server's node proxy (get nodes/proxy).
	Direct    bool
	KubeletCA string
	Insecure  []string
	// Progress, if set, is called after each node is read (or given up),
	// one call at a time.
	Progress func(done, total int)
}

// Scan reads every node's running configuration and reports. An error means
// the scan could not run (kubeconfig, listing the nodes, the reference);
// nodes that cannot be read are in the report with the reason.
func Scan(ctx context.Context, o Options) (*Report, error) {
	start := time.Now()
	if o.AgainstConfigMap && o.AgainstFile != "" {
		return nil, fmt.Errorf("compare with the ConfigMap or with a file, not both")
	}
	if o.Concurrency < 0 || o.Timeout < 0 {
		return nil, fmt.Errorf("concurrency and timeout must not be negative")
	}
	if o.Concurrency == 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	var ref *reference
	if o.AgainstFile != "" {
		var err error
		if ref, err = fileReference(o.AgainstFile); err != nil {
			return nil, err
		}
	}
	cfg, err := node.RESTConfig(o.Kubeconfig, o.Context)
	if err != nil {
		return nil, err
	}
	client, err := kubeletapi.CoreClient(cfg)
	if err != nil {
		return nil, err
	}
	via := kubeletapi.Proxy
	if o.Direct {
		via = kubeletapi.Direct
	}
	api, err := kubeletapi.New(cfg, kubeletapi.Options{Via: via, KubeletCA: o.KubeletCA, Insecure: o.Insecure})
	if err != nil {
		return nil, err
	}
	rep := &Report{APIServer: cfg.Host, Via: string(via), Selector: o.Selector, PerNodeFields: perNodePaths(), PerNodeFlags: perNodeFlagNames()}
	if v, err := client.Get().AbsPath("/version").Do(ctx).Raw(); err == nil {
		var info struct {
			GitVersion string `json:"gitVersion"`
		}
		if json.Unmarshal(v, &info) == nil {
			rep.APIServerVersion = info.GitVersion
		}
	}
	if o.AgainstConfigMap {
		if ref, err = configMapReference(ctx, client); err != nil {
			return nil, err
		}
	}
	if ref != nil {
		// A reference no kubelet can read stops the scan before it starts.
		if _, err := ref.running(schema.Newest()); err != nil {
			return nil, err
		}
	}
	targets, err := listNodes(ctx, client, o.Selector)
	if err != nil {
		return nil, err
	}
	sort.Slice(targets, func(i, j int) bool { return targets[i].name < targets[j].name })

	rd := &reader{api: api, timeout: o.Timeout}
	results := readAll(ctx, rd, targets, o.Concurrency, o.Progress)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rep.Nodes = make([]Node, len(targets))
	for i, t := range targets {
		res := results[i]
		n := Node{Name: t.name, KubeletVersion: t.version, Ready: t.ready, ReadyReason: t.readyReason,
			Attempts: res.attempts, Unreadable: res.why, Notes: res.notes}
		if r := res.r; r != nil {
			n.Sets, n.PerNode = r.sets, r.perNode
			n.Flags, n.FlagsForm, n.FlagsUnread = res.flags, res.flagsForm, res.flagsWhy
		}
		rep.Nodes[i] = n
	}
	if ref != nil {
		rep.Reference = ref.name
	}
	if err := group(rep, results, ref); err != nil {
		return nil, err
	}
	rep.Skew = skewOf(rep, results)
	rep.Elapsed = time.Since(start)
	return rep, nil
}

type result struct {
	r        *running
	attempts int
	why      *Unreadable
	notes    []string
	// flags are the node's flags away from its defaults (its /flagz),
	// flagsWhy why they were not read.
	flags     []kubeletapi.Flag
	flagsForm string
	flagsWhy  *Unreadable
}

// flagsKey is what a node's flags add to its group's key: the flags away
// from the defaults but those set per node, or that /flagz was not read.
func (res result) flagsKey() (string, []kubeletapi.Flag) {
	if res.flagsWhy != nil {
		return "?", nil
	}
	var shared []kubeletapi.Flag
	for _, f := range res.flags {
		if !perNodeFlag(res.r.v, f.Name) {
			shared = append(shared, f)
		}
	}
	key, _ := json.Marshal(shared)
	return string(key), shared
}

// readAll reads the targets with at most concurrency reads at once.
func readAll(ctx context.Context, rd *reader, targets []target, concurrency int, progress func(done, total int)) []result {
	results := make([]result, len(targets))
	var next, done atomic.Int64
	var progressMu sync.Mutex
	var wg sync.WaitGroup
	for w := 0; w < min(concurrency, len(targets)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(targets) || ctx.Err() != nil {
					return
				}
				results[i] = rd.read(ctx, targets[i])
				if progress != nil {
					progressMu.Lock()
					progress(int(done.Add(1)), len(targets))
					progressMu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return results
}

// group puts the read nodes into groups by what their configurations set
// and compares each with the reference, or without one with the largest
// group.
func group(rep *Report, results []result, ref *reference) error {
	bySets := map[string][]int{}
	var keys []string
	for i, res := range results {
		if res.r == nil {
			continue
		}
		fk, _ := res.flagsKey()
		k := res.r.key + "\x00" + fk
		if _, ok := bySets[k]; !ok {
			keys = append(keys, k)
		}
		bySets[k] = append(bySets[k], i)
	}
	if len(keys) == 0 {
		return nil
	}
	if ref == nil {
		largest := keys[0]
		for _, k := range keys {
			if len(bySets[k]) > len(bySets[largest]) {
				largest = k
			}
		}
		var err error
		name := "group 1 (the largest)"
		if ref, err = setsReference(name, results[bySets[largest][0]].r.shared); err != nil {
			return err
		}
	}
	// What differs from the reference, per distinct configuration: nodes
	// that set the same may still differ under different kubelet versions.
	differs := map[*shape][]diff.Change{}
	byKey := map[string][]int{}
	var order []string
	for _, k := range keys {
		for _, i := range bySets[k] {
			r := results[i].r
			d, ok := differs[r.shape]
			if !ok {
				base, err := ref.running(r.v)
				if err != nil {
					return err
				}
				for _, c := range diff.CompareMaps(base, r.m, r.v) {
					if !perNode(c.Path) {
						d = append(d, c)
					}
				}
				differs[r.shape] = d
			}
			dk, _ := json.Marshal(d)
			gk := k + "\x00" + string(dk)
			if _, ok := byKey[gk]; !ok {
				order = append(order, gk)
			}
			byKey[gk] = append(byKey[gk], i)
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return len(byKey[order[a]]) > len(byKey[order[b]]) })
	for gi, gk := range order {
		members := byKey[gk]
		first := results[members[0]].r
		g := Group{ID: gi + 1, Count: len(members), Differs: differs[first.shape], Matches: len(differs[first.shape]) == 0,
			Sets: first.shared}
		g.FlagsRead = results[members[0]].flagsWhy == nil
		_, g.Flags = results[members[0]].flagsKey()
		perNodeFlags := map[string]map[string]int{}
		versions := map[string]int{}
		perNodeValues := map[string]map[string]int{}
		for _, i := range members {
			r := results[i].r
			versions[r.v.Minor]++
			g.Nodes = append(g.Nodes, rep.Nodes[i].Name)
			rep.Nodes[i].Group, rep.Nodes[i].Matches, rep.Nodes[i].Differs = g.ID, g.Matches, g.Differs
			for path, val := range r.perNode {
				if perNodeValues[path] == nil {
					perNodeValues[path] = map[string]int{}
				}
				perNodeValues[path][diff.Value(val)]++
			}
			for _, f := range results[i].flags {
				if perNodeFlag(r.v, f.Name) {
					if perNodeFlags[f.Name] == nil {
						perNodeFlags[f.Name] = map[string]int{}
					}
					perNodeFlags[f.Name][f.Value]++
				}
			}
		}
		g.PerNodeFlags = valueCounts(perNodeFlags)
		for _, v := range schema.Versions() {
			if n := versions[v.Minor]; n > 0 {
				g.Versions = append(g.Versions, VersionCount{Minor: v.Minor, Count: n})
			}
		}
		g.PerNode = valueCounts(perNodeValues)
		rep.Groups = append(rep.Groups, g)
	}
	flagsDiffer(rep.Groups)
	return nil
}

// valueCounts lists, per key, the values and how many nodes have each, most
// first; nil for none.
func valueCounts(m map[string]map[string]int) map[string][]ValueCount {
	if len(m) == 0 {
		return nil
	}
	out := map[string][]ValueCount{}
	for key, vals := range m {
		for val, n := range vals {
			out[key] = append(out[key], ValueCount{Value: val, Count: n})
		}
		sort.Slice(out[key], func(a, b int) bool {
			x, y := out[key][a], out[key][b]
			return x.Count > y.Count || x.Count == y.Count && x.Value < y.Value
		})
	}
	return out
}

// flagsDiffer compares each group's flags with the largest group's whose
// flags were read (groups come largest first).
func flagsDiffer(groups []Group) {
	var base *Group
	for i := range groups {
		if groups[i].FlagsRead {
			base = &groups[i]
			break
		}
	}
	if base == nil {
		return
	}
	values := func(fs []kubeletapi.Flag) map[string]string {
		m := map[string]string{}
		for _, f := range fs {
			m[f.Name] = f.Value
		}
		return m
	}
	old := values(base.Flags)
	for i := range groups {
		g := &groups[i]
		if !g.FlagsRead || g == base {
			continue
		}
		now := values(g.Flags)
		var names []string
		for n := range old {
			names = append(names, n)
		}
		for n := range now {
			if _, ok := old[n]; !ok {
				names = append(names, n)
			}
		}
		sort.Strings(names)
		for _, n := range names {
			if old[n] != now[n] {
				g.FlagsDiffer = append(g.FlagsDiffer, FlagChange{Name: n, Old: old[n], New: now[n]})
			}
		}
	}
}

// skewOf checks every node's kubelet version against the API server's and,
// per older minor, what running the API server's minor would change.
func skewOf(rep *Report, results []result) Skew {
	_, apiMinor, ok := minorOf(rep.APIServerVersion)
	if !ok {
		return Skew{}
	}
	sk := Skew{APIServerMinor: fmt.Sprintf("1.%d", apiMinor)}
	to, toErr := schema.Resolve(sk.APIServerMinor)
	byMinor := map[string]*MinorSkew{}
	var minors []string
	// the first node of each group per minor stands for the group
	reps := map[string]map[int]*running{}
	for i := range rep.Nodes {
		n := &rep.Nodes[i]
		n.Skew = skewProblem(n.KubeletVersion, rep.APIServerVersion)
		minor := "unknown"
		if _, m, ok := minorOf(n.KubeletVersion); ok {
			minor = fmt.Sprintf("1.%d", m)
		}
		ms, ok := byMinor[minor]
		if !ok {
			ms = &MinorSkew{Minor: minor, Problem: n.Skew}
			byMinor[minor] = ms
			minors = append(minors, minor)
			reps[minor] = map[int]*running{}
		}
		ms.Nodes++
		if r := results[i].r; r != nil && reps[minor][n.Group] == nil {
			reps[minor][n.Group] = r
		}
	}
	sort.Slice(minors, func(a, b int) bool {
		_, x, _ := minorOf(minors[a])
		_, y, _ := minorOf(minors[b])
		return x < y
	})
	for _, minor := range minors {
		ms := byMinor[minor]
		_, m, ok := minorOf(minor)
		if !ok || m >= apiMinor {
			sk.Minors = append(sk.Minors, *ms)
			continue
		}
		switch {
		case toErr != nil:
			ms.UpgradeNote = fmt.Sprintf("kubeletcfg has no schema for the API server's minor %s", sk.APIServerMinor)
		case len(reps[minor]) == 0:
			ms.UpgradeNote = "no node of this minor could be read"
		default:
			ms.Upgrade = upgradeFindings(reps[minor], to)
		}
		sk.Minors = append(sk.Minors, *ms)
	}
	return sk
}

// upgradeFindings runs the configuration-only upgrade preflight for each
// group's representative, merging groups whose findings are alike.
func upgradeFindings(reps map[int]*running, to *schema.Version) []UpgradeFindings {
	groups := make([]int, 0, len(reps))
	for g := range reps {
		groups = append(groups, g)
	}
	sort.Ints(groups)
	var out []UpgradeFindings
	seen := map[string]int{}
	for _, g := range groups {
		r := reps[g]
		var findings []diff.Finding
		doc, err := json.Marshal(nest(r.sets))
		if err == nil {
			var cfg *v1beta1.KubeletConfiguration
			if cfg, err = typed(r.m); err == nil {
				findings, err = diff.PreflightRunning(cfg, doc, r.v, to)
			}
		}
		if err != nil {
			findings = []diff.Finding{{Severity: "note", Subject: "kubelet " + to.Minor, Message: err.Error()}}
		}
		key, _ := json.Marshal(findings)
		if at, ok := seen[string(key)]; ok {
			out[at].Groups = append(out[at].Groups, g)
			continue
		}
		seen[string(key)] = len(out)
		out = append(out, UpgradeFindings{Groups: []int{g}, Findings: findings})
	}
	return out
}
