package preflight

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kubeletcfg/kubeletcfg/nodefile"
)

// Host is what preflight asks of the machine the kubelet starts on. Each
// answer's ok is false when it cannot be told (an offline image: then the
// refusal is reported as a condition).
type Host interface {
	// CgroupV1: /sys/fs/cgroup is not a cgroup2 mount (the kubelet's
	// IsCgroup2UnifiedMode is false).
	CgroupV1() (v1, ok bool)
	// Swaps are the active swap areas of /proc/swaps.
	Swaps() (swaps []string, ok bool)
	// Systemd: systemd is PID 1 (/run/systemd/system is a directory).
	Systemd() (running, ok bool)
	// Listener says who listens on a TCP port: "" for nobody, else the
	// process ("kubelet (pid 1234)"); self tells the kubelet itself,
	// which a restart stops.
	Listener(port int) (who string, self bool, ok bool)
	// Memory and CPUs are the machine's capacity as the kubelet reads it
	// (cAdvisor: MemTotal of /proc/meminfo, the online CPUs).
	Memory() (bytes int64, ok bool)
	CPUs() (n int, ok bool)
	// Stat stats a path the kubelet names (inside the root of an image).
	Stat(path string) (fs.FileInfo, error)
	// Read reads a small file the kubelet or logind reads.
	Read(path string) ([]byte, error)
	// Glob lists a directory's files matching a pattern (sorted).
	Glob(dir, pattern string) []string
	// Live tells the machine itself from an image of one.
	Live() bool
}

// NewHost is the host at root: "" the machine itself, else an offline
// image whose files are read (links resolved inside it) and whose host
// facts cannot be told.
func NewHost(root string) Host {
	if root == "" {
		return liveHost{}
	}
	return imageHost{root: root}
}

// KubeletHost is the machine itself where the kubelet a change restarts
// runs as pid: the ports that process holds are its own, which its restart
// frees, whatever its binary is called.
func KubeletHost(pid int) Host { return liveHost{kubelet: pid} }

// liveHost is the machine itself; kubelet is the running kubelet's PID
// when known (else a process named kubelet is taken for it).
type liveHost struct{ kubelet int }

func (liveHost) Live() bool { return true }

func (liveHost) CgroupV1() (bool, bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs("/sys/fs/cgroup", &st); err != nil {
		return false, false
	}
	const cgroup2Magic = 0x63677270
	return st.Type != cgroup2Magic, true
}

func (liveHost) Swaps() ([]string, bool) {
	data, err := nodefile.ReadFile("/proc/swaps", nodefile.Kind{What: "swap list", Limit: 1 << 20})
	if err != nil {
		return nil, false
	}
	return parseSwaps(string(data)), true
}

// parseSwaps reads /proc/swaps: a header, then one line per swap area.
func parseSwaps(s string) []string {
	var out []string
	for i, line := range strings.Split(s, "\n") {
		if i == 0 || strings.TrimSpace(line) == "" {
			continue
		}
		out = append(out, strings.Fields(line)[0])
	}
	return out
}

func (liveHost) Systemd() (bool, bool) {
	fi, err := os.Lstat("/run/systemd/system")
	return err == nil && fi.IsDir(), true
}

func (liveHost) Memory() (int64, bool) {
	data, err := nodefile.ReadFile("/proc/meminfo", nodefile.Kind{What: "meminfo", Limit: 1 << 20})
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			return kb * 1024, err == nil
		}
	}
	return 0, false
}

func (liveHost) CPUs() (int, bool) {
	data, err := nodefile.ReadFile("/sys/devices/system/cpu/online", nodefile.Kind{What: "CPU list", Limit: 64 << 10})
	if err != nil {
		return 0, false
	}
	n := 0
	for _, part := range strings.Split(strings.TrimSpace(string(data)), ",") {
		lo, hi, found := strings.Cut(part, "-")
		a, err1 := strconv.Atoi(lo)
		b := a
		var err2 error
		if found {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || b < a {
			return 0, false
		}
		n += b - a + 1
	}
	return n, n > 0
}

func (liveHost) Stat(p string) (fs.FileInfo, error) { return os.Stat(p) }

func (liveHost) Read(p string) ([]byte, error) {
	return nodefile.ReadFile(p, nodefile.Kind{What: "file", Limit: 1 << 20})
}

func (liveHost) Glob(dir, pattern string) []string {
	m, _ := filepath.Glob(filepath.Join(dir, pattern))
	sort.Strings(m)
	return m
}

// Listener reads /proc/net/tcp and tcp6 for a listening socket on the port
// and finds its process by the socket's inode (bounded: at most
// maxProcs processes are looked at).
func (h liveHost) Listener(port int) (string, bool, bool) {
	inodes := map[string]bool{}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, err := nodefile.ReadFile(f, nodefile.Kind{What: "socket table", Limit: 64 << 20})
		if err != nil {
			continue
		}
		for _, ino := range listening(string(data), port) {
			inodes[ino] = true
		}
	}
	if len(inodes) == 0 {
		return "", false, true
	}
	pid, comm := socketOwner(inodes)
	if pid == 0 {
		return "a process kubeletcfg cannot see", false, true
	}
	return fmt.Sprintf("%s (pid %d)", comm, pid), comm == "kubelet" || (h.kubelet > 0 && pid == h.kubelet), true
}

const maxProcs = 100000

// listening are the inodes of the sockets of a /proc/net/tcp table that
// listen on port.
func listening(table string, port int) []string {
	var out []string
	for i, line := range strings.Split(table, "\n") {
		f := strings.Fields(line)
		if i == 0 || len(f) < 10 || f[3] != "0A" {
			continue
		}
		_, hexPort, ok := strings.Cut(f[1], ":")
		if !ok {
			continue
		}
		if p, err := strconv.ParseInt(hexPort, 16, 32); err == nil && int(p) == port {
			out = append(out, f[9])
		}
	}
	return out
}

func socketOwner(inodes map[string]bool) (int, string) {
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return 0, ""
	}
	deadline := time.Now().Add(5 * time.Second)
	for i, p := range procs {
		if i > maxProcs || time.Now().After(deadline) {
			break
		}
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		fds, err := os.ReadDir(filepath.Join("/proc", p.Name(), "fd"))
		if err != nil {
			continue
		}
		for _, fd := range fds {
			target, err := os.Readlink(filepath.Join("/proc", p.Name(), "fd", fd.Name()))
			if err != nil || !strings.HasPrefix(target, "socket:[") {
				continue
			}
			if inodes[strings.TrimSuffix(strings.TrimPrefix(target, "socket:["), "]")] {
				comm, _ := os.ReadFile(filepath.Join("/proc", p.Name(), "comm"))
				return pid, strings.TrimSpace(string(comm))
			}
		}
	}
	return 0, ""
}

// imageHost is an offline node image: its files are read, its host facts
// are not known.
type imageHost struct{ root string }

func (imageHost) Live() bool                        { return false }
func (imageHost) CgroupV1() (bool, bool)            { return false, false }
func (imageHost) Swaps() ([]string, bool)           { return nil, false }
func (imageHost) Systemd() (bool, bool)             { return false, false }
func (imageHost) Listener(int) (string, bool, bool) { return "", false, false }
func (imageHost) Memory() (int64, bool)             { return 0, false }
func (imageHost) CPUs() (int, bool)                 { return 0, false }
func (h imageHost) Stat(p string) (fs.FileInfo, error) {
	_, fi, err := nodefile.StatIn(h.root, p)
	return fi, err
}
func (h imageHost) Read(p string) ([]byte, error) {
	return nodefile.ReadFileIn(h.root, p, nodefile.Kind{What: "file", Limit: 1 << 20})
}

func (h imageHost) Glob(dir, pattern string) []string {
	names, err := nodefile.ReadDirIn(h.root, dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, n := range names {
		if ok, _ := filepath.Match(pattern, n); ok {
			out = append(out, filepath.Join(dir, n))
		}
	}
	sort.Strings(out)
	return out
}

// readLogind reads logind's InhibitDelayMaxSec as logind.conf(5) sets it:
// the main file, then the drop-ins of every logind.conf.d (a later
// directory's file of the same name replacing an earlier one), in name
// order. The default is 5 s.
func readLogind(h Host) (time.Duration, string) {
	delay, from := 5*time.Second, "logind's default"
	files := []string{"/etc/systemd/logind.conf"}
	dropins := map[string]string{}
	for _, dir := range []string{"/usr/lib/systemd/logind.conf.d", "/usr/local/lib/systemd/logind.conf.d", "/run/systemd/logind.conf.d", "/etc/systemd/logind.conf.d"} {
		for _, f := range h.Glob(dir, "*.conf") {
			dropins[filepath.Base(f)] = f
		}
	}
	names := make([]string, 0, len(dropins))
	for n := range dropins {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		files = append(files, dropins[n])
	}
	for _, f := range files {
		data, err := h.Read(f)
		if err != nil {
			continue
		}
		section := ""
		sc := bufio.NewScanner(strings.NewReader(string(data)))
		for line := 1; sc.Scan(); line++ {
			l := strings.TrimSpace(sc.Text())
			switch {
			case l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, ";"):
			case strings.HasPrefix(l, "["):
				section = l
			case section == "[Login]":
				k, v, ok := strings.Cut(l, "=")
				if ok && strings.TrimSpace(k) == "InhibitDelayMaxSec" {
					if d, err := timeSpan(strings.TrimSpace(v)); err == nil {
						delay, from = d, fmt.Sprintf("%s:%d", f, line)
					}
				}
			}
		}
	}
	return delay, from
}

// timeSpan parses a systemd time span ("5", "30s", "1min 30s", "2m").
func timeSpan(s string) (time.Duration, error) {
	if n, err := strconv.ParseFloat(s, 64); err == nil {
		return time.Duration(n * float64(time.Second)), nil
	}
	units := map[string]time.Duration{
		"us": time.Microsecond, "usec": time.Microsecond, "ms": time.Millisecond, "msec": time.Millisecond,
		"s": time.Second, "sec": time.Second, "second": time.Second, "seconds": time.Second,
		"m": time.Minute, "min": time.Minute, "minute": time.Minute, "minutes": time.Minute,
		"h": time.Hour, "hr": time.Hour, "hour": time.Hour, "hours": time.Hour,
	}
	var total time.Duration
	rest := strings.ReplaceAll(s, " ", "")
	if rest == "" {
		return 0, fmt.Errorf("empty time span")
	}
	for rest != "" {
		i := 0
		for i < len(rest) && (rest[i] >= '0' && rest[i] <= '9' || rest[i] == '.') {
			i++
		}
		j := i
		for j < len(rest) && (rest[j] < '0' || rest[j] > '9') {
			j++
		}
		n, err := strconv.ParseFloat(rest[:i], 64)
		u, ok := units[rest[i:j]]
		if err != nil || !ok {
			return 0, fmt.Errorf("time span %q", s)
		}
		total += time.Duration(n * float64(u))
		rest = rest[j:]
	}
	return total, nil
}
