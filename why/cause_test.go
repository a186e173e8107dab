package why

import (
	"context"
	"strings"
	"testing"

	"k8s.io/kubelet/config/v1beta1"

	"github.com/kubeletcfg/kubeletcfg/node"
)

// reservedWords are the real kubelet 1.37.2's words (from the e2e's
// TestApply) for kubeReserved memory 100Ti (the e2e kit's fatalAtStart).
const reservedWords = `invalid Node Allocatable configuration. Resource "memory" has a reservation of {{0 0} {0x24c8df642030}  BinarySI} but capacity of {{25276071936 0} {<nil>}  BinarySI}. Expected capacity >= reservation.`

// The rollback's cause: a restarted kubelet's own records in the journal
// (another process's forged line is not read), on the layers it was
// started with, and on the node's setup read now.
func TestCause(t *testing.T) {
	src, l := layersOn(t, baseConfig+"kubeReserved:\n  memory: 100Ti\n")
	fatal := klogLine('E', 4242, "kubelet.go:1845", "Failed to start ContainerManager", "err", reservedWords)
	j := fakeJournal{
		run: []map[string]any{
			kubeletRec(4242, klogLine('I', 4242, "server.go:1", "Kubelet version", "kubeletVersion", "v1.37.2")),
			{"_PID": "77", "_COMM": "logger", "_SYSTEMD_UNIT": "kubelet.service", "MESSAGE": commandFailed(4242, "failed to run Kubelet: running with swap on is not supported")},
			kubeletRec(4242, fatal),
		},
		systemd: []map[string]any{systemdRec("kubelet.service: Main process exited, code=exited, status=1/FAILURE", "EXIT_CODE", "exited", "EXIT_STATUS", "1")},
	}
	prog := j.install(t)
	wantReserved := want{class: "reserved-beyond-capacity", field: "kubeReserved.memory", value: "100Ti", origin: "/var/lib/kubelet/config.yaml:5"}
	for name, layers := range map[string]*Layers{"its layers": l, "the node's setup now": nil} {
		t.Run("journal, "+name, func(t *testing.T) {
			x := Cause(context.Background(), layers, src, Restarted{Unit: "kubelet.service", PID: 4242, Invocation: inv, Journalctl: prog})
			wantReserved.check(t, x)
			if !x.Input.Trusted || x.Process == nil || x.Process.PID != 4242 || x.Process.Exit != "exited, status=1/FAILURE" || x.Process.Lines != 2 {
				t.Errorf("input %+v, process %+v", x.Input, x.Process)
			}
			if s := x.Summary(); !strings.Contains(s, "kubeReserved.memory=100Ti from /var/lib/kubelet/config.yaml:5") {
				t.Errorf("summary %q", s)
			}
		})
	}
	t.Run("log lines", func(t *testing.T) {
		x := Cause(context.Background(), l, src, Restarted{Lines: []string{fatal}})
		wantReserved.check(t, x)
		if x.Input.Trusted || x.Input.Kind != "log" {
			t.Errorf("input %+v", x.Input)
		}
	})
	t.Run("killed, no words", func(t *testing.T) {
		x := Cause(context.Background(), l, src, Restarted{Lines: []string{}, Code: "killed", Status: "9"})
		if x.Class != "killed-signal" || !x.Failed() {
			t.Errorf("class %s", x.Class)
		}
	})
	t.Run("nothing said", func(t *testing.T) {
		x := Cause(context.Background(), l, src, Restarted{Lines: []string{klogLine('I', 5, "server.go:1", "Started kubelet")}})
		if x.Failed() {
			t.Errorf("class %s: a failure found in nothing", x.Class)
		}
	})
}

// A caller's rendering stands for config.ToMap's: the value read is the
// one it renders, for the configuration it is asked for.
func TestFieldValueThroughRender(t *testing.T) {
	_, l := layersOn(t, baseConfig+"kubeReserved:\n  memory: 100Ti\n")
	if got := l.FieldValue("kubeReserved.memory"); got != "100Ti" {
		t.Fatalf("without a renderer: %q", got)
	}
	var asked *v1beta1.KubeletConfiguration
	l2 := LayersOf(l.Setup, l.Result)
	l2.Render = func(c *v1beta1.KubeletConfiguration) (map[string]any, error) {
		asked = c
		return map[string]any{"kubeReserved": map[string]any{"memory": "7Gi"}}, nil
	}
	if got := l2.FieldValue("kubeReserved.memory"); got != "7Gi" || asked != l.Result.Config {
		t.Errorf("through the renderer: %q, asked for the result's configuration: %v", got, asked == l.Result.Config)
	}
}

// layersOn is a 1.37 node with config as its config file, and its layers.
func layersOn(t *testing.T, config string) (node.Source, *Layers) {
	t.Helper()
	src := node.Source{Root: tree{config: config}.write(t), KubeletVersion: "1.37", VersionSet: true}
	v, err := node.ResolveVersion(src)
	if err != nil {
		t.Fatal(err)
	}
	l, err := ReadLayers(src, v, nil)
	if err != nil {
		t.Fatal(err)
	}
	return src, l
}
