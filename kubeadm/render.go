// Package kubeadm models kubeadm's side of a node: what `kubeadm upgrade node`
// (phase kubelet-config) of a kubeadm minor writes to the kubelet's
// config.yaml, and why, field by field; how kubeadm reads and writes
// kubeadm-flags.env; how to recognise a node kubeadm set up. It is kubeadm's
// behaviour written down from its code (cmd/kubeadm of each release; the
// differences are in the table in versions.go), not kubeadm's code: the
// shipped binary does not link k8s.io/kubernetes. hack/kubeadmref runs
// kubeadm's own code on a corpus to check this package against it.
//
// The pipeline (phases/upgrade/postupgrade.go WriteKubeletConfigFiles,
// phases/kubelet/config.go WriteConfigToDisk):
//
//  1. the ConfigMap kube-system/kubelet-config, key kubelet, decoded leniently
//     into kubeadm's own v1beta1 types (what they lack is dropped);
//  2. kubeadm's component-config defaulting with the cluster's
//     ClusterConfiguration (staticPodPath, clusterDNS, clusterDomain,
//     clientCAFile, rotateCertificates forced, cgroupDriver, ...);
//  3. resolvConf set to systemd-resolved's file when that service is active;
//  4. the --patches directory's kubeletconfiguration patches, in walk order;
//  5. /var/lib/kubelet/instance-config.yaml as a strategic merge patch, last
//     (1.32+ behind NodeLocalCRISocket, always from 1.37), created first when
//     it is missing.
package kubeadm

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"reflect"
	"sort"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"k8s.io/kubelet/config/v1beta1"
	"sigs.k8s.io/yaml"

	"github.com/kubeletcfg/kubeletcfg/config"
	"github.com/kubeletcfg/kubeletcfg/nodefile"
	"github.com/kubeletcfg/kubeletcfg/schema"
	"github.com/kubeletcfg/kubeletcfg/warning"
)

// KubeletDir is the kubelet's directory on a kubeadm node.
const KubeletDir = "/var/lib/kubelet"

// InstanceConfigName is the per-node patch kubeadm keeps in KubeletDir.
const InstanceConfigName = "instance-config.yaml"

// Tristate is a fact about the node that may not be known (an offline image).
type Tristate int

const (
	Unknown Tristate = iota
	No
	Yes
)

// Input is what `kubeadm upgrade node phase kubelet-config` reads.
type Input struct {
	Release   *Release
	ConfigMap Text     // the ConfigMap's kubelet value
	Cluster   *Cluster // nil: a ClusterConfiguration of kubeadm's defaults (said in a note)
	// Root is the node; nil renders the ConfigMap alone (no patches, no
	// instance-config.yaml, no kubeadm-flags.env).
	Root       *nodefile.Root
	KubeletDir string // KubeletDir when empty
	PatchesDir string // "" when kubeadm is run without --patches
	// Resolved: is systemd-resolved active when kubeadm runs? Unknown renders
	// it inactive and lists what changes if it is, as conditions.
	Resolved Tristate
	// CRISocket is what kubeadm 1.37 detects on a node without
	// instance-config.yaml: "" when not known (its default is rendered, the
	// detection listed as a condition).
	CRISocket string
	// Overlay are files read as if they were on the node (node path →
	// content; nil: removed): what an apply is about to write.
	Overlay map[string][]byte
}

// Origin is where a value of the written file comes from.
type Origin struct {
	// Kind: "configmap", "cluster" (kubeadm's defaulting, from the
	// ClusterConfiguration), "kubeadm" (kubeadm's defaulting, a constant),
	// "mutation" (systemd-resolved), "patch", "instance-config", "encoding"
	// (a zero value kubeadm's serializer writes for a field nothing set);
	// in a drift, "kubelet-default" (a value kubeadm leaves to the kubelet).
	Kind   string `json:"kind"`
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
	Detail string `json:"detail,omitempty"`
}

func (o Origin) String() string {
	where := o.File
	if o.Line > 0 {
		where = fmt.Sprintf("%s:%d", o.File, o.Line)
	}
	var s string
	switch o.Kind {
	case "configmap":
		s = "ConfigMap " + where
	case "patch":
		s = "patch " + where
	case "instance-config":
		s = where
	case "cluster":
		s = "kubeadm default from the ClusterConfiguration"
		if where != "" {
			s += " (" + where + ")"
		}
	case "kubeadm":
		s = "kubeadm default"
	case "mutation":
		s = "kubeadm (systemd-resolved is active)"
	case "encoding":
		s = "kubeadm's encoding (zero value)"
	case "kubelet-default":
		s = "the kubelet's default (kubeadm leaves it unset)"
	default:
		s = o.Kind + " " + where
	}
	if o.Detail != "" {
		s += ": " + o.Detail
	}
	return s
}

// Condition is a field whose value depends on a fact kubeletcfg cannot see.
type Condition struct {
	When  string `json:"when"`
	Field string `json:"field"`
	// Value is the field's value when the condition holds (nil: unset); the
	// rendered configuration has the other case.
	Value  any    `json:"value"`
	Origin Origin `json:"origin"`
}

// InstanceConfig is what happens to instance-config.yaml.
type InstanceConfig struct {
	Path    string `json:"path"`
	Applied bool   `json:"applied"`
	// Created is the file kubeadm writes first, when it is missing.
	Created string `json:"created,omitempty"`
	How     string `json:"how,omitempty"`
}

// FlagsEnvChange is kubeadm-flags.env as kubeadm rewrites it.
type FlagsEnvChange struct {
	Path  string `json:"path"`
	After string `json:"after"`
	Why   string `json:"why"`
}

// Result is what kubeadm writes to config.yaml, and why.
type Result struct {
	KubeadmVersion string `json:"kubeadmVersion"`
	// Config is the file's content, decoded (apiVersion and kind included).
	Config map[string]any `json:"config"`
	// Origins are by dotted path of every value ("evictionHard.memory.available";
	// lists whole).
	Origins map[string]Origin `json:"origins"`
	// Removed are values an earlier step set and a patch removed.
	Removed        map[string]Origin `json:"removed,omitempty"`
	Conditions     []Condition       `json:"conditions,omitempty"`
	InstanceConfig *InstanceConfig   `json:"instanceConfig,omitempty"`
	FlagsEnv       []FlagsEnvChange  `json:"flagsEnv,omitempty"`
	Warnings       []warning.Warning `json:"warnings,omitempty"`
	Notes          []string          `json:"notes,omitempty"`
	// Failures make the upgrade fail after config.yaml is written (the
	// post-upgrade phase).
	Failures []string `json:"failures,omitempty"`
}

// YAML is config.yaml as kubeadm writes it (keys sorted, as its serializer
// and its JSON-to-YAML conversion both write them).
func (r *Result) YAML() ([]byte, error) { return yaml.Marshal(r.Config) }

// Render computes what kubeadm in.Release writes to config.yaml.
func Render(in Input) (*Result, error) {
	if in.Release == nil {
		return nil, errors.New("no kubeadm version")
	}
	if in.Resolved != Unknown {
		return render(in, in.Resolved == Yes)
	}
	off, err := render(in, false)
	if err != nil {
		return nil, err
	}
	on, err := render(in, true)
	if err != nil {
		off.Failures = append(off.Failures, "if systemd-resolved is active when kubeadm runs: "+err.Error())
		return off, nil
	}
	off.Conditions = append(off.Conditions, between(off, on, "systemd-resolved is active on the node when kubeadm runs")...)
	return off, nil
}

// between lists what differs in on from off, as conditions.
func between(off, on *Result, when string) []Condition {
	a, b := leaves(off.Config), leaves(on.Config)
	var out []Condition
	for _, p := range sortedKeys(b) {
		if !reflect.DeepEqual(a[p], b[p]) {
			out = append(out, Condition{When: when, Field: p, Value: b[p], Origin: on.Origins[p]})
		}
	}
	for _, p := range sortedKeys(a) {
		if _, ok := b[p]; !ok {
			out = append(out, Condition{When: when, Field: p, Value: nil, Origin: on.Removed[p]})
		}
	}
	return out
}

type stage struct {
	state   map[string]any
	origins map[string]Origin
	removed map[string]Origin
}

func render(in Input, resolved bool) (*Result, error) {
	r := in.Release
	v, err := schema.Resolve(r.Minor)
	if err != nil {
		return nil, err
	}
	res := &Result{KubeadmVersion: r.Minor}
	cm, err := decodeConfigMap(in.ConfigMap, r, v)
	if err != nil {
		return nil, err
	}
	res.Warnings = append(res.Warnings, cm.Warnings...)
	cluster := in.Cluster
	if cluster == nil {
		cluster = DefaultCluster()
		res.Notes = append(res.Notes, fmt.Sprintf("no ClusterConfiguration given: kubeadm's defaults assumed (serviceSubnet %s, dnsDomain %s, certificatesDir %s, no feature gates)",
			DefaultServiceSubnet, DefaultDNSDomain, DefaultCertificatesDir))
	}

	// 1. The ConfigMap, as kubeadm's serializer writes its typed object.
	st := &stage{origins: map[string]Origin{}, removed: map[string]Origin{}}
	st.state, err = encode(cm.Config, v)
	if err != nil {
		return nil, err
	}
	for p := range leaves(st.state) {
		if l, ok := cm.Keys[p]; ok {
			st.origins[p] = Origin{Kind: "configmap", File: cm.File, Line: l}
		} else {
			st.origins[p] = Origin{Kind: "encoding"}
		}
	}

	// 2. Defaulting (and, up to 1.30, systemd-resolved there too).
	kc := cm.Config.DeepCopy()
	set, recs := applyDefaults(kc, cluster)
	why := map[string]Origin{}
	for _, d := range set {
		o := Origin{Kind: "kubeadm", Detail: d.why}
		if strings.Contains(d.why, "ClusterConfiguration") {
			o = Origin{Kind: "cluster", File: cluster.File, Line: d.line, Detail: d.why}
		}
		why[d.field] = o
	}
	var resolvRec *recommended
	if r.ResolvConf == ResolvInDefault {
		if ok, rec := mutateResolvConf(kc, resolved); ok {
			why["resolvConf"] = Origin{Kind: "mutation", Detail: "set in kubeadm's defaulting (1.28–1.30): `kubeadm upgrade apply` also uploads it in the ConfigMap"}
		} else {
			resolvRec = rec
		}
	}
	if err := st.next(kc, v, why); err != nil {
		return nil, err
	}
	for _, rc := range recs {
		res.Warnings = append(res.Warnings, recommendation(rc, cm, cluster))
	}

	// 3. Mutate (1.31+).
	if r.ResolvConf != ResolvInDefault {
		if ok, rec := mutateResolvConf(kc, resolved); ok {
			if err := st.next(kc, v, map[string]Origin{"resolvConf": {Kind: "mutation", Detail: "Mutate() before the patches"}}); err != nil {
				return nil, err
			}
		} else {
			resolvRec = rec
		}
	}
	if resolvRec != nil {
		res.Warnings = append(res.Warnings, recommendation(*resolvRec, cm, cluster))
	}

	var nfs *nodeFS
	if in.Root != nil {
		nfs = newNodeFS(in.Root, in.Overlay)
	}

	// 4. The --patches directory.
	if in.PatchesDir != "" {
		if nfs == nil {
			return nil, errors.New("a patches directory needs the node (its root)")
		}
		ps, err := readPatches(nfs, in.PatchesDir, r)
		if err != nil {
			return nil, err
		}
		res.Warnings = append(res.Warnings, ps.Warnings...)
		for _, p := range ps.ForKubelet() {
			if err := st.patch(p, "patch", r); err != nil {
				return nil, err
			}
		}
	}

	// 5. instance-config.yaml.
	inst, err := instanceConfig(in, nfs, r, cluster, res)
	if err != nil {
		return nil, err
	}
	if inst != nil {
		if err := st.patch(*inst, "instance-config", r); err != nil {
			return nil, err
		}
	}
	postUpgrade(in, nfs, r, res)

	res.Config = st.state
	res.Origins = map[string]Origin{}
	for p := range leaves(st.state) {
		res.Origins[p] = st.origins[p]
	}
	res.Removed = st.removed
	if len(res.Removed) == 0 {
		res.Removed = nil
	}
	res.Notes = append(res.Notes, fmt.Sprintf("kubeadm %s backs the old config.yaml up to /etc/kubernetes/tmp/%s/config.yaml and does not restart the kubelet",
		r.Minor, r.BackupDir()))
	return res, nil
}

// encode is kubeadm's Marshal of the typed object: v1beta1 JSON with the
// fields of kubeadm's own types, apiVersion and kind first.
func encode(kc *v1beta1.KubeletConfiguration, v *schema.Version) (map[string]any, error) {
	m, err := config.ToMap(kc, v)
	if err != nil {
		return nil, err
	}
	m["apiVersion"], m["kind"] = config.APIVersion, config.Kind
	return m, nil
}

// next moves to the encoding of kc, attributing what changed to why (by
// field, the field's values) or, failing that, to the first origin in why.
func (st *stage) next(kc *v1beta1.KubeletConfiguration, v *schema.Version, why map[string]Origin) error {
	after, err := encode(kc, v)
	if err != nil {
		return err
	}
	st.advance(after, func(p string) (Origin, bool) {
		for f, o := range why {
			if p == f || strings.HasPrefix(p, f+".") {
				return o, true
			}
		}
		return Origin{}, false
	}, nil)
	return nil
}

// advance moves to state after: every value that changed takes the origin
// named(path) gives, and so does every value named(path) claims although it
// did not change (touch: the step sets it, to the same value).
func (st *stage) advance(after map[string]any, named func(string) (Origin, bool), touched func(string) bool) {
	before, now := leaves(st.state), leaves(after)
	for p, val := range now {
		old, had := before[p]
		if o, ok := named(p); ok && (!had || !reflect.DeepEqual(old, val) || (touched != nil && touched(p))) {
			st.origins[p] = o
			delete(st.removed, p)
		}
	}
	for p := range before {
		if _, ok := now[p]; !ok {
			if o, ok := named(p); ok {
				st.removed[p] = o
			}
			delete(st.origins, p)
		}
	}
	st.state = after
}

// patch applies one patch document as util/patches does.
func (st *stage) patch(p Patch, kind string, r *Release) error {
	doc, err := json.Marshal(st.state)
	if err != nil {
		return err
	}
	var out []byte
	switch p.Type {
	case JSON:
		var ops jsonpatch.Patch
		ops, err = jsonpatch.DecodePatch(p.JSON)
		if err == nil {
			out, err = ops.Apply(doc)
		}
	case Merge:
		out, err = jsonpatch.MergePatch(doc, p.JSON)
	default:
		out, err = strategicMerge(doc, p.JSON)
	}
	if err != nil {
		return fmt.Errorf("%s:%d: kubeadm %s fails: could not apply the patch of type %q to target %q: %v", p.File, p.Line, r.Minor, patchTypeName(p.Type), PatchTarget, err)
	}
	var after map[string]any
	if err := json.Unmarshal(out, &after); err != nil {
		return fmt.Errorf("%s:%d: kubeadm %s writes a config.yaml that is not a mapping after this patch (%v)", p.File, p.Line, r.Minor, err)
	}
	origin := func(line int) Origin { return Origin{Kind: kind, File: p.File, Line: line} }
	switch p.Type {
	case JSON:
		var ops []struct {
			Op   string `json:"op"`
			Path string `json:"path"`
			From string `json:"from"`
		}
		_ = json.Unmarshal(p.JSON, &ops)
		type named struct {
			path string
			line int
		}
		var names []named
		for i, o := range ops {
			if o.Op == "test" {
				continue
			}
			line := p.Line
			if i < len(p.Ops) {
				line = p.Ops[i]
			}
			names = append(names, named{pointerPath(o.Path, after), line})
			if o.Op == "move" {
				names = append(names, named{pointerPath(o.From, st.state), line})
			}
		}
		find := func(leaf string) (Origin, bool) {
			for i := len(names) - 1; i >= 0; i-- {
				if covers(names[i].path, leaf) {
					return origin(names[i].line), true
				}
			}
			return Origin{}, false
		}
		st.advance(after, find, func(string) bool { return true })
	default:
		find := func(leaf string) (Origin, bool) {
			if l, ok := lineFor(p.Keys, leaf); ok {
				return origin(l), true
			}
			if patchReplacesAll(p.JSON) {
				return origin(p.Line), true
			}
			return Origin{}, false
		}
		st.advance(after, find, func(leaf string) bool { _, ok := p.Keys[leaf]; return ok })
	}
	return nil
}

// covers tells whether a patch path (dotted, "" for the whole document)
// holds leaf, or leaf holds it (an operation inside a list).
func covers(p, leaf string) bool {
	return p == "" || p == leaf || strings.HasPrefix(leaf, p+".") || strings.HasPrefix(p, leaf+".")
}

// patchReplacesAll: a strategic patch whose top level says $patch: replace
// (or retains keys) rewrites the whole document.
func patchReplacesAll(js []byte) bool {
	var m map[string]any
	if json.Unmarshal(js, &m) != nil {
		return true // not an object: a merge patch replaces the document
	}
	_, rk := m["$retainKeys"]
	return m["$patch"] == "replace" || rk
}

func patchTypeName(t string) string {
	switch t {
	case JSON:
		return "application/json-patch+json"
	case Merge:
		return "application/merge-patch+json"
	}
	return "application/strategic-merge-patch+json"
}

// recommendation is kubeadm's warning about a value it keeps.
func recommendation(rc recommended, cm *fromConfigMap, c *Cluster) warning.Warning {
	w := warning.Warning{Code: warning.Other, Field: rc.field, File: cm.File, Line: cm.Keys[rc.field],
		Message: fmt.Sprintf("kubeadm keeps %s but warns: its recommended value is %s", rc.have, rc.want)}
	if rc.fromCluster && c.File != "" {
		w.Message += " (from the ClusterConfiguration in " + c.File + ")"
	}
	return w
}

// instanceConfig is step 5's patch, nil when kubeadm does not apply one.
func instanceConfig(in Input, nfs *nodeFS, r *Release, c *Cluster, res *Result) (*Patch, error) {
	dir := in.KubeletDir
	if dir == "" {
		dir = KubeletDir
	}
	file := path.Join(dir, InstanceConfigName)
	ic := &InstanceConfig{Path: file}
	if !r.AppliesInstanceConfig(c.FeatureGates) {
		why := fmt.Sprintf("kubeadm %s does not apply %s", r.Minor, InstanceConfigName)
		if r.InstanceConfig == InstanceGate {
			why += fmt.Sprintf(" (its %s gate is off", NodeLocalCRISocket)
			if l := c.Lines["featureGates."+NodeLocalCRISocket]; l > 0 {
				why += fmt.Sprintf(" in %s:%d", c.File, l)
			}
			why += ")"
		}
		res.Notes = append(res.Notes, why)
		if nfs != nil {
			if nfs.Exists(file) {
				res.Warnings = append(res.Warnings, warning.At(warning.NoEffect, file, 0, "%s: the file is there but not read", why))
			}
		}
		return nil, nil
	}
	res.InstanceConfig = ic
	ic.Applied = true
	if nfs == nil {
		res.Notes = append(res.Notes, fmt.Sprintf("%s is applied last by kubeadm %s; without the node it is left out", file, r.Minor))
		return nil, nil
	}
	data, err := nfs.ReadFile(file, nodefile.Config)
	switch {
	case err == nil:
		ic.How = "present"
		p, err := instancePatch(data, file, r)
		if err != nil {
			return nil, err
		}
		for k, l := range p.Keys {
			if k != "containerRuntimeEndpoint" && !strings.Contains(k, ".") {
				res.Warnings = append(res.Warnings, warning.At(warning.Other, file, l,
					"%s: kubeadm writes only containerRuntimeEndpoint here, but applies whatever the file holds, last, on every upgrade", k))
			}
		}
		return p, nil
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s: kubeadm %s fails reading it: %w", file, r.Minor, err)
	}
	cre, how, err := missingInstance(in, nfs, r, dir, res)
	if err != nil {
		return nil, err
	}
	ic.Created = fmt.Sprintf("containerRuntimeEndpoint: %q\n", cre)
	ic.How = how
	res.Notes = append(res.Notes, fmt.Sprintf("%s is missing: kubeadm %s creates it (%s) before applying it", file, r.Minor, how))
	return instancePatch([]byte(ic.Created), file+" (created by kubeadm)", r)
}

func instancePatch(data []byte, file string, r *Release) (*Patch, error) {
	docs, err := readPatchDocs(data, file, Strategic)
	if err != nil {
		return nil, err
	}
	switch len(docs) {
	case 0:
		return &Patch{File: file, Type: Strategic, JSON: []byte("{}"), Keys: map[string]int{}}, nil
	case 1:
		return &docs[0], nil
	}
	// kubeadm applies each document in turn; so does the caller, but one
	// file is one step here: merge them the same way.
	acc := []byte("{}")
	keys := map[string]int{}
	for _, d := range docs {
		var err error
		if acc, err = strategicMerge(acc, d.JSON); err != nil {
			return nil, fmt.Errorf("%s:%d: kubeadm %s fails: %v", file, d.Line, r.Minor, err)
		}
		for k, l := range d.Keys {
			keys[k] = l
		}
	}
	return &Patch{File: file, Line: docs[0].Line, Type: Strategic, JSON: acc, Keys: keys}, nil
}

// missingInstance is what kubeadm puts in a missing instance-config.yaml.
func missingInstance(in Input, nfs *nodeFS, r *Release, dir string, res *Result) (string, string, error) {
	envPath := path.Join(dir, "kubeadm-flags.env")
	switch r.Missing {
	case MissingDetect:
		if in.CRISocket != "" {
			return in.CRISocket, "the CRI socket kubeadm detects: " + in.CRISocket, nil
		}
		res.Conditions = append(res.Conditions, Condition{When: "another known CRI socket (" + strings.Join(KnownCRISockets[1:], ", ") +
			") is the only one answering when kubeadm runs", Field: "containerRuntimeEndpoint", Value: "that socket",
			Origin: Origin{Kind: "instance-config", File: path.Join(dir, InstanceConfigName) + " (created by kubeadm)"}})
		return DefaultCRISocket, "the CRI socket kubeadm detects when it runs: its default " + DefaultCRISocket + " when none or several answer", nil
	case MissingFromEnv, MissingFromEnvMove:
		data, err := nfs.ReadFile(envPath, nodefile.EnvFile)
		if err != nil {
			return "", "", fmt.Errorf("%s is missing and kubeadm %s fails reading %s to create it: %w", InstanceConfigName, r.Minor, envPath, err)
		}
		env, err := ParseFlagsEnv(data, envPath, r)
		if err != nil {
			return "", "", fmt.Errorf("%s is missing and kubeadm %s fails to create it: %w", InstanceConfigName, r.Minor, err)
		}
		res.Warnings = append(res.Warnings, env.Warnings...)
		cre, found := "", false
		var rest []Arg
		for _, a := range env.Args {
			if a.Name == "container-runtime-endpoint" {
				if !found || r.Missing == MissingFromEnvMove { // 1.32 takes the first, 1.33+ the last
					cre = a.Value
				}
				found = true
				continue
			}
			rest = append(rest, a)
		}
		how := "--container-runtime-endpoint from " + envPath
		if !found {
			how = "no --container-runtime-endpoint in " + envPath + ": an empty value (the kubelet then uses its default socket)"
		}
		if found && r.Missing == MissingFromEnvMove {
			after := kubeadmEnvFile(rest)
			ch := FlagsEnvChange{Path: envPath, After: after, Why: fmt.Sprintf("kubeadm %s moves --container-runtime-endpoint into %s", r.Minor, InstanceConfigName)}
			if len(rest) == 0 {
				res.Warnings = append(res.Warnings, warning.At(warning.Other, envPath, 0,
					"kubeadm %s leaves %s empty; kubeadm 1.32–1.34 and 1.35.0 fail on an empty value when they read the file again", r.Minor, EnvVar))
			}
			res.FlagsEnv = append(res.FlagsEnv, ch)
		}
		return cre, how, nil
	}
	return "", "", fmt.Errorf("kubeadm %s: no instance-config.yaml handling known", r.Minor)
}

// kubeadmEnvFile is what WriteKubeletArgsToFile writes: the sorted flags,
// Go-quoted.
func kubeadmEnvFile(args []Arg) string {
	words := make([]string, len(args))
	for i, a := range args {
		words[i] = a.String()
	}
	return fmt.Sprintf("%s=%q\n", EnvVar, strings.Join(words, " "))
}

// postUpgrade is the post-upgrade phase's use of kubeadm-flags.env (1.35:
// flags it removes; the file is backed up first, so it must exist).
func postUpgrade(in Input, nfs *nodeFS, r *Release, res *Result) {
	if r.PostUpgradeUnwanted == nil || nfs == nil {
		return
	}
	dir := in.KubeletDir
	if dir == "" {
		dir = KubeletDir
	}
	envPath := path.Join(dir, "kubeadm-flags.env")
	if len(res.FlagsEnv) > 0 {
		return // rewritten by the kubelet-config phase: kubeadm's own form
	}
	data, err := nfs.ReadFile(envPath, nodefile.EnvFile)
	if err != nil {
		res.Failures = append(res.Failures, fmt.Sprintf("post-upgrade: kubeadm %s backs %s up first and fails: %v", r.Minor, envPath, err))
		return
	}
	env, err := ParseFlagsEnv(data, envPath, r)
	if err != nil {
		res.Failures = append(res.Failures, "post-upgrade: "+err.Error())
		return
	}
	var keep []Arg
	for _, a := range env.Args {
		drop := false
		for _, u := range r.PostUpgradeUnwanted {
			drop = drop || a.Name == u
		}
		if !drop {
			keep = append(keep, a)
		}
	}
	if len(keep) != len(env.Args) {
		res.FlagsEnv = append(res.FlagsEnv, FlagsEnvChange{Path: envPath, After: kubeadmEnvFile(keep),
			Why: fmt.Sprintf("kubeadm %s's post-upgrade phase removes --%s", r.Minor, strings.Join(r.PostUpgradeUnwanted, ", --"))})
	}
}

// leaves flattens a decoded JSON object into dotted paths of its values:
// objects are walked, anything else (lists included) and empty objects are
// values.
func leaves(m map[string]any) map[string]any {
	out := map[string]any{}
	var walk func(m map[string]any, prefix string)
	walk = func(m map[string]any, prefix string) {
		for k, v := range m {
			p := joinPath(prefix, k)
			if sub, ok := v.(map[string]any); ok && len(sub) > 0 {
				walk(sub, p)
				continue
			}
			out[p] = v
		}
	}
	walk(m, "")
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
