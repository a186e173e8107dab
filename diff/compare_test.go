package diff

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

const header = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"

func configFile(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(header+body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCompareSides(t *testing.T) {
	v, err := schema.Resolve("1.31")
	if err != nil {
		t.Fatal(err)
	}
	old, err := FileSide(configFile(t, "authentication:\n  anonymous:\n    enabled: false\n"), v, false)
	if err != nil || old.Refused != nil {
		t.Fatalf("old side: %+v, %v", old, err)
	}
	nw, err := FileSide(configFile(t, "maxPods: 150\nauthentication:\n  anonymous:\n    enabled: true\n"), v, false)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Compare(old, nw, v)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, ch := range c.Changes {
		paths = append(paths, ch.Path)
	}
	if strings.Join(paths, " ") != "authentication.anonymous.enabled maxPods" {
		t.Errorf("changes %q", paths)
	}
	if len(c.Breaks) != 1 || !strings.Contains(c.Breaks[0].Title, "anonymous") {
		t.Errorf("breaks %+v: want the anonymous-auth check", c.Breaks)
	}

	refused, err := FileSide(configFile(t, "maxPods: -5\n"), v, true)
	if err != nil || refused.Refused == nil {
		t.Errorf("maxPods -5: %+v, %v; want the kubelet's refusal", refused, err)
	}

	if _, err := LiveSide([]byte("{not json"), "https://127.0.0.1:10250/configz", v); err == nil || !strings.HasPrefix(err.Error(), "https://127.0.0.1:10250/configz: ") {
		t.Errorf("a bad /configz: err = %v, want it named", err)
	}
	live, err := LiveSide([]byte(`{"maxPods": 150}`), "the API server", v)
	if err != nil || live.Config.MaxPods != 150 || live.Name != "the API server" {
		t.Errorf("live side %+v, %v", live, err)
	}
}

func TestSetupSide(t *testing.T) {
	v, err := schema.Resolve("1.31")
	if err != nil {
		t.Fatal(err)
	}
	onNode, err := node.ReadSetupAs(v, node.Source{Root: "../testdata/nodes/kubeadm-1.31"})
	if err != nil {
		t.Fatal(err)
	}
	side, err := SetupSide(onNode)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(side.Name, "the node's setup (/usr/lib/systemd/system/kubelet.service, ") || side.Config.MaxPods != 150 {
		t.Errorf("the node's side: %q, maxPods %d", side.Name, side.Config.MaxPods)
	}
	given, err := node.ReadSetupAs(v, node.Source{Args: []string{"--max-pods=x"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := SetupSide(given); err == nil || !strings.Contains(err.Error(), "--max-pods") {
		t.Errorf("a bad flag: err = %v", err)
	}
	i := slices.Index(onNode.Args, "--max-pods=150")
	onNode.Args[i] = "--max-podz=150"
	if _, err := SetupSide(onNode); err == nil || !strings.HasPrefix(err.Error(), onNode.Sources[i]+": ") {
		t.Errorf("an unknown flag on the node: err = %v, want its file and line (%s)", err, onNode.Sources[i])
	}
}
