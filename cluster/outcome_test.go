package cluster

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubeletcfg/kubeletcfg/apply"
	hostnode "github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/schema"
	"github.com/kubeletcfg/kubeletcfg/why"
)

// procKubelet is a kubelet that is a new process at each restart and
// runs; healthz is off (healthzPort 0), so its process judges it locally.
type procKubelet struct{ pid int }

func (k *procKubelet) Restart(context.Context) error { k.pid++; return nil }
func (k *procKubelet) State(context.Context) (apply.Proc, error) {
	return apply.Proc{PID: 3000 + k.pid, Running: true}, nil
}
func (k *procKubelet) Restarted() why.Restarted { return why.Restarted{PID: 3000 + k.pid} }

// A node the apply leaves cordoned is in its outcome (-o json), not only
// in a progress line: here its kubelet never reports to the API server,
// so neither the change nor the rollback is healthy.
func TestOutcomeNamesANodeLeftCordoned(t *testing.T) {
	n, cs, _ := testNode()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	head := "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nhealthzPort: 0\n"
	os.WriteFile(cfg, []byte(head+"maxPods: 100\n"), 0o600)
	o := apply.Options{Node: "n1", Setup: hostnode.Given(schema.Newest(), "--config="+cfg, "--hostname-override=n1"),
		NewFile: []byte(head + "maxPods: 101\n"), StateDir: filepath.Join(dir, "state"),
		Restarter: &procKubelet{}, Timeout: 300 * time.Millisecond, StableFor: 0}
	if err := attach(&o, n, Options{Drain: true, DrainOptions: DrainOptions{GracePeriodSeconds: -1}}); err != nil {
		t.Fatal(err)
	}
	out, err := apply.Run(context.Background(), o)
	if err == nil || out == nil {
		t.Fatalf("a kubelet that never reports: %v", err)
	}
	if !unschedulable(t, cs) {
		t.Fatal("the node was uncordoned though it is not healthy")
	}
	if !strings.Contains(out.LeftCordoned, "kubectl uncordon n1") {
		t.Errorf("the outcome does not say the node is left cordoned: %q", out.LeftCordoned)
	}
}
