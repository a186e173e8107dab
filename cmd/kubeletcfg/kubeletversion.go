package main

import (
	"errors"
	"fmt"
	"os"
	"syscall"

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

// resolve picks the version: the flag, else the node's kubelet, else the
// newest supported one, with a note on stderr.
func (f *versionFlags) resolve(s streams) (*schema.Version, error) {
	if f.kubeletVersion != "" {
		return schema.Resolve(f.kubeletVersion)
	}
	if f.set("kubelet-version") {
		return nil, fmt.Errorf(`--kubelet-version "": give a version such as 1.31, or leave the flag out to use the node's`)
	}
	if f.root != "" {
		if st, err := os.Stat(f.root); err != nil || !st.IsDir() {
			var pe *os.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			} else if err == nil {
				err = syscall.ENOTDIR
			}
			return nil, fmt.Errorf("--root %s: %w", f.root, err)
		}
	}
	found, err := node.KubeletVersion(f.root)
	if err == nil {
		v, rerr := schema.Resolve(found)
		if rerr != nil {
			return nil, fmt.Errorf("the node's kubelet is %s: %w", found, rerr)
		}
		return v, nil
	}
	if !errors.Is(err, node.ErrNoKubelet) {
		// A kubelet is there but did not say its version: guessing another
		// version would check against the wrong rules.
		return nil, fmt.Errorf("%w (set --kubelet-version)", err)
	}
	v := schema.Newest()
	fmt.Fprintf(s.ErrOut, "note: %v; using kubelet %s (set --kubelet-version)\n", err, v.Minor)
	return v, nil
}
