package main

import (
	"fmt"

	"github.com/kubeletcfg/kubeletcfg/fleet"
)

// printFleetRollout prints the last kubeletcfg rollout's state under the
// fleet: how far it got, and each node that did not take its change.
func printFleetRollout(s streams, rep *fleet.Report) {
	r := rep.Rollout
	if r == nil {
		return
	}
	fmt.Fprintln(s.Out, r)
	for _, n := range r.NotTaken {
		fmt.Fprintf(s.Out, "  %s (wave %s): %s: %s\n", n.Name, n.Wave, n.Outcome, n.Cause)
	}
}
