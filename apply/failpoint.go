//go:build failpoints

package apply

import (
	"os"
	"sync"
	"syscall"
	"time"
)

// hangpoint stops this process for good at the named step when
// KUBELETCFG_HANGPOINT names it: a stuck kubeletcfg, for the guard's deadline.
func hangpoint(step string) {
	for os.Getenv("KUBELETCFG_HANGPOINT") == step {
		time.Sleep(time.Hour)
	}
}

// failpoint signals this process at the named step when
// KUBELETCFG_FAILPOINT names it: SIGKILL (kubeletcfg dies there), or the
// signal KUBELETCFG_FAILPOINT_SIGNAL names, INT or TERM (kubeletcfg is
// interrupted there, as by Ctrl-C or a stop, and goes on to undo). The e2e
// tests prove with it that kubeletcfg stopped at any step leaves the node
// consistent. Only a binary built with the tag failpoints has it.
func failpoint(step string) {
	if os.Getenv("KUBELETCFG_FAILPOINT") != step {
		return
	}
	fired.Do(func() { signalAt(step) })
}

// fired makes a failpoint signal once: a step met by several goroutines
// (the drain's evictions) is one interruption, not a second signal.
var fired sync.Once

func signalAt(string) {
	switch os.Getenv("KUBELETCFG_FAILPOINT_SIGNAL") {
	case "INT":
		syscall.Kill(os.Getpid(), syscall.SIGINT)
	case "TERM":
		syscall.Kill(os.Getpid(), syscall.SIGTERM)
	default:
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		time.Sleep(time.Hour) // the signal is on its way
	}
	time.Sleep(100 * time.Millisecond) // the handler has seen it
}

// Failpoint is failpoint for the steps of other packages (the cluster's
// cordon, drain and uncordon).
func Failpoint(step string) { failpoint(step) }
