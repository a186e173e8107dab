package kubeadm

import (
	"path"
	"strings"

	"github.com/kubeletcfg/kubeletcfg/nodefile"
)

// ConfigFile is the kubelet configuration file kubeadm writes on every init,
// join and upgrade.
const ConfigFile = KubeletDir + "/config.yaml"

// Node is what kubeadm left on a node.
type Node struct {
	// Kubeadm: kubeadm set the node up (init or join).
	Kubeadm bool `json:"kubeadm"`
	// Evidence names the files kubeadm writes that are there.
	Evidence []string `json:"evidence"`
	// ControlPlane: the node runs kubeadm's static control plane.
	ControlPlane bool `json:"controlPlane,omitempty"`
	// FlagsEnv, InstanceConfig: kubeadm-flags.env and instance-config.yaml
	// are there.
	FlagsEnv       bool `json:"flagsEnv,omitempty"`
	InstanceConfig bool `json:"instanceConfig,omitempty"`
	// Backups are earlier `kubeadm upgrade` backups of config.yaml.
	Backups []string `json:"backups,omitempty"`
}

// Detect recognises a kubeadm node from what kubeadm writes, under root
// (the running node or an image). A node is kubeadm's when it has
// kubeadm-flags.env, instance-config.yaml or kubeadm's config.yaml backups,
// or kubeadm's kubelet.conf next to /var/lib/kubelet/config.yaml.
func Detect(root *nodefile.Root) *Node {
	n := &Node{}
	has := func(p string) bool {
		if _, fi, err := root.Stat(p); err == nil && fi.Mode().IsRegular() {
			n.Evidence = append(n.Evidence, p)
			return true
		}
		return false
	}
	n.FlagsEnv = has(FlagsEnvFile)
	n.InstanceConfig = has(path.Join(KubeletDir, InstanceConfigName))
	config := has(ConfigFile)
	kubeconfig := has("/etc/kubernetes/kubelet.conf")
	has("/etc/kubernetes/bootstrap-kubelet.conf")
	has("/etc/kubernetes/pki/ca.crt")
	n.ControlPlane = has("/etc/kubernetes/manifests/kube-apiserver.yaml")
	if names, err := root.ReadDir("/etc/kubernetes/tmp"); err == nil {
		for _, name := range names {
			if strings.HasPrefix(name, "kubeadm-kubelet-config") {
				n.Backups = append(n.Backups, path.Join("/etc/kubernetes/tmp", name))
			}
		}
	}
	n.Kubeadm = n.FlagsEnv || n.InstanceConfig || len(n.Backups) > 0 || (config && kubeconfig)
	return n
}

// OwnsConfig tells whether kubeadm rewrites the kubelet's config file at
// configPath on upgrade: only its own /var/lib/kubelet/config.yaml.
func OwnsConfig(configPath string) bool {
	return path.Clean(configPath) == ConfigFile
}
