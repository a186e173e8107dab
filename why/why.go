// Package why explains why a kubelet did not start or died: it reads the
// kubelet's last words since its last start (the unit's journal, or a log
// file), classifies them with the table of start-up refusals (package
// startup) and ties the class to the field or flag concerned, its
// effective value and where that came from on the node, and the fix.
package why

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

// Options say where to read the kubelet's last start and its setup.
type Options struct {
	// Setup is the node's kubelet setup (root, version, command line), as
	// effective reads it.
	Setup node.Source
	// Unit is the kubelet's systemd unit (kubelet.service); its journal
	// is read, under Setup.Root the image's journal files.
	Unit string
	// KubeletLog is a log file of a kubelet run without systemd, read
	// instead of the journal.
	KubeletLog string
	// Journalctl is the journalctl program (default: journalctl on PATH;
	// never the image's).
	Journalctl string
	// Timeout and MaxBytes bound the reading (defaults DefaultTimeout,
	// DefaultMaxBytes).
	Timeout  time.Duration
	MaxBytes int64
}

// Explain reads the kubelet's last start and explains how it ended.
func Explain(ctx context.Context, opts Options) (*Explanation, error) {
	if opts.Unit == "" {
		opts.Unit = "kubelet.service"
	}
	if !strings.Contains(opts.Unit, ".") {
		opts.Unit += ".service"
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	r := newRun(exitMessages())
	var end Ending
	var in Input
	var proc *Process
	var notes []string
	if opts.KubeletLog != "" {
		var err error
		if in, r, err = readLog(opts.KubeletLog, opts.MaxBytes, r.exits); err != nil {
			return nil, err
		}
		end = endingOf(r, nil)
		proc = &Process{PID: r.pid, Lines: r.lines, PanicLines: r.panicLines}
		notes = append(notes, "read from a log file: unlike the journal, it cannot tell the kubelet's lines from lines another process wrote into it")
	} else {
		j := &journal{unit: opts.Unit, program: firstOf(opts.Journalctl, "journalctl"), deadline: time.Now().Add(opts.Timeout), budget: opts.MaxBytes, comm: "kubelet"}
		if opts.Setup.Root != "" {
			files, err := imageJournal(opts.Setup.Root)
			if err != nil {
				return nil, err
			}
			j.files = files
		}
		ls, _, err := j.findLastStart(ctx)
		if err != nil {
			return nil, err
		}
		if ls == nil {
			return nil, fmt.Errorf("the journal has no record of a process of %s (give --unit, or --kubelet-log for a kubelet without systemd)", opts.Unit)
		}
		if err := j.readRun(ctx, ls, r); err != nil {
			return nil, err
		}
		sys, err := j.systemdAfter(ctx, ls)
		if err != nil {
			return nil, err
		}
		end = endingOf(r, sys)
		end.Unit = opts.Unit
		proc = &Process{PID: ls.pid, Invocation: ls.invocation, Exit: end.Exit, Lines: r.lines, PanicLines: r.panicLines}
		if !ls.started.IsZero() {
			started := ls.started
			proc.Started = &started
		}
		for _, s := range sys {
			if s.UnitResult != "" {
				proc.Result = s.UnitResult
			}
		}
		in = Input{Kind: "journal", Unit: opts.Unit, Trusted: true, Bytes: j.read, Skipped: j.skipped, Truncated: j.truncated}
		notes = j.notes
	}
	v, err := versionOf(opts.Setup, r)
	if err != nil {
		return nil, err
	}
	x := ExplainEnding(v, end, opts.Setup)
	x.Input, x.Process = in, proc
	x.Notes = append(x.Notes, notes...)
	confirm(x, r.effective)
	return x, nil
}

// exitMessages are the messages any supported kubelet logs right before
// it exits.
func exitMessages() map[string]bool {
	out := map[string]bool{}
	for _, v := range schema.Versions() {
		for _, w := range v.ExitMessages() {
			out[w.Format] = true
		}
	}
	return out
}

// versionOf is the kubelet version to explain as: the one given, else the
// one the kubelet logged at its start, else the node's.
func versionOf(src node.Source, r *run) (*schema.Version, error) {
	if src.KubeletVersion != "" || src.VersionSet {
		return node.ResolveVersion(src)
	}
	if r.version != "" {
		if v, err := schema.Resolve(r.version); err == nil {
			return v, nil
		}
	}
	return node.ResolveVersion(src)
}

// endingOf reads how the run ended from the kubelet's lines and systemd's
// records about the unit since the start.
func endingOf(r *run, sys []*record) Ending {
	end := Ending{Fatal: r.fatal, Healthz: r.healthz, LastError: r.lastError, Running: true}
	for _, s := range sys {
		msg := s.message
		switch {
		case s.MessageID == msgUnitStopping || strings.HasPrefix(msg, "Stopping "):
			if end.Exit == "" {
				end.Stopped = true
			}
		case s.MessageID == msgOOM || strings.Contains(msg, "killed by the OOM killer") || s.UnitResult == "oom-kill":
			end.OOM = true
		}
		if code, status, ok := mainExit(s); ok && end.Exit == "" {
			end.Code, end.Status = code, status
			end.Exit = code + ", status=" + status
			end.Running = false
		}
	}
	if end.Fatal != nil {
		end.Running = false
	}
	return end
}

// systemd's message ids (sd-messages.h).
const (
	msgUnitStopping = "de5b426a63be47a7b6ac3eaac82e2f6f"
	msgOOM          = "fe6faa94e7774663a0da52717891d8ef"
	msgProcessExit  = "98e322203f7a4ed290d09fe03c09fe15"
)

// mainExit reads systemd's "Main process exited, code=killed,
// status=9/KILL" (the fields when it gives them).
func mainExit(s *record) (code, status string, ok bool) {
	if s.MessageID == msgProcessExit && s.ExitCode != "" && strings.Contains(s.message, "Main process") {
		return s.ExitCode, s.ExitStatus, true
	}
	i := strings.Index(s.message, "Main process exited, code=")
	if i < 0 {
		return "", "", false
	}
	rest := s.message[i+len("Main process exited, code="):]
	code, rest, _ = strings.Cut(rest, ",")
	if j := strings.Index(rest, "status="); j >= 0 {
		status = strings.TrimSpace(rest[j+len("status="):])
	}
	return code, status, true
}

// confirm compares the explained field with what the kubelet logged as its
// effective configuration (1.37's "Effective KubeletConfiguration").
func confirm(x *Explanation, logged string) {
	if logged == "" {
		return
	}
	c := &Confirmation{Logged: true, Note: "the kubelet logs this before validation and before it takes the cgroup driver from the container runtime: it confirms the files and flags, not what /configz would serve"}
	x.Confirmation = c
	var doc map[string]any
	if err := yaml.Unmarshal([]byte(logged), &doc); err != nil {
		c.Note = "the kubelet's logged configuration does not parse: " + err.Error()
		return
	}
	if x.Field == "" {
		return
	}
	var cur any = doc
	for _, part := range splitPath(x.Field) {
		obj, ok := cur.(map[string]any)
		if !ok {
			cur = nil
			break
		}
		cur = obj[part]
	}
	c.Field = x.Field
	if cur == nil {
		c.KubeletValue = ""
	} else if s, ok := cur.(string); ok {
		c.KubeletValue = s
	} else {
		b, _ := json.Marshal(cur)
		c.KubeletValue = string(b)
	}
	c.Agrees = c.KubeletValue == x.Value
	if !c.Agrees {
		x.Notes = append(x.Notes, fmt.Sprintf("the kubelet logged %s: %s, kubeletcfg reads %q from the node's files now: they changed since it started, or kubeletcfg reads them differently", x.Field, c.KubeletValue, x.Value))
	}
}
