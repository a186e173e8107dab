// Package criruntime models what the container runtime tells the kubelet
// when the kubelet asks it at start-up (CRI RuntimeConfig): the cgroup
// driver. It reads the answer two ways: from containerd's configuration
// (config.toml and what it imports, under --root through nodefile), decided
// as containerd 2.4 decides it, or from a live CRI socket, asked with a
// timeout and a size limit. What the kubelet then runs (it asks only where
// its version does, and serves the answer on /configz only from 1.35) is
// Decide's job, from the schema's traits of the version.
package criruntime

import (
	"fmt"
	"strings"
)

// The cgroup drivers a runtime reports.
const (
	Systemd  = "systemd"
	Cgroupfs = "cgroupfs"
)

// Answer is what the runtime answers the kubelet's RuntimeConfig.
type Answer struct {
	// Source is where the answer was read: "containerd /etc/containerd/config.toml"
	// or "CRI unix:///run/containerd/containerd.sock".
	Source string `json:"source"`
	// Runtime names the runtime when known ("containerd v2.4.2").
	Runtime string `json:"runtime,omitempty"`
	// Live: the running runtime answered (else the answer is read from its
	// configuration: what containerd 2 answers; a containerd 1.x does not).
	Live bool `json:"live,omitempty"`
	// Driver is the cgroup driver the runtime reports. Empty when it reports
	// none: Unsupported, or an answer without its Linux part; the kubelet
	// then keeps its own cgroupDriver.
	Driver string `json:"driver,omitempty"`
	// Condition is set when the driver depends on a fact of the host that
	// kubeletcfg cannot see (under --root): Driver is the answer when it
	// holds, Otherwise when it does not.
	Condition string `json:"condition,omitempty"`
	Otherwise string `json:"otherwise,omitempty"`
	// Why says what decided the answer, with file:line where there is one.
	Why string `json:"why"`
	// Unsupported: the runtime does not implement RuntimeConfig
	// (containerd 1.x); the kubelet falls back to its cgroupDriver.
	Unsupported bool `json:"unsupported,omitempty"`
	// Fatal is set when no kubelet can start on this runtime: it serves no
	// CRI (containerd does not start, or runs without its CRI plugin).
	Fatal string `json:"fatal,omitempty"`
	// ConfigFatal is set when RuntimeConfig fails or reports an unknown
	// driver: a kubelet that asks exits with this cause.
	ConfigFatal string `json:"configFatal,omitempty"`
	// Notes are what else the reader should know (keys containerd ignores,
	// how older containerd releases read the file).
	Notes []string `json:"notes,omitempty"`
	// FromConfig is what containerd's configuration says, read when the
	// live runtime answers no RuntimeConfig: a containerd 1.x runs runc
	// with it (nil when not read).
	FromConfig *Answer `json:"fromConfig,omitempty"`
}

// String is the answer in one line.
func (a *Answer) String() string {
	var b strings.Builder
	b.WriteString(a.Source)
	if a.Runtime != "" {
		fmt.Fprintf(&b, " (%s)", a.Runtime)
	}
	b.WriteString(": ")
	switch {
	case a.Fatal != "":
		b.WriteString("the kubelet cannot start: " + a.Fatal)
	case a.ConfigFatal != "":
		b.WriteString("a kubelet that asks cannot start: " + a.ConfigFatal)
	case a.Unsupported:
		b.WriteString("no RuntimeConfig: the kubelet keeps its own cgroupDriver")
	case a.Driver == "":
		b.WriteString("no cgroup driver reported: the kubelet keeps its own cgroupDriver")
	case a.Condition != "":
		fmt.Fprintf(&b, "%s if %s, else %s", a.Driver, a.Condition, a.Otherwise)
	default:
		b.WriteString(a.Driver)
	}
	if a.Why != "" {
		b.WriteString(" (" + a.Why + ")")
	}
	return b.String()
}
