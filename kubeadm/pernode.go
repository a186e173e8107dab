package kubeadm

// PerNodeField is a kubelet configuration field kubeadm sets on each node,
// not from its ConfigMap: its value on a node is never drift from the
// cluster's intent.
type PerNodeField struct {
	Path string
	Why  string
}

// PerNodeFields are what kubeadm sets per node, read in its code: the CRI
// endpoint (phases/kubelet/flags.go buildKubeletArgsCommon up to 1.31 and
// where NodeLocalCRISocket is off; instance-config.yaml in config.go from
// 1.32), resolvConf (componentconfigs: systemd-resolved active on the node),
// the node's taints (--register-with-taints in flags.go).
func PerNodeFields() []PerNodeField {
	return []PerNodeField{
		{"containerRuntimeEndpoint", "the node's CRI socket: /var/lib/kubelet/instance-config.yaml (kubeadm 1.32+ with NodeLocalCRISocket, always from 1.37; created from kubeadm-flags.env or kubeadm's detection when missing), else --container-runtime-endpoint in kubeadm-flags.env"},
		{"resolvConf", SystemdResolvConf + " where systemd-resolved is active on the node when kubeadm runs (kubeadm's Mutate; its defaulting up to 1.30)"},
		{"registerWithTaints", "the node's nodeRegistration.taints, as --register-with-taints in kubeadm-flags.env"},
	}
}
