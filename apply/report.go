package apply

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"
)

// Outcomes of an apply, as a Report names them, besides a record's
// OutcomeApplied (the change runs, confirmed) and OutcomeRolledBack
// (applied, failed, the old configuration back and healthy).
const (
	OutcomeUnchanged = "unchanged" // nothing to change: nothing written, no restart
	OutcomeRefused   = "refused"   // nothing written (invalid, locked, a drain that could not finish, ...)
	OutcomeFailed    = "failed"    // written, and neither confirmed nor cleanly rolled back: look at the node
)

// MaxReport is the most a Report takes encoded: a pod's termination
// message holds 4 KiB.
const MaxReport = 4096

// Report is an apply's outcome in a few fields, for a caller that reads no
// log: a rollout's Job writes it to its pod's termination message, and the
// rollout takes the node's outcome from it — never from the exit code
// alone (2 is both a refusal and a usage error, 0 both applied and
// unchanged).
type Report struct {
	Version int    `json:"version"`
	Node    string `json:"node"`
	Outcome string `json:"outcome"`
	// Change is ChangeHash of the change apply was given.
	Change string    `json:"change,omitempty"`
	Time   time.Time `json:"time"`
	// Cause is why it was refused, rolled back or failed.
	Cause string `json:"cause,omitempty"`
	Exit  int    `json:"exit"`
	// BackupN is the record of the old files (kubeletcfg backups).
	BackupN int `json:"backupN,omitempty"`
	// HealthyAfter is seconds from the restart to the healthy verdict.
	HealthyAfter float64 `json:"healthyAfterSeconds,omitempty"`
	// LeftCordoned is Outcome.LeftCordoned: the node stays cordoned, why,
	// and what lifts it.
	LeftCordoned string `json:"leftCordoned,omitempty"`
}

// maxLeftCordoned bounds Report.LeftCordoned (kubeletcfg's own sentence).
const maxLeftCordoned = 512

// ReportOf sums an apply's result up: out and err as Run returned them,
// exit the process's exit code.
func ReportOf(node, change string, out *Outcome, err error, exit int, now time.Time) Report {
	r := Report{Version: 1, Node: node, Change: change, Time: now.UTC().Truncate(time.Second), Exit: exit}
	switch {
	case err == nil && out != nil && out.Applied:
		r.Outcome = OutcomeApplied
	case err == nil:
		r.Outcome = OutcomeUnchanged
	case errors.Is(err, ErrRolledBack):
		r.Outcome, r.Cause = OutcomeRolledBack, out.Cause
	case out == nil || (!out.Applied && !out.RolledBack):
		// Nothing was written, or it was undone before any restart.
		r.Outcome = OutcomeRefused
	default:
		r.Outcome = OutcomeFailed
	}
	if out != nil {
		r.BackupN = out.BackupN
		r.LeftCordoned = out.LeftCordoned
		if len(r.LeftCordoned) > maxLeftCordoned {
			cut := maxLeftCordoned
			for cut > 0 && !utf8.RuneStart(r.LeftCordoned[cut]) {
				cut--
			}
			r.LeftCordoned = r.LeftCordoned[:cut] + "…"
		}
		if r.Outcome == OutcomeApplied {
			r.HealthyAfter = out.HealthyAfter.Round(time.Millisecond).Seconds()
		}
	}
	if r.Cause == "" && err != nil {
		r.Cause = err.Error()
	}
	return r
}

// Encode is the report as JSON, at most MaxReport bytes: the cause is
// shortened to fit.
func (r Report) Encode() []byte {
	for {
		b, err := json.Marshal(r)
		if err != nil {
			return []byte(`{"version":1,"outcome":"failed","cause":"the report could not be encoded"}`)
		}
		if len(b) <= MaxReport || r.Cause == "" {
			return b
		}
		cut := len(r.Cause) - (len(b) - MaxReport) - 8
		if cut < 0 {
			cut = 0
		}
		for cut > 0 && !utf8.RuneStart(r.Cause[cut]) {
			cut--
		}
		r.Cause = r.Cause[:cut] + "…"
	}
}

// DecodeReport reads a Report (a termination message).
func DecodeReport(b []byte) (Report, error) {
	var r Report
	if len(b) > MaxReport {
		return r, fmt.Errorf("an apply report of %d bytes (at most %d)", len(b), MaxReport)
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("not an apply report: %w", err)
	}
	switch r.Outcome {
	case OutcomeApplied, OutcomeUnchanged, OutcomeRolledBack, OutcomeRefused, OutcomeFailed:
	default:
		return r, fmt.Errorf("an apply report with outcome %q", r.Outcome)
	}
	return r, nil
}

// ChangeFile is one input of a change: its kind (file, dropin, patch), the
// drop-in's name, its bytes.
type ChangeFile struct {
	Kind, Name string
	Content    []byte
}

// ChangeHash names a change by its inputs ("sha256:HEX"): a rollout and
// the apply it runs on each node compute it alike.
func ChangeHash(files ...ChangeFile) string {
	h := sha256.New()
	for _, f := range files {
		fmt.Fprintf(h, "%s\x00%s\x00%d\x00", f.Kind, f.Name, len(f.Content))
		h.Write(f.Content)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
