//go:build kubeadmref && api135

package main

import (
	"io"

	clientset "k8s.io/client-go/kubernetes"
	kubeadmapi "k8s.io/kubernetes/cmd/kubeadm/app/apis/kubeadm"
	"k8s.io/kubernetes/cmd/kubeadm/app/phases/upgrade"
	configutil "k8s.io/kubernetes/cmd/kubeadm/app/util/config"
)

func fetch(client clientset.Interface) (*kubeadmapi.InitConfiguration, error) {
	return configutil.FetchInitConfigurationFromCluster(client, nil, "upgrade", false, false, true)
}

func writeConfigFiles(cfg *kubeadmapi.InitConfiguration, kubeletDir, kubeConfigDir, patches string, out io.Writer) error {
	return upgrade.WriteKubeletConfigFiles(cfg, kubeletDir, kubeConfigDir, patches, false, out)
}
