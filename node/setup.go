package node

import (
	"fmt"

	"github.com/kubeletcfg/kubeletcfg/units"
)

// Kubelet is how the node starts its kubelet.
type Kubelet struct {
	Unit string   // the unit file (node path)
	Args []string // the kubelet's arguments, after the binary
	// Sources says where each of Args was written: "file:line" or
	// "file:line ($VAR)".
	Sources []string
	Env     map[string]string // the kubelet process's environment
	Files   []string          // the unit, its drop-ins and the environment files read
}

// LookupEnv reads the kubelet's environment.
func (k *Kubelet) LookupEnv(name string) (string, bool) {
	v, ok := k.Env[name]
	return v, ok
}

// DiscoverKubelet reads the node's kubelet.service, its drop-ins and the
// environment files they name, as systemd does (root "" is the live node).
func DiscoverKubelet(root string) (*Kubelet, error) {
	s, err := units.Discover(root)
	if err != nil {
		return nil, err
	}
	if len(s.Exec) == 0 {
		return nil, fmt.Errorf("%s: ExecStart= runs nothing", s.Unit)
	}
	k := &Kubelet{Unit: s.Unit, Args: s.Exec[1:], Env: s.Env}
	k.Files = append(append(append(k.Files, s.Unit), s.Dropins...), s.EnvFiles...)
	for i := range k.Args {
		src := ""
		if i < len(s.Sources) {
			src = fmt.Sprintf("%s:%d", s.Sources[i].File, s.Sources[i].Line)
			if s.Sources[i].Var != "" {
				src += " ($" + s.Sources[i].Var + ")"
			}
		}
		k.Sources = append(k.Sources, src)
	}
	return k, nil
}
