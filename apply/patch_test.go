package apply

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	hostnode "github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

func (n *node) patch(t *testing.T, patch string) (*Outcome, error) {
	t.Helper()
	o := n.opts
	o.Patch, o.PatchName = []byte(patch), "patch.yaml"
	return Run(context.Background(), o)
}

// --patch: the fields named set, null removes one, the rest of the file
// kept; the same patch again changes nothing; a result the kubelet refuses
// is refused whole, nothing written.
func TestPatch(t *testing.T) {
	n := newNode(t, nil)
	out, err := n.patch(t, "maxPods: 120\ncontainerLogMaxSize: 20Mi\n")
	if err != nil || !out.Applied {
		t.Fatalf("patch: %+v, %v", out, err)
	}
	n.configIs(t, "maxPods: 120\ncontainerLogMaxSize: 20Mi\n")
	out, err = n.patch(t, "containerLogMaxSize: null\n")
	if err != nil || !out.Applied || len(out.Changes) != 1 || out.Changes[0].Path != "containerLogMaxSize" {
		t.Fatalf("null: %+v, %v", out, err)
	}
	n.configIs(t, "maxPods: 120\n")
	restarts := n.kubelet.restarts
	out, err = n.patch(t, `{"maxPods": 120, "containerLogMaxSize": null}`)
	if err != nil || out.Applied || len(out.Writes) != 0 || n.kubelet.restarts != restarts {
		t.Fatalf("the same patch again: %+v, %v, %d restarts", out, err, n.kubelet.restarts-restarts)
	}
	_, err = n.patch(t, "imageGCHighThresholdPercent: 200\n")
	if err == nil || !strings.Contains(err.Error(), "imageGCHighThresholdPercent") || !strings.Contains(err.Error(), " + patch.yaml") {
		t.Fatalf("an invalid result: %v", err)
	}
	n.configIs(t, "maxPods: 120\n")
	if _, err = n.patch(t, "maxPod: 1\nsyncFrequncy: 1s\n"); err == nil || !strings.Contains(err.Error(), "patch.yaml:1:1: maxPod") || !strings.Contains(err.Error(), "patch.yaml:2:1: syncFrequncy") {
		t.Fatalf("unknown fields in the patch: %v", err)
	}
	o := n.opts
	o.Patch, o.NewFile = []byte("maxPods: 1\n"), []byte(baseConfig)
	if _, err := Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), "--patch goes instead of -f") {
		t.Fatalf("-f and --patch: %v", err)
	}
}

// Every problem of a new config file is named, not only the first.
func TestNewFileEveryProblem(t *testing.T) {
	n := newNode(t, nil)
	_, err := n.apply(t, "maxPod: 5\nsyncFrequncy: 1s\n")
	if err == nil || !strings.Contains(err.Error(), `"maxPod"`) || !strings.Contains(err.Error(), `"syncFrequncy"`) {
		t.Fatalf("got %v, want both unknown fields", err)
	}
}

// A change of the file that a flag masks is written (the file converges),
// named as masked, with the text of the file before and after; the same
// change again is no change.
func TestMaskedChangeWritten(t *testing.T) {
	n := newNode(t, nil)
	n.opts.Setup = hostnode.Given(schema.Newest(), "--config="+n.config, "--hostname-override=n1",
		"--root-dir="+filepath.Join(n.dir, "root"), "--max-pods=150")
	out, err := n.apply(t, "maxPods: 120\n")
	if err != nil || !out.Applied || len(out.Changes) != 0 {
		t.Fatalf("masked change: %+v, %v", out, err)
	}
	n.configIs(t, "maxPods: 120\n")
	if len(out.Masked) != 1 || out.Masked[0].Path != "maxPods" || out.Masked[0].Runs != 150.0 || !strings.Contains(out.Masked[0].From, "--max-pods") {
		t.Errorf("masked: %+v", out.Masked)
	}
	if len(out.Files) != 1 || !strings.Contains(out.Files[0].Before, "maxPods: 100") || !strings.Contains(out.Files[0].After, "maxPods: 120") {
		t.Errorf("files: %+v", out.Files)
	}
	out, err = n.apply(t, "maxPods: 120\n")
	if err != nil || out.Applied || len(out.Masked) != 0 || len(out.Writes) != 0 {
		t.Fatalf("again: %+v, %v", out, err)
	}
}

// The texts of files carry no secret: the static pod URL's headers.
func TestFileTextsRedacted(t *testing.T) {
	got := redactText([]byte("maxPods: 1\nstaticPodURLHeader:\n  Authorization: [\"Bearer s3cret\"]\n"))
	if strings.Contains(got, "s3cret") || !strings.Contains(got, "Authorization") || !strings.Contains(got, redacted) {
		t.Errorf("config: %s", got)
	}
	got = redactText([]byte(`KUBELET_EXTRA_ARGS="--max-pods=1 --manifest-url-header=Authorization:Bearer-s3cret"` + "\n"))
	if strings.Contains(got, "s3cret") || !strings.Contains(got, "--manifest-url-header=Authorization:"+redacted) {
		t.Errorf("flags: %s", got)
	}
}

// Backups beside the file sort by name as they age, when old ones are
// pruned too (the name of a pruned backup is never taken again by a newer
// one).
func TestBackupNamesSortAsTheyAge(t *testing.T) {
	n := newNode(t, nil)
	n.opts.KeepBackups = 1
	var last string
	for _, pods := range []string{"101", "102", "103"} {
		out, err := n.apply(t, "maxPods: "+pods+"\n")
		if err != nil {
			t.Fatal(err)
		}
		last = out.Backup
		n.clock.Sleep(context.Background(), 3*time.Millisecond)
	}
	names, _ := filepath.Glob(n.config + ".bak.*")
	sort.Strings(names)
	if len(names) == 0 || names[len(names)-1] != last {
		t.Errorf("the newest backup %s does not sort last: %v", last, names)
	}
	if b, _ := os.ReadFile(last); !strings.Contains(string(b), "maxPods: 102") {
		t.Errorf("the newest backup holds %q", b)
	}
}
