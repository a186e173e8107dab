// Package rollout applies one kubelet configuration change to many nodes
// through Kubernetes itself: one Job per node runs `kubeletcfg apply` in a
// privileged pod pinned to it, wave by wave (a canary, then batches, a soak
// between waves), and the rollout stops at the first node whose change is
// refused, rolled back or failed. One rollout runs at a time (a Lease); its
// progress lives in a ConfigMap, so that `--resume` continues one whose
// controlling process died.
package rollout

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kubeletcfg/kubeletcfg/apply"
	"github.com/kubeletcfg/kubeletcfg/config"
	"github.com/kubeletcfg/kubeletcfg/filecheck"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

// Kinds of change: apply's -f, --dropin NAME=FILE and --patch.
const (
	KindFile   = "file"
	KindDropin = "dropin"
	KindPatch  = "patch"
)

// Change is what the rollout applies on every node.
type Change struct {
	Kind string `json:"kind"`
	// Name is the drop-in's file name (KindDropin).
	Name string `json:"name,omitempty"`
	// File is where the change was read, named in its errors.
	File    string `json:"file"`
	Content []byte `json:"-"`
}

// Hash names the change as the apply on each node names it.
func (c Change) Hash() string {
	return apply.ChangeHash(apply.ChangeFile{Kind: c.Kind, Name: c.Name, Content: c.Content})
}

// secretKey is the change's key in the rollout's Secret, and its file name
// where the Jobs mount it.
const secretKey = "change.yaml"

// applyArgs are apply's flags that name the change, the file mounted at dir.
func (c Change) applyArgs(dir string) []string {
	path := filepath.Join(dir, secretKey)
	switch c.Kind {
	case KindDropin:
		return []string{"--dropin=" + c.Name + "=" + path}
	case KindPatch:
		return []string{"--patch=" + path}
	}
	return []string{"--filename=" + path}
}

func (c Change) check() error {
	switch c.Kind {
	case KindFile, KindPatch:
		if c.Name != "" {
			return fmt.Errorf("a %s change has no drop-in name", c.Kind)
		}
	case KindDropin:
		if c.Name != filepath.Base(c.Name) || filepath.Ext(c.Name) != ".conf" || strings.HasPrefix(c.Name, ".") {
			return fmt.Errorf("--dropin %q: a file name in the kubelet's --config-dir ending in .conf, not a path", c.Name)
		}
	default:
		return fmt.Errorf("a change of kind %q (file, dropin or patch)", c.Kind)
	}
	if len(c.Content) == 0 {
		return fmt.Errorf("%s: empty", c.File)
	}
	return nil
}

// ErrInvalid: the change is refused before any node is touched.
var ErrInvalid = errors.New("the change is refused")

// Validate judges the change as each kubelet minor among the nodes would,
// before anything runs: a config file (-f) as that kubelet's validation
// and start-up checks do; a drop-in or a patch by strict decoding (unknown
// and duplicate fields, types), its whole result being judged again by
// apply on each node against that node's files.
func (c Change) Validate(minors []string) error {
	if err := c.check(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	var problems []string
	for _, m := range minors {
		v, err := schema.Resolve(m)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		switch c.Kind {
		case KindFile:
			res := filecheck.Bytes(c.Content, filecheck.Options{File: c.File, Version: v})
			for _, f := range res.Errors {
				problems = append(problems, fmt.Sprintf("kubelet %s: %s", v.Minor, f))
			}
		default:
			doc, err := config.Decode(c.Content, config.DecodeOptions{File: c.File, Version: v, NoTyped: c.Kind == KindPatch, AnyTypeMeta: c.Kind == KindPatch})
			if err != nil {
				problems = append(problems, fmt.Sprintf("kubelet %s: %s", v.Minor, err))
				continue
			}
			for _, p := range doc.Errors() {
				problems = append(problems, fmt.Sprintf("kubelet %s: %s", v.Minor, p))
			}
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w:\n  %s", ErrInvalid, strings.Join(problems, "\n  "))
	}
	return nil
}

// minorsOf are the distinct kubelet minors of the nodes, in order.
func minorsOf(nodes []Node) []string {
	var out []string
	for _, n := range nodes {
		if !slices.Contains(out, n.Minor) {
			out = append(out, n.Minor)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return strings.Compare(a, b) })
	return out
}
