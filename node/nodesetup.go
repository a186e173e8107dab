package node

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"

	"github.com/kubeletcfg/kubeletcfg/criruntime"
	"github.com/kubeletcfg/kubeletcfg/schema"
	"github.com/kubeletcfg/kubeletcfg/warning"
)

// Setup is a node's kubelet setup: the kubelet version it is read as, the
// root of the node's tree, and the kubelet's command line with where each
// argument was written and the environment the kubelet runs with.
type Setup struct {
	// Kubelet is the command line. Read from the node's files, it has each
	// argument's source, the environment and the files read; given
	// directly, only Args.
	Kubelet
	Version *schema.Version
	// Root is the root of an offline node image ("" for the live node).
	Root string
	// FromNode says the command line was read from the node's files (its
	// unit, or the files of Source.From), not given directly.
	FromNode bool
	// Dir is the kubelet's working directory, against which relative
	// --config and --config-dir paths resolve: "" is kubeletcfg's own on
	// the live node, / under Root (a systemd service runs in /).
	Dir string
	// Runtime, when set, reads what the container runtime at an endpoint
	// answers the kubelet (criruntime.Ask): the effective configuration
	// then says which cgroup driver the kubelet runs, and why.
	Runtime criruntime.Asker
}

// Given is a setup given directly: kubelet version v started with args,
// in kubeletcfg's own environment.
func Given(v *schema.Version, args ...string) *Setup {
	return &Setup{Version: v, Kubelet: Kubelet{Args: args}}
}

// Environ is how the kubelet's environment is read: the one its unit
// gives it when the command line was read from the node (or Env when
// given), else kubeletcfg's own.
func (s *Setup) Environ() func(string) (string, bool) {
	if s.FromNode || s.Env != nil {
		return s.Kubelet.LookupEnv
	}
	return os.LookupEnv
}

// Source says where a setup is read from.
type Source struct {
	// Root is the root of an offline node image ("" for the live node).
	Root string
	// KubeletVersion is the version to read the setup as (1.31, 1.31.4 or
	// v1.31.4). Without it (VersionSet false) the node's kubelet says,
	// else the newest supported version is taken, with a note; VersionSet
	// with an empty KubeletVersion is refused.
	KubeletVersion string
	VersionSet     bool
	// Args is the kubelet's command line given directly. It is used when
	// it has words or when Dashed (a bare -- is an empty command line);
	// otherwise the command line is read from From, else from the node's
	// kubelet.service.
	Args   []string
	Dashed bool
	// From are the files that hold the kubelet's flags, in command-line
	// order (units and environment files, see FromFiles).
	From []string
	// Notes receives what the reader found out on its way: where the
	// version and the command line came from, and the command line's
	// warnings. Nil for none.
	Notes io.Writer
}

// ReadSetup reads a node's kubelet setup: the version first, then the
// command line.
func ReadSetup(src Source) (*Setup, error) {
	v, err := ResolveVersion(src)
	if err != nil {
		return nil, err
	}
	return ReadSetupAs(v, src)
}

// ReadSetupAs reads a node's kubelet setup as kubelet version v (src's
// version is not looked at).
func ReadSetupAs(v *schema.Version, src Source) (*Setup, error) {
	s := &Setup{Version: v, Root: src.Root}
	if len(src.Args) > 0 || src.Dashed {
		s.Args = append([]string(nil), src.Args...)
		return s, nil
	}
	var k *Kubelet
	var err error
	if len(src.From) > 0 {
		k, err = FromFiles(src.Root, src.From)
	} else {
		k, err = DiscoverKubelet(src.Root)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the kubelet's command line (or give it after --): %w", err)
	}
	s.Kubelet, s.FromNode = *k, true
	if src.Notes != nil {
		fmt.Fprintf(src.Notes, "note: the kubelet's command line from %s\n", warning.Truncate(strings.Join(k.Files, ", "), 2000))
		warning.Print(src.Notes, k.Warnings)
	}
	return s, nil
}

// ResolveVersion picks the kubelet version of src: the one given, else the
// node's kubelet's, else the newest supported one (with a note).
func ResolveVersion(src Source) (*schema.Version, error) {
	if src.KubeletVersion != "" {
		return schema.Resolve(src.KubeletVersion)
	}
	if src.VersionSet {
		return nil, fmt.Errorf(`--kubelet-version "": give a version such as 1.31, or leave the flag out to use the node's`)
	}
	if src.Root != "" {
		if st, err := os.Stat(src.Root); err != nil || !st.IsDir() {
			var pe *os.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			} else if err == nil {
				err = syscall.ENOTDIR
			}
			return nil, fmt.Errorf("--root %s: %w", src.Root, err)
		}
	}
	found, err := KubeletVersion(src.Root)
	if err == nil {
		v, rerr := schema.Resolve(found)
		if rerr != nil {
			return nil, fmt.Errorf("the node's kubelet is %s: %w", found, rerr)
		}
		return v, nil
	}
	if !errors.Is(err, ErrNoKubelet) {
		// A kubelet is there but did not say its version: guessing another
		// version would check against the wrong rules.
		return nil, fmt.Errorf("%w (set --kubelet-version)", err)
	}
	v := schema.Newest()
	if src.Notes != nil {
		fmt.Fprintf(src.Notes, "note: %v; using kubelet %s (set --kubelet-version)\n", err, v.Minor)
	}
	return v, nil
}
