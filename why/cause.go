package why

import (
	"context"
	"time"

	"github.com/kubeletcfg/kubeletcfg/node"
)

// Restarted is a kubelet process apply or recover restarted, and where its
// words are: the unit's journal (Unit and PID, with the unit's Invocation
// when known: journald's own fields select that process's records and no
// other's), or Lines, what it wrote to its log file (a restart command's
// --kubelet-log), already kept to its own by their klog header's PID.
type Restarted struct {
	Unit       string
	PID        int
	Invocation string
	// Lines, when not nil, are read instead of the journal. A log file
	// cannot tell the kubelet's lines from lines another process wrote
	// into it.
	Lines []string
	// Code and Status are how it ended as systemd recorded it (Code
	// "exited", "killed", "dumped"; Status "1", "9"), when the journal
	// does not say; "" when not known.
	Code, Status string
	// Journalctl is the journalctl program (default: on PATH).
	Journalctl string
}

// causeTimeout and causeBytes bound reading the journal of one restarted
// process: it ran from the restart to the end of apply's watch.
const (
	causeTimeout = 10 * time.Second
	causeBytes   = 8 << 20
)

// Cause explains why a kubelet restarted on new (or restored) files failed:
// what its own process said since the restart and how it ended, tied to
// the field or flag, its value and origin in the layers it was started
// with (l; nil: the node's setup read from src now), and the fix. It is the
// one producer of the cause apply's rollback and recover report (and so
// the Ansible module, which reads apply -o json).
func Cause(ctx context.Context, l *Layers, src node.Source, p Restarted) *Explanation {
	r := newRun(exitMessages())
	in := Input{Kind: "log"}
	var sys []*record
	var notes []string
	var started *time.Time
	if p.Lines == nil && p.Unit != "" && p.PID > 0 {
		j := &journal{unit: p.Unit, program: firstOf(p.Journalctl, "journalctl"), deadline: time.Now().Add(causeTimeout), budget: causeBytes, comm: "kubelet"}
		ls := &lastStart{pid: p.PID, invocation: p.Invocation}
		if err := j.readRun(ctx, ls, r); err != nil {
			notes = append(notes, "the kubelet's journal: "+err.Error())
		} else if s, err := j.systemdAfter(ctx, ls); err == nil {
			sys = s
		}
		if !ls.started.IsZero() {
			started = &ls.started
		}
		in = Input{Kind: "journal", Unit: p.Unit, Trusted: true, Bytes: j.read, Skipped: j.skipped, Truncated: j.truncated}
		notes = append(notes, j.notes...)
	} else if p.Lines != nil {
		for _, line := range p.Lines {
			r.line(line)
		}
		r.end()
		notes = append(notes, "read from the kubelet's log file: unlike the journal, it cannot tell the kubelet's lines from lines another process wrote into it")
	} else {
		in.Kind = "none"
		notes = append(notes, "no log of the kubelet to read (with a restart command, give --kubelet-log)")
	}
	end := endingOf(r, sys)
	if end.Exit == "" && p.Code != "" {
		end.Code, end.Status = p.Code, p.Status
		end.Exit = p.Code + ", status=" + p.Status
		end.Running = false
	}
	end.Unit = p.Unit
	var x *Explanation
	if l != nil {
		x = explainOn(l, end)
	} else {
		v, err := versionOf(src, r)
		if err != nil {
			x = &Explanation{Version: ShapeVersion, Class: "unknown", Kind: "unknown", Title: "the kubelet's version: " + err.Error(),
				Words: end.LastError, Fix: "read the kubelet's log; kubeletcfg does not guess"}
			if end.Fatal != nil {
				x.Words = end.Fatal.Words
			}
		} else {
			x = ExplainEnding(v, end, src)
		}
	}
	pid := p.PID
	if pid == 0 {
		pid = r.pid
	}
	x.Process = &Process{PID: pid, Invocation: p.Invocation, Started: started, Exit: end.Exit, Lines: r.lines, PanicLines: r.panicLines}
	x.Input = in
	x.Notes = append(x.Notes, notes...)
	confirm(x, r.effective)
	return x
}

// Failed says whether an explanation found something to say of a failure:
// the kubelet's words, or how it ended.
func (e *Explanation) Failed() bool {
	return e != nil && e.Class != "none"
}

// explainOn explains an ending on layers already read.
func explainOn(l *Layers, end Ending) *Explanation {
	x := &explainer{v: l.Version, l: l, unit: end.Unit, values: map[string]string{"version": l.Version.Minor},
		e: &Explanation{Version: ShapeVersion, KubeletVersion: l.Version.Minor}}
	x.explain(end)
	return x.e
}
