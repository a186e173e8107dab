//go:build !failpoints

package apply

// The shipped binary has no failpoints (build tag failpoints).
func hangpoint(string) {}
func failpoint(string) {}
