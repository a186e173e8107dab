//go:build kubeadmref && !api128

package main

import (
	kubeletphase "k8s.io/kubernetes/cmd/kubeadm/app/phases/kubelet"
	kubeadmutil "k8s.io/kubernetes/cmd/kubeadm/app/util"
)

// parseEnv is kubeadm's read of kubeadm-flags.env on upgrade.
func parseEnv(file string) ([]arg, error) {
	words, err := kubeletphase.ReadKubeletDynamicEnvFile(file)
	if err != nil {
		return nil, err
	}
	var out []arg
	for _, a := range kubeadmutil.ArgumentsFromCommand(words) {
		out = append(out, arg{a.Name, a.Value})
	}
	return out, nil
}
