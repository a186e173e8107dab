package kubeadm

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"sigs.k8s.io/yaml"

	"k8s.io/kubelet/config/v1beta1"

	"github.com/kubeletcfg/kubeletcfg/config"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

// Persist is where a change of kubeadm's config.yaml is kept so that the
// next `kubeadm upgrade node` keeps it too.
type Persist string

const (
	// PersistNone: a change the next upgrade reverts is refused.
	PersistNone Persist = ""
	// PersistPatch: a kubeletconfiguration merge patch in the patches
	// directory kubeadm upgrade is given with --patches.
	PersistPatch Persist = "patch"
	// PersistDropin: a drop-in of the kubelet's --config-dir, which kubeadm
	// never touches; config.yaml becomes what kubeadm writes.
	PersistDropin Persist = "dropin"
)

// PatchFileName is the patch kubeletcfg keeps in the patches directory: a
// merge patch, named to come late in kubeadm's walk (a patch that comes
// after it and overrides it is found and refused).
const PatchFileName = "kubeletconfigurationzz-kubeletcfg+merge.yaml"

// DropinName is the drop-in kubeletcfg writes with --persist=dropin.
const DropinName = "90-kubeletcfg-kubeadm.conf"

// ErrReverted is a change the next `kubeadm upgrade node` would undo.
var ErrReverted = errors.New("the next kubeadm upgrade node reverts the change")

// ChangeOptions are a change of kubeadm's config.yaml.
type ChangeOptions struct {
	// Node renders what kubeadm writes; nil, or without the ConfigMap,
	// when offline.
	Node                 *NodeRenderer
	Current, Desired     []byte // config.yaml today, and the new one
	CurrentFile, NewFile string
	Version              *schema.Version // the kubelet's
	Persist              Persist
	PatchesDir           string // default DefaultPatchesDir
	// Force applies a change the next upgrade may revert, saying so.
	Force bool
	// Overlay are the other files the change writes (node paths): kubeadm
	// reads them at the next upgrade.
	Overlay map[string][]byte
	// Runs is what the kubelet runs with a config.yaml (its flags and
	// drop-ins over it); nil: the file and the defaults alone.
	Runs Runs
	// RunsNow, when known, is what the kubelet runs with Current.
	RunsNow *v1beta1.KubeletConfiguration
	// Render renders a configuration as config.ToMap does, for a caller
	// that has some rendered already (the check only reads what it gets);
	// nil: config.ToMap.
	Render func(*v1beta1.KubeletConfiguration) (map[string]any, error)
}

// ChangeResult is what kubeletcfg does about kubeadm for one change.
type ChangeResult struct {
	KubeadmVersion string `json:"kubeadmVersion"`
	// Reverted are the fields of the new file the next upgrade would change
	// (as the kubelet runs them), with what it would write instead.
	Reverted []Change `json:"reverted"`
	// Offline: without the ConfigMap, today's config.yaml stands for what
	// kubeadm writes.
	Offline bool    `json:"offline,omitempty"`
	Persist Persist `json:"persist,omitempty"`
	// PatchFile and Patch: the merge patch written (PersistPatch).
	PatchFile string `json:"patchFile,omitempty"`
	Patch     []byte `json:"-"`
	// Dropin: the drop-in written (PersistDropin), and ConfigYAML the
	// config.yaml kubeadm writes, written with it (nil: unchanged).
	Dropin     []byte `json:"-"`
	ConfigYAML []byte `json:"-"`
	// InstanceConfig is instance-config.yaml written where kubeadm applies
	// one and the node has none: the new file's containerRuntimeEndpoint,
	// kept where kubeadm keeps it.
	InstanceConfig     []byte   `json:"-"`
	InstanceConfigPath string   `json:"instanceConfig,omitempty"`
	Notes              []string `json:"notes,omitempty"`
}

// CheckChange says whether the next `kubeadm upgrade node` keeps a new
// config.yaml and, with Persist, what to write so that it does: the patch
// (verified by rendering kubeadm with it) or the drop-in. A change the
// upgrade reverts is refused (ErrReverted) without Persist or Force.
func CheckChange(o ChangeOptions) (*ChangeResult, error) {
	if o.PatchesDir == "" {
		o.PatchesDir = DefaultPatchesDir
	}
	res := &ChangeResult{Reverted: []Change{}, Persist: o.Persist}
	if o.Node != nil {
		res.KubeadmVersion = o.Node.Options.Release.Minor
	}
	now, err := readToday(o.Desired, o.NewFile, o.Version, o.Runs, o.Render)
	if err != nil {
		return nil, err
	}
	desired := now.doc.JSON // the new file as kubeadm and the kubelet read it
	patchPath := path.Join(o.PatchesDir, PatchFileName)
	over := func(extra map[string][]byte) map[string][]byte {
		m := map[string][]byte{}
		for k, v := range o.Overlay {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	if err := keepEndpoint(o, res, desired); err != nil {
		return nil, err
	}
	if res.InstanceConfig != nil {
		o.Overlay = over(map[string][]byte{res.InstanceConfigPath: res.InstanceConfig})
	}
	// base is what kubeadm writes without kubeletcfg's patch (of an earlier
	// apply), needed to persist a change; the change is checked against
	// what kubeadm writes with that patch.
	var base func() ([]byte, error)
	if o.Node.Online() {
		// A patches directory kubeletcfg is to create is none yet.
		dir := o.PatchesDir
		if !o.Node.HasDir(dir) {
			dir = none
		}
		r1, err := o.Node.Render(over(nil), dir)
		if err != nil {
			return nil, err
		}
		base = func() ([]byte, error) {
			if _, laid := o.Overlay[patchPath]; !laid && !o.Node.exists(patchPath) {
				return json.Marshal(r1.Config) // no patch of kubeletcfg's: the same rendering
			}
			r0, err := o.Node.Render(over(map[string][]byte{patchPath: nil}), dir)
			if err != nil {
				return nil, err
			}
			return json.Marshal(r0.Config)
		}
		d, err := now.against(r1, nil, nil)
		if err != nil {
			return nil, err
		}
		res.Reverted = append(append(res.Reverted, d.Reverts...), d.Brings...)
	} else {
		res.Offline = true
		res.Notes = append(res.Notes, "without kubeadm's ConfigMap (--kubeconfig, or its file) today's config.yaml stands for what kubeadm writes: a ConfigMap that differs may still revert the change")
		// Today's file as the kubelet decodes it (its JSON is what
		// YAMLToJSON gives), or, where it does not decode, as YAML.
		doc, err := config.Decode(o.Current, config.DecodeOptions{File: o.CurrentFile, Version: o.Version, AllowUnknownFields: true})
		var current []byte
		if err == nil {
			current = doc.JSON
		} else if current, err = yaml.YAMLToJSON(o.Current); err != nil {
			return nil, fmt.Errorf("%s: %w", o.CurrentFile, err)
		}
		base = func() ([]byte, error) { return current, nil }
		// Everything the change changes may be reverted.
		cur := &Result{Config: map[string]any{}, Origins: map[string]Origin{}}
		if err := json.Unmarshal(current, &cur.Config); err != nil {
			return nil, fmt.Errorf("%s: %w", o.CurrentFile, err)
		}
		for p := range leaves(cur.Config) {
			cur.Origins[p] = Origin{Kind: "config.yaml", File: o.CurrentFile, Detail: "today's file, taken for what kubeadm writes"}
		}
		d, err := now.against(cur, o.RunsNow, doc)
		if err != nil {
			return nil, err
		}
		res.Reverted = append(append(res.Reverted, d.Reverts...), d.Brings...)
	}
	if len(res.Reverted) == 0 {
		if o.Persist != PersistNone {
			res.Notes = append(res.Notes, "kubeadm writes the same configuration: nothing to persist")
		}
		res.Persist = PersistNone
		return res, nil
	}
	switch o.Persist {
	case PersistNone:
		if o.Force {
			res.Notes = append(res.Notes, "applied with --force-unmanaged: the next kubeadm upgrade node reverts "+fieldList(res.Reverted))
			return res, nil
		}
		return res, revertedError(o, res)
	case PersistPatch, PersistDropin:
		b, err := base()
		if err != nil {
			return nil, err
		}
		if o.Persist == PersistPatch {
			return res, persistPatch(o, res, now, b, desired, patchPath)
		}
		return res, persistDropin(o, res, b, desired)
	}
	return nil, fmt.Errorf("--persist %q: must be patch or dropin", o.Persist)
}

func fieldList(cs []Change) string {
	var f []string
	for _, c := range cs {
		f = append(f, c.Field)
	}
	return strings.Join(f, ", ")
}

// revertedError names the fields and the ways out.
func revertedError(o ChangeOptions, res *ChangeResult) error {
	var lines []string
	for _, c := range res.Reverted {
		lines = append(lines, fmt.Sprintf("%s: %s here, %s after the upgrade (%s)", c.Field, value(c.Now), value(c.Next), c.Origin))
	}
	who := "the next kubeadm upgrade node"
	if res.KubeadmVersion != "" {
		who = fmt.Sprintf("the next kubeadm upgrade node (kubeadm %s)", res.KubeadmVersion)
	}
	if res.Offline {
		who = "the next kubeadm upgrade node (kubeadm's ConfigMap unknown: give --kubeconfig to check)"
	}
	return fmt.Errorf("%w: %s rewrites /var/lib/kubelet/config.yaml and would undo %s: %s. Choose: --persist patch (a kubeadm patch in %s; kubeadm upgrade must then be run with --patches %s), --persist dropin (a --config-dir drop-in, which kubeadm leaves alone), or --force-unmanaged (apply it anyway)",
		ErrReverted, who, fieldList(res.Reverted), strings.Join(lines, "; "), o.PatchesDir, o.PatchesDir)
}

// value prints a value as JSON, "(unset)" for none.
func value(x any) string {
	if x == nil {
		return "(unset)"
	}
	b, _ := json.Marshal(x)
	return string(b)
}

// persistPatch writes the merge patch that turns what kubeadm writes without
// it into the new file, and checks by rendering kubeadm with it.
func persistPatch(o ChangeOptions, res *ChangeResult, now *today, base, desired []byte, patchPath string) error {
	mp, err := jsonpatch.CreateMergePatch(base, desired)
	if err != nil {
		return fmt.Errorf("computing the kubeadm patch: %w", err)
	}
	body, err := yaml.JSONToYAML(mp)
	if err != nil {
		return err
	}
	res.PatchFile = patchPath
	res.Patch = append([]byte("# Written by kubeletcfg apply: what kubeadm upgrade node must lay over the\n# kubelet-config ConfigMap for this node. Run kubeadm upgrade with --patches "+o.PatchesDir+".\n"), body...)
	res.Notes = append(res.Notes, fmt.Sprintf("kubeadm keeps no patches directory of its own: run kubeadm upgrade node (and apply) with --patches %s, or the change is reverted", o.PatchesDir))
	if !o.Node.Online() {
		res.Notes = append(res.Notes, "the patch was computed against today's config.yaml, not checked against kubeadm's rendering")
		return nil
	}
	overlay := map[string][]byte{patchPath: res.Patch}
	for k, v := range o.Overlay {
		overlay[k] = v
	}
	after, err := o.Node.Render(overlay, o.PatchesDir)
	if err != nil {
		return fmt.Errorf("kubeadm with the patch: %w", err)
	}
	d, err := now.against(after, nil, nil)
	if err != nil {
		return err
	}
	if left := append(d.Reverts, d.Brings...); len(left) > 0 {
		var by []string
		for _, c := range left {
			by = append(by, fmt.Sprintf("%s (%s)", c.Field, c.Origin))
		}
		return fmt.Errorf("%w: even with %s, kubeadm writes another value for %s: a later step overrides it", ErrReverted, patchPath, strings.Join(by, ", "))
	}
	return nil
}

// persistDropin makes the change a drop-in over what kubeadm writes.
func persistDropin(o ChangeOptions, res *ChangeResult, base, desired []byte) error {
	mp, err := jsonpatch.CreateMergePatch(base, desired)
	if err != nil {
		return err
	}
	var m map[string]any
	if err := json.Unmarshal(mp, &m); err != nil {
		return err
	}
	if nulls := nullPaths(m, ""); len(nulls) > 0 {
		return fmt.Errorf("--persist dropin: a drop-in cannot remove %s (kubeadm writes it); use --persist patch", strings.Join(nulls, ", "))
	}
	m["apiVersion"], m["kind"] = config.APIVersion, config.Kind
	js, err := json.Marshal(m)
	if err != nil {
		return err
	}
	body, err := yaml.JSONToYAML(js)
	if err != nil {
		return err
	}
	res.Dropin = append([]byte("# Written by kubeletcfg apply: kept over /var/lib/kubelet/config.yaml, which kubeadm rewrites.\n"), body...)
	if o.Node.Online() {
		var cfg map[string]any
		if err := json.Unmarshal(base, &cfg); err != nil {
			return err
		}
		if res.ConfigYAML, err = yaml.Marshal(cfg); err != nil {
			return err
		}
	}
	res.Notes = append(res.Notes, "the --config-dir flag must stay where kubeadm leaves it (kubeadm-flags.env keeps its flags; /etc/default/kubelet and the unit's drop-ins are not kubeadm's)")
	return nil
}

// nullPaths are the keys a merge patch deletes.
func nullPaths(m map[string]any, prefix string) []string {
	var out []string
	for _, k := range sortedKeys(m) {
		p := joinPath(prefix, k)
		switch v := m[k].(type) {
		case nil:
			out = append(out, p)
		case map[string]any:
			out = append(out, nullPaths(v, p)...)
		}
	}
	return out
}

// keepEndpoint writes instance-config.yaml with the new file's
// containerRuntimeEndpoint where kubeadm applies that file and the node has
// none: kubeadm would otherwise create it (from kubeadm-flags.env, or its
// detection) and override the endpoint.
func keepEndpoint(o ChangeOptions, res *ChangeResult, desired []byte) error {
	if o.Node == nil {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(desired, &m); err != nil {
		return err
	}
	cre, _ := m["containerRuntimeEndpoint"].(string)
	rel := o.Node.Options.Release
	var gates map[string]bool
	if o.Node.Inputs != nil && o.Node.Inputs.Cluster != nil {
		gates = o.Node.Inputs.Cluster.FeatureGates
	}
	file := path.Join(KubeletDir, InstanceConfigName)
	if _, laid := o.Overlay[file]; cre == "" || laid || !rel.AppliesInstanceConfig(gates) || o.Node.exists(file) {
		return nil
	}
	res.InstanceConfigPath = file
	res.InstanceConfig = []byte(fmt.Sprintf("containerRuntimeEndpoint: %q\n", cre))
	res.Notes = append(res.Notes, fmt.Sprintf("containerRuntimeEndpoint %s kept where kubeadm %s keeps it: %s (missing: kubeadm would create it itself)", cre, rel.Minor, file))
	return nil
}
