//go:build !failpoints

package apply

import "testing"

// The shipped build has no failpoints: the variable that would kill a
// failpoints build at its step does nothing here. (In a failpoints build
// this apply would kill the test binary itself: see failpoint_test.go.)
func TestNoFailpointsWithoutTag(t *testing.T) {
	t.Setenv("KUBELETCFG_FAILPOINT", "after-write")
	t.Setenv("KUBELETCFG_HANGPOINT", "after-write")
	n := newNode(t, nil)
	if _, err := n.apply(t, "maxPods: 261\n"); err != nil {
		t.Fatal(err)
	}
	n.configIs(t, "maxPods: 261\n")
}
