package apply

import (
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/kubeletcfg/kubeletcfg/criruntime"
)

// host is a machine without systemd, cgroup v2, no swap, 8 GiB and 4
// CPUs, the runtime's socket there; files are the real ones.
type host struct{ systemd bool }

func (host) CgroupV1() (bool, bool)             { return false, true }
func (host) Swaps() ([]string, bool)            { return nil, true }
func (h host) Systemd() (bool, bool)            { return h.systemd, true }
func (host) Listener(int) (string, bool, bool)  { return "", false, true }
func (host) Memory() (int64, bool)              { return 8 << 30, true }
func (host) CPUs() (int, bool)                  { return 4, true }
func (host) Stat(p string) (fs.FileInfo, error) { return os.Stat(p) }
func (host) Read(p string) ([]byte, error)      { return os.ReadFile(p) }
func (host) Glob(string, string) []string       { return nil }
func (host) Live() bool                         { return true }

// A change the kubelet refuses on this host (the systemd driver without
// systemd) stops at preflight: nothing written, no restart, the refusal
// with its field and origin; --skip-preflight lets it through to the
// kubelet (the watch and the rollback).
func TestApplyPreflight(t *testing.T) {
	n := newNode(t, nil)
	n.opts.preflightHost = host{systemd: false}
	out, err := n.apply(t, "maxPods: 100\ncgroupDriver: systemd\n")
	if !errors.Is(err, ErrPreflight) {
		t.Fatalf("err %v, want the preflight refusal", err)
	}
	for _, w := range []string{"preflight: ", "cgroup-driver-systemd: systemd is not running on this host", "cgroupDriver=systemd from " + n.config + ":5", "fix: set cgroupDriver: cgroupfs at " + n.config + ":5"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("the refusal lacks %q: %v", w, err)
		}
	}
	if n.kubelet.restarts != 0 {
		t.Errorf("%d restarts", n.kubelet.restarts)
	}
	n.configIs(t, "maxPods: 100\n")
	n.noJournal(t)
	if out == nil || out.Preflight == nil || out.Preflight.Starts {
		t.Errorf("the outcome carries no refusing preflight: %+v", out)
	}

	// With systemd, the same change passes preflight.
	n.opts.preflightHost = host{systemd: true}
	if _, err := n.apply(t, "maxPods: 100\ncgroupDriver: systemd\n"); err != nil {
		t.Fatalf("with systemd: %v", err)
	}
	n.configIs(t, "maxPods: 100\ncgroupDriver: systemd\n")
}

// A refusal the running configuration meets as well is not the change's.
func TestApplyPreflightNotTheChange(t *testing.T) {
	n := newNode(t, nil)
	n.opts.preflightHost = host{}
	// The runtime's socket is not there, before and after.
	if _, err := n.apply(t, "maxPods: 101\n"); err != nil {
		t.Fatalf("%v", err)
	}
	n.configIs(t, "maxPods: 101\n")
}

func TestApplySkipPreflight(t *testing.T) {
	n := newNode(t, nil)
	n.opts.preflightHost = host{systemd: false}
	n.opts.SkipPreflight = true
	if _, err := n.apply(t, "maxPods: 100\ncgroupDriver: systemd\n"); err != nil {
		t.Fatalf("%v", err)
	}
	if n.kubelet.restarts == 0 {
		t.Error("no restart")
	}
}

// Where the kubelet takes its cgroup driver from the runtime (1.37), the
// runtime's answer is the driver preflight judges: the file's systemd on a
// host without systemd is no refusal when the runtime answers cgroupfs
// (the kubelet runs cgroupfs), and the runtime's systemd is refused with
// the runtime named, even for a change that leaves cgroupDriver alone,
// when the change is what brings it (a file that said systemd before).
func TestApplyPreflightRuntimeDriver(t *testing.T) {
	n := newNode(t, nil)
	n.opts.preflightHost = host{systemd: false}
	answer := &criruntime.Answer{Source: "CRI unix:///run/containerd/containerd.sock", Live: true, Driver: criruntime.Cgroupfs}
	n.opts.Setup.Runtime = func(string) (*criruntime.Answer, error) { return answer, nil }
	if _, err := n.apply(t, "maxPods: 100\ncgroupDriver: systemd\n"); err != nil {
		t.Fatalf("the runtime answers cgroupfs: %v", err)
	}
	n.configIs(t, "maxPods: 100\ncgroupDriver: systemd\n")

	answer.Driver = criruntime.Systemd
	_, err := n.apply(t, "maxPods: 101\ncgroupDriver: systemd\n")
	if err != nil {
		t.Fatalf("the runtime's systemd refuses the old configuration as well (not the change's): %v", err)
	}
	if n.kubelet.restarts == 0 {
		t.Error("no restart")
	}
	n.configIs(t, "maxPods: 101\ncgroupDriver: systemd\n")
}
