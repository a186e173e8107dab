package main

import (
	"github.com/spf13/pflag"
)

// kubeletAccess are the flags that choose how kubelets are read.
type kubeletAccess struct {
	direct    bool
	kubeletCA string
	insecure  []string
}

const kubeletAccessHelp = `Kubelets are read through the API server's node proxy, which needs get on
nodes/proxy: that reaches every endpoint of every kubelet, /exec included, as
much as exec into every container of every node. With --direct each kubelet
is read on its own port, at the address its Node reports, which needs get and
list on nodes and get on nodes/configz (/configz, /flagz) and nodes/healthz,
nodes/statusz: the ClusterRole in deploy/rbac.yaml. Kubelets before 1.33, or
with KubeletFineGrainedAuthz off, still ask for nodes/proxy on their own
port: said per node. The serving certificate is verified against the
kubeconfig's cluster CA (serverTLSBootstrap's signer) or --kubelet-ca; a
self-signed kubelet is read only when named in
--kubelet-insecure-skip-tls-verify, and the output says so.`

func (k *kubeletAccess) bind(fl *pflag.FlagSet) {
	fl.BoolVar(&k.direct, "direct", false, "read each kubelet on its own port (no nodes/proxy needed; see deploy/rbac.yaml)")
	fl.StringVar(&k.kubeletCA, "kubelet-ca", "", "with --direct: the CA file that signs the kubelets' serving certificates (default: the kubeconfig's cluster CA)")
	stringSliceVar(fl, &k.insecure, "kubelet-insecure-skip-tls-verify", "with --direct: nodes whose serving certificate is read unverified (self-signed kubelets), by name")
}
