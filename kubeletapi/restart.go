package kubeletapi

import (
	"fmt"
	"time"
)

// Restart is what /statusz says of a restart: the kubelet's start time and
// binary version before and after, against the process kubeletcfg pinned.
type Restart struct {
	Before *Status `json:"before,omitempty"`
	After  *Status `json:"after"`
	// Proven says the start time moved past the old one (or, with no old
	// one, matches the pinned process's to the second).
	Proven bool `json:"proven"`
	// Said explains, one sentence.
	Said string `json:"said"`
}

// ProveRestart judges /statusz before (nil if not read) and after a
// restart that pinned a new kubelet process; pinned is that process's start
// time (zero if unknown). /statusz's times have one-second resolution: a
// restart within the second the old process started cannot move it, and is
// proven by the pinned process alone. The error is a contradiction: the
// kubelet answering is not the process that was started.
func ProveRestart(before, after *Status, pinned time.Time) (Restart, error) {
	r := Restart{Before: before, After: after}
	at := after.StartTime.UTC().Format(time.RFC3339)
	if !pinned.IsZero() {
		gap := after.StartTime.Sub(pinned.Truncate(time.Second))
		if gap < -time.Second || gap > time.Second {
			return r, fmt.Errorf("the kubelet answering /statusz started at %s, not the process kubeletcfg started (%s)", at, pinned.UTC().Format(time.RFC3339Nano))
		}
	}
	switch {
	case before == nil && pinned.IsZero():
		r.Said = "started at " + at + " (no earlier start time to compare)"
	case before == nil:
		r.Proven, r.Said = true, "started at "+at+", as the process kubeletcfg started"
	case after.StartTime.After(before.StartTime):
		r.Proven, r.Said = true, fmt.Sprintf("started at %s, after the old kubelet's %s", at, before.StartTime.UTC().Format(time.RFC3339))
	case after.StartTime.Equal(before.StartTime):
		r.Said = "the start time did not move (" + at + ", one-second resolution): a restart within the second is proven by the pinned process, not by /statusz"
	default:
		return r, fmt.Errorf("the kubelet answering /statusz started at %s, before the old one (%s)", at, before.StartTime.UTC().Format(time.RFC3339))
	}
	if before != nil && before.BinaryVersion != after.BinaryVersion {
		r.Said += fmt.Sprintf("; binary version %s, was %s", after.BinaryVersion, before.BinaryVersion)
	} else {
		r.Said += "; binary version " + after.BinaryVersion
	}
	return r, nil
}
