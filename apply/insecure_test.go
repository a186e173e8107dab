package apply

import (
	"context"
	"strings"
	"testing"
)

// A change that makes a CIS kubelet check fail that passes now is refused
// before anything is written, shown by a dry run, and applied when allowed.
func TestRunRefusesAnInsecureChange(t *testing.T) {
	n := newNode(t, nil)
	const open = "maxPods: 100\nreadOnlyPort: 10255\n"
	out, err := n.apply(t, open)
	if err == nil || !strings.Contains(err.Error(), "CIS 4.2.4") || !strings.Contains(err.Error(), "--allow-insecure") {
		t.Fatalf("opening the read-only port: %v, want a refusal naming CIS 4.2.4 and --allow-insecure", err)
	}
	if out == nil || len(out.Breaks) != 1 || out.Breaks[0].ID != "4.2.4" || out.Applied {
		t.Errorf("outcome %+v", out)
	}
	n.configIs(t, "maxPods: 100\n")
	n.noJournal(t)

	o := n.opts
	o.DryRun, o.NewFile = true, []byte(baseConfig+open)
	if out, err := Run(context.Background(), o); err != nil || len(out.Breaks) != 1 || out.Applied {
		t.Errorf("dry run: %+v %v, want the broken check and nothing applied", out, err)
	}

	// A change that breaks nothing, or one that fixes a failure, passes.
	if out, err := n.apply(t, "maxPods: 101\n"); err != nil || !out.Applied || len(out.Breaks) != 0 {
		t.Fatalf("a harmless change: %+v %v", out, err)
	}
	n.opts.AllowInsecure = true
	if out, err := n.apply(t, open); err != nil || !out.Applied || len(out.Breaks) != 1 {
		t.Fatalf("with AllowInsecure: %+v %v", out, err)
	}
	n.configIs(t, open)
	n.opts.AllowInsecure = false
	if out, err := n.apply(t, "maxPods: 100\n"); err != nil || !out.Applied || len(out.Breaks) != 0 {
		t.Fatalf("closing the port again: %+v %v", out, err)
	}
}
