// Package migrate turns a kubelet's legacy flags (and its old --config file
// and drop-ins, when it had them) into a KubeletConfiguration for a kubelet
// version, keeping as flags only what has no config field.
package migrate

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"

	"k8s.io/kubelet/config/v1beta1"

	"github.com/kubeletcfg/kubeletcfg/config"
	"github.com/kubeletcfg/kubeletcfg/effective"
	"github.com/kubeletcfg/kubeletcfg/flags"
	"github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/schema"
	"github.com/kubeletcfg/kubeletcfg/warning"
)

// Options describe the old setup and where the new config file will live.
type Options struct {
	// Setup is the old setup: its command line, the kubelet's working
	// directory and environment, the root of an offline node image. Its
	// version is the kubelet migrated to.
	Setup *node.Setup
	// ConfigPath is where the new config file will live; it replaces the old
	// --config on the remaining command line.
	ConfigPath string
}

// Removed is a flag, or a feature gate setting, the target kubelet no longer
// has.
type Removed struct {
	Flag   string `json:"flag,omitempty"`
	Gate   string `json:"gate,omitempty"`
	Reason string `json:"reason"`
}

// Result is the migration.
type Result struct {
	KubeletVersion string                        `json:"kubeletVersion"`
	Config         map[string]any                `json:"config"`
	Flags          []string                      `json:"flags"`
	Removed        []Removed                     `json:"removed"`
	Warnings       []warning.Warning             `json:"warnings"`
	Effective      *v1beta1.KubeletConfiguration `json:"-"`
	Origins        map[string]effective.Origin   `json:"-"`
	// KubeadmPatch, on a kubeadm node, keeps the migrated values at the next
	// kubeadm upgrade node (WriteDir writes it as kubeadm.PatchFileName).
	KubeadmPatch []byte `json:"-"`
	// DroppedGates are the gate settings left out, where the setup had them.
	DroppedGates []effective.DroppedGate `json:"-"`
	// Refused is the kubelet's verdict on the migrated configuration (the
	// old setup's, which it equals): nil when the version starts with it.
	Refused *effective.Refused `json:"-"`
	version *schema.Version
}

// Run migrates the old setup. The effective configuration of the new config
// file plus the remaining flags equals that of the old setup (Verify checks).
func Run(opts Options) (*Result, error) {
	if opts.Setup == nil || opts.Setup.Version == nil {
		return nil, fmt.Errorf("migrate: no kubelet setup")
	}
	v := opts.Setup.Version
	if opts.ConfigPath == "" {
		opts.ConfigPath = "/var/lib/kubelet/config.yaml"
	}
	// A flag no kubelet ever had is a mistake in the setup, not a removal.
	if _, _, err := flags.ReadAs(opts.Setup.Args, v); err != nil {
		return nil, err
	}
	old, err := effective.Compute(effective.Input{Setup: opts.Setup, ReadAs: v})
	if err != nil {
		return nil, fmt.Errorf("the old setup does not start kubelet %s: %w", v.Minor, err)
	}
	removed := []Removed{}
	for _, l := range old.LostFlags {
		removed = append(removed, Removed{Flag: l.Word, Reason: removedReason(l.Name, v)})
	}
	for _, g := range old.DroppedGates {
		removed = append(removed, removedGate(g, v))
	}
	args := old.Args
	res := &Result{KubeletVersion: v.Minor, Removed: removed, Warnings: notMigrated(old.Warnings),
		Effective: old.Config, Origins: old.Origins, DroppedGates: old.DroppedGates, Refused: old.Verdict(), version: v}
	var flagOnly []string
	res.Config, flagOnly, err = minimal(old.Config, v)
	if err != nil {
		return nil, err
	}
	res.Flags = remainingFlags(old, args, opts.ConfigPath, v)
	kept, warnings, err := keepFlagOnly(flagOnly, args, v)
	if err != nil {
		return nil, err
	}
	res.Flags = append(res.Flags, kept...)
	res.Warnings = append(res.Warnings, warnings...)
	for path := range v.RegisterResets() {
		dropPath(res.Config, path)
	}
	res.Warnings = append(res.Warnings, securityWarnings(old)...)
	return res, nil
}

// notMigrated drops the deprecation notices of flags that move into the file.
func notMigrated(warnings []warning.Warning) []warning.Warning {
	out := []warning.Warning{}
	for _, w := range warnings {
		if w.Code != warning.BelongsInFile {
			out = append(out, w)
		}
	}
	return out
}

func removedReason(name string, v *schema.Version) string {
	if r := schema.FlagRemovedIn(name); r != "" {
		reason := fmt.Sprintf("kubelet %s has no --%s: it was removed in %s", v.Minor, name, r)
		if a := advice(name); a != "" {
			reason += "; " + a
		}
		return reason
	}
	if old, ok := schema.Legacy(name); ok {
		reason := fmt.Sprintf("kubelet %s has no --%s: the last kubelet with it was %s", v.Minor, name, old.LastIn)
		if old.Deprecated != "" {
			reason += fmt.Sprintf(" (its notice then: %q)", old.Deprecated)
		}
		if a := advice(name); a != "" {
			reason += "; " + a
		}
		return reason
	}
	return fmt.Sprintf("kubelet %s has no --%s (no kubelet from %s on has it, nor any older release kubeletcfg knows); the kubelet would refuse to start", v.Minor, name, schema.Supported()[0])
}

// What is the removed flag, or the feature gate setting.
func (r Removed) What() string {
	if r.Gate != "" {
		return "feature gate " + r.Gate
	}
	return r.Flag
}

// removedGate says what leaving out a gate setting the version no longer has
// means, judged on the last kubelet that had the gate.
func removedGate(d effective.DroppedGate, v *schema.Version) Removed {
	g, _ := v.RemovedGate(d.Name)
	return Removed{Gate: fmt.Sprintf("%s=%t (%s)", d.Name, d.Value, d.Where), Reason: g.Dropping(v, d.Value)}
}

// advice says what replaces the settings of the flags that went away with
// dockershim and the in-kubelet network plugins.
func advice(name string) string {
	switch {
	case name == "network-plugin" || strings.HasPrefix(name, "cni-") || name == "network-plugin-mtu" || name == "non-masquerade-cidr" || name == "hairpin-mode-legacy":
		return "network (CNI) settings now belong to the container runtime's configuration (e.g. containerd's CRI plugin conf_dir/bin_dir)"
	case name == "container-runtime":
		return "drop it: the kubelet always talks to a CRI runtime (set containerRuntimeEndpoint)"
	case name == "pod-infra-container-image":
		return "the sandbox (pause) image is set in the container runtime's configuration (e.g. containerd's sandbox_image)"
	case strings.HasPrefix(name, "docker") || strings.HasPrefix(name, "experimental-dockershim") || name == "image-pull-progress-deadline" || name == "runtime-request-timeout-legacy":
		return "dockershim is gone: use a CRI runtime and set containerRuntimeEndpoint"
	case name == "require-kubeconfig" || name == "api-servers":
		return "--kubeconfig alone selects API server mode"
	}
	return ""
}

// minimal is the configuration that differs from the version's config-file
// defaults, as a nested map ready to be written, and the fields whose value
// the file cannot hold: an empty value the kubelet's defaulting of a config
// file replaces (only a flag can set those).
func minimal(eff *v1beta1.KubeletConfiguration, v *schema.Version) (map[string]any, []string, error) {
	have, err := config.ToMap(eff, v)
	if err != nil {
		return nil, nil, err
	}
	var def map[string]any
	if err := json.Unmarshal(v.Defaults(), &def); err != nil {
		return nil, nil, err
	}
	out := diffMap(have, def, "", v)
	if out == nil {
		out = map[string]any{}
	}
	// Without evictionHard in the file the kubelet would add its defaults:
	// an explicitly empty map keeps an old setup that had none.
	if _, ok := have["evictionHard"]; !ok {
		out["evictionHard"] = map[string]any{}
	}
	out["apiVersion"], out["kind"] = config.APIVersion, config.Kind
	// Some defaults follow other fields (nodeStatusReportFrequency follows
	// nodeStatusUpdateFrequency) or feature gates: default the candidate as
	// the kubelet will, and write out every value that comes out different.
	for range 4 {
		got, err := defaultedMap(out, v)
		if err != nil {
			return nil, nil, err
		}
		fixes := diffMap(have, got, "", v)
		if len(fixes) == 0 {
			return out, missingIn(have, got, "", v), nil
		}
		mergeInto(out, fixes)
	}
	return nil, nil, fmt.Errorf("kubelet %s: no config file found that the kubelet defaults to the old effective configuration", v.Minor)
}

// missingIn lists the fields got has and have lacks (an empty value, not
// serialized), objects field by field.
func missingIn(have, got map[string]any, prefix string, v *schema.Version) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(got)) {
		path := k
		if prefix != "" {
			path = prefix + "." + k
		}
		hv, ok := have[k]
		if !ok {
			out = append(out, path)
			continue
		}
		hm, hIsMap := hv.(map[string]any)
		gm, gIsMap := got[k].(map[string]any)
		if f, _ := v.Field(path); hIsMap && gIsMap && f.Type == "object" {
			out = append(out, missingIn(hm, gm, path, v)...)
		}
	}
	return out
}

// keepFlagOnly keeps on the command line the last flag that set each field
// the config file cannot hold, and says why; a field no flag set has no way
// to be kept and fails the migration.
func keepFlagOnly(fields []string, args []string, v *schema.Version) ([]string, []warning.Warning, error) {
	if len(fields) == 0 {
		return nil, nil, nil
	}
	cl, err := flags.Parse(args, v)
	if err != nil {
		return nil, nil, err
	}
	var kept []string
	var warnings []warning.Warning
	for _, path := range fields {
		var last *flags.Occurrence
		for i := range cl.Occurrences {
			if cl.Occurrences[i].Flag.Field == path {
				last = &cl.Occurrences[i]
			}
		}
		if last == nil {
			return nil, nil, fmt.Errorf("kubelet %s: %s has a value no config file can hold (the kubelet's defaulting of a config file replaces it) and no flag to keep it", v.Minor, path)
		}
		flag := "--" + last.Flag.Name + "=" + last.Value
		kept = append(kept, flag)
		warnings = append(warnings, warning.Warning{Code: warning.KeptAsFlag, Field: path,
			Message: fmt.Sprintf("kept on the command line as %s: the config file cannot hold %q (kubelet %s's defaulting of a config file replaces an empty %s)", flag, last.Value, v.Minor, path)})
	}
	return kept, warnings, nil
}

// defaultedMap is what kubelet v makes of a config file holding doc.
func defaultedMap(doc map[string]any, v *schema.Version) (map[string]any, error) {
	raw, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	d, err := config.Decode(raw, config.DecodeOptions{Version: v, AllowUnknownFields: true})
	if err != nil {
		return nil, err
	}
	return config.ToMap(config.Default(d.Config, v), v)
}

// mergeInto sets the values of src into dst, objects field by field.
func mergeInto(dst, src map[string]any) {
	for k, sv := range src {
		if sm, ok := sv.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				mergeInto(dm, sm)
				continue
			}
		}
		dst[k] = sv
	}
}

// diffMap keeps what differs between have and def; objects are compared
// field by field, maps and lists whole.
func diffMap(have, def map[string]any, prefix string, v *schema.Version) map[string]any {
	out := map[string]any{}
	for k, hv := range have {
		path := k
		if prefix != "" {
			path = prefix + "." + k
		}
		dv, ok := def[k]
		hm, hIsMap := hv.(map[string]any)
		dm, dIsMap := dv.(map[string]any)
		f, _ := v.Field(path)
		switch {
		case !ok:
			out[k] = hv
		case hIsMap && dIsMap && f.Type == "object":
			if sub := diffMap(hm, dm, path, v); len(sub) > 0 {
				out[k] = sub
			}
		case !reflect.DeepEqual(hv, dv):
			out[k] = hv
		}
	}
	return out
}

// remainingFlags are the flags without a config field, and those whose field
// the kubelet resets when it re-applies its command line over the config
// file: only the flag can set those.
func remainingFlags(old *effective.Result, args []string, configPath string, v *schema.Version) []string {
	out := []string{"--config=" + configPath}
	for _, o := range old.Flags {
		if o.Flag.Name == "config" || o.Flag.Name == "config-dir" {
			continue
		}
		out = append(out, "--"+o.Flag.Name+"="+o.Value)
	}
	resets := v.RegisterResets()
	if cl, err := flags.Parse(args, v); err == nil {
		for _, o := range cl.Occurrences {
			if _, ok := resets[o.Flag.Field]; ok && o.Flag.Field != "" {
				out = append(out, "--"+o.Flag.Name+"="+o.Value)
			}
		}
	}
	return out
}

// dropPath deletes a JSON path from a nested map, and the objects it empties.
func dropPath(m map[string]any, path string) {
	head, rest, nested := strings.Cut(path, ".")
	if !nested {
		delete(m, head)
		return
	}
	if sub, ok := m[head].(map[string]any); ok {
		dropPath(sub, rest)
		if len(sub) == 0 {
			delete(m, head)
		}
	}
}

// securityWarnings names the legacy defaults the old setup relied on that
// weaken the node, with the value to move to: each a warning.LegacyDefault
// whose Field is the field it is kept as.
func securityWarnings(old *effective.Result) []warning.Warning {
	var out []warning.Warning
	c := old.Config
	relied := func(path string) bool { return old.Origins[path].Kind == "flags-default" }
	add := func(path, format string, args ...any) {
		out = append(out, warning.Warning{Code: warning.LegacyDefault, Field: path, Message: fmt.Sprintf(format, args...)})
	}
	if c.Authentication.Anonymous.Enabled != nil && *c.Authentication.Anonymous.Enabled && relied("authentication.anonymous.enabled") {
		add("authentication.anonymous.enabled", "security: anonymous requests to the kubelet API are allowed (the legacy flag default, kept: true); move to false")
	}
	if c.Authentication.Webhook.Enabled != nil && !*c.Authentication.Webhook.Enabled && relied("authentication.webhook.enabled") {
		add("authentication.webhook.enabled", "security: webhook token authentication is off (the legacy flag default, kept: false); move to true")
	}
	if c.Authorization.Mode == "AlwaysAllow" && relied("authorization.mode") {
		add("authorization.mode", "security: every request to the kubelet API is authorized (the legacy flag default, kept: AlwaysAllow); move to Webhook")
	}
	if c.ReadOnlyPort != 0 && relied("readOnlyPort") {
		add("readOnlyPort", "security: the unauthenticated read-only port %d is open (the legacy flag default, kept); move to 0", c.ReadOnlyPort)
	}
	if c.EvictionHard == nil && relied("evictionHard") {
		add("evictionHard", "reliability: no hard eviction thresholds (the legacy flag default, kept: {}); consider the kubelet's defaults (memory.available<100Mi, nodefs.available<10%%, imagefs.available<15%%)")
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Message < out[j].Message })
	return out
}

// Verify lays the new config file plus the remaining flags the way the kubelet
// would and checks that it gives the old effective configuration.
func (r *Result) Verify(writeConfig func(doc []byte) (path string, err error)) error {
	data, err := json.Marshal(r.Config)
	if err != nil {
		return err
	}
	path, err := writeConfig(data)
	if err != nil {
		return err
	}
	args := []string{"--config=" + path}
	args = append(args, r.Flags[1:]...)
	got, err := effective.Compute(effective.Input{Setup: node.Given(r.version, args...)})
	if err != nil {
		return fmt.Errorf("the migrated setup does not start kubelet %s: %w", r.version.Minor, err)
	}
	a, _ := config.JSON(r.Effective, r.version)
	b, _ := config.JSON(got.Config, r.version)
	if string(a) != string(b) {
		return fmt.Errorf("the migrated setup differs from the old one:\nold: %s\nnew: %s", a, b)
	}
	return nil
}
