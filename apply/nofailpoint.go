//go:build !failpoints

package apply

// The shipped binary has no failpoints (build tag failpoints).
func hangpoint(string) {}
func failpoint(string) {}

// Failpoint is failpoint for the steps of other packages.
func Failpoint(string) {}
