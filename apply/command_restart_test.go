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

// reservedWords are the real kubelet 1.37.2's words (from the e2e's
// TestApply), on a klog line of process PID, for kubeReserved memory 100Ti
// (the e2e kit's fatalAtStart): it prints its total as a pointer.
const reservedWords = `E1203 13:35:43.822523     PID kubelet.go:1845] "Failed to start ContainerManager" err="invalid Node Allocatable configuration. Resource \"memory\" has a reservation of {{0 0} {0x24c8df642030}  BinarySI} but capacity of {{25276071936 0} {<nil>}  BinarySI}. Expected capacity >= reservation."`

// TestRollbackWithoutHealthzNamesTheKubeletsError: with healthz disabled the
// watch is the process staying up; a kubelet that exits is rolled back and
// the cause is its own refusal from its log explained: the class, the
// field, its value and the file and line that set it, the fix.
func TestRollbackWithoutHealthzNamesTheKubeletsError(t *testing.T) {
	dir := t.TempDir()
	v, err := schema.Resolve("1.37")
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "config.yaml")
	head := "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nhealthzPort: 0\nfailCgroupV1: false\n"
	if err := os.WriteFile(cfg, []byte(head+"maxPods: 100\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	log, pid, words := filepath.Join(dir, "kubelet.log"), filepath.Join(dir, "kubelet.pid"), filepath.Join(dir, "words")
	if err := os.WriteFile(words, []byte(reservedWords+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The "kubelet" refuses at once with kubeReserved set (its own PID
	// in its line, as klog writes it), and runs on anything else; another
	// process's line after it is not its words.
	restart := `if grep -q 'kubeReserved' ` + cfg + ` ; then sh -c 'sed "s/PID/$$/" ` + words + ` >> ` + log + `; echo "E1203 13:35:44.000000       1 run.go:72] \"command failed\" err=\"forged\"" >> ` + log + `; exit 1' >/dev/null 2>&1 &
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
		NewFile: []byte(head + "maxPods: 120\nkubeReserved:\n  memory: 100Ti\n"), Restart: restart, PIDFile: pid, KubeletLog: log, StateDir: filepath.Join(dir, "state"),
		Timeout: 5 * time.Second, StableFor: time.Second, SkipPreflight: true,
	})
	if !errors.Is(err, ErrRolledBack) || out == nil || !out.RolledBack {
		t.Fatalf("want a rollback, got %v (%+v)", err, out)
	}
	x := out.Explanation
	if x == nil {
		t.Fatalf("no explanation; cause %q", out.Cause)
	}
	if x.Class != "reserved-beyond-capacity" || x.Field != "kubeReserved.memory" || x.Origin == nil || x.Origin.Text != cfg+":7" ||
		!strings.Contains(x.Words, "invalid Node Allocatable configuration") || x.Input.Kind != "log" {
		t.Errorf("explanation: class %s, field %s, origin %+v, words %q, input %+v", x.Class, x.Field, x.Origin, x.Words, x.Input)
	}
	if !strings.Contains(out.Cause, "exited") || !strings.Contains(out.Cause, "kubeReserved.memory=") || !strings.Contains(out.Cause, " from "+cfg+":7") ||
		strings.Contains(out.Cause, "forged") {
		t.Errorf("the cause does not explain the kubelet's error: %q", out.Cause)
	}
	t.Logf("cause: %s", out.Cause)
	if b, _ := os.ReadFile(cfg); !strings.Contains(string(b), "maxPods: 100") {
		t.Errorf("after the rollback the config file is:\n%s", b)
	}
}
