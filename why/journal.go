package why

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kubeletcfg/kubeletcfg/nodefile"
)

// Limits of reading the journal (and a log file).
const (
	// DefaultMaxBytes bounds what is read of journalctl's output (or of a
	// log file's tail) for one explanation: a kubelet's start with a panic
	// of tens of thousands of lines; the panic's message comes first.
	DefaultMaxBytes = 32 << 20
	// MaxLine bounds one line (one JSON record of journalctl, one line of
	// a log file); a longer one is skipped and counted.
	MaxLine = 1 << 20
	// DefaultTimeout bounds the time spent reading.
	DefaultTimeout = 30 * time.Second
	// newestRecords is how many of the unit's newest records are read to
	// find its last start.
	newestRecords = 2000
	// systemdRecords is how many of systemd's records about the unit
	// after that start are read.
	systemdRecords = 200
)

// record is one journal record, with the fields an explanation uses. The
// fields starting with "_" are journald's own (trusted: a process cannot
// set them), the others the writer's.
type record struct {
	Realtime     string          `json:"__REALTIME_TIMESTAMP"`
	PID          string          `json:"_PID"`
	Comm         string          `json:"_COMM"`
	Unit         string          `json:"_SYSTEMD_UNIT"`
	Invocation   string          `json:"_SYSTEMD_INVOCATION_ID"`
	Boot         string          `json:"_BOOT_ID"`
	Message      json.RawMessage `json:"MESSAGE"`
	MessageID    string          `json:"MESSAGE_ID"`
	AboutUnit    string          `json:"UNIT"`
	AboutInv     string          `json:"INVOCATION_ID"`
	ExitCode     string          `json:"EXIT_CODE"`
	ExitStatus   string          `json:"EXIT_STATUS"`
	UnitResult   string          `json:"UNIT_RESULT"`
	JobType      string          `json:"JOB_TYPE"`
	JobResult    string          `json:"JOB_RESULT"`
	message      string
	time         time.Time
	fromSystemd  bool
	fromUnit     bool
	pid          int
	decodeFailed bool
}

// journalFields are the fields journalctl is asked for.
var journalFields = []string{
	"__REALTIME_TIMESTAMP", "_PID", "_COMM", "_SYSTEMD_UNIT", "_SYSTEMD_INVOCATION_ID", "_BOOT_ID",
	"MESSAGE", "MESSAGE_ID", "UNIT", "INVOCATION_ID", "EXIT_CODE", "EXIT_STATUS", "UNIT_RESULT",
	"JOB_TYPE", "JOB_RESULT",
}

// decode fills the derived fields; unit is the kubelet's unit.
func (r *record) decode(unit string) {
	r.pid, _ = strconv.Atoi(r.PID)
	if us, err := strconv.ParseInt(r.Realtime, 10, 64); err == nil {
		r.time = time.UnixMicro(us)
	}
	r.message = journalMessage(r.Message)
	r.fromUnit = r.Unit == unit && r.pid > 1
	r.fromSystemd = r.pid == 1 && r.AboutUnit == unit
}

// journalMessage reads MESSAGE: a string, or (not valid UTF-8) an array of
// bytes, or null (too large without --all).
func journalMessage(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	if len(raw) >= 2 && raw[0] == '"' && bytes.IndexByte(raw, '\\') < 0 {
		return strings.ToValidUTF8(string(raw[1:len(raw)-1]), "\uFFFD")
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var b []byte
	var ints []int
	if json.Unmarshal(raw, &ints) == nil {
		b = make([]byte, 0, len(ints))
		for _, i := range ints {
			b = append(b, byte(i))
		}
		return strings.ToValidUTF8(string(b), "\uFFFD")
	}
	return ""
}

// journal reads a unit's journal with journalctl.
type journal struct {
	unit string
	// files are the journal files of an image (--root); none: the
	// machine's own journal.
	files    []string
	program  string
	deadline time.Time
	budget   int64 // bytes journalctl may still write
	comm     string
	// Stats
	read      int64
	skipped   int
	truncated bool
	notes     []string
}

// runJournal runs journalctl with args and hands each record to fn, within
// the journal's time and byte budget. fn returns false to stop.
func (j *journal) query(ctx context.Context, args []string, fn func(*record) bool) error {
	if !time.Now().Before(j.deadline) || j.budget <= 0 {
		// Out of time or bytes: the rest is not read (said once).
		if !j.truncated {
			j.truncated = true
			j.notes = append(j.notes, "stopped reading the journal at a limit: the explanation is from what was read")
		}
		return nil
	}
	ctx, cancel := context.WithDeadline(ctx, j.deadline)
	defer cancel()
	full := []string{"--no-pager", "--output=json", "--all", "--output-fields=" + strings.Join(journalFields, ",")}
	for _, f := range j.files {
		full = append(full, "--file="+f)
	}
	full = append(full, args...)
	cmd := exec.CommandContext(ctx, j.program, full...)
	cmd.Env = append(os.Environ(), "SYSTEMD_PAGER=", "SYSTEMD_LESS=", "SYSTEMD_COLORS=0", "LC_ALL=C")
	var stderr strings.Builder
	cmd.Stderr = &limitWriter{w: &stderr, n: 4096}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("journalctl: %w (or give --kubelet-log)", err)
	}
	stopped := false
	lr := &io.LimitedReader{R: out, N: j.budget}
	br := bufio.NewReaderSize(lr, 64<<10)
	for {
		line, long, rerr := readLine(br, MaxLine)
		if long {
			j.skipped++
		} else if len(line) > 0 {
			var r record
			if !scanRecord(line, &r) {
				j.skipped++
			} else {
				r.decode(j.unit)
				if !fn(&r) {
					stopped = true
					break
				}
			}
		}
		if rerr != nil {
			break
		}
	}
	j.read += j.budget - lr.N
	if lr.N <= 0 && !stopped && !j.truncated {
		j.truncated = true
		j.notes = append(j.notes, fmt.Sprintf("stopped reading the journal after %d bytes: the explanation is from what was read", j.read))
	}
	j.budget = lr.N
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
	werr := cmd.Wait()
	switch {
	case ctx.Err() != nil && !stopped:
		if !j.truncated {
			j.truncated = true
			j.notes = append(j.notes, "stopped reading the journal at the time limit: the explanation is from what was read")
		}
		return nil
	case stopped || lr.N <= 0:
		return nil
	case werr != nil:
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = werr.Error()
		}
		return fmt.Errorf("journalctl: %s", msg)
	}
	return nil
}

// readLine reads one line of at most max bytes; a longer line is skipped to
// its end and reported as long.
func readLine(br *bufio.Reader, max int) (line []byte, long bool, err error) {
	var buf []byte
	for {
		chunk, isPrefix, err := br.ReadLine()
		if len(buf)+len(chunk) > max {
			long = true
		}
		if !long {
			buf = append(buf, chunk...)
		}
		if err != nil {
			return buf, long, err
		}
		if !isPrefix {
			return buf, long, nil
		}
	}
}

type limitWriter struct {
	w io.Writer
	n int
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		q := p
		if len(q) > l.n {
			q = q[:l.n]
		}
		l.n -= len(q)
		_, _ = l.w.Write(q)
	}
	return len(p), nil
}

// lastStart is the kubelet's process of the unit's last start, as the
// journal shows it.
type lastStart struct {
	pid        int
	invocation string
	boot       string
	started    time.Time
}

// findLastStart reads the unit's newest records (newest first) and picks
// the newest one written by the kubelet's own process: the unit's process
// whose command is the kubelet's (a helper the unit runs before it is
// another process). Records that only claim to be about the unit (a
// UNIT= field set by anyone but systemd) are not looked at.
func (j *journal) findLastStart(ctx context.Context) (*lastStart, []*record, error) {
	var candidates []*record
	var systemd []*record
	err := j.query(ctx, []string{"--reverse", "--lines=" + strconv.Itoa(newestRecords), "--unit=" + j.unit}, func(r *record) bool {
		switch {
		case r.fromUnit:
			candidates = append(candidates, r)
			// The newest record of the kubelet's process: no need to read on.
			return r.Comm != j.comm
		case r.fromSystemd && len(systemd) < systemdRecords:
			systemd = append(systemd, r)
		}
		return true
	})
	if err != nil {
		return nil, nil, err
	}
	pick := func(match func(*record) bool) *record {
		for _, r := range candidates {
			if match(r) {
				return r
			}
		}
		return nil
	}
	r := pick(func(r *record) bool { return r.Comm == j.comm })
	// Keep only what identifies the start: a record may be large.
	defer func() { candidates = nil }()
	if r == nil {
		r = pick(func(*record) bool { return true })
		if r != nil {
			j.notes = append(j.notes, fmt.Sprintf("no record of a process named %q in the unit's newest %d records; took the newest process of the unit (%s, pid %d)", j.comm, newestRecords, r.Comm, r.pid))
		}
	}
	if r == nil {
		return nil, systemd, nil
	}
	return &lastStart{pid: r.pid, invocation: r.Invocation, boot: r.Boot}, systemd, nil
}

// readRun reads, oldest first, every line the kubelet's process of that
// start wrote (journald's own fields select it: no other process's lines,
// whatever they say).
func (j *journal) readRun(ctx context.Context, ls *lastStart, r *run) error {
	args := []string{"_SYSTEMD_UNIT=" + j.unit, "_PID=" + strconv.Itoa(ls.pid)}
	if ls.invocation != "" {
		args = append(args, "_SYSTEMD_INVOCATION_ID="+ls.invocation)
	}
	if ls.boot != "" {
		args = append(args, "_BOOT_ID="+ls.boot)
	}
	first := true
	err := j.query(ctx, args, func(rec *record) bool {
		if !rec.fromUnit || rec.pid != ls.pid {
			return true
		}
		if first {
			ls.started, first = rec.time, false
		}
		for _, l := range strings.Split(rec.message, "\n") {
			r.line(l)
		}
		return true
	})
	r.end()
	return err
}

// systemdAfter reads systemd's records about the unit from the start on.
func (j *journal) systemdAfter(ctx context.Context, ls *lastStart) ([]*record, error) {
	args := []string{"_PID=1", "UNIT=" + j.unit, "--lines=" + strconv.Itoa(systemdRecords)}
	if !ls.started.IsZero() {
		args = append(args, "--since=@"+strconv.FormatFloat(float64(ls.started.UnixMicro())/1e6-1, 'f', 6, 64))
	}
	var out []*record
	err := j.query(ctx, args, func(r *record) bool {
		// From the start on: a stop of the process before it is not about
		// this one.
		if r.fromSystemd && (ls.boot == "" || r.Boot == ls.boot) && !r.time.Before(ls.started) {
			out = append(out, r)
		}
		return true
	})
	return out, err
}

// imageJournal lists the journal files of a node image: under
// /var/log/journal and /run/log/journal of the root, each a regular file
// inside it (links are followed only inside the root).
func imageJournal(root string) ([]string, error) {
	var files []string
	for _, dir := range []string{"/var/log/journal", "/run/log/journal"} {
		host, err := nodefile.HostDir(root, dir)
		if err != nil {
			continue
		}
		err = filepath.WalkDir(host, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if d.IsDir() {
				if rel, _ := filepath.Rel(host, path); strings.Count(rel, string(filepath.Separator)) >= 1 {
					return filepath.SkipDir // journald keeps files one level down
				}
				return nil
			}
			name := d.Name()
			if !d.Type().IsRegular() || !(strings.HasSuffix(name, ".journal") || strings.HasSuffix(name, ".journal~")) {
				return nil
			}
			files = append(files, path)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if len(files) == 0 {
		return nil, errors.New("no journal files under /var/log/journal or /run/log/journal of the root (give --kubelet-log)")
	}
	sort.Strings(files)
	return files, nil
}
