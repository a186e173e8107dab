package audit

import (
	"fmt"

	"github.com/kubeletcfg/kubeletcfg/flags"
	"github.com/kubeletcfg/kubeletcfg/node"
)

// confine refuses, before the setup is layered, drop-ins reached through a
// symbolic link under --root: the layering resolves the --config file and
// the --config-dir inside the root, but reads each drop-in it finds there by
// its host path, and a link would name a file of this machine, not of the
// node.
func confine(opts *node.Setup, t trees) error {
	if opts.Root == "" {
		return nil
	}
	cl, err := flags.Parse(opts.Args, opts.Version)
	if err != nil {
		return err
	}
	p, ok := cl.Value("config-dir")
	if !ok || p == "" {
		return nil
	}
	dir, _, err := statNode(opts.Root, nodePathIn(opts.Root, p))
	if err != nil {
		return nil // the layering names it
	}
	tree, err := t.dropins(opts.Root, dir)
	if err != nil {
		return err
	}
	for _, f := range tree[1:] {
		if f.resolved != "" {
			return fmt.Errorf("%s is a symbolic link to %s: under --root a drop-in is read only when no link leads to it (the link would be followed on this machine, not on the node)", f.path, f.resolved)
		}
	}
	return nil
}
