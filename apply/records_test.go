package apply

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hostnode "github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

// An apply killed inside its backup record (the record's directory made,
// nothing in it) does not block every later apply: the next record takes
// a number past every directory there.
func TestRecordNumberPastAnUnfinishedRecord(t *testing.T) {
	n := newNode(t, nil)
	dir, _ := stateDir(n.state)
	if err := os.MkdirAll(filepath.Join(dir, recordsDir, "1"), 0o700); err != nil {
		t.Fatal(err)
	}
	out, err := n.apply(t, "maxPods: 301\n")
	if err != nil {
		t.Fatalf("apply after a half-made record: %v", err)
	}
	if out.BackupN <= 1 {
		t.Errorf("record %d, want past the half-made 1", out.BackupN)
	}
	n.configIs(t, "maxPods: 301\n")
}

// abortedAfterBackup leaves the node as an apply killed right after its
// backup record (before its journal): a dated copy and a staged link
// beside the config file, a record without an outcome, no journal.
func (n *node) abortedAfterBackup(t *testing.T) (fc FileChange) {
	t.Helper()
	dir, err := stateDir(n.state)
	if err != nil {
		t.Fatal(err)
	}
	jr := &Journal{ID: "deadbeefdeadbeef", ConfigFile: n.config, Started: n.clock.Now().Add(-48 * time.Hour)}
	if fc, err = prepare("", n.config, jr.ID, jr.Started); err != nil {
		t.Fatal(err)
	}
	fc.NewHash = hashBytes([]byte("never written"))
	jr.Files = []FileChange{fc}
	if _, err := record(dir, jr, nil); err != nil {
		t.Fatal(err)
	}
	return fc
}

// What an apply killed after its backup left — its dated copy, its staged
// link, its record — is cleaned by recover, and by the next apply.
func TestAbortedApplyLeftoversCleaned(t *testing.T) {
	for _, by := range []string{"recover", "next apply"} {
		t.Run(by, func(t *testing.T) {
			n := newNode(t, nil)
			fc := n.abortedAfterBackup(t)
			if by == "recover" {
				if _, err := Recover(context.Background(), RecoverOptions{StateDir: n.state, Restarter: n.kubelet, Clock: n.clock}); err != nil {
					t.Fatal(err)
				}
			} else if _, err := n.apply(t, "maxPods: 311\n"); err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{fc.Staged, fc.Backup} {
				if _, err := os.Lstat(f); err == nil {
					t.Errorf("%s of the aborted apply stays", f)
				}
			}
			recs, _ := Records(n.state)
			for _, r := range recs {
				if r.ApplyID == "deadbeefdeadbeef" {
					t.Errorf("the aborted apply's record stays: %+v", r)
				}
			}
			if _, err := os.Stat(filepath.Join(n.state, recordsDir, "1")); err == nil {
				t.Error("the aborted apply's record directory stays")
			}
		})
	}
}

// Pruning is best effort: a dated copy it cannot remove keeps its record
// for another time and never turns a confirmed change into a failure.
func TestPruneNeverChangesTheOutcome(t *testing.T) {
	n := newNode(t, nil)
	n.opts.KeepBackups = 1
	first, err := n.apply(t, "maxPods: 321\n")
	if err != nil {
		t.Fatal(err)
	}
	// Something that is not the copy kubeletcfg made took its name.
	os.Remove(first.Backup)
	os.MkdirAll(filepath.Join(first.Backup, "x"), 0o700)
	n.clock.Sleep(context.Background(), 24*time.Hour)
	out, err := n.apply(t, "maxPods: 322\n")
	if err != nil || !out.Applied || out.RolledBack {
		t.Fatalf("a confirmed change with a pruning problem: applied %v, rolled back %v, %v", out != nil && out.Applied, out != nil && out.RolledBack, err)
	}
	n.configIs(t, "maxPods: 322\n")
	if _, err := os.Stat(filepath.Join(first.Backup, "x")); err != nil {
		t.Error("pruning removed what it did not make")
	}
}

// A record whose copy name climbs out of its directory is refused: the
// file it names is never read.
func TestRecordCopyNamesAreBare(t *testing.T) {
	n := newNode(t, nil)
	dir, _ := stateDir(n.state)
	victim := filepath.Join(n.dir, "victim")
	os.WriteFile(victim, []byte("secret"), 0o600)
	rdir := filepath.Join(dir, recordsDir, "5")
	os.MkdirAll(rdir, 0o700)
	rel, _ := filepath.Rel(rdir, victim)
	forged := `{"n":5,"applyID":"x","configFile":"` + n.config + `","files":[{"path":"` + n.config + `","copy":"` + rel + `"}],"outcome":"applied"}`
	if err := writeOwned(rdir, "record.json", []byte(forged)); err != nil {
		t.Fatal(err)
	}
	b, err := RecordedContent(n.state, 5, n.config)
	if err == nil || strings.Contains(string(b), "secret") {
		t.Fatalf("a record naming %s: %q, %v; want refused", rel, b, err)
	}
}

// The state directory's subdirectories are never followed through a link:
// backups/ linked elsewhere stops the apply before anything is written,
// and nothing is made where the link points.
func TestStateSubdirectoryLinksRefused(t *testing.T) {
	n := newNode(t, nil)
	dir, _ := stateDir(n.state)
	elsewhere := filepath.Join(n.dir, "elsewhere")
	os.Mkdir(elsewhere, 0o700)
	if err := os.Symlink(elsewhere, filepath.Join(dir, recordsDir)); err != nil {
		t.Fatal(err)
	}
	_, err := n.apply(t, "maxPods: 331\n")
	if !errors.Is(err, ErrUntrusted) {
		t.Errorf("backups/ a link: %v, want refused as untrusted", err)
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) > 0 {
		t.Errorf("made through the link: %v", entries)
	}
	n.configIs(t, "maxPods: 100\n")
	n.noJournal(t)
	if _, err := Records(n.state); !errors.Is(err, ErrUntrusted) {
		t.Errorf("listing backups/ through a link: %v", err)
	}
}

// A plain rollback undoes the last change that took effect: after a
// rolled-back attempt, that is the change before it, not "no change".
func TestRecordedContentIsTheLastChangeThatTookEffect(t *testing.T) {
	n := newNode(t, map[string]life{"maxPods: 342": {healthyAfter: -1}})
	n.opts.Timeout = 3 * time.Second
	if _, err := n.apply(t, "maxPods: 341\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := n.apply(t, "maxPods: 342\n"); !errors.Is(err, ErrRolledBack) {
		t.Fatalf("want the second change rolled back: %v", err)
	}
	n.configIs(t, "maxPods: 341\n")
	b, err := RecordedContent(n.state, 0, n.config)
	if err != nil || string(b) != baseConfig+"maxPods: 100\n" {
		t.Errorf("plain rollback would put back %q (%v), want what the last applied change replaced (maxPods: 100)", b, err)
	}
}

// A record finished by recover (or the guard) says how it ended.
func TestRecoveredRecordGetsItsOutcome(t *testing.T) {
	n := newNode(t, nil)
	jr := n.interrupted(t, "maxPods: 351\n")
	if _, err := Recover(context.Background(), RecoverOptions{StateDir: n.state, Restarter: n.kubelet, Clock: n.clock}); err != nil {
		t.Fatal(err)
	}
	recs, _ := Records(n.state)
	if len(recs) != 1 || recs[0].ApplyID != jr.ID || !strings.Contains(recs[0].Outcome, "undone") {
		t.Errorf("records %+v: want the interrupted apply's record marked undone", recs)
	}
}

// Records under --root hold the node's paths, not this host's: the image
// mounted elsewhere still has its backups.
func TestRecordsSurviveTheImageMountedElsewhere(t *testing.T) {
	img := filepath.Join(t.TempDir(), "img")
	os.MkdirAll(filepath.Join(img, "etc/kubernetes"), 0o755)
	os.WriteFile(filepath.Join(img, "etc/hostname"), []byte("n1\n"), 0o644)
	cfg := filepath.Join(img, "etc/kubernetes/config.yaml")
	os.WriteFile(cfg, []byte(baseConfig+"maxPods: 100\n"), 0o600)
	clock := newFakeClock()
	k := &fakeKubelet{clock: clock, behave: byContent(nil), pid: 1}
	setup := hostnode.Given(schema.Newest(), "--config=/etc/kubernetes/config.yaml")
	setup.Root = img
	o := Options{Node: "n1", Setup: setup,
		Timeout: 30 * time.Second, StableFor: time.Second, Restarter: k, Clock: clock, probe: k.probe,
		NewFile: []byte(baseConfig + "maxPods: 361\n")}
	if _, err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	moved := filepath.Join(filepath.Dir(img), "mounted-elsewhere")
	if err := os.Rename(img, moved); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(moved, DefaultStateDir)
	recs, err := Records(state)
	if err != nil || len(recs) != 1 || recs[0].Files[0].Path != "/etc/kubernetes/config.yaml" {
		t.Fatalf("records %+v, %v; want the node's path /etc/kubernetes/config.yaml", recs, err)
	}
	b, err := RecordedContent(state, 1, "/etc/kubernetes/config.yaml")
	if err != nil || string(b) != baseConfig+"maxPods: 100\n" {
		t.Errorf("record 1 of the moved image: %q, %v", b, err)
	}
	beside := filepath.Join(moved, recs[0].Files[0].Beside)
	if _, err := os.Stat(beside); err != nil {
		t.Fatalf("the dated copy at the node path %s: %v", recs[0].Files[0].Beside, err)
	}
	if n, err := pruneRecords(state, moved, 0); err != nil || n != 1 {
		t.Errorf("pruned %d records, %v", n, err)
	}
	if _, err := os.Stat(beside); err == nil {
		t.Errorf("pruning under the moved image left %s", beside)
	}
}

// A record's metadata never holds a header value of staticPodURLHeader;
// the copy a rollback restores holds the file byte for byte.
func TestRecordMetadataRedactsHeaderValues(t *testing.T) {
	n := newNode(t, nil)
	old := baseConfig + "staticPodURL: https://pods.example/\nstaticPodURLHeader:\n  Authorization: [\"Bearer old-s3cret\"]\n"
	os.WriteFile(n.config, []byte(old), 0o640)
	if _, err := n.apply(t, "staticPodURL: https://pods.example/\nstaticPodURLHeader:\n  Authorization: [\"Bearer new-s3cret\"]\n"); err != nil {
		t.Fatal(err)
	}
	meta, _ := os.ReadFile(filepath.Join(n.state, recordsDir, "1", recordFile))
	if strings.Contains(string(meta), "s3cret") || !strings.Contains(string(meta), "staticPodURLHeader") {
		t.Errorf("the record's metadata:\n%s", meta)
	}
	if b, err := RecordedContent(n.state, 1, n.config); err != nil || string(b) != old {
		t.Errorf("the stored copy: %q, %v; want the old file byte for byte", b, err)
	}
}
