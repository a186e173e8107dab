package fleet

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
	"k8s.io/kubelet/config/v1beta1"

	"github.com/kubeletcfg/kubeletcfg/config"
	"github.com/kubeletcfg/kubeletcfg/diff"
	"github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

// listPage is how many Nodes one list request asks for.
const listPage = 500

// target is a Node to read: what the scan keeps of its object.
type target struct {
	name, version      string
	ready, readyReason string
}

// coreClient is client-go's REST client for the core/v1 API with only the
// core/v1 types (the generated typed clients bring every API group along).
func coreClient(cfg *rest.Config) (rest.Interface, error) {
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &corev1.SchemeGroupVersion
	c.APIPath = "/api"
	c.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	// Node lists are large (images, conditions): protobuf is cheaper to
	// encode and decode than JSON, on both ends.
	c.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	if c.UserAgent == "" {
		c.UserAgent = "kubeletcfg"
	}
	return rest.RESTClientFor(c)
}

// listNodes lists the Nodes a label selector picks, page by page, keeping
// only what the scan needs of each.
func listNodes(ctx context.Context, c rest.Interface, selector string) ([]target, error) {
	var out []target
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
			return nil, fmt.Errorf("list nodes: %w", err)
		}
		for i := range list.Items {
			out = append(out, targetOf(&list.Items[i]))
		}
		if list.Continue == "" {
			return out, nil
		}
		next = list.Continue
	}
}

func targetOf(n *corev1.Node) target {
	t := target{name: n.Name, version: n.Status.NodeInfo.KubeletVersion}
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
}

// running is what one node runs.
type running struct {
	*shape
	// sets is shared and the fields set per node that the node sets.
	sets    map[string]any
	perNode map[string]any
}

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

func (a *analyses) of(raw []byte, v *schema.Version) (*running, error) {
	key := sha256.Sum256(append([]byte(v.Minor+"\x00"), raw...))
	a.mu.Lock()
	if a.answers == nil {
		a.answers = map[[sha256.Size]byte]*analysis{}
		a.defaults = map[string]map[string]any{}
		a.shapes = map[string]*shape{}
	}
	e, ok := a.answers[key]
	if !ok {
		e = &analysis{}
		a.answers[key] = e
	}
	a.mu.Unlock()
	e.once.Do(func() { e.r, e.err = a.analyse(raw, v) })
	return e.r, e.err
}

// analyse reads a /configz answer as kubelet v runs it.
func (a *analyses) analyse(raw []byte, v *schema.Version) (*running, error) {
	cfg := &v1beta1.KubeletConfiguration{}
	if err := json.Unmarshal(raw, cfg); err != nil {
		return nil, fmt.Errorf("not a KubeletConfiguration: %w", err)
	}
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
		if !perNode(c.Path) {
			shared[c.Path] = c.New
		}
	}
	for _, f := range PerNodeFields {
		if val, ok := lookup(m, f.Path); ok {
			if r.perNode == nil {
				r.perNode = map[string]any{}
			}
			r.perNode[f.Path] = val
		}
	}
	key, err := json.Marshal(shared)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	id := v.Minor + "\x00" + string(key)
	if r.shape = a.shapes[id]; r.shape == nil {
		r.shape = &shape{v: v, m: m, key: string(key), shared: shared}
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

// reader reads nodes' /configz through the node proxy.
type reader struct {
	proxy    *node.Proxy
	timeout  time.Duration
	analyses analyses
}

// read reads one node: one attempt, and a second one after a transient
// failure of a Ready node. The node's kubelet version decides the schema.
func (rd *reader) read(ctx context.Context, t target) (*running, int, *Unreadable) {
	v, err := schema.Resolve(t.version)
	if err != nil {
		return nil, 0, &Unreadable{Reason: ReasonVersion, Message: err.Error()}
	}
	attempts := 1
	if t.ready == string(corev1.ConditionTrue) {
		attempts = 2
	}
	var why *Unreadable
	for i := 1; i <= attempts; i++ {
		actx, cancel := context.WithTimeout(ctx, rd.timeout)
		raw, url, err := rd.proxy.Configz(actx, t.name)
		cancel()
		if err == nil {
			r, err := rd.analyses.of(raw, v)
			if err != nil {
				return nil, i, &Unreadable{Reason: ReasonAnswer, Message: fmt.Sprintf("%s: %v", url, err)}
			}
			return r, i, nil
		}
		why = classify(err, rd.timeout)
		if ctx.Err() != nil || !transient(why.Reason) {
			return nil, i, why
		}
		if i < attempts {
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	return nil, attempts, why
}

func transient(reason string) bool {
	switch reason {
	case ReasonTimeout, ReasonRefused, ReasonUnreachable, ReasonProxy, ReasonError:
		return true
	}
	return false
}

// classify says why a read failed, from the API server's answer or the
// client's error.
func classify(err error, timeout time.Duration) *Unreadable {
	var st *node.StatusError
	if errors.As(err, &st) {
		msg := st.Body
		var status metav1.Status
		if json.Unmarshal([]byte(st.Body), &status) == nil && status.Message != "" {
			msg = status.Message
		}
		u := &Unreadable{Reason: ReasonProxy, Message: fmt.Sprintf("%s: %s", st.Status, msg)}
		lower := strings.ToLower(msg)
		switch {
		case st.Code == http.StatusForbidden:
			u.Reason = ReasonForbidden
		case st.Code == http.StatusUnauthorized:
			u.Reason = ReasonUnauthorized
		case st.Code == http.StatusNotFound:
			u.Reason = ReasonNotFound
		case strings.Contains(lower, "connection refused"):
			u.Reason = ReasonRefused
		case strings.Contains(lower, "x509") || strings.Contains(lower, "tls:") || strings.Contains(lower, "certificate") ||
			strings.Contains(lower, "https client"):
			u.Reason = ReasonTLS
		case strings.Contains(lower, "no route to host") || strings.Contains(lower, "network is unreachable") ||
			strings.Contains(lower, "i/o timeout"):
			u.Reason = ReasonUnreachable
		case strings.Contains(lower, "timeout") || strings.Contains(lower, "deadline exceeded") || st.Code == http.StatusGatewayTimeout:
			u.Reason = ReasonTimeout
		}
		return u
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return &Unreadable{Reason: ReasonTimeout, Message: fmt.Sprintf("no answer within %s", timeout)}
	}
	if strings.Contains(err.Error(), "not a configz answer") {
		return &Unreadable{Reason: ReasonAnswer, Message: err.Error()}
	}
	return &Unreadable{Reason: ReasonError, Message: err.Error()}
}
