//go:build ansible

// The collection with the real ansible-playbook (Debian's ansible-core),
// against hosts on this machine: `make ansible-test`.
package tests

import (
	"fmt"
	"os"
	"testing"

	"github.com/kubeletcfg/kubeletcfg/ansible/tests/harness"
)

const repo = "../.."

// env is the one kubeletcfg build and installed collection every test of
// the package shares (a build and an install cost seconds each).
var env *harness.Env

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "kubeletcfg-ansible-")
	if err == nil {
		// Readable by the unprivileged user one test becomes.
		err = os.Chmod(dir, 0o755)
	}
	if err == nil {
		env, err = harness.New(repo, dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if code == 0 {
		os.RemoveAll(dir)
	} else {
		fmt.Fprintf(os.Stderr, "the test's files are kept in %s\n", dir)
	}
	os.Exit(code)
}
