package main

import (
	"github.com/spf13/pflag"

	"github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/warning"
)

// setupFlags say how to read the node's kubelet setup: its version, its
// root, and where the kubelet's command line comes from when it is not
// given after --.
type setupFlags struct {
	versionFlags
	from []string
}

func (f *setupFlags) bind(fs *pflag.FlagSet) {
	f.versionFlags.bind(fs)
	stringArrayVar(fs, &f.from, "from", "read the kubelet's flags from this file (a unit *.service, or an env file such as kubeadm-flags.env or /etc/default/kubelet); repeatable, in command-line order")
}

// setupSource is where the setup is read from: args is the command line
// after -- (dashed: a -- was given, even with nothing after it).
func (f *setupFlags) setupSource(s streams, args []string, dashed bool) node.Source {
	src := f.versionFlags.source(s)
	src.Args, src.Dashed, src.From = args, dashed, f.from
	return src
}

// setup reads the node's kubelet setup, with notes and warnings on stderr.
func (f *setupFlags) setup(s streams, args []string, dashed bool) (*node.Setup, error) {
	return node.ReadSetup(f.setupSource(s, args, dashed))
}

// allWarnings joins lists of warnings (the setup's, a library's) for -o
// json: never null.
func allWarnings(lists ...[]warning.Warning) []warning.Warning {
	ws := []warning.Warning{}
	for _, l := range lists {
		ws = append(ws, l...)
	}
	return ws
}
