// Package hostexec lets kubeletcfg, run in a privileged pod (a rollout's
// Job: the host's PID namespace and network, the host's root mounted in the
// container), act as it does on the host.
//
// Enter makes the host's root this process's root (chroot): every path is
// the host's, the state directory, journal and backups are where kubeletcfg
// run on the host finds them, and systemd's D-Bus socket is the host's.
// What must run on the host and outlive the pod — a restart command, the
// guard of a host without systemd — runs through the host's own nsenter in
// the host's namespaces (Go cannot setns into a mount namespace from a
// multithreaded process, and the image has no nsenter of its own), then
// leaves the pod's cgroups for those of the host's init (JoinInit): the
// container runtime ends every process of a host-PID container's cgroups
// when the container ends.
package hostexec

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// Enter makes root (the host's root directory as the container mounts it,
// recursively) this process's root and working directory. Every thread of
// a Go program shares one root, so the whole process moves.
func Enter(root string) error {
	st, err := os.Stat(filepath.Join(root, "proc", "self"))
	if err != nil || !st.IsDir() {
		return fmt.Errorf("--root %s is not a host's root mounted with its submounts (no %s/proc): mount the host's / recursively (a hostPath volume is)", root, root)
	}
	if err := syscall.Chroot(root); err != nil {
		return fmt.Errorf("entering the host's root %s: %w", root, err)
	}
	return syscall.Chdir("/")
}

// namespaces are the kinds a command on the host enters, with nsenter's
// option for each.
var namespaces = []struct{ kind, option string }{
	{"mnt", "--mount"}, {"uts", "--uts"}, {"ipc", "--ipc"}, {"net", "--net"}, {"pid", "--pid"}, {"cgroup", "--cgroup"},
}

// Host is the host's namespaces, held open from the start of an apply (the
// kubelet whose namespaces they are may be gone when a rollback restarts
// it), the host's nsenter, and the kubeletcfg binary the host runs (a copy
// in the host's file system).
type Host struct {
	nsenter string
	bin     string
	files   []*os.File
	args    []string // nsenter's namespace options
}

// Capture holds the namespaces of process pid (the running kubelet, or the
// host's init) that differ from this process's: those a command must enter
// to run on the host. bin is kubeletcfg's binary as the host names it. The
// namespace files stay open, inherited by the commands apply runs (nsenter
// opens them as /proc/self/fd/N), until Close.
func Capture(pid int, bin string) (*Host, error) {
	nsenter, err := exec.LookPath("nsenter")
	if err != nil {
		return nil, fmt.Errorf("running a command on the host needs the host's nsenter (util-linux): %w", err)
	}
	h := &Host{nsenter: nsenter, bin: bin}
	for _, ns := range namespaces {
		f, err := os.Open(fmt.Sprintf("/proc/%d/ns/%s", pid, ns.kind))
		if err != nil {
			h.Close()
			return nil, fmt.Errorf("the host's %s namespace (of pid %d): %w", ns.kind, pid, err)
		}
		same, err := sameFile(f, "/proc/self/ns/"+ns.kind)
		if err != nil {
			f.Close()
			h.Close()
			return nil, err
		}
		if same {
			f.Close()
			continue
		}
		// Inherited by the commands apply starts, at the same number.
		if _, _, errno := syscall.Syscall(syscall.SYS_FCNTL, f.Fd(), syscall.F_SETFD, 0); errno != 0 {
			f.Close()
			h.Close()
			return nil, fmt.Errorf("keeping the %s namespace open: %w", ns.kind, errno)
		}
		h.files = append(h.files, f)
		h.args = append(h.args, fmt.Sprintf("%s=/proc/self/fd/%d", ns.option, f.Fd()))
	}
	return h, nil
}

func sameFile(f *os.File, path string) (bool, error) {
	a, err := f.Stat()
	if err != nil {
		return false, err
	}
	b, err := os.Stat(path)
	if err != nil {
		return false, err
	}
	return os.SameFile(a, b), nil
}

// Entered names the namespaces Capture found different from this
// process's (the ones a command enters).
func (h *Host) Entered() []string {
	var out []string
	for _, a := range h.args {
		out = append(out, strings.TrimPrefix(a[:strings.IndexByte(a, '=')], "--"))
	}
	return out
}

// Close lets the namespaces go.
func (h *Host) Close() {
	for _, f := range h.files {
		f.Close()
	}
	h.files = nil
}

// argv is the command line that runs argv on the host: in its namespaces
// (nsenter), then in its init's cgroups (kubeletcfg __in-host).
func (h *Host) argv(argv ...string) []string {
	out := append([]string{h.nsenter}, h.args...)
	out = append(out, "--", h.bin, InHostCommand, "--")
	return append(out, argv...)
}

// InHostCommand is the hidden kubeletcfg command that joins the host's
// init's cgroups and runs the rest of its command line (JoinInit).
const InHostCommand = "__in-host"

// Shell is a shell command line that runs command (a shell command given
// on kubeletcfg's command line, never one read from a file) on the host:
// apply's --restart-command, when apply runs in a pod.
func (h *Host) Shell(command string) string {
	words := h.argv("/bin/sh", "-c", command)
	for i, w := range words {
		words[i] = shellQuote(w)
	}
	return "exec " + strings.Join(words, " ")
}

func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=/.:,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Start starts argv on the host, detached (a session of its own), its
// output to log: the guard of an apply in a pod on a host without
// systemd, which must outlive the pod.
func (h *Host) Start(log *os.File, argv ...string) error {
	words := h.argv(argv...)
	cmd := exec.Command(words[0], words[1:]...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s on the host: %w", argv[0], err)
	}
	return cmd.Process.Release()
}

// JoinInit moves this process into the cgroups of the host's init (PID 1;
// the root cgroups when they cannot be read), every hierarchy mounted, out
// of the pod's: the container runtime ends every process of the cgroups of
// a container that shares the host's PID namespace when the container
// ends. It then closes every file beyond standard input, output and error
// on exec (the namespaces apply held for nsenter) and runs argv.
func JoinInit(argv []string) error {
	if len(argv) == 0 {
		return errors.New("no command to run on the host")
	}
	mounts, err := cgroupMounts()
	if err != nil {
		return err
	}
	lines, err := os.ReadFile("/proc/1/cgroup")
	if err != nil {
		lines = nil
		for _, m := range mounts {
			lines = append(lines, fmt.Sprintf("0:%s:/\n", strings.Join(m.controllers, ","))...)
		}
	}
	pid := []byte(strconv.Itoa(os.Getpid()))
	for _, l := range strings.Split(strings.TrimSpace(string(lines)), "\n") {
		parts := strings.SplitN(l, ":", 3)
		if len(parts) != 3 {
			continue
		}
		m, ok := findMount(mounts, parts[0], parts[1])
		if !ok {
			continue // a hierarchy nobody mounted holds no pod
		}
		rel, err := filepath.Rel(m.root, parts[2])
		if err != nil || strings.HasPrefix(rel, "..") {
			rel = "."
		}
		procs := filepath.Join(m.point, rel, "cgroup.procs")
		if err := os.WriteFile(procs, pid, 0); err != nil {
			return fmt.Errorf("leaving the pod's cgroups for the host's (%s): %w", procs, err)
		}
	}
	closeOnExec()
	bin, err := exec.LookPath(argv[0])
	if err != nil {
		return err
	}
	return syscall.Exec(bin, argv, os.Environ())
}

// closeOnExec marks every file descriptor beyond 2 close-on-exec.
func closeOnExec() {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
}

// cgroupMount is a mounted cgroup hierarchy: v1 with its controllers (or
// name=), v2 with none.
type cgroupMount struct {
	point, root string
	controllers []string
	v2          bool
}

func cgroupMounts() ([]cgroupMount, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseMountinfo(f)
}

func parseMountinfo(r io.Reader) ([]cgroupMount, error) {
	var out []cgroupMount
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		// ID PARENT MAJ:MIN ROOT POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER
		fields := strings.Fields(sc.Text())
		sep := slices.Index(fields, "-")
		if sep < 5 || len(fields) < sep+4 {
			continue
		}
		m := cgroupMount{root: unescape(fields[3]), point: unescape(fields[4])}
		switch fields[sep+1] {
		case "cgroup2":
			m.v2 = true
		case "cgroup":
			for _, o := range strings.Split(fields[sep+3], ",") {
				if o != "rw" && o != "ro" && !strings.HasPrefix(o, "release_agent") && o != "clone_children" && o != "xattr" && o != "noprefix" && o != "cpuset_v2_mode" {
					m.controllers = append(m.controllers, o)
				}
			}
		default:
			continue
		}
		out = append(out, m)
	}
	return out, sc.Err()
}

// findMount is the mount of the hierarchy a /proc/PID/cgroup line names.
func findMount(mounts []cgroupMount, id, controllers string) (cgroupMount, bool) {
	for _, m := range mounts {
		if id == "0" && controllers == "" {
			if m.v2 {
				return m, true
			}
			continue
		}
		if m.v2 {
			continue
		}
		want := strings.Split(controllers, ",")
		if slices.ContainsFunc(want, func(c string) bool { return !slices.Contains(m.controllers, c) }) {
			continue
		}
		return m, true
	}
	return cgroupMount{}, false
}

// unescape undoes mountinfo's octal escapes (\040 for a space).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
