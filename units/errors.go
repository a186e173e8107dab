package units

import (
	"fmt"

	"github.com/kubeletcfg/kubeletcfg/warning"
)

// Error is a problem that stops systemd from starting the kubelet as
// configured (or that stops this package from telling how it would).
type Error struct {
	File string // node path of the unit, drop-in or environment file; may be ""
	Line int    // 0 when the problem is not about one line
	Msg  string
	Err  error // underlying error, if any
}

func (e *Error) Error() string {
	msg := e.Msg
	if e.Err != nil {
		if msg != "" {
			msg += ": "
		}
		msg += e.Err.Error()
	}
	if loc := location(e.File, e.Line); loc != "" {
		return loc + ": " + msg
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

func location(file string, line int) string {
	if line > 0 {
		return fmt.Sprintf("%s:%d", file, line)
	}
	return file
}

// errorAt builds an *Error for a place in a file.
func errorAt(file string, line int, format string, args ...any) *Error {
	return &Error{File: file, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// warnAt builds a warning of what systemd ignores, for a place in a file.
func warnAt(file string, line int, format string, args ...any) warning.Warning {
	return warning.At(warning.SystemdIgnored, file, line, format, args...)
}
