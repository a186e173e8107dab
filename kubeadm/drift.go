package kubeadm

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/kubeletcfg/kubeletcfg/config"
	"github.com/kubeletcfg/kubeletcfg/schema"
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
	now, err := config.Decode(data, config.DecodeOptions{File: file, Version: v, AllowUnknownFields: true})
	if err != nil {
		return nil, err
	}
	js, err := json.Marshal(next.Config)
	if err != nil {
		return nil, err
	}
	after, err := config.Decode(js, config.DecodeOptions{File: "kubeadm", Version: v, AllowUnknownFields: true})
	if err != nil {
		return nil, fmt.Errorf("what kubeadm writes does not decode for kubelet %s: %w", v.Minor, err)
	}
	a, err := config.ToMap(config.Default(now.Config, v), v)
	if err != nil {
		return nil, err
	}
	b, err := config.ToMap(config.Default(after.Config, v), v)
	if err != nil {
		return nil, err
	}
	d := &Drift{File: file, Reverts: []Change{}, Brings: []Change{}, Conditions: next.Conditions, Note: ReuploadNote}
	la, lb := leaves(a), leaves(b)
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
		if pos, ok := lookupKey(now.Keys, p); ok {
			c.NowLine = pos
			d.Reverts = append(d.Reverts, c)
		} else {
			d.Brings = append(d.Brings, c)
		}
	}
	// Keys of neither kubelet field: compared as written.
	ra, rb := rawUnknown(now.JSON, a), rawUnknown(js, b)
	for p := range ra {
		if !reflect.DeepEqual(ra[p], rb[p]) {
			d.Unknown = append(d.Unknown, p)
		}
	}
	for p := range rb {
		if _, ok := ra[p]; !ok {
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

// rawUnknown are the leaves of a document that are no field of the typed
// configuration (whose leaves are in known).
func rawUnknown(js []byte, known map[string]any) map[string]any {
	var m map[string]any
	if json.Unmarshal(js, &m) != nil {
		return nil
	}
	kl := leaves(known)
	out := map[string]any{}
	for p, v := range leaves(m) {
		if p == "apiVersion" || p == "kind" {
			continue
		}
		if _, ok := kl[p]; ok {
			continue
		}
		if _, ok := lineFor(toLines(kl), p); ok {
			continue // inside a known map or object
		}
		out[p] = v
	}
	return out
}

func toLines(m map[string]any) map[string]int {
	out := make(map[string]int, len(m))
	for k := range m {
		out[k] = 1
	}
	return out
}
