//go:build failpoints

package apply

import (
	"os"
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

// failpoint kills this process at the named step when KUBELETCFG_FAILPOINT
// names it: the e2e tests prove with it that a kubeletcfg that dies at any
// step leaves the node consistent. Only a binary built with the tag
// failpoints has it.
func failpoint(step string) {
	if os.Getenv("KUBELETCFG_FAILPOINT") == step {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		time.Sleep(time.Hour) // the signal is on its way
	}
}
