package kubeadm

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"k8s.io/kubelet/config/v1beta1"

	"github.com/kubeletcfg/kubeletcfg/config"
	"github.com/kubeletcfg/kubeletcfg/effective"
	"github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/nodefile"
	"github.com/kubeletcfg/kubeletcfg/schema"
	"github.com/kubeletcfg/kubeletcfg/warning"
)

// Change is one field the next `kubeadm upgrade node` changes in effect.
type Change struct {
	Field string `json:"field"`
	// Now and Next are what the kubelet runs with, before and after (its
	// defaults filled in); nil when the kubelet has no value.
	Now  any `json:"now"`
	Next any `json:"next"`
	// NowLine is the line of config.yaml that sets the field today, 0 when
	// it comes from the kubelet's defaults.
	NowLine int    `json:"nowLine,omitempty"`
	Origin  Origin `json:"origin"` // of the next value (or of its removal)
}

// Drift is today's config.yaml against what kubeadm would write.
type Drift struct {
	File string `json:"file"`
	// Reverts are fields config.yaml sets that the upgrade changes: the
	// change someone made to the file is undone.
	Reverts []Change `json:"reverts"`
	// Brings are fields config.yaml leaves to the kubelet's defaults that the
	// upgrade sets to something else.
	Brings []Change `json:"brings"`
	// Unknown are keys no kubelet field holds (a typo in a patch, a field of
	// another version) that differ: the kubelet ignores them.
	Unknown []string `json:"unknown,omitempty"`
	// Conditions of the rendering (systemd-resolved, the CRI socket) that
	// may add to the changes.
	Conditions []Condition `json:"conditions,omitempty"`
	// Note says what re-uploads the ConfigMap: nothing guards it.
	Note string `json:"note"`
}

// ReuploadNote is why the ConfigMap itself can change under a prediction.
const ReuploadNote = "`kubeadm upgrade apply` re-uploads the kubelet-config ConfigMap (its own encoding, with its defaults) without a precondition: a prediction from today's ConfigMap holds until someone runs it"

// CompareDrift compares config.yaml (data, named file) with what kubeadm
// writes (next), as kubelet v runs each: only differences the kubelet sees
// count, and a value written differently (1m, 1m0s) is the same.
func CompareDrift(data []byte, file string, next *Result, v *schema.Version) (*Drift, error) {
	return CompareDriftWith(data, file, next, v, nil)
}

// Runs is what the kubelet runs with a config file's content (the node's
// command line and drop-ins over it); nil: the file and the defaults alone.
type Runs func(config []byte, name string) (*v1beta1.KubeletConfiguration, error)

// CompareDriftWith is CompareDrift with what the kubelet runs computed by
// runs: a field a flag or a drop-in sets is no drift, whatever the files say.
func CompareDriftWith(data []byte, file string, next *Result, v *schema.Version, runs Runs) (*Drift, error) {
	t, err := readToday(data, file, v, runs, nil)
	if err != nil {
		return nil, err
	}
	return t.against(next, nil, nil)
}

// today is config.yaml's side of a drift, read once for every rendering it
// is compared with.
type today struct {
	file    string
	v       *schema.Version
	runs    Runs
	render  func(*v1beta1.KubeletConfiguration) (map[string]any, error)
	doc     *config.Document
	leaves  map[string]any // what the kubelet runs, by dotted path
	unknown map[string]any
}

func readToday(data []byte, file string, v *schema.Version, runs Runs, render func(*v1beta1.KubeletConfiguration) (map[string]any, error)) (*today, error) {
	if render == nil {
		render = func(c *v1beta1.KubeletConfiguration) (map[string]any, error) { return config.ToMap(c, v) }
	}
	now, err := config.Decode(data, config.DecodeOptions{File: file, Version: v, AllowUnknownFields: true})
	if err != nil {
		return nil, err
	}
	var ra *v1beta1.KubeletConfiguration
	if runs != nil {
		if ra, err = runs(data, file); err != nil {
			return nil, err
		}
	} else {
		ra = config.Default(now.Config, v)
	}
	a, err := render(ra)
	if err != nil {
		return nil, err
	}
	return &today{file: file, v: v, runs: runs, render: render, doc: now, leaves: leaves(a), unknown: unknownLeaves(now)}, nil
}

// against compares today's side with what kubeadm writes (next); known,
// when not nil, is what the kubelet runs with it; decoded, when not nil, is
// next's configuration already decoded (a file's, next read from its JSON).
func (t *today) against(next *Result, known *v1beta1.KubeletConfiguration, decoded *config.Document) (*Drift, error) {
	v := t.v
	after, js := decoded, []byte(nil)
	var err error
	if after != nil {
		js = after.JSON
	} else {
		if js, err = json.Marshal(next.Config); err != nil {
			return nil, err
		}
		if after, err = config.Decode(js, config.DecodeOptions{File: "kubeadm", Version: v, AllowUnknownFields: true}); err != nil {
			return nil, fmt.Errorf("what kubeadm writes does not decode for kubelet %s: %w", v.Minor, err)
		}
	}
	var rb *v1beta1.KubeletConfiguration
	switch {
	case known != nil:
		rb = known
	case t.runs != nil:
		if rb, err = t.runs(js, "what kubeadm writes"); err != nil {
			return nil, fmt.Errorf("with what kubeadm writes: %w", err)
		}
	default:
		rb = config.Default(after.Config, v)
	}
	b, err := t.render(rb)
	if err != nil {
		return nil, err
	}
	d := &Drift{File: t.file, Reverts: []Change{}, Brings: []Change{}, Conditions: next.Conditions, Note: ReuploadNote}
	la, lb := t.leaves, leaves(b)
	seen := map[string]bool{}
	for _, p := range append(sortedKeys(la), sortedKeys(lb)...) {
		if seen[p] {
			continue
		}
		seen[p] = true
		x, y := la[p], lb[p]
		if reflect.DeepEqual(x, y) {
			continue
		}
		c := Change{Field: p, Now: x, Next: y, Origin: next.Origins[p]}
		if _, ok := lb[p]; !ok {
			c.Origin = next.Removed[p]
		}
		if c.Origin.Kind == "" {
			c.Origin = Origin{Kind: "kubelet-default"}
		}
		if pos, ok := lookupKey(t.doc.Keys, p); ok {
			c.NowLine = pos
			d.Reverts = append(d.Reverts, c)
		} else {
			d.Brings = append(d.Brings, c)
		}
	}
	// Keys of no kubelet field: compared as written.
	ua, ub := t.unknown, unknownLeaves(after)
	for _, p := range sortedKeys(ua) {
		if !reflect.DeepEqual(ua[p], ub[p]) {
			d.Unknown = append(d.Unknown, p)
		}
	}
	for _, p := range sortedKeys(ub) {
		if _, ok := ua[p]; !ok {
			d.Unknown = append(d.Unknown, p)
		}
	}
	return d, nil
}

// lookupKey is the line of the key that sets path, or holds it.
func lookupKey(keys map[string]config.Position, p string) (int, bool) {
	lines := make(map[string]int, len(keys))
	for k, pos := range keys {
		lines[k] = pos.Line
	}
	return lineFor(lines, p)
}

// unknownLeaves are the values of a document's keys the kubelet version
// does not have (Decode's unknown-field warnings), by dotted path.
func unknownLeaves(doc *config.Document) map[string]any {
	var m map[string]any
	out := map[string]any{}
	if !slices.ContainsFunc(doc.Problems, func(p config.Problem) bool { return p.Code == warning.UnknownField && p.Field != "" }) {
		return out
	}
	if json.Unmarshal(doc.JSON, &m) != nil {
		return out
	}
	all := leaves(m)
	for _, p := range doc.Problems {
		if p.Code != warning.UnknownField || p.Field == "" {
			continue
		}
		for leaf, v := range all {
			if leaf == p.Field || strings.HasPrefix(leaf, p.Field+".") {
				out[leaf] = v
			}
		}
	}
	return out
}

// Assessment is what the next `kubeadm upgrade node` does to a node's
// kubelet config file.
type Assessment struct {
	// Owned: kubeadm set the node up and the kubelet's --config is its
	// /var/lib/kubelet/config.yaml.
	Owned bool   `json:"owned"`
	Drift *Drift `json:"drift,omitempty"`
	// Why Drift is nil on a node kubeadm owns (its ConfigMap not known).
	Why    string   `json:"why,omitempty"`
	Notes  []string `json:"notes,omitempty"`
	Render *Result  `json:"-"`
}

// Assess compares the node's config file (configPath, as the kubelet names
// it) with what kubeadm o.Release writes, when kubeadm owns it and its
// ConfigMap is known (o.ConfigMapFile, or o.FromCluster).
func Assess(ctx context.Context, o NodeOptions, configPath string, v *schema.Version, runs Runs) (*Assessment, error) {
	root, err := nodefile.OpenRoot(o.Root)
	if err != nil {
		return nil, err
	}
	node := Detect(root)
	a := &Assessment{Owned: node.Kubeadm && OwnsConfig(configPath)}
	if !a.Owned {
		root.Close()
		return a, nil
	}
	current, err := root.ReadFile(ConfigFile, nodefile.Config)
	if _, fi, serr := root.Stat(DefaultPatchesDir); o.PatchesDir == "" && serr == nil && fi.IsDir() {
		o.PatchesDir = DefaultPatchesDir
		a.Notes = append(a.Notes, "kubeadm upgrade is taken to be run with --patches "+DefaultPatchesDir+" (the node has it; --patches says otherwise)")
	}
	root.Close()
	if err != nil {
		return nil, err
	}
	if o.ConfigMapFile == "" && !o.FromCluster {
		a.Why = "kubeadm's kubelet-config ConfigMap is not known (--kubeconfig, or --kubeadm-configmap FILE)"
		return a, nil
	}
	res, _, err := RenderNode(ctx, o)
	if err != nil {
		return nil, err
	}
	a.Render = res
	if a.Drift, err = CompareDriftWith(current, ConfigFile, res, v, runs); err != nil {
		return nil, err
	}
	return a, nil
}

// AssessSetup is Assess for the node's kubelet setup: its --config file,
// kubeadm's version o.Release (nil: the kubelet's minor). now is the setup's
// effective configuration when already computed (nil: computed here).
func AssessSetup(ctx context.Context, o NodeOptions, setup *node.Setup, now *effective.Result) (*Assessment, error) {
	if now == nil {
		var err error
		if now, err = effective.Compute(effective.Input{Setup: setup}); err != nil {
			return nil, err
		}
	}
	if o.Release == nil {
		var err error
		if o.Release, err = ResolveRelease(setup.Version.Minor); err != nil {
			return nil, err
		}
	}
	o.Root = setup.Root
	return Assess(ctx, o, now.ConfigFile, setup.Version, setupRuns(setup, now))
}

// setupRuns is what the kubelet of setup runs with a config file's content:
// its command line and drop-ins over it (those now read), as the kubelet
// layers them.
func setupRuns(setup *node.Setup, now *effective.Result) Runs {
	return func(data []byte, name string) (*v1beta1.KubeletConfiguration, error) {
		r, err := effective.Compute(effective.Input{Setup: setup, Config: data, ConfigName: name, Reuse: now})
		if err != nil {
			return nil, err
		}
		return r.Config, nil
	}
}
