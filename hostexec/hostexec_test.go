package hostexec

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

const mountinfo = `22 27 0:21 / /proc rw,relatime - proc proc rw
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime shared:9 - cgroup cgroup rw,memory
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,xattr,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
50 27 0:39 /kubepods/pod1 /host/sys/fs/cgroup/pids rw - cgroup cgroup rw,pids
51 27 0:40 / /mnt/with\040space rw - cgroup cgroup rw,freezer
`

// The hierarchies a /proc/PID/cgroup line names are found by their
// controllers (v1, named ones too) or as the unified one, wherever mounted.
func TestCgroupMounts(t *testing.T) {
	mounts, err := parseMountinfo(strings.NewReader(mountinfo))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ id, controllers, point, root string }{
		{"4", "cpu,cpuacct", "/sys/fs/cgroup/cpu,cpuacct", "/"},
		{"4", "cpuacct,cpu", "/sys/fs/cgroup/cpu,cpuacct", "/"},
		{"9", "memory", "/sys/fs/cgroup/memory", "/"},
		{"1", "name=systemd", "/sys/fs/cgroup/systemd", "/"},
		{"0", "", "/sys/fs/cgroup/unified", "/"},
		{"8", "pids", "/host/sys/fs/cgroup/pids", "/kubepods/pod1"},
		{"7", "freezer", "/mnt/with space", "/"},
	} {
		m, ok := findMount(mounts, c.id, c.controllers)
		if !ok || m.point != c.point || m.root != c.root {
			t.Errorf("%s:%s: %+v %v, want %s at %s", c.id, c.controllers, m, ok, c.root, c.point)
		}
	}
	if m, ok := findMount(mounts, "3", "blkio"); ok {
		t.Errorf("blkio, mounted nowhere, found at %s", m.point)
	}
}

// A command run on the host enters the namespaces its target runs in
// that differ from this process's, through nsenter and the files held
// open, and its words survive the shell.
func TestCaptureEntersOnlyWhatDiffers(t *testing.T) {
	h, err := Capture(os.Getpid(), "/var/lib/kubeletcfg/bin/kubeletcfg-x")
	if err != nil {
		t.Skipf("no nsenter here: %v", err)
	}
	defer h.Close()
	if len(h.Entered()) != 0 {
		t.Errorf("its own namespaces entered: %v", h.Entered())
	}
	sh := h.Shell(`/run/restart.sh 'it''s' "$x"`)
	if !strings.HasPrefix(sh, "exec ") || !strings.Contains(sh, " -- /var/lib/kubeletcfg/bin/kubeletcfg-x __in-host -- /bin/sh -c ") {
		t.Errorf("%s", sh)
	}
	out, err := exec.Command("sh", "-c", "printf '%s\\n' "+strings.TrimPrefix(sh, "exec ")).Output()
	if err != nil || !strings.Contains(string(out), "/run/restart.sh 'it''s' \"$x\"\n") {
		t.Errorf("the command does not survive the shell: %v\n%s", err, out)
	}

	// A process in a network namespace of its own: that one is entered,
	// by a file that stays open after the process is gone.
	sleeper := exec.Command("unshare", "--net", "sleep", "30")
	if err := sleeper.Start(); err != nil {
		t.Skipf("unshare: %v", err)
	}
	defer sleeper.Process.Kill()
	for i := 0; i < 100; i++ {
		if l, _ := os.Readlink("/proc/" + strconv.Itoa(sleeper.Process.Pid) + "/exe"); strings.HasSuffix(l, "/sleep") {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	h2, err := Capture(sleeper.Process.Pid, "/bin/true")
	if err != nil {
		t.Fatal(err)
	}
	defer h2.Close()
	if got := strings.Join(h2.Entered(), ","); got != "net" {
		t.Fatalf("entered %s, want net", got)
	}
	_ = sleeper.Process.Kill()
	_ = sleeper.Wait()
	words := h2.argv("ip", "-o", "link")
	// nsenter alone (without the kubeletcfg step) shows the namespace is
	// still there: only its loopback.
	words = append(words[:len(h2.args)+1], "--", "ip", "-o", "link")
	out, err = exec.Command(words[0], words[1:]...).CombinedOutput()
	if err != nil {
		t.Skipf("%v: %s", err, out)
	}
	if lines := strings.Split(strings.TrimSpace(string(out)), "\n"); len(lines) != 1 || !strings.Contains(lines[0], "lo:") {
		t.Errorf("in the held namespace: %s", out)
	}
}
