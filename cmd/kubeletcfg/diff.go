package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	"github.com/spf13/cobra"

	"github.com/kubeletcfg/kubeletcfg/config"
	"github.com/kubeletcfg/kubeletcfg/diff"
	"github.com/kubeletcfg/kubeletcfg/dropins"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

type diffFlags struct {
	versionFlags
	against string
	unified bool
	output  string
}

func newDiffCmd(s streams) *cobra.Command {
	f := &diffFlags{}
	cmd := &cobra.Command{
		Use:   "diff NEW [--against OLD]",
		Short: "Compare two configurations as the kubelet will run them, and say what each change takes",
		Long: `diff compares two KubeletConfiguration files as effective configurations of the
kubelet version (defaults applied, so maxPods: 110 against an absent maxPods is
no change) and lists every changed field with what it takes: a restart; a drain
and the removal of a state file (the kubelet refuses to start otherwise); a node
registration; a change of security posture; a matching container runtime.
OLD defaults to the node's /var/lib/kubelet/config.yaml (under --root).

Exit codes: 0 no change, 1 changes, 2 usage or I/O error.`,
		Example: `  kubeletcfg diff --kubelet-version 1.37 new-config.yaml
  kubeletcfg diff --kubelet-version 1.31 new.yaml --against old.yaml --unified
  kubeletcfg diff --kubelet-version 1.31 new.yaml --against old.yaml -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.output != "text" && f.output != "json" {
				return fmt.Errorf("--output %q: must be text or json", f.output)
			}
			v, err := f.resolve(s)
			if err != nil {
				return err
			}
			against := f.against
			if against == "" {
				against = filepath.Join(orSlash(f.root), "var/lib/kubelet/config.yaml")
			}
			old, err := effectiveOf(against, v)
			if err != nil {
				return err
			}
			nw, err := effectiveOf(args[0], v)
			if err != nil {
				return err
			}
			changes, err := diff.Compute(old.Config, nw.Config, v)
			if err != nil {
				return err
			}
			switch {
			case f.output == "json":
				if changes == nil {
					changes = []diff.Change{}
				}
				if err := writeJSON(s, map[string]any{"kubeletVersion": v.Minor, "old": against, "new": args[0], "changes": changes}); err != nil {
					return err
				}
			case f.unified:
				if err := printUnified(s, old, nw, against, args[0]); err != nil {
					return err
				}
			default:
				printChanges(s, changes)
			}
			if len(changes) > 0 {
				return errCheckFailed
			}
			return nil
		},
	}
	f.bind(cmd.Flags())
	cmd.Flags().StringVar(&f.against, "against", "", "the configuration to compare with (default: the node's /var/lib/kubelet/config.yaml)")
	cmd.Flags().BoolVar(&f.unified, "unified", false, "print a unified diff of the effective configurations")
	cmd.Flags().StringVarP(&f.output, "output", "o", "text", "output format: text or json")
	return cmd
}

func orSlash(root string) string {
	if root == "" {
		return "/"
	}
	return root
}

func effectiveOf(file string, v *schema.Version) (*dropins.Result, error) {
	return dropins.Effective(dropins.Options{Version: v, Args: []string{"--config=" + file}})
}

func printChanges(s streams, changes []diff.Change) {
	if len(changes) == 0 {
		fmt.Fprintln(s.Out, "no change")
		return
	}
	for _, c := range changes {
		var classes []string
		for _, cl := range c.Classes {
			classes = append(classes, string(cl))
		}
		extra := ""
		if c.StateFile != "" {
			extra = ", remove " + c.StateFile
		}
		fmt.Fprintf(s.Out, "%s: %s -> %s  [%s%s]\n", c.Path, diff.Value(c.Old), diff.Value(c.New), strings.Join(classes, ", "), extra)
	}
	fmt.Fprintf(s.Out, "%d changes\n", len(changes))
}

func printUnified(s streams, old, nw *dropins.Result, oldName, newName string) error {
	render := func(r *dropins.Result) (string, error) {
		raw, err := config.JSON(r.Config, r.Version)
		if err != nil {
			return "", err
		}
		out, err := config.Render(raw, "yaml")
		return string(out), err
	}
	a, err := render(old)
	if err != nil {
		return err
	}
	b, err := render(nw)
	if err != nil {
		return err
	}
	text, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{A: difflib.SplitLines(a), B: difflib.SplitLines(b), FromFile: oldName, ToFile: newName, Context: 3})
	if err != nil {
		return err
	}
	_, err = fmt.Fprint(s.Out, text)
	return err
}
