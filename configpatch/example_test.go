package configpatch_test

import (
	"fmt"

	"github.com/kubeletcfg/kubeletcfg/configpatch"
)

func ExampleApply() {
	file := []byte(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# kubeadm's
maxPods: 110
evictionHard:
  memory.available: 200Mi
  nodefs.available: 10%
containerLogMaxSize: 10Mi
`)
	patch := []byte(`{"maxPods": 150, "evictionHard": {"nodefs.available": null}, "containerLogMaxSize": null}`)
	out, err := configpatch.Apply(file, patch, configpatch.Options{File: "config.yaml", PatchFile: "patch.json"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(string(out))
	// Output:
	// apiVersion: kubelet.config.k8s.io/v1beta1
	// kind: KubeletConfiguration
	// # kubeadm's
	// maxPods: 150
	// evictionHard:
	//   memory.available: 200Mi
}
