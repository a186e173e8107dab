package fleet

import (
	"path"
	"strconv"
	"strings"

	"k8s.io/kubelet/config/v1beta1"

	"github.com/kubeletcfg/kubeletcfg/diff"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

// runtimeSets says a node's /configz shows its container runtime's cgroup
// driver rather than the configured one: the kubelet's version asks the
// runtime and registers /configz after the answer (the schema's traits),
// and the runtime answers RuntimeConfig (the Node's containerRuntimeVersion:
// containerd 2.0 and newer). Such a node's cgroupDriver is its own, never
// drift the configuration made. Another runtime, not known to answer, keeps
// cgroupDriver compared.
func runtimeSets(v *schema.Version, cfg *v1beta1.KubeletConfiguration, runtime string) bool {
	if !v.ConfigzShowsRuntimeDriver() || !v.AsksRuntimeForCgroupDriver(cfg.FeatureGates) {
		return false
	}
	return runtimeAnswersConfig(runtime)
}

// runtimeAnswersConfig: a runtime version as a Node reports it
// ("containerd://2.4.2") that implements RuntimeConfig.
func runtimeAnswersConfig(runtime string) bool {
	name, ver, ok := strings.Cut(runtime, "://")
	if !ok || name != "containerd" {
		return false
	}
	major, err := strconv.Atoi(strings.SplitN(strings.TrimPrefix(ver, "v"), ".", 2)[0])
	return err == nil && major >= 2
}

// selfSignedPaths: the TLS paths a /configz shows are the ones the kubelet
// fills in at start when none is configured and it does not bootstrap its
// serving certificate: DIR/kubelet.crt and DIR/kubelet.key of its
// --cert-dir, a flag of each node.
func selfSignedPaths(cfg *v1beta1.KubeletConfiguration) bool {
	if cfg.ServerTLSBootstrap || cfg.TLSCertFile == "" {
		return false
	}
	dir := path.Dir(cfg.TLSCertFile)
	return path.Base(cfg.TLSCertFile) == "kubelet.crt" && cfg.TLSPrivateKeyFile == path.Join(dir, "kubelet.key")
}

// derived says a difference from the reference is the kubelet's own doing:
// the self-signed certificate's paths where the reference configures none.
func (s *shape) derived(c diff.Change) bool {
	if !s.selfSigned || (c.Path != "tlsCertFile" && c.Path != "tlsPrivateKeyFile") {
		return false
	}
	old, _ := c.Old.(string)
	return old == ""
}
