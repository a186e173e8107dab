package diff

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

// Run compares NEW with --against, and by default with the node's
// /var/lib/kubelet/config.yaml under its root.
func TestRunFiles(t *testing.T) {
	v, err := schema.Resolve("1.31")
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	head := "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
	cur := filepath.Join(root, "var/lib/kubelet/config.yaml")
	next := filepath.Join(root, "new.yaml")
	if err := os.MkdirAll(filepath.Dir(cur), 0o755); err != nil {
		t.Fatal(err)
	}
	for p, c := range map[string]string{cur: head + "maxPods: 100\n", next: head + "maxPods: 120\n"} {
		if err := os.WriteFile(p, []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, req := range []Request{
		{Version: v, New: next, Against: cur},
		{Version: v, New: next, Source: node.Source{Root: root}},
	} {
		res, err := Run(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Changes) != 1 || res.Changes[0].Path != "maxPods" || res.Old.Name != cur || res.New.Name != next || res.Flags != nil {
			t.Errorf("%+v: %+v", req, res)
		}
	}
	if _, err := Run(context.Background(), Request{Version: v}); err == nil || !strings.Contains(err.Error(), "give NEW") {
		t.Errorf("nothing to compare: %v", err)
	}
}
