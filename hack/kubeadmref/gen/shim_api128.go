//go:build kubeadmref && api128

package main

import (
	"errors"
	"io"

	clientset "k8s.io/client-go/kubernetes"
	kubeadmapi "k8s.io/kubernetes/cmd/kubeadm/app/apis/kubeadm"
	kubeletphase "k8s.io/kubernetes/cmd/kubeadm/app/phases/kubelet"
	configutil "k8s.io/kubernetes/cmd/kubeadm/app/util/config"
)

// fetch is `kubeadm upgrade node`'s read of the cluster's configuration
// (newControlPlane true: no node registration, which needs a real node).
func fetch(client clientset.Interface) (*kubeadmapi.InitConfiguration, error) {
	return configutil.FetchInitConfigurationFromCluster(client, nil, "upgrade", true, false)
}

// writeConfigFiles: up to 1.31 the phase is WriteConfigToDisk after a backup
// under the fixed /etc/kubernetes/tmp, which the harness leaves out.
func writeConfigFiles(cfg *kubeadmapi.InitConfiguration, kubeletDir, kubeConfigDir, patches string, out io.Writer) error {
	return kubeletphase.WriteConfigToDisk(&cfg.ClusterConfiguration, kubeletDir, patches, out)
}

func parseEnv(string) ([]arg, error) {
	return nil, errors.New("kubeadm before 1.32 does not parse kubeadm-flags.env")
}
