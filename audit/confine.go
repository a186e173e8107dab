package audit

import (
	"fmt"
	"path/filepath"

	"github.com/kubeletcfg/kubeletcfg/dropins"
	"github.com/kubeletcfg/kubeletcfg/flags"
)

// maxConfigSize bounds a config file or drop-in the audit lets be read.
const maxConfigSize = 16 << 20

// confine checks, before the setup is layered, that the config file and the
// drop-ins it names can be read safely: under --root none of them may be
// reached through a symbolic link (the layering reads host paths, and a
// link would lead out of the node image), and none may be larger than
// maxConfigSize or other than a regular file.
func confine(opts dropins.Options) error {
	cl, err := flags.Parse(opts.Args, opts.Version)
	if err != nil {
		return err
	}
	s := &state{opts: &Options{Setup: opts}}
	var files []nodeFile
	if p, ok := cl.Value("config"); ok && p != "" {
		files = append(files, lookFile(opts.Root, s.nodePath(p)))
	}
	if p, ok := cl.Value("config-dir"); ok && p != "" {
		tree, err := dropinTree(opts.Root, s.nodePath(p))
		if err != nil {
			return err
		}
		files = append(files, tree...)
	}
	for _, f := range files {
		if f.resolved != "" && opts.Root != "" {
			return fmt.Errorf("%s is a symbolic link to %s: under --root the kubelet's config files are read only when no link leads to them (a link could lead out of %s)", f.path, f.resolved, filepath.Clean(opts.Root))
		}
		if f.err != nil {
			continue // the layering names it
		}
		if !f.dir && !f.regular {
			return fmt.Errorf("%s: not a regular file", f.path)
		}
		if !f.dir && f.size > maxConfigSize {
			return fmt.Errorf("%s: %d bytes, larger than the %d a kubelet config file may have here", f.path, f.size, maxConfigSize)
		}
	}
	return nil
}
