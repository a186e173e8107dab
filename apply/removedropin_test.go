package apply

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/kubeletcfg/kubeletcfg/effective"
)

// dropinNode is a node whose kubelet has a --config-dir with 50-pods.conf
// (maxPods 120 over the file's 100); its fake kubelet is healthy while that
// drop-in is there and behaves as gone says once it is not.
func dropinNode(t *testing.T, gone life) (*node, string) {
	t.Helper()
	n := newNode(t, nil)
	dir := filepath.Join(n.dir, "conf.d")
	dropin := filepath.Join(dir, "50-pods.conf")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dropin, []byte(baseConfig+"maxPods: 120\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	n.opts.Setup.Args = append(n.opts.Setup.Args, "--config-dir="+dir)
	n.kubelet.config = dropin
	n.kubelet.behave = func(b []byte) life {
		if len(b) == 0 {
			return gone
		}
		return life{}
	}
	return n, dropin
}

func (n *node) remove(t *testing.T, names ...string) (*Outcome, error) {
	t.Helper()
	o := n.opts
	o.RemoveDropins = names
	return Run(t.Context(), o)
}

func TestRemoveDropin(t *testing.T) {
	n, dropin := dropinNode(t, life{})
	out, err := n.remove(t, "50-pods.conf")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(dropin); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the drop-in is still there: %v", err)
	}
	if !out.Applied || len(out.Removes) != 1 || out.Removes[0] != dropin || len(out.Changes) != 1 || out.Changes[0].Path != "maxPods" {
		t.Errorf("outcome %+v: want applied, %s removed, maxPods changed", out, dropin)
	}
	if n.kubelet.restarts != 1 {
		t.Errorf("%d restarts, want 1", n.kubelet.restarts)
	}
	n.noJournal(t)
	// Absent already: no change, no restart.
	out, err = n.remove(t, "50-pods.conf")
	if err != nil || out.Applied || len(out.Removes) != 0 || len(out.Changes) != 0 || n.kubelet.restarts != 1 {
		t.Errorf("removing an absent drop-in: %+v, %v, %d restarts; want no change", out, err, n.kubelet.restarts)
	}
}

func TestRemoveDropinRolledBack(t *testing.T) {
	n, dropin := dropinNode(t, life{healthyAfter: -1})
	out, err := n.remove(t, "50-pods.conf")
	if !errors.Is(err, ErrRolledBack) || !out.RolledBack {
		t.Fatalf("want a rollback: %+v, %v", out, err)
	}
	if b, err := os.ReadFile(dropin); err != nil || string(b) != baseConfig+"maxPods: 120\n" {
		t.Errorf("after the rollback the drop-in holds %q (%v)", b, err)
	}
	n.noJournal(t)
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(dropin), ".*")); len(left) != 0 {
		t.Errorf("staged files left in the --config-dir: %v", left)
	}
}

func TestRemoveDropinRefusals(t *testing.T) {
	n, dropin := dropinNode(t, life{})
	for _, names := range [][]string{{"../config.yaml"}, {"50-pods"}, {"50-pods.conf", "50-pods.conf"}} {
		if _, err := n.remove(t, names...); err == nil {
			t.Errorf("--remove-dropin %v: want a refusal", names)
		}
	}
	o := n.opts
	o.RemoveDropins, o.NewFile = []string{"50-pods.conf"}, []byte(baseConfig)
	if _, err := Run(t.Context(), o); err == nil {
		t.Error("--remove-dropin with -f: want a refusal")
	}
	if _, err := os.Stat(dropin); err != nil {
		t.Errorf("a refused removal touched the drop-in: %v", err)
	}
}

// A change the kubelet refuses is refused before anything is written,
// naming the field and the operator's file and line that set it.
func TestRunRefusalNamesFileAndLine(t *testing.T) {
	n, _ := dropinNode(t, life{})
	o := n.opts
	o.NewFile, o.NewFileName = []byte(baseConfig+"imageGCHighThresholdPercent: 200\n"), "new.yaml"
	placed := func(err error, file string) bool {
		var r *effective.Refused
		if !errors.As(err, &r) || len(r.Problems) != 1 {
			return false
		}
		p := r.Problems[0]
		return p.Field == "imageGCHighThresholdPercent" && p.Origin.File == file && p.Origin.Line == 4
	}
	if _, err := Run(t.Context(), o); !placed(err, "new.yaml") {
		t.Errorf("-f: %v, want the field placed at new.yaml:4", err)
	}
	o.Dropin, o.NewFileName = "60-gc.conf", "gc.yaml"
	if _, err := Run(t.Context(), o); !placed(err, "gc.yaml") {
		t.Errorf("--dropin: %v, want the field placed at gc.yaml:4", err)
	}
	n.configIs(t, "maxPods: 100\n")
	if n.kubelet.restarts != 0 {
		t.Errorf("%d restarts, want none", n.kubelet.restarts)
	}
}

// A drop-in the change removed and someone made again is theirs: the
// recovery of the interrupted apply leaves it, and says so.
func TestRecoverLeavesARecreatedRemovedDropin(t *testing.T) {
	n, dropin := dropinNode(t, life{})
	o := n.opts
	o.RemoveDropins = []string{"50-pods.conf"}
	runUntil(t, o, "restart")
	// The apply dies; someone writes the drop-in again.
	mine := baseConfig + "maxPods: 130\n"
	if err := os.WriteFile(dropin, []byte(mine), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Recover(t.Context(), RecoverOptions{StateDir: n.state, Restarter: n.kubelet, Clock: n.clock})
	if !errors.Is(err, ErrChangedSince) {
		t.Errorf("recover over a re-created drop-in: %v, want it left as changed since", err)
	}
	if b, _ := os.ReadFile(dropin); string(b) != mine {
		t.Errorf("the re-created drop-in was overwritten: %q", b)
	}
}

// runUntil runs the phases of an apply with o up to the phase named stop,
// and leaves the node as an apply killed there does (the lock released).
func runUntil(t *testing.T, o Options, stop string) *Tx {
	t.Helper()
	if err := o.defaults(); err != nil {
		t.Fatal(err)
	}
	steps, err := o.steps()
	if err != nil {
		t.Fatal(err)
	}
	tx := &Tx{o: o}
	for _, s := range steps {
		if s.Name() == stop {
			break
		}
		if err := s.Run(t.Context(), tx); err != nil {
			t.Fatal(err)
		}
	}
	tx.lock.Release()
	return tx
}
