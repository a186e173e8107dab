package why

import (
	"strings"
)

// Limits on what is kept of one run (the rest is counted, not kept).
const (
	maxWords     = 256 << 10 // a fatal error's words
	maxEffective = 1 << 20   // the "Effective KubeletConfiguration" YAML
	maxPanicMsg  = 64 << 10  // a panic's message (its first lines)
)

// Fatal is how the kubelet ended, in its own words.
type Fatal struct {
	// How: "command-failed" (the error its command returned), "exit" (an
	// error it logged right before os.Exit), "panic", "runtime-fatal".
	How string `json:"how"`
	// Message is the log message ("command failed", "Failed to listen and
	// serve", "panic"), Words the error itself.
	Message string `json:"message"`
	Words   string `json:"words"`
}

// run is what one kubelet process said, as much as an explanation needs.
type run struct {
	pid       int
	lines     int
	version   string // kubeletVersion of the "Kubelet version" line
	effective string // the YAML of 1.37's "Effective KubeletConfiguration"
	fatal     *Fatal
	healthz   string // the error of "Failed to start healthz server"
	lastError string // the last error line, for when nothing else is found

	exits map[string]bool // messages logged right before os.Exit

	open      *entry // a klog entry whose multi-line value is being read
	inPanic   bool   // reading a panic's message
	panicDone bool   // its message is read; the trace follows
	panicMsg  strings.Builder
	// PanicLines counts the lines of a panic's trace (never kept).
	panicLines int
}

func newRun(exits map[string]bool) *run { return &run{exits: exits} }

// line takes the next line the process wrote.
func (r *run) line(s string) {
	r.lines++
	if r.open != nil {
		if r.open.multiline(s, limitFor(r.open)) {
			return
		}
		e := *r.open
		r.open = nil
		r.entry(e)
		if s == " >" {
			return
		}
	}
	if r.inPanic {
		r.panicLine(s)
		return
	}
	switch {
	case strings.HasPrefix(s, "panic: "):
		r.startPanic("panic", strings.TrimPrefix(s, "panic: "))
		return
	case strings.HasPrefix(s, "fatal error: "):
		r.startPanic("runtime-fatal", strings.TrimPrefix(s, "fatal error: "))
		return
	}
	e, open := parseKlog(s)
	if open {
		r.open = &e
		return
	}
	r.entry(e)
}

// limitFor bounds a multi-line value: the effective configuration may be
// large, anything else is an error's words.
func limitFor(e *entry) int {
	if e.Msg == "Effective KubeletConfiguration" {
		return maxEffective
	}
	return maxWords
}

// end is called when the process has no more lines.
func (r *run) end() {
	if r.open != nil {
		e := *r.open
		r.open = nil
		r.entry(e)
	}
	if r.inPanic {
		r.finishPanic()
	}
}

func (r *run) entry(e entry) {
	if e.Severity == 0 {
		return
	}
	if e.PID != 0 && r.pid == 0 {
		r.pid = e.PID
	}
	switch e.Msg {
	case "Kubelet version":
		r.version = e.KV["kubeletVersion"]
		return
	case "Effective KubeletConfiguration":
		r.effective = e.KV["config"]
		return
	case "Failed to start healthz server":
		r.healthz = bound(e.KV["err"], maxWords)
		return
	}
	if e.Severity != 'E' && e.Severity != 'F' {
		return
	}
	words := e.KV["err"]
	line := e.Msg
	if words != "" {
		line += ": " + words
	}
	r.lastError = bound(line, maxWords)
	switch {
	case e.Msg == "command failed":
		r.fatal = &Fatal{How: "command-failed", Message: e.Msg, Words: bound(words, maxWords)}
	case r.exits[e.Msg]:
		r.fatal = &Fatal{How: "exit", Message: e.Msg, Words: bound(words, maxWords)}
	case e.Severity == 'F':
		r.fatal = &Fatal{How: "exit", Message: e.Msg, Words: bound(words, maxWords)}
	}
}

func (r *run) startPanic(how, first string) {
	r.inPanic, r.panicDone = true, false
	r.panicMsg.Reset()
	r.panicMsg.WriteString(bound(first, maxPanicMsg))
	r.fatal = &Fatal{How: how, Message: how}
}

// panicLine reads the lines after "panic: ": its message runs to the first
// empty line or goroutine header; the trace after it is only counted.
func (r *run) panicLine(s string) {
	if r.panicDone {
		r.panicLines++
		return
	}
	if s == "" || strings.HasPrefix(s, "goroutine ") || strings.HasPrefix(s, "[signal ") {
		r.finishPanic()
		r.panicLines++
		return
	}
	if r.panicMsg.Len() < maxPanicMsg {
		r.panicMsg.WriteString("\n")
		r.panicMsg.WriteString(bound(s, maxPanicMsg-r.panicMsg.Len()))
	}
}

func (r *run) finishPanic() {
	r.panicDone = true
	if r.fatal != nil && r.fatal.Words == "" {
		r.fatal.Words = r.panicMsg.String()
	}
}

// bound cuts s to at most n bytes.
func bound(s string, n int) string {
	if n < 0 {
		n = 0
	}
	if len(s) <= n {
		return s
	}
	return s[:n]
}
