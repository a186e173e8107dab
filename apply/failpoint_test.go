//go:build failpoints

package apply

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// In a failpoints build the variable kills the process at its step: the
// apply runs in a child (this test binary again), never in the test
// process, which the failpoint would kill with it.
func TestFailpointKillsAtItsStep(t *testing.T) {
	if os.Getenv("KUBELETCFG_FAILPOINT_CHILD") != "" {
		n := newNode(t, nil)
		n.apply(t, "maxPods: 261\n")
		t.Fatal("the apply went on past its failpoint")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestFailpointKillsAtItsStep$", "-test.count=1")
	cmd.Env = append(os.Environ(), "KUBELETCFG_FAILPOINT_CHILD=1", "KUBELETCFG_FAILPOINT=after-write")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("the child: %v\n%s", err, out)
	}
	if st, ok := exit.Sys().(syscall.WaitStatus); !ok || !st.Signaled() || st.Signal() != syscall.SIGKILL {
		t.Fatalf("the child ended with %v, want killed at after-write\n%s", err, out)
	}
}
