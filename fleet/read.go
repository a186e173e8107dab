package fleet

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
	"k8s.io/kubelet/config/v1beta1"

	"github.com/kubeletcfg/kubeletcfg/config"
	"github.com/kubeletcfg/kubeletcfg/diff"
	"github.com/kubeletcfg/kubeletcfg/kubeletapi"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

// listPage is how many Nodes one list request asks for.
const listPage = 500

// target is a Node to read: what the scan keeps of its object.
type target struct {
	name, version      string
	ready, readyReason string
	kubelet            kubeletapi.Node
	// runtime is the node's container runtime and version
	// ("containerd://2.4.2").
	runtime string
}

// listNodes lists the Nodes a label selector picks, page by page (limit
// and continue), and hands each page on as the targets it keeps of its
// Nodes, with how many Nodes the API server says are left (0 when it does
// not say); the page's objects are let go before the next is asked for.
func listNodes(ctx context.Context, c rest.Interface, selector string, page func([]target, int64) error) error {
	next := ""
	for {
		list := &corev1.NodeList{}
		req := c.Get().Resource("nodes").Param("limit", fmt.Sprint(listPage))
		if selector != "" {
			req = req.Param("labelSelector", selector)
		}
		if next != "" {
			req = req.Param("continue", next)
		}
		if err := req.Do(ctx).Into(list); err != nil {
			if apierrors.IsResourceExpired(err) {
				return fmt.Errorf("list nodes: the API server no longer keeps the list being read (a scan slower than its list continuation lasts): %w", err)
			}
			return fmt.Errorf("list nodes: %w", err)
		}
		targets := make([]target, len(list.Items))
		for i := range list.Items {
			targets[i] = targetOf(&list.Items[i])
		}
		var remaining int64
		if list.RemainingItemCount != nil {
			remaining = *list.RemainingItemCount
		}
		next = list.Continue
		list = nil
		if err := page(targets, remaining); err != nil {
			return err
		}
		if next == "" {
			return nil
		}
	}
}

func targetOf(n *corev1.Node) target {
	t := target{name: n.Name, version: n.Status.NodeInfo.KubeletVersion, kubelet: kubeletapi.NodeOf(n), runtime: n.Status.NodeInfo.ContainerRuntimeVersion}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			t.ready = string(c.Status)
			if c.Status != corev1.ConditionTrue {
				t.readyReason = strings.TrimSpace(c.Reason + ": " + c.Message)
			}
		}
	}
	return t
}

// shape is a distinct configuration as a kubelet version runs it, shared by
// the nodes that run it alike, fields set per node aside.
type shape struct {
	v *schema.Version
	// m is the configuration (config.ToMap) of the first node seen with it.
	m map[string]any
	// key is the JSON of shared.
	key string
	// shared holds what the configuration sets (the fields whose values are
	// not the version's defaults), by path, fields set per node left out.
	shared map[string]any
	// runtimeDriver: cgroupDriver is the node's runtime's answer (runtimeSets).
	runtimeDriver bool
	// selfSigned: the TLS paths are the ones the kubelet fills in for the
	// certificate it makes in its --cert-dir (selfSignedPaths).
	selfSigned bool
}

// perNode says a field is the node's own on this shape.
func (s *shape) perNode(path string) bool {
	return perNode(path) || (s.runtimeDriver && path == "cgroupDriver")
}

// running is what one node runs.
type running struct {
	*shape
	// sets is shared and the fields set per node that the node sets.
	sets    map[string]any
	perNode map[string]any
}

// maxAnswers bounds the answers analyses remembers.
const maxAnswers = 1024

// analyses caches what the scan makes of /configz answers: a fleet's nodes
// mostly serve the same bytes, and where they do not (a providerID per
// node), mostly the same defaults and the same shape.
type analyses struct {
	mu       sync.Mutex
	answers  map[[sha256.Size]byte]*analysis
	defaults map[string]map[string]any
	shapes   map[string]*shape
}

type analysis struct {
	once sync.Once
	r    *running
	err  error
}

func (a *analyses) of(raw []byte, v *schema.Version, runtime string) (*running, error) {
	key := sha256.Sum256(append([]byte(v.Minor+"\x00"+runtime+"\x00"), raw...))
	a.mu.Lock()
	if a.answers == nil {
		a.defaults = map[string]map[string]any{}
		a.shapes = map[string]*shape{}
	}
	// Identical answers are analysed once; a fleet of distinct answers
	// (a providerID per node) would keep one per node: past
	// maxAnswers, the answers seen start over (the shapes stay).
	if a.answers == nil || len(a.answers) >= maxAnswers {
		a.answers = map[[sha256.Size]byte]*analysis{}
	}
	e, ok := a.answers[key]
	if !ok {
		e = &analysis{}
		a.answers[key] = e
	}
	a.mu.Unlock()
	e.once.Do(func() { e.r, e.err = a.analyse(raw, v, runtime) })
	return e.r, e.err
}

// analyse reads a /configz answer as kubelet v runs it, on a node whose
// container runtime is runtime.
func (a *analyses) analyse(raw []byte, v *schema.Version, runtime string) (*running, error) {
	cfg := &v1beta1.KubeletConfiguration{}
	if err := json.Unmarshal(raw, cfg); err != nil {
		return nil, fmt.Errorf("not a KubeletConfiguration: %w", err)
	}
	fromRuntime := runtimeSets(v, cfg, runtime)
	isPerNode := func(path string) bool { return perNode(path) || (fromRuntime && path == "cgroupDriver") }
	m, err := config.ToMap(cfg, v)
	if err != nil {
		return nil, err
	}
	defaults, err := a.defaultsOf(cfg, v)
	if err != nil {
		return nil, err
	}
	r := &running{sets: map[string]any{}}
	shared := map[string]any{}
	for _, c := range diff.CompareMaps(defaults, m, v) {
		r.sets[c.Path] = c.New
		if !isPerNode(c.Path) {
			shared[c.Path] = c.New
		}
	}
	paths := perNodePaths()
	if fromRuntime {
		paths = append(paths, "cgroupDriver")
	}
	selfSigned := selfSignedPaths(cfg)
	if selfSigned {
		paths = append(paths, "tlsCertFile", "tlsPrivateKeyFile")
	}
	for _, p := range paths {
		if val, ok := lookup(m, p); ok {
			if r.perNode == nil {
				r.perNode = map[string]any{}
			}
			r.perNode[p] = val
		}
	}
	key, err := json.Marshal(shared)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	id := fmt.Sprintf("%s\x00%t\x00%t\x00%s", v.Minor, fromRuntime, selfSigned, key)
	if r.shape = a.shapes[id]; r.shape == nil {
		r.shape = &shape{v: v, m: m, key: string(key), shared: shared, runtimeDriver: fromRuntime, selfSigned: selfSigned}
		a.shapes[id] = r.shape
	}
	return r, nil
}

// defaultsOf is config.DefaultsOf rendered as a map, once per version and
// what the defaults depend on.
func (a *analyses) defaultsOf(cfg *v1beta1.KubeletConfiguration, v *schema.Version) (map[string]any, error) {
	gates, _ := json.Marshal(cfg.FeatureGates)
	key := fmt.Sprintf("%s\x00%s\x00%s\x00%v", v.Minor, gates, cfg.NodeStatusUpdateFrequency.Duration, deref(cfg.MaxParallelImagePulls))
	a.mu.Lock()
	m, ok := a.defaults[key]
	a.mu.Unlock()
	if ok {
		return m, nil
	}
	m, err := config.ToMap(config.DefaultsOf(cfg, v), v)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	a.defaults[key] = m
	a.mu.Unlock()
	return m, nil
}

func deref(p *int32) any {
	if p == nil {
		return nil
	}
	return *p
}

// typed is a configuration rendered by config.ToMap, decoded again.
func typed(m map[string]any) (*v1beta1.KubeletConfiguration, error) {
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	cfg := &v1beta1.KubeletConfiguration{}
	return cfg, json.Unmarshal(raw, cfg)
}

func lookup(m map[string]any, path string) (any, bool) {
	parts := strings.Split(path, ".")
	for _, p := range parts[:len(parts)-1] {
		sub, ok := m[p].(map[string]any)
		if !ok {
			return nil, false
		}
		m = sub
	}
	val, ok := m[parts[len(parts)-1]]
	return val, ok && val != nil
}

// reader reads the kubelets, directly or through the node proxy.
type reader struct {
	api      *kubeletapi.Client
	timeout  time.Duration
	analyses analyses
}

// read reads one node's /configz: one attempt, and a second one after a
// transient failure of a Ready node; then its /flagz where its version and
// gates serve it. The node's kubelet version decides the schema.
func (rd *reader) read(ctx context.Context, t target) result {
	defer rd.api.Begin(t.kubelet)() // its connections closed after its reads
	res := result{notes: rd.notes(t)}
	v, err := schema.Resolve(t.version)
	if err != nil {
		res.why = &Unreadable{Reason: ReasonVersion, Message: err.Error()}
		return res
	}
	attempts := 1
	if t.ready == string(corev1.ConditionTrue) {
		attempts = 2
	}
	var raw []byte
	for i := 1; i <= attempts; i++ {
		res.attempts = i
		actx, cancel := context.WithTimeout(ctx, rd.timeout)
		var url string
		raw, url, err = rd.api.Configz(actx, t.kubelet)
		cancel()
		if err == nil {
			if res.r, err = rd.analyses.of(raw, v, t.runtime); err != nil {
				res.why = &Unreadable{Reason: ReasonAnswer, Message: fmt.Sprintf("%s: %v", url, err)}
			}
			break
		}
		res.why = unreadable(err, rd.timeout)
		var e *kubeletapi.Error
		if ctx.Err() != nil || !errors.As(err, &e) || !e.Transient() {
			return res
		}
		if i < attempts {
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	if res.r == nil {
		return res
	}
	res.why = nil
	rd.readFlags(ctx, t, raw, &res)
	return res
}

// notes says what reading the node takes where it is more than the way's
// usual: nodes/proxy on the direct way to an older kubelet.
func (rd *reader) notes(t target) []string {
	var out []string
	if a := rd.api.Access(t.kubelet, "/configz"); a.Note != "" && rd.api.Via() == kubeletapi.Direct {
		out = append(out, a.Note)
	}
	if rd.api.Via() == kubeletapi.Direct {
		if v := rd.api.Verified(t.name); strings.HasPrefix(v, "not verified") {
			out = append(out, "serving certificate "+v)
		}
	}
	return out
}

// readFlags reads the node's /flagz, with the gates its /configz shows.
func (rd *reader) readFlags(ctx context.Context, t target, raw []byte, res *result) {
	var gates struct {
		FeatureGates map[string]bool `json:"featureGates"`
	}
	_ = json.Unmarshal(raw, &gates)
	t.kubelet.Gates = gates.FeatureGates
	if a := rd.api.Access(t.kubelet, "/flagz"); !a.Served && a.NotServed != "" {
		res.flagsWhy = &Unreadable{Reason: ReasonNotServed, Message: a.NotServed}
		return
	}
	actx, cancel := context.WithTimeout(ctx, rd.timeout)
	defer cancel()
	f, err := rd.api.Flagz(actx, t.kubelet)
	if err != nil {
		res.flagsWhy = unreadable(err, rd.timeout)
		return
	}
	res.flags = f.NonDefault(t.kubelet.Version)
	res.flagsForm = f.Form
}

// unreadable says why a read failed.
func unreadable(err error, timeout time.Duration) *Unreadable {
	var e *kubeletapi.Error
	if !errors.As(err, &e) {
		return &Unreadable{Reason: ReasonError, Message: err.Error()}
	}
	u := &Unreadable{Reason: string(e.Reason), Message: e.Message}
	if e.Reason == kubeletapi.Timeout && e.Status == 0 {
		u.Message = fmt.Sprintf("no answer within %s", timeout)
	}
	if e.Needs != "" {
		u.Message += "; needs " + e.Needs
	}
	if e.Note != "" {
		u.Message += "; " + e.Note
	}
	return u
}
