package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRecoverAndBackupsCommands(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	if code, out, errOut := runCLI(t, "recover", "--state-dir", state, "--boot"); code != 0 || !strings.Contains(out, "nothing to recover") {
		t.Errorf("recover of an empty state directory: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, _ := runCLI(t, "backups", "--state-dir", state); code != 0 || !strings.Contains(out, "no backups") {
		t.Errorf("backups of an empty state directory: exit %d\n%s", code, out)
	}
	// A journal that is a link is refused, and its target left alone.
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("keep"), 0o600)
	if err := os.Symlink(victim, filepath.Join(state, "journal.json")); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCLI(t, "recover", "--state-dir", state, "--boot"); code != 2 || !strings.Contains(errOut, "symlink") {
		t.Errorf("recover of a symlinked journal: exit %d\n%s", code, errOut)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Error("the journal's target was changed")
	}
	if code, _, errOut := runCLI(t, "recover", "--state-dir", state, "--restart-command", "true"); code != 2 || !strings.Contains(errOut, "--pid-file") {
		t.Errorf("recover --restart-command without --pid-file: exit %d\n%s", code, errOut)
	}
}
