package kubeletapi

import (
	"strings"
	"testing"
	"time"
)

func TestProveRestart(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 13, 32, 2, 0, time.UTC)
	st := func(at time.Time, v string) *Status { return &Status{StartTime: at, BinaryVersion: v} }
	for _, tc := range []struct {
		name          string
		before, after *Status
		pinned        time.Time
		proven        bool
		err, said     string
	}{
		{"moved", st(t0, "1.37.2"), st(t0.Add(5*time.Second), "1.37.2"), t0.Add(5*time.Second + 300*time.Millisecond), true, "", "after the old kubelet's"},
		{"same second, pinned", st(t0, "1.37.2"), st(t0, "1.37.2"), t0.Add(800 * time.Millisecond), false, "", "proven by the pinned process"},
		{"same second, start of the pinned process unknown", st(t0, "1.37.2"), st(t0, "1.37.2"), time.Time{}, false, "", "proven by the pinned process"},
		{"went back", st(t0, "1.37.2"), st(t0.Add(-time.Minute), "1.37.2"), time.Time{}, false, "before the old one", ""},
		{"another process answers", st(t0, "1.37.2"), st(t0.Add(10*time.Second), "1.37.2"), t0.Add(30 * time.Second), false, "not the process kubeletcfg started", ""},
		{"no old statusz", nil, st(t0, "1.37.2"), t0.Add(400 * time.Millisecond), true, "", "as the process kubeletcfg started"},
		{"new binary", st(t0, "1.36.3"), st(t0.Add(3*time.Second), "1.37.2"), time.Time{}, true, "", "binary version 1.37.2, was 1.36.3"},
	} {
		r, err := ProveRestart(tc.before, tc.after, tc.pinned)
		if (err != nil) != (tc.err != "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
			continue
		}
		if err == nil && (r.Proven != tc.proven || !strings.Contains(r.Said, tc.said)) {
			t.Errorf("%s: %+v", tc.name, r)
		}
	}
}
