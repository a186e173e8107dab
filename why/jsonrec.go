package why

import (
	"bytes"
	"encoding/json"
)

// scanRecord reads one line of journalctl -o json — a flat object of
// strings, arrays of byte values and nulls — into r, in one pass without
// reflection (a flood of records is read within the time bound). ok is
// false for a line that is not such an object.
func scanRecord(line []byte, r *record) bool {
	i := skipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return false
	}
	i++
	for {
		i = skipSpace(line, i)
		if i < len(line) && line[i] == '}' {
			return true
		}
		kStart, kEnd, next, ok := scanString(line, i)
		if !ok {
			return false
		}
		i = skipSpace(line, next)
		if i >= len(line) || line[i] != ':' {
			return false
		}
		i = skipSpace(line, i+1)
		vStart := i
		if i, ok = scanValue(line, i); !ok {
			return false
		}
		setField(r, string(line[kStart:kEnd]), line[vStart:i])
		i = skipSpace(line, i)
		switch {
		case i < len(line) && line[i] == ',':
			i++
		case i < len(line) && line[i] == '}':
			return true
		default:
			return false
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// scanString finds the string at i: its content's bounds (still escaped)
// and the index after its closing quote.
func scanString(b []byte, i int) (start, end, next int, ok bool) {
	if i >= len(b) || b[i] != '"' {
		return 0, 0, 0, false
	}
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return i + 1, j, j + 1, true
		}
	}
	return 0, 0, 0, false
}

// scanValue skips the value at i: a string, an array (of numbers), null,
// a number, true or false.
func scanValue(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch b[i] {
	case '"':
		_, _, next, ok := scanString(b, i)
		return next, ok
	case '[':
		for j := i + 1; j < len(b); j++ {
			switch b[j] {
			case ']':
				return j + 1, true
			case '"', '[', '{':
				return 0, false
			}
		}
		return 0, false
	case '{':
		return 0, false // journalctl's records are flat
	default:
		j := i
		for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ' ' {
			j++
		}
		return j, j > i
	}
}

// setField sets the record's field key from its raw JSON value.
func setField(r *record, key string, raw []byte) {
	str := func() string {
		if len(raw) < 2 || raw[0] != '"' {
			return ""
		}
		if bytes.IndexByte(raw, '\\') < 0 {
			return string(raw[1 : len(raw)-1])
		}
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return ""
		}
		return s
	}
	switch key {
	case "__REALTIME_TIMESTAMP":
		r.Realtime = str()
	case "_PID":
		r.PID = str()
	case "_COMM":
		r.Comm = str()
	case "_SYSTEMD_UNIT":
		r.Unit = str()
	case "_SYSTEMD_INVOCATION_ID":
		r.Invocation = str()
	case "_BOOT_ID":
		r.Boot = str()
	case "MESSAGE":
		r.Message = append(json.RawMessage(nil), raw...)
	case "MESSAGE_ID":
		r.MessageID = str()
	case "UNIT":
		r.AboutUnit = str()
	case "INVOCATION_ID":
		r.AboutInv = str()
	case "EXIT_CODE":
		r.ExitCode = str()
	case "EXIT_STATUS":
		r.ExitStatus = str()
	case "UNIT_RESULT":
		r.UnitResult = str()
	case "JOB_TYPE":
		r.JobType = str()
	case "JOB_RESULT":
		r.JobResult = str()
	}
}
