package kubeadm

import (
	"fmt"
	"strings"

	"github.com/kubeletcfg/kubeletcfg/schema"
)

// Release is what one kubeadm minor does when `kubeadm upgrade node` (phase
// kubelet-config, then post-upgrade) rewrites a node's kubelet files. Every
// row was read from cmd/kubeadm of the k8s.io/kubernetes release in Source;
// none is inferred from its neighbours. The kubelet configuration fields a
// kubeadm minor knows are those of k8s.io/kubelet/config/v1beta1 of the same
// minor: the schema package's data for that kubelet minor.
type Release struct {
	Minor  string
	Source string // the release whose code the row was read from

	// PatchTargets are the targets util/patches knows: a file named after
	// another target is read (and must parse) but patches something else; a
	// file named after none is ignored with a warning.
	PatchTargets []string
	// JSONPatch is the JSON (RFC 6902) and merge (RFC 7386) patch library.
	JSONPatch string

	// ResolvConf is where kubeadm sets resolvConf when systemd-resolved is
	// active: in the component config's defaulting (so it is also in the
	// ConfigMap `kubeadm upgrade apply` uploads from that node), in Mutate
	// (which 1.31–1.36 run on the shared object after the upload), or in
	// Mutate on a copy (1.37).
	ResolvConf ResolvStage

	// InstanceConfig says when /var/lib/kubelet/instance-config.yaml is
	// applied, as a strategic merge patch after the --patches ones.
	InstanceConfig InstanceMode
	// Missing is what the kubelet-config phase does when instance-config.yaml
	// is applied but missing.
	Missing MissingMode

	// EnvEmptyFails: ReadKubeletDynamicEnvFile fails with "no flags found"
	// on a KUBELET_KUBEADM_ARGS without flags (kubernetes/kubeadm#3279).
	EnvEmptyFails bool
	// EnvEmptyNote names the patch releases where that differs from Source.
	EnvEmptyNote string
	// PostUpgradeUnwanted are the flags the post-upgrade phase removes from
	// kubeadm-flags.env (backing the file up first: a missing file fails the
	// upgrade). Nil: the phase neither reads nor needs the file.
	PostUpgradeUnwanted []string

	// Backup is how the kubelet-config phase names its backup directory under
	// /etc/kubernetes/tmp.
	Backup BackupNaming

	// ClusterAPIs are the kubeadm.k8s.io versions of ClusterConfiguration the
	// kubeadm-config ConfigMap may hold.
	ClusterAPIs []string
}

// ResolvStage is where kubeadm applies the systemd-resolved resolv.conf.
type ResolvStage string

const (
	ResolvInDefault    ResolvStage = "default"     // componentconfigs Default (1.28–1.30)
	ResolvInMutate     ResolvStage = "mutate"      // Mutate on the shared object (1.31–1.36)
	ResolvInMutateCopy ResolvStage = "mutate-copy" // Mutate on a copy (1.37)
)

// InstanceMode says when instance-config.yaml is applied.
type InstanceMode string

const (
	InstanceNever InstanceMode = "never" // before NodeLocalCRISocket (1.28–1.31)
	// InstanceGate: when kubeadm's NodeLocalCRISocket gate (ClusterConfiguration
	// featureGates, else GateDefault) is on.
	InstanceGate   InstanceMode = "gate"
	InstanceAlways InstanceMode = "always" // the gate is gone (1.37)
)

// MissingMode is what happens to a missing instance-config.yaml.
type MissingMode string

const (
	MissingNotRead MissingMode = "not-read" // the file is not used
	// MissingFromEnv: created from --container-runtime-endpoint of
	// kubeadm-flags.env, which must parse (1.32).
	MissingFromEnv MissingMode = "from-env"
	// MissingFromEnvMove: the same, and the flag is removed from
	// kubeadm-flags.env, which kubeadm rewrites (1.33–1.36).
	MissingFromEnvMove MissingMode = "from-env-move"
	// MissingDetect: created with the CRI socket kubeadm detects (one of the
	// known sockets answering), else its default (1.37).
	MissingDetect MissingMode = "detect"
)

// BackupNaming is the backup directory's name.
type BackupNaming string

const (
	// BackupRandom: os.MkdirTemp(…/tmp, "kubeadm-kubelet-config"), a random
	// number appended (kubeadm-kubelet-config1234567890).
	BackupRandom BackupNaming = "random"
	// BackupTimestamp: kubeadm-kubelet-config-2006-01-02-15-04-05 (os.Mkdir:
	// a second run within the same second fails).
	BackupTimestamp BackupNaming = "timestamp"
)

const (
	jsonPatchOld = "github.com/evanphx/json-patch v4.12.0"
	jsonPatchV4  = "gopkg.in/evanphx/json-patch.v4"
)

var (
	targets128 = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubeletconfiguration"}
	targets131 = append(append([]string{}, targets128...), "corednsdeployment")
	targets137 = append(append([]string{}, targets131...), "kubeproxydaemonset")
	beta3and4  = []string{"v1beta3", "v1beta4"}
)

// releases is the table, oldest first. Files read in each release:
// util/patches/patches.go, phases/kubelet/config.go and flags.go,
// phases/upgrade/postupgrade.go, cmd/phases/upgrade/postupgrade.go,
// componentconfigs/{kubelet,kubelet_unix,configset}.go, features/features.go,
// constants/constants.go, apis/kubeadm/scheme/scheme.go.
var releases = []Release{
	{Minor: "1.28", Source: "v1.28.15", PatchTargets: targets128, JSONPatch: jsonPatchOld, ResolvConf: ResolvInDefault,
		InstanceConfig: InstanceNever, Missing: MissingNotRead, Backup: BackupRandom, ClusterAPIs: beta3and4},
	{Minor: "1.29", Source: "v1.29.15", PatchTargets: targets128, JSONPatch: jsonPatchOld, ResolvConf: ResolvInDefault,
		InstanceConfig: InstanceNever, Missing: MissingNotRead, Backup: BackupRandom, ClusterAPIs: beta3and4},
	{Minor: "1.30", Source: "v1.30.14", PatchTargets: targets128, JSONPatch: jsonPatchOld, ResolvConf: ResolvInDefault,
		InstanceConfig: InstanceNever, Missing: MissingNotRead, Backup: BackupRandom, ClusterAPIs: beta3and4},
	{Minor: "1.31", Source: "v1.31.13", PatchTargets: targets131, JSONPatch: jsonPatchV4 + " v4.12.0", ResolvConf: ResolvInMutate,
		InstanceConfig: InstanceNever, Missing: MissingNotRead, Backup: BackupRandom, ClusterAPIs: beta3and4},
	{Minor: "1.32", Source: "v1.32.13", PatchTargets: targets131, JSONPatch: jsonPatchV4 + " v4.12.0", ResolvConf: ResolvInMutate,
		InstanceConfig: InstanceGate, Missing: MissingFromEnv, EnvEmptyFails: true, Backup: BackupRandom, ClusterAPIs: beta3and4},
	{Minor: "1.33", Source: "v1.33.13", PatchTargets: targets131, JSONPatch: jsonPatchV4 + " v4.12.0", ResolvConf: ResolvInMutate,
		InstanceConfig: InstanceGate, Missing: MissingFromEnvMove, EnvEmptyFails: true, Backup: BackupRandom, ClusterAPIs: beta3and4},
	{Minor: "1.34", Source: "v1.34.4", PatchTargets: targets131, JSONPatch: jsonPatchV4 + " v4.13.0", ResolvConf: ResolvInMutate,
		InstanceConfig: InstanceGate, Missing: MissingFromEnvMove, EnvEmptyFails: true, EnvEmptyNote: "also read in v1.34.5",
		Backup: BackupRandom, ClusterAPIs: beta3and4},
	{Minor: "1.35", Source: "v1.35.4", PatchTargets: targets131, JSONPatch: jsonPatchV4 + " v4.13.0", ResolvConf: ResolvInMutate,
		InstanceConfig: InstanceGate, Missing: MissingFromEnvMove, EnvEmptyNote: "v1.35.0 fails on an empty value (read in v1.35.0; fixed in v1.35.1)",
		PostUpgradeUnwanted: []string{"pod-infra-container-image"}, Backup: BackupTimestamp, ClusterAPIs: beta3and4},
	{Minor: "1.36", Source: "v1.36.3", PatchTargets: targets131, JSONPatch: jsonPatchV4 + " v4.13.0", ResolvConf: ResolvInMutate,
		InstanceConfig: InstanceGate, Missing: MissingFromEnvMove, Backup: BackupTimestamp, ClusterAPIs: beta3and4},
	{Minor: "1.37", Source: "v1.37.2", PatchTargets: targets137, JSONPatch: jsonPatchV4 + " v4.13.0", ResolvConf: ResolvInMutateCopy,
		InstanceConfig: InstanceAlways, Missing: MissingDetect, Backup: BackupTimestamp, ClusterAPIs: []string{"v1beta4", "v1"}},
}

// gateDefaults is kubeadm's NodeLocalCRISocket gate by minor (features.go):
// alpha off in 1.32–1.33, beta on in 1.34–1.35, GA locked on in 1.36, gone
// in 1.37.
var gateDefaults = map[string]struct {
	on, locked bool
	stage      string
}{
	"1.32": {false, false, "alpha"}, "1.33": {false, false, "alpha"},
	"1.34": {true, false, "beta"}, "1.35": {true, false, "beta"},
	"1.36": {true, true, "GA"},
}

// NodeLocalCRISocket is the name of kubeadm's gate.
const NodeLocalCRISocket = "NodeLocalCRISocket"

// GateDefault is the NodeLocalCRISocket default of the release and whether
// the gate exists there.
func (r *Release) GateDefault() (on, exists bool) {
	d, ok := gateDefaults[r.Minor]
	return d.on, ok
}

// AppliesInstanceConfig tells whether the kubelet-config phase applies
// instance-config.yaml, with the cluster's kubeadm feature gates.
func (r *Release) AppliesInstanceConfig(gates map[string]bool) bool {
	switch r.InstanceConfig {
	case InstanceAlways:
		return true
	case InstanceGate:
		if on, ok := gates[NodeLocalCRISocket]; ok {
			return on // features.Enabled: an explicit value wins, even over a locked gate
		}
		on, _ := r.GateDefault()
		return on
	}
	return false
}

// KnowsTarget tells whether a patch target name is one of the release's.
func (r *Release) KnowsTarget(name string) bool {
	for _, t := range r.PatchTargets {
		if t == name {
			return true
		}
	}
	return false
}

// BackupDir is the backup directory's name pattern under /etc/kubernetes/tmp.
func (r *Release) BackupDir() string {
	if r.Backup == BackupTimestamp {
		return "kubeadm-kubelet-config-YYYY-MM-DD-hh-mm-ss"
	}
	return "kubeadm-kubelet-config<random digits>"
}

// Releases lists the table, oldest first.
func Releases() []Release { return releases }

// Supported names the kubeadm minors the table holds.
func Supported() []string {
	out := make([]string, len(releases))
	for i, r := range releases {
		out[i] = r.Minor
	}
	return out
}

// ResolveRelease accepts "1.34", "v1.34.4" or "1.34.4".
func ResolveRelease(s string) (*Release, error) {
	in := strings.TrimPrefix(strings.TrimSpace(s), "v")
	seg, err := schema.Segments(in)
	if err != nil {
		return nil, fmt.Errorf("kubeadm version %q: not a version like 1.34, 1.34.4 or v1.34.4", s)
	}
	minor := fmt.Sprintf("%d.%d", seg[0], seg[1])
	for i := range releases {
		if releases[i].Minor == minor {
			r := releases[i]
			if strings.Count(in, ".") >= 2 && minor == "1.35" && seg[2] == 0 {
				r.EnvEmptyFails = true // v1.35.0 (kubernetes/kubeadm#3279)
			}
			return &r, nil
		}
	}
	return nil, fmt.Errorf("kubeadm version %s is not modelled; modelled: %s", s, strings.Join(Supported(), ", "))
}
