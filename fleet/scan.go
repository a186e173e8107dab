package fleet

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/kubelet/config/v1beta1"

	"github.com/kubeletcfg/kubeletcfg/diff"
	"github.com/kubeletcfg/kubeletcfg/kubeletapi"
	"github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/rollout"
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
	// one call at a time; total counts the nodes listed so far (and those
	// the API server says are left, when it says).
	Progress func(done, total int)
	// Spill keeps the nodes' rows in a temporary file until the report is
	// written (Report.EachNode) instead of in Report.Nodes: the scan's
	// memory then grows with the distinct configurations, not the nodes.
	// The caller closes the report.
	Spill bool
	// RolloutNamespace is where kubeletcfg rollout keeps its progress
	// (default kube-system).
	RolloutNamespace string
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
	var store rows = &memRows{}
	if o.Spill {
		fr, err := newFileRows()
		if err != nil {
			return nil, err
		}
		store = fr
	}
	agg := newAggregate(store, rep.APIServerVersion)
	rd := &reader{api: api, timeout: o.Timeout}
	var lim *limiter
	if via == kubeletapi.Proxy {
		// Through the proxy every read is the API server's work: as many
		// at once as its latency allows (see limiter).
		lim = newLimiter(o.Concurrency)
	}
	if err := readAll(ctx, client, o.Selector, rd, agg, o.Concurrency, lim, o.Progress); err != nil {
		store.close()
		return nil, err
	}
	if ref != nil {
		rep.Reference = ref.name
	}
	gr, err := agg.groups(rep, ref)
	if err != nil {
		store.close()
		return nil, err
	}
	rep.Skew = agg.skew(rep, gr)
	rep.total, rep.rows, rep.grouping = agg.total, store, gr
	if lim != nil {
		rep.Concurrency = lim.report()
	}
	if !o.Spill {
		if err := rep.EachNode(func(n Node) error {
			rep.Nodes = append(rep.Nodes, n)
			return nil
		}); err != nil {
			return nil, err
		}
		rep.rows = nil
	}
	rep.Rollout = readRollout(ctx, client, cmp.Or(o.RolloutNamespace, rollout.DefaultNamespace))
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

// readAll lists the nodes page by page and reads them as they come, with
// at most concurrency reads at once (fewer when lim says so): no more than
// a page of Nodes is held, each only until its row is folded in.
func readAll(ctx context.Context, client rest.Interface, selector string, rd *reader, agg *aggregate, concurrency int, lim *limiter, progress func(done, total int)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	work := make(chan target, listPage)
	var listed, expected, done atomic.Int64
	var listErr, rowErr error
	var errMu sync.Mutex
	fail := func(dst *error, err error) {
		errMu.Lock()
		if *dst == nil {
			*dst = err
		}
		errMu.Unlock()
		cancel()
	}
	go func() {
		defer close(work)
		err := listNodes(ctx, client, selector, func(page []target, remaining int64) error {
			listed.Add(int64(len(page)))
			expected.Store(listed.Load() + remaining)
			for _, t := range page {
				select {
				case work <- t:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			return nil
		})
		if err != nil && ctx.Err() == nil {
			fail(&listErr, err)
		}
	}()
	var progressMu sync.Mutex
	var wg sync.WaitGroup
	for w := 0; w < concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range work {
				if ctx.Err() != nil {
					continue // drain
				}
				lim.acquire(ctx)
				began := time.Now()
				res := rd.read(ctx, t)
				lim.release(time.Since(began), res.why == nil && res.attempts == 1)
				if err := agg.add(t, res); err != nil {
					fail(&rowErr, err)
					continue
				}
				if progress != nil {
					progressMu.Lock()
					progress(int(done.Add(1)), int(max(expected.Load(), listed.Load())))
					progressMu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if listErr != nil {
		return listErr
	}
	if rowErr != nil {
		return rowErr
	}
	return nil
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
