package why

import "time"

// ShapeVersion is the version of the JSON shape of an Explanation: a
// change that is not an addition bumps it.
const ShapeVersion = 1

// Explanation says why a kubelet did not start, or died: the class of its
// refusal (startup's table), the field or flag concerned, its effective
// value and where it came from, the fix and where, and the kubelet's own
// words. It is the one shape kubeletcfg reports a failed start in (why,
// apply's rollback, recover).
type Explanation struct {
	Version        int    `json:"version"`
	KubeletVersion string `json:"kubeletVersion"`
	// Class is the table's id, or "unknown" (words the table does not
	// know, shown verbatim: never guessed), or "none" (no failure found).
	Class string `json:"class"`
	// Kind: refusal, never-healthy, killed (from outside: not the
	// configuration), unknown, none.
	Kind  string `json:"kind"`
	Title string `json:"title"`
	// Field (JSON path) or Flag the class concerns, its effective Value
	// and where it came from.
	Field  string  `json:"field,omitempty"`
	Flag   string  `json:"flag,omitempty"`
	Value  string  `json:"value,omitempty"`
	Origin *Origin `json:"origin,omitempty"`
	// Fix: what to change, where.
	Fix string `json:"fix"`
	// Words are the kubelet's own words (its error, its panic's message),
	// Format the format string of its source that matched them and Source
	// where that is (module@version/file:line).
	Words  string   `json:"words,omitempty"`
	Format string   `json:"format,omitempty"`
	Source string   `json:"source,omitempty"`
	Stages []string `json:"stages,omitempty"`
	// Problems are each value involved, when there are several (the
	// validation errors, the reservations that add up, the gates).
	Problems []Problem `json:"problems,omitempty"`
	// Confirmation compares with what the kubelet logged it tried (1.37's
	// "Effective KubeletConfiguration" line).
	Confirmation *Confirmation `json:"confirmation,omitempty"`
	Process      *Process      `json:"process,omitempty"`
	Input        Input         `json:"input"`
	Notes        []string      `json:"notes,omitempty"`
}

// Problem is one value involved in a failure.
type Problem struct {
	Field   string  `json:"field,omitempty"`
	Flag    string  `json:"flag,omitempty"`
	Message string  `json:"message,omitempty"`
	Value   string  `json:"value,omitempty"`
	Origin  *Origin `json:"origin,omitempty"`
}

// Confirmation is what the kubelet's own log says of the configuration it
// tried. From 1.37 the kubelet logs its effective configuration after
// layering files and flags, before validation and before it takes the
// cgroup driver from the container runtime: it confirms the files and
// flags, not what /configz would serve.
type Confirmation struct {
	Logged bool   `json:"logged"`
	Field  string `json:"field,omitempty"`
	// KubeletValue is the value the kubelet logged; Agrees says whether
	// kubeletcfg's effective value (from the node's files now) is the same.
	KubeletValue string `json:"kubeletValue,omitempty"`
	Agrees       bool   `json:"agrees"`
	Note         string `json:"note,omitempty"`
}

// Process is the kubelet's process of the start explained.
type Process struct {
	PID        int        `json:"pid,omitempty"`
	Invocation string     `json:"invocation,omitempty"`
	Started    *time.Time `json:"started,omitempty"`
	// Exit is how it ended, as systemd recorded it ("exited, status=1",
	// "killed, status=9/KILL"); Result is the unit's result.
	Exit   string `json:"exit,omitempty"`
	Result string `json:"result,omitempty"`
	// Lines is how many lines it wrote; PanicLines how many of them were
	// a panic's trace (counted, never kept).
	Lines      int `json:"lines"`
	PanicLines int `json:"panicLines,omitempty"`
}

// Input is what the explanation was read from.
type Input struct {
	// Kind: "journal" or "log" ("none": no log was named).
	Kind string `json:"kind"`
	Unit string `json:"unit,omitempty"`
	File string `json:"file,omitempty"`
	// Bytes read, lines skipped (too long or not a record), and whether
	// reading stopped at a limit.
	Bytes     int64 `json:"bytes"`
	Skipped   int   `json:"skipped,omitempty"`
	Truncated bool  `json:"truncated,omitempty"`
	// Trusted says the kubelet's lines were told from others by the
	// journal's own fields (its PID and the unit's invocation); a log
	// file has no such fields: a line another process wrote into it can
	// pass for the kubelet's.
	Trusted bool `json:"trusted"`
}
