package main

import (
	"github.com/spf13/pflag"

	"github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

// versionFlags are the flags that choose the kubelet version.
type versionFlags struct {
	kubeletVersion string
	root           string
	flags          *pflag.FlagSet
}

// set reports whether the named flag was given.
func (f *versionFlags) set(name string) bool {
	return f.flags != nil && f.flags.Changed(name)
}

func (f *versionFlags) bind(fs *pflag.FlagSet) {
	f.flags = fs
	fs.StringVar(&f.kubeletVersion, "kubelet-version", "", "kubelet version to check against (1.31, 1.31.4 or v1.31.4); default: the node's kubelet binary, else the newest supported")
	fs.StringVar(&f.root, "root", "", "root directory of an offline node image (where its kubelet binary is looked for)")
}

func (f *versionFlags) source(s streams) node.Source {
	return node.Source{Root: f.root, KubeletVersion: f.kubeletVersion, VersionSet: f.set("kubelet-version"), Notes: s.ErrOut}
}

// resolve picks the version: the flag, else the node's kubelet, else the
// newest supported one, with a note on stderr.
func (f *versionFlags) resolve(s streams) (*schema.Version, error) {
	return node.ResolveVersion(f.source(s))
}
