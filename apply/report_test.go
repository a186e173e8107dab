package apply

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestReportOf(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC)
	for _, c := range []struct {
		name    string
		out     *Outcome
		err     error
		outcome string
		cause   string
	}{
		{"applied", &Outcome{Applied: true, HealthyAfter: 1234 * time.Millisecond}, nil, OutcomeApplied, ""},
		{"nothing to change", &Outcome{}, nil, OutcomeUnchanged, ""},
		{"rolled back", &Outcome{Applied: true, RolledBack: true, Cause: "kubelet exited"}, fmt.Errorf("%w: kubelet exited", ErrRolledBack), OutcomeRolledBack, "kubelet exited"},
		{"invalid, nothing planned", nil, errors.New("plan: maxPods: must be positive"), OutcomeRefused, "plan: maxPods: must be positive"},
		{"drain failed before the write", &Outcome{ID: "x"}, errors.New("before the change (nothing was written): drain: PDB"), OutcomeRefused, "before the change (nothing was written): drain: PDB"},
		{"rollback unhealthy too", &Outcome{Applied: true, RolledBack: true}, errors.New("rolled back to b, but the kubelet is not healthy on it either"), OutcomeFailed, "rolled back to b, but the kubelet is not healthy on it either"},
		{"written, then the watch errs", &Outcome{Applied: true}, errors.New("rollback: EIO"), OutcomeFailed, "rollback: EIO"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := ReportOf("n1", "sha256:x", c.out, c.err, 9, now)
			if r.Outcome != c.outcome || r.Cause != c.cause || r.Exit != 9 || r.Node != "n1" || !r.Time.Equal(now.Truncate(time.Second)) {
				t.Errorf("got %+v, want outcome %q cause %q", r, c.outcome, c.cause)
			}
			back, err := DecodeReport(r.Encode())
			if err != nil || back.Outcome != r.Outcome || back.Cause != r.Cause {
				t.Errorf("decoded %+v, %v", back, err)
			}
		})
	}
	// Interrupted (the pod's SIGTERM) after the drain, nothing written, the
	// uncordon refused: refused, and the cordon left said.
	left := "kubeletcfg's cordon stays: uncordon failed; kubectl uncordon n"
	r := ReportOf("n", "", &Outcome{ID: "x", Interrupted: true, LeftCordoned: left}, fmt.Errorf("%w (terminated)", ErrInterrupted), 2, now)
	if back, err := DecodeReport(r.Encode()); err != nil || back.Outcome != OutcomeRefused || back.LeftCordoned != left || !strings.Contains(back.Cause, "interrupted") {
		t.Errorf("interrupted, left cordoned: %+v %v", back, err)
	}
	r = ReportOf("n", "", &Outcome{LeftCordoned: strings.Repeat("é", 5000)}, errors.New("x"), 2, now)
	if len(r.Encode()) > MaxReport || len(r.LeftCordoned) > maxLeftCordoned+len("…") {
		t.Errorf("a long leftCordoned: %d bytes encoded", len(r.Encode()))
	}
	if r := ReportOf("n", "", &Outcome{Applied: true, HealthyAfter: 1234 * time.Millisecond}, nil, 0, now); r.HealthyAfter != 1.234 {
		t.Errorf("healthy after %v, want 1.234", r.HealthyAfter)
	}
}

// A pod's termination message holds 4 KiB: a long cause is cut, in a whole
// rune, and the report stays JSON.
func TestReportFitsATerminationMessage(t *testing.T) {
	r := Report{Version: 1, Node: "n", Outcome: OutcomeFailed, Cause: strings.Repeat("é", 5000)}
	b := r.Encode()
	if len(b) > MaxReport {
		t.Fatalf("%d bytes", len(b))
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil || !strings.HasSuffix(back.Cause, "…") || !strings.HasPrefix(back.Cause, "éé") {
		t.Errorf("%v: %q", err, back.Cause)
	}
	for _, bad := range []string{`{"outcome":"maybe"}`, `not json`, strings.Repeat("x", MaxReport+1)} {
		if _, err := DecodeReport([]byte(bad)); err == nil {
			t.Errorf("%.40q decoded", bad)
		}
	}
}

func TestChangeHash(t *testing.T) {
	a := ChangeHash(ChangeFile{Kind: "dropin", Name: "50-a.conf", Content: []byte("maxPods: 1\n")})
	same := ChangeHash(ChangeFile{Kind: "dropin", Name: "50-a.conf", Content: []byte("maxPods: 1\n")})
	for _, other := range []string{
		ChangeHash(ChangeFile{Kind: "file", Content: []byte("maxPods: 1\n")}),
		ChangeHash(ChangeFile{Kind: "dropin", Name: "50-b.conf", Content: []byte("maxPods: 1\n")}),
		ChangeHash(ChangeFile{Kind: "dropin", Name: "50-a.conf", Content: []byte("maxPods: 2\n")}),
		// The fields are delimited: moving bytes between them changes it.
		ChangeHash(ChangeFile{Kind: "dropin", Name: "50-a.confm", Content: []byte("axPods: 1\n")}),
	} {
		if other == a {
			t.Errorf("two changes hash alike: %s", a)
		}
	}
	if a != same || !strings.HasPrefix(a, "sha256:") || len(a) != len("sha256:")+64 {
		t.Errorf("%s vs %s", a, same)
	}
}
