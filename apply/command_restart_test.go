package apply

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	hostnode "github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

// TestRollbackWithoutHealthzNamesTheKubeletsError: with healthz disabled the
// watch is the process staying up; a kubelet that exits is rolled back and
// the cause carries its own last error from its log.
func TestRollbackWithoutHealthzNamesTheKubeletsError(t *testing.T) {
	dir := t.TempDir()
	v, err := schema.Resolve("1.31")
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "config.yaml")
	head := "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nhealthzPort: 0\n"
	if err := os.WriteFile(cfg, []byte(head+"maxPods: 100\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	log, pid := filepath.Join(dir, "kubelet.log"), filepath.Join(dir, "kubelet.pid")
	// The "kubelet" dies at once on maxPods 120, and runs on anything else.
	restart := `if grep -q 'maxPods: 120' ` + cfg + `; then sh -c 'echo "E1201 run.go:72] \"command failed\" err=\"boom\"" >> ` + log + `; exit 1' >/dev/null 2>&1 &
else setsid sleep 30 >/dev/null 2>&1 & fi; echo $! > ` + pid
	t.Cleanup(func() {
		if b, err := os.ReadFile(pid); err == nil {
			if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				syscall.Kill(n, syscall.SIGKILL)
			}
		}
	})
	host, _ := os.Hostname()
	out, err := Run(context.Background(), Options{
		Node: host, Setup: hostnode.Given(v, "--config="+cfg),
		NewFile: []byte(head + "maxPods: 120\n"), Restart: restart, PIDFile: pid, KubeletLog: log, StateDir: filepath.Join(dir, "state"),
		Timeout: 5 * time.Second, StableFor: time.Second,
	})
	if !errors.Is(err, ErrRolledBack) || out == nil || !out.RolledBack {
		t.Fatalf("want a rollback, got %v (%+v)", err, out)
	}
	if !strings.Contains(out.Cause, "exited") || !strings.Contains(out.Cause, `err="boom"`) {
		t.Errorf("the cause does not carry the kubelet's error: %q", out.Cause)
	}
	if b, _ := os.ReadFile(cfg); !strings.Contains(string(b), "maxPods: 100") {
		t.Errorf("after the rollback the config file is:\n%s", b)
	}
}
