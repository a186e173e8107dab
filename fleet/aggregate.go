package fleet

import (
	"encoding/json"
	"fmt"
	"sort"
	"sync"

	"github.com/kubeletcfg/kubeletcfg/diff"
	"github.com/kubeletcfg/kubeletcfg/kubeletapi"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

// maxValues is how many distinct values of a field (or flag) set per node
// a group counts one by one; the others are counted together (PerNodeMore):
// a fleet whose every node has a providerID of its own would otherwise keep
// one per node.
const maxValues = 100

// cell is what the scan keeps of the nodes that run one configuration (one
// shape: a kubelet minor and what it sets) with the same shared flags: their
// names and counts, never their rows. Groups are made of cells once every
// node is read.
type cell struct {
	id    int
	key   string // what the nodes set and their flags, across minors
	first string // its first node's name
	r     *running
	// flags are the flags shared by its nodes (per-node flags aside);
	// flagsRead says they were read.
	flags     []kubeletapi.Flag
	flagsRead bool
	nodes     []string
	versions  map[string]int
	perNode   map[string]*counter
	perFlag   map[string]*counter
	// minors holds, per kubelet minor, its first node's running
	// configuration: the skew's upgrade findings stand on it.
	minors map[string]indexedRun
}

type indexedRun struct {
	name string
	r    *running
}

// counter counts nodes per value, maxValues of them one by one.
type counter struct {
	n    map[string]int
	more int
}

func (c *counter) add(v string) {
	if _, ok := c.n[v]; ok || len(c.n) < maxValues {
		c.n[v]++
		return
	}
	c.more++
}

// minorSeen is a kubelet minor of the fleet: its node count and its first
// node (by name), whose skew the minor's is.
type minorSeen struct {
	nodes int
	first string
	skew  string
}

// aggregate folds the nodes' results in as they are read.
type aggregate struct {
	mu     sync.Mutex
	cells  map[string]*cell
	order  []*cell
	minors map[string]*minorSeen
	total  int
	read   int
	rows   rows
	api    string // the API server's version
}

func newAggregate(r rows, apiVersion string) *aggregate {
	return &aggregate{cells: map[string]*cell{}, minors: map[string]*minorSeen{}, rows: r, api: apiVersion}
}

// add folds node t and what was read of it in, and keeps its row.
func (a *aggregate) add(t target, res result) error {
	n := Node{Name: t.name, KubeletVersion: t.version, Ready: t.ready, ReadyReason: t.readyReason,
		Attempts: res.attempts, Unreadable: res.why, Notes: res.notes, Skew: skewProblem(t.version, a.api)}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.total++
	minor := "unknown"
	if _, m, ok := minorOf(t.version); ok {
		minor = fmt.Sprintf("1.%d", m)
	}
	ms := a.minors[minor]
	if ms == nil {
		ms = &minorSeen{first: t.name, skew: n.Skew}
		a.minors[minor] = ms
	}
	ms.nodes++
	if t.name < ms.first {
		ms.first, ms.skew = t.name, n.Skew
	}
	c := -1
	if r := res.r; r != nil {
		a.read++
		n.Sets, n.PerNode = r.sets, r.perNode
		n.Flags, n.FlagsForm, n.FlagsUnread = res.flags, res.flagsForm, res.flagsWhy
		fk, shared := res.flagsKey()
		key := r.key + "\x00" + fk
		// Nodes that set the same may still differ from the reference in
		// what their runtime or the kubelet decides (their shape's).
		id := fmt.Sprintf("%s\x00%t\x00%t\x00%s", r.v.Minor, r.runtimeDriver, r.selfSigned, key)
		ce := a.cells[id]
		if ce == nil {
			ce = &cell{id: len(a.order), key: key, first: t.name, r: r, flags: shared, flagsRead: res.flagsWhy == nil,
				versions: map[string]int{}, perNode: map[string]*counter{}, perFlag: map[string]*counter{}, minors: map[string]indexedRun{}}
			a.cells[id] = ce
			a.order = append(a.order, ce)
		}
		ce.first = min(ce.first, t.name)
		ce.nodes = append(ce.nodes, t.name)
		ce.versions[r.v.Minor]++
		if run, ok := ce.minors[minor]; !ok || t.name < run.name {
			ce.minors[minor] = indexedRun{t.name, r}
		}
		for path, val := range r.perNode {
			count(ce.perNode, path, diff.Value(val))
		}
		for _, f := range res.flags {
			if perNodeFlag(r.v, f.Name) {
				count(ce.perFlag, f.Name, f.Value)
			}
		}
		c = ce.id
	}
	return a.rows.put(c, n)
}

func count(m map[string]*counter, key, val string) {
	c := m[key]
	if c == nil {
		c = &counter{n: map[string]int{}}
		m[key] = c
	}
	c.add(val)
}

// grouping is where each cell's nodes went.
type grouping struct {
	group   []int // by cell id: the group (1 the largest)
	differs [][]diff.Change
}

// groups makes the groups of the cells and compares each with the
// reference, or without one with the largest set of nodes alike.
func (a *aggregate) groups(rep *Report, ref *reference) (grouping, error) {
	gr := grouping{group: make([]int, len(a.order)), differs: make([][]diff.Change, len(a.order))}
	if len(a.order) == 0 {
		return gr, nil
	}
	if ref == nil {
		// The largest set of nodes setting the same (across minors), the
		// first by name among equals.
		byKey := map[string]int{}
		firstOf := map[string]string{}
		for _, c := range a.order {
			byKey[c.key] += len(c.nodes)
			if f, ok := firstOf[c.key]; !ok || c.first < f {
				firstOf[c.key] = c.first
			}
		}
		var largest *cell
		for _, c := range a.order {
			if largest == nil || byKey[c.key] > byKey[largest.key] ||
				byKey[c.key] == byKey[largest.key] && firstOf[c.key] < firstOf[largest.key] {
				largest = c
			}
		}
		var err error
		if ref, err = setsReference("group 1 (the largest)", largest.r.shared); err != nil {
			return gr, err
		}
	}
	// What differs from the reference, per distinct configuration: nodes
	// that set the same may still differ under different kubelet versions.
	differs := map[*shape][]diff.Change{}
	type group struct {
		cells []*cell
		count int
		first string
	}
	byGroup := map[string]*group{}
	var order []*group
	for _, c := range a.order {
		d, ok := differs[c.r.shape]
		if !ok {
			base, err := ref.running(c.r.v)
			if err != nil {
				return gr, err
			}
			for _, ch := range diff.CompareMaps(base, c.r.m, c.r.v) {
				if !c.r.shape.perNode(ch.Path) && !c.r.shape.derived(ch) {
					d = append(d, ch)
				}
			}
			differs[c.r.shape] = d
		}
		dk, _ := json.Marshal(d)
		gk := c.key + "\x00" + string(dk)
		g := byGroup[gk]
		if g == nil {
			g = &group{first: c.first}
			byGroup[gk] = g
			order = append(order, g)
		}
		g.cells = append(g.cells, c)
		g.count += len(c.nodes)
		g.first = min(g.first, c.first)
		gr.differs[c.id] = d
	}
	// Largest first; among equals, the one whose first node comes first
	// by name.
	sort.SliceStable(order, func(x, y int) bool {
		if order[x].count != order[y].count {
			return order[x].count > order[y].count
		}
		return order[x].first < order[y].first
	})
	for gi, g := range order {
		sort.Slice(g.cells, func(x, y int) bool { return g.cells[x].first < g.cells[y].first })
		lead := g.cells[0]
		out := Group{ID: gi + 1, Count: g.count, Differs: differs[lead.r.shape], Matches: len(differs[lead.r.shape]) == 0,
			Sets: lead.r.shared, FlagsRead: lead.flagsRead, Flags: lead.flags}
		versions := map[string]int{}
		var members []string
		perNode, perFlag := map[string]*counter{}, map[string]*counter{}
		for _, c := range g.cells {
			gr.group[c.id] = out.ID
			members = append(members, c.nodes...)
			for v, n := range c.versions {
				versions[v] += n
			}
			merge(perNode, c.perNode)
			merge(perFlag, c.perFlag)
		}
		sort.Strings(members)
		out.Nodes = members
		for _, v := range schema.Versions() {
			if n := versions[v.Minor]; n > 0 {
				out.Versions = append(out.Versions, VersionCount{Minor: v.Minor, Count: n})
			}
		}
		out.PerNode, out.PerNodeMore = valueCounts(perNode)
		out.PerNodeFlags, out.PerNodeFlagsMore = valueCounts(perFlag)
		rep.Groups = append(rep.Groups, out)
	}
	flagsDiffer(rep.Groups)
	return gr, nil
}

func merge(into, from map[string]*counter) {
	for key, c := range from {
		for v, n := range c.n {
			if into[key] == nil {
				into[key] = &counter{n: map[string]int{}}
			}
			t := into[key]
			if _, ok := t.n[v]; ok || len(t.n) < maxValues {
				t.n[v] += n
			} else {
				t.more += n
			}
		}
		if c.more > 0 {
			if into[key] == nil {
				into[key] = &counter{n: map[string]int{}}
			}
			into[key].more += c.more
		}
	}
}

// valueCounts lists, per key, the values counted and how many nodes have
// each, most first, and how many nodes have values not counted one by one;
// nil for none.
func valueCounts(m map[string]*counter) (map[string][]ValueCount, map[string]int) {
	if len(m) == 0 {
		return nil, nil
	}
	out := map[string][]ValueCount{}
	var more map[string]int
	for key, c := range m {
		for val, n := range c.n {
			out[key] = append(out[key], ValueCount{Value: val, Count: n})
		}
		sort.Slice(out[key], func(a, b int) bool {
			x, y := out[key][a], out[key][b]
			return x.Count > y.Count || x.Count == y.Count && x.Value < y.Value
		})
		if c.more > 0 {
			if more == nil {
				more = map[string]int{}
			}
			more[key] = c.more
		}
	}
	return out, more
}

// skew checks the fleet's kubelet minors against the API server's and, per
// older minor, what running the API server's minor would change.
func (a *aggregate) skew(rep *Report, gr grouping) Skew {
	_, apiMinor, ok := minorOf(rep.APIServerVersion)
	if !ok {
		return Skew{}
	}
	sk := Skew{APIServerMinor: fmt.Sprintf("1.%d", apiMinor)}
	to, toErr := schema.Resolve(sk.APIServerMinor)
	var minors []string
	for m := range a.minors {
		minors = append(minors, m)
	}
	sort.Slice(minors, func(x, y int) bool {
		_, p, _ := minorOf(minors[x])
		_, q, _ := minorOf(minors[y])
		return p < q
	})
	for _, minor := range minors {
		seen := a.minors[minor]
		ms := MinorSkew{Minor: minor, Nodes: seen.nodes, Problem: seen.skew}
		_, m, ok := minorOf(minor)
		if !ok || m >= apiMinor {
			sk.Minors = append(sk.Minors, ms)
			continue
		}
		// Each group's first node of the minor stands for the group.
		reps := map[int]indexedRun{}
		for _, c := range a.order {
			run, ok := c.minors[minor]
			if !ok {
				continue
			}
			g := gr.group[c.id]
			if cur, ok := reps[g]; !ok || run.name < cur.name {
				reps[g] = run
			}
		}
		switch {
		case toErr != nil:
			ms.UpgradeNote = fmt.Sprintf("kubeletcfg has no schema for the API server's minor %s", sk.APIServerMinor)
		case len(reps) == 0:
			ms.UpgradeNote = "no node of this minor could be read"
		default:
			byGroup := map[int]*running{}
			for g, run := range reps {
				byGroup[g] = run.r
			}
			ms.Upgrade = upgradeFindings(byGroup, to)
		}
		sk.Minors = append(sk.Minors, ms)
	}
	return sk
}
