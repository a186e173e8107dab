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

// Warning is something systemd logs and then ignores: the assignment or
// line it names has no effect.
type Warning = warning.Warning

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

// warnAt builds a Warning for a place in a file.
func warnAt(file string, line int, format string, args ...any) Warning {
	return warning.At(warning.SystemdIgnored, file, line, format, args...)
}

// noteAt builds a warning of another code than systemd-ignored.
func noteAt(code, file string, line int, format string, args ...any) Warning {
	return warning.At(code, file, line, format, args...)
}
