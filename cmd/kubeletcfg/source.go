package main

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/warning"
)

// sourceFlags say where the kubelet's command line comes from when it is not
// given after --.
type sourceFlags struct {
	from []string
}

func (f *sourceFlags) bind(fs *pflag.FlagSet) {
	fs.StringArrayVar(&f.from, "from", nil, "read the kubelet's flags from this file (a unit *.service, or an env file such as kubeadm-flags.env or /etc/default/kubelet); repeatable, in command-line order")
}

// commandLine finds the kubelet's command line: the given files, else the
// node's kubelet.service (under root for an offline image).
func (f *sourceFlags) commandLine(root string, s streams) (*node.Kubelet, error) {
	var k *node.Kubelet
	var err error
	if len(f.from) > 0 {
		k, err = node.FromFiles(root, f.from)
	} else {
		k, err = node.DiscoverKubelet(root)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the kubelet's command line (or give it after --): %w", err)
	}
	fmt.Fprintf(s.ErrOut, "note: the kubelet's command line from %s\n", warning.Truncate(strings.Join(k.Files, ", "), 2000))
	warning.Print(s.ErrOut, k.Warnings)
	return k, nil
}

// allWarnings joins the command line's structured warnings and a library's
// plain ones, for printing and for -o json.
func allWarnings(k *node.Kubelet, plain []string) []warning.Warning {
	ws := []warning.Warning{}
	if k != nil {
		ws = append(ws, k.Warnings...)
	}
	for _, p := range plain {
		ws = append(ws, warning.Warning{Code: warning.Other, Message: p})
	}
	return ws
}
