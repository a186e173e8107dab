package why

import (
	"encoding/json"
	"strconv"
	"strings"
)

// entry is one log entry of the kubelet: a klog line (text or JSON format),
// with a multi-line value joined back, or a line of a panic.
type entry struct {
	Severity byte // 'I', 'W', 'E', 'F'; 0 for a line that is not klog's
	PID      int  // klog's header; 0 when unknown
	Msg      string
	// KV are the structured values, unquoted.
	KV map[string]string
	// Raw is the line as written, for what is not klog's.
	Raw string
}

// header reads klog's header, "E0525 13:14:15.123456    1234 run.go:72] ",
// and returns the severity, the PID and the rest of the line.
func header(line string) (sev byte, pid int, rest string, ok bool) {
	// "E0525 13:14:15.123456 " is 22 bytes.
	if len(line) < 24 || strings.IndexByte("IWEF", line[0]) < 0 || line[5] != ' ' || line[8] != ':' || line[11] != ':' || line[14] != '.' || line[21] != ' ' {
		return 0, 0, "", false
	}
	for _, i := range []int{1, 2, 3, 4, 6, 7, 9, 10, 12, 13, 15, 16, 17, 18, 19, 20} {
		if line[i] < '0' || line[i] > '9' {
			return 0, 0, "", false
		}
	}
	i := 22
	for i < len(line) && line[i] == ' ' {
		i++
	}
	j := i
	for j < len(line) && line[j] >= '0' && line[j] <= '9' {
		j++
	}
	if j == i || j >= len(line) || line[j] != ' ' {
		return 0, 0, "", false
	}
	pid, err := strconv.Atoi(line[i:j])
	if err != nil {
		return 0, 0, "", false
	}
	end := strings.Index(line[j+1:], "] ")
	if end <= 0 || strings.IndexByte(line[j+1:j+1+end], ' ') >= 0 {
		return 0, 0, "", false
	}
	return line[0], pid, line[j+1+end+2:], true
}

// parseKlog reads one line. A text line whose last value opens a
// multi-line value ("key=<") returns open true: the following lines (each
// starting with a tab, up to " >") belong to it, see multiline.
func parseKlog(line string) (e entry, open bool) {
	if strings.HasPrefix(line, "{") {
		if e, ok := parseJSONLog(line); ok {
			return e, false
		}
	}
	sev, pid, rest, ok := header(line)
	if !ok {
		return entry{Raw: line}, false
	}
	e = entry{Severity: sev, PID: pid, Raw: line, KV: map[string]string{}}
	if !strings.HasPrefix(rest, `"`) {
		// printf-style (klog.Errorf): the message is the text.
		e.Msg = rest
		return e, false
	}
	msg, n, ok := quoted(rest)
	if !ok {
		e.Msg = rest
		return e, false
	}
	e.Msg = msg
	open = parseKV(rest[n:], e.KV)
	return e, open
}

// parseKV reads ` key="value" key2=value2 key3=<` into kv; it reports
// whether the last value is a multi-line one still open.
func parseKV(s string, kv map[string]string) (open bool) {
	for {
		s = strings.TrimLeft(s, " ")
		if s == "" {
			return false
		}
		eq := strings.IndexByte(s, '=')
		if eq <= 0 {
			return false
		}
		key := s[:eq]
		s = s[eq+1:]
		switch {
		case s == "<":
			kv[key] = ""
			kv[openKey] = key
			return true
		case strings.HasPrefix(s, `"`):
			v, n, ok := quoted(s)
			if !ok {
				kv[key] = s
				return false
			}
			kv[key] = v
			s = s[n:]
		default:
			sp := strings.IndexByte(s, ' ')
			if sp < 0 {
				kv[key] = s
				return false
			}
			kv[key] = s[:sp]
			s = s[sp:]
		}
	}
}

// openKey marks, in an entry's KV, the key whose multi-line value is open.
const openKey = "\x00open"

// quoted reads a Go-quoted string at the start of s: its value and length.
func quoted(s string) (string, int, bool) {
	if s == "" || s[0] != '"' {
		return "", 0, false
	}
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			v, err := strconv.Unquote(s[:i+1])
			if err != nil {
				return "", 0, false
			}
			return v, i + 1, true
		}
	}
	return "", 0, false
}

// multiline adds a continuation line of an open value to e; it reports
// whether the value is still open. klog writes each line of the value
// after a tab and closes it with " >".
func (e *entry) multiline(line string, limit int) bool {
	key := e.KV[openKey]
	if line == " >" {
		delete(e.KV, openKey)
		return false
	}
	if !strings.HasPrefix(line, "\t") {
		delete(e.KV, openKey)
		return false
	}
	v := e.KV[key]
	if len(v) < limit {
		if v != "" {
			v += "\n"
		}
		v += line[1:]
		if len(v) > limit {
			v = v[:limit]
		}
		e.KV[key] = v
	}
	return true
}

// parseJSONLog reads a line of the kubelet's JSON log format
// (logging.format: json): {"ts":..,"caller":..,"msg":..,"err":..,"v":0}.
func parseJSONLog(line string) (entry, bool) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(line), &raw); err != nil {
		return entry{}, false
	}
	msgRaw, ok := raw["msg"]
	if !ok {
		return entry{}, false
	}
	e := entry{Raw: line, KV: map[string]string{}, Severity: 'I'}
	_ = json.Unmarshal(msgRaw, &e.Msg)
	for k, v := range raw {
		switch k {
		case "msg", "ts", "caller", "v":
			continue
		}
		var s string
		if json.Unmarshal(v, &s) == nil {
			e.KV[k] = s
		} else {
			e.KV[k] = string(v)
		}
	}
	if _, ok := raw["err"]; ok {
		// The JSON format has no severity; an error carries "err".
		e.Severity = 'E'
	}
	return e, true
}
