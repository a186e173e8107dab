package apply

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// An apply killed inside its backup (its files staged and copied, no
// record yet) leaves nothing behind once the next apply has run: not its
// staged link, not its dated copy.
func TestKilledDuringTheBackupLeavesNothing(t *testing.T) {
	n := newNode(t, nil)
	tx := runUntil(t, n.opts2("maxPods: 411\n"), "journal")
	removeRecord(tx.dir, tx.record.N) // killed before its record was made
	if j, _ := ReadJournal(tx.dir); j != nil {
		dead := exec.Command("true")
		dead.Run()
		j.PID, j.PIDStart = dead.Process.Pid, 1
		writeJournal(tx.dir, j)
	}
	out, err := n.apply(t, "maxPods: 412\n")
	if err != nil {
		t.Fatalf("the next apply: %v", err)
	}
	n.configIs(t, "maxPods: 412\n")
	entries, _ := os.ReadDir(n.dir)
	for _, e := range entries {
		p := filepath.Join(n.dir, e.Name())
		if strings.Contains(e.Name(), ".kubeletcfg-") || (strings.Contains(e.Name(), ".bak.") && p != out.Backup) {
			t.Errorf("%s of the killed apply stays", e.Name())
		}
	}
}

// opts2 is the node's options with content as the new config file.
func (n *node) opts2(content string) Options {
	o := n.opts
	o.NewFile = []byte(baseConfig + content)
	return o
}

// An apply stopped before its write (a file that changed during the drain,
// a failing guard) removes the dated copies it made: only changes that were
// written keep one.
func TestAbortedBeforeTheWriteRemovesItsDatedCopies(t *testing.T) {
	n := newNode(t, nil)
	o := n.opts2("maxPods: 413\n")
	o.StartGuard = func(string, string) error { return errors.New("no guard") }
	if _, err := Run(t.Context(), o); err == nil {
		t.Fatal("an apply without its guard went on")
	}
	n.configIs(t, "maxPods: 100\n")
	if left, _ := filepath.Glob(n.config + ".bak.*"); len(left) != 0 {
		t.Errorf("dated copies of an apply that wrote nothing: %v", left)
	}
	n.noJournal(t)
}

// A rollback that leaves no kubelet running says so loudly.
func TestRollbackWithoutAKubeletSaysSo(t *testing.T) {
	n := newNode(t, map[string]life{"maxPods": {healthyAfter: -1, diesAfter: time.Nanosecond}})
	n.opts.Timeout = 3 * time.Second
	_, err := n.apply(t, "maxPods: 414\n")
	if err == nil || !strings.Contains(err.Error(), "NO KUBELET RUNNING") {
		t.Errorf("a rollback whose kubelet does not run either: %v", err)
	}
	n.configIs(t, "maxPods: 100\n")
}

// A restart command's output is kept in the state directory.
func TestRestartCommandOutputInTheStateDirectory(t *testing.T) {
	n := newNode(t, nil)
	o := n.opts2("maxPods: 415\n")
	o.Restarter, o.Clock = nil, nil
	o.Restart, o.PIDFile = "echo restarting the kubelet; exit 3", filepath.Join(n.dir, "pid")
	o.Timeout, o.StableFor = 2*time.Second, 0
	_, err := Run(t.Context(), o)
	if err == nil || !strings.Contains(err.Error(), "restarting the kubelet") {
		t.Errorf("a failing restart command: %v, want its output", err)
	}
	if b, _ := os.ReadFile(filepath.Join(n.state, restartLog)); !strings.Contains(string(b), "restarting the kubelet") {
		t.Errorf("%s holds %q", restartLog, b)
	}
}
