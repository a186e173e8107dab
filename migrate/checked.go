package migrate

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/kubeletcfg/kubeletcfg/audit"
)

// Checks are what is made of a migration before it is shown or written.
type Checks struct {
	// NoVerify skips laying the new setup as the kubelet would and
	// comparing it with the old effective configuration.
	NoVerify bool
	// Secure writes the secure values of the legacy defaults that fail a
	// CIS check (a change of behaviour); without it they are kept, and
	// named in the warnings.
	Secure bool
	// Dir, when set, is the directory the migration's Files are written
	// into; nothing is written when the kubelet would refuse to start with
	// the old setup.
	Dir string
}

// Checked migrates the old setup as Run does, then checks the result as c
// asks, and writes it into c.Dir. An error of Run comes with a nil Result;
// any later error with the Result: the kubelet's refusal of the old setup
// when there is a Dir to write (the *effective.Refused itself), a failed check,
// a failed write.
func Checked(opts Options, c Checks) (*Result, error) {
	res, err := Run(opts)
	if err != nil {
		return nil, err
	}
	// The kubelet would refuse the old setup and its migration alike:
	// nothing to write.
	if r := res.Refused; r != nil && c.Dir != "" {
		return res, r
	}
	if !c.NoVerify {
		if err := verifyInTemp(res); err != nil {
			return res, fmt.Errorf("kubeletcfg's own check of the migration failed (please report): %w", err)
		}
	}
	if res.Warnings, err = audit.SecureMigration(res.version, res.Effective, res.Config, res.Warnings, c.Secure); err != nil {
		return res, err
	}
	if err := res.kubeadmPatch(opts.Setup, opts.ConfigPath); err != nil {
		return res, err
	}
	if c.Dir != "" {
		if err := res.WriteDir(c.Dir); err != nil {
			return res, err
		}
	}
	return res, nil
}

// verifyInTemp verifies res with its config file in a directory of its own.
func verifyInTemp(res *Result) error {
	dir, err := os.MkdirTemp("", "kubeletcfg-migrate")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	return res.Verify(func(doc []byte) (string, error) {
		path := filepath.Join(dir, "config.yaml")
		return path, os.WriteFile(path, doc, 0o600)
	})
}
