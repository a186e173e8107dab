package why

import (
	"bufio"
	"io"
	"io/fs"
	"os"
	"syscall"

	"github.com/kubeletcfg/kubeletcfg/nodefile"
)

// maxRuns bounds how many processes of a log file are followed at once.
const maxRuns = 8

// readLog reads the tail of a kubelet's log file (at most maxBytes) and
// hands the lines of its last start to r: the last process (by the PID of
// klog's headers) to start writing. Lines without a header (a panic's)
// belong to the process that wrote last.
func readLog(path string, maxBytes int64, exits map[string]bool) (Input, *run, error) {
	in := Input{Kind: "log", File: path}
	fi, err := os.Stat(path)
	if err != nil {
		return in, nil, err
	}
	if !fi.Mode().IsRegular() {
		return in, nil, &fs.PathError{Op: "read", Path: path, Err: &nodefile.NotRegularError{Mode: fi.Mode()}}
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return in, nil, err
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil || !fi.Mode().IsRegular() {
		if err == nil {
			err = &fs.PathError{Op: "read", Path: path, Err: &nodefile.NotRegularError{Mode: fi.Mode()}}
		}
		return in, nil, err
	}
	start := int64(0)
	if fi.Size() > maxBytes {
		start = fi.Size() - maxBytes
		in.Truncated = true
	}
	if _, err := f.Seek(start, io.SeekStart); err != nil {
		return in, nil, err
	}
	br := bufio.NewReaderSize(io.LimitReader(f, maxBytes), 64<<10)
	if start > 0 {
		// The first line read is a part of one.
		_, _, _ = readLine(br, MaxLine)
	}
	runs := map[int]*run{}
	var order []int // PIDs by their first line
	cur := -1
	for {
		line, long, err := readLine(br, MaxLine)
		if long {
			in.Skipped++
		} else if len(line) > 0 || err == nil {
			in.Bytes += int64(len(line)) + 1
			s := string(line)
			pid := -1
			if _, p, _, ok := header(s); ok {
				pid = p
			}
			if pid >= 0 && pid != cur {
				if _, ok := runs[pid]; !ok {
					runs[pid] = newRun(exits)
					order = append(order, pid)
					if len(order) > maxRuns {
						delete(runs, order[0])
						order = order[1:]
					}
				}
				cur = pid
			}
			if cur < 0 {
				// Lines before any klog header: an unknown process.
				cur = 0
				runs[0] = newRun(exits)
				order = append(order, 0)
			}
			if rr := runs[cur]; rr != nil {
				rr.line(s)
			}
		}
		if err != nil {
			break
		}
	}
	if len(order) == 0 {
		return in, newRun(exits), nil
	}
	last := runs[order[len(order)-1]]
	last.end()
	return in, last, nil
}
