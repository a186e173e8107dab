package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// A run builds only the command it runs: the table names every command as
// it calls itself, and each command's help, flag errors and completion are
// the same with the others built or not.
func TestRootForOneCommandAsAll(t *testing.T) {
	if n := len(newRoot(streams{}).Commands()); n < len(commands) {
		t.Fatalf("%d commands built, %d in the table", n, len(commands))
	}
	execute := func(build func(streams) *cobra.Command, args []string) string {
		var out, errOut bytes.Buffer
		root := build(streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
		root.SetArgs(args)
		_, _ = root.ExecuteC()
		return out.String() + "\n--- stderr:\n" + errOut.String()
	}
	for _, c := range commands {
		if got := c.make(streams{}).Name(); got != c.name {
			t.Errorf("the table's %q builds the command %q", c.name, got)
		}
		for _, args := range [][]string{{c.name, "--help"}, {c.name, "--no-such-flag"}, {"__complete", c.name, "--"}} {
			if args[0] == c.name {
				if n := len(newRootFor(streams{}, args).Commands()); n > 3 {
					t.Errorf("%v: %d commands built for one", args, n)
				}
			}
			want := execute(newRoot, args)
			got := execute(func(s streams) *cobra.Command { return newRootFor(s, args) }, args)
			if args[1] == "--help" && !strings.Contains(want, "Usage:") {
				t.Errorf("%v: no help printed: %s", args, want)
			}
			if got != want {
				t.Errorf("%v: the output with one command built differs:\n%s\n--- with all:\n%s", args, got, want)
			}
		}
	}
}
