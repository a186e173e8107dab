package main

import (
	"github.com/spf13/pflag"

	"github.com/kubeletcfg/kubeletcfg/criruntime"
	"github.com/kubeletcfg/kubeletcfg/node"
)

// runtimeFlags say how to read what the container runtime answers the
// kubelet at start-up (the cgroup driver, from 1.31 where the kubelet asks).
type runtimeFlags struct {
	mode             string
	containerdConfig string
}

func (f *runtimeFlags) bind(fs *pflag.FlagSet) {
	fs.StringVar(&f.mode, "runtime", criruntime.Auto, "how to read the container runtime's answer to the kubelet (its cgroup driver): auto (ask the CRI socket on a live node; read containerd's config.toml under --root, or when no runtime listens), socket, config, or none")
	fs.StringVar(&f.containerdConfig, "containerd-config", "", "containerd's configuration file (default "+criruntime.ContainerdConfigPath+", under --root)")
}

// attach makes the setup read its runtime's answer.
func (f *runtimeFlags) attach(s *node.Setup) error {
	ask, err := f.asker(s.Root)
	if err != nil {
		return err
	}
	s.Runtime = ask
	return nil
}

// asker reads the runtime's answer on the node under root ("" live).
func (f *runtimeFlags) asker(root string) (criruntime.Asker, error) {
	return criruntime.Ask(root, criruntime.AskOptions{Mode: f.mode, ContainerdConfig: f.containerdConfig})
}
