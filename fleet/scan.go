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
	client, err := coreClient(cfg)
	if err != nil {
		return nil, err
	}
	proxy, err := node.NewProxy(cfg)
	if err != nil {
		return nil, err
	}
	rep := &Report{APIServer: cfg.Host, Selector: o.Selector, PerNodeFields: perNodePaths()}
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

	rd := &reader{proxy: proxy, timeout: o.Timeout}
	results := readAll(ctx, rd, targets, o.Concurrency, o.Progress)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rep.Nodes = make([]Node, len(targets))
	for i, t := range targets {
		n := Node{Name: t.name, KubeletVersion: t.version, Ready: t.ready, ReadyReason: t.readyReason,
			Attempts: results[i].attempts, Unreadable: results[i].why}
		if r := results[i].r; r != nil {
			n.Sets, n.PerNode = r.sets, r.perNode
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
				r, attempts, why := rd.read(ctx, targets[i])
				results[i] = result{r: r, attempts: attempts, why: why}
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
		if _, ok := bySets[res.r.key]; !ok {
			keys = append(keys, res.r.key)
		}
		bySets[res.r.key] = append(bySets[res.r.key], i)
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
		}
		for _, v := range schema.Versions() {
			if n := versions[v.Minor]; n > 0 {
				g.Versions = append(g.Versions, VersionCount{Minor: v.Minor, Count: n})
			}
		}
		if len(perNodeValues) > 0 {
			g.PerNode = map[string][]ValueCount{}
			for path, vals := range perNodeValues {
				for val, n := range vals {
					g.PerNode[path] = append(g.PerNode[path], ValueCount{Value: val, Count: n})
				}
				sort.Slice(g.PerNode[path], func(a, b int) bool {
					x, y := g.PerNode[path][a], g.PerNode[path][b]
					return x.Count > y.Count || x.Count == y.Count && x.Value < y.Value
				})
			}
		}
		rep.Groups = append(rep.Groups, g)
	}
	return nil
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
