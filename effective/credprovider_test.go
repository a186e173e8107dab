package effective

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

// The credential provider configuration the command line names is a layer
// of the effective configuration: read under the root, relative paths
// against the kubelet's working directory, its problems said.
func TestCredentialProviderLayer(t *testing.T) {
	root := t.TempDir()
	write := func(p, data string, mode os.FileMode) {
		full := filepath.Join(root, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(data), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("etc/kubernetes/credprov.yaml", "apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfig\nproviders:\n- name: ecr\n  matchImages: [\"*.dkr.ecr.*.amazonaws.com\"]\n  defaultCacheDuration: 12h\n  apiVersion: credentialprovider.kubelet.k8s.io/v1\n", 0o644)
	write("usr/libexec/credprov/ecr", "#!/bin/sh\n", 0o755)
	v, _ := schema.Resolve("1.37")
	s := &node.Setup{Version: v, Root: root, Dir: "/etc", Kubelet: node.Kubelet{Args: []string{"--image-credential-provider-config=kubernetes/credprov.yaml", "--image-credential-provider-bin-dir=/usr/libexec/credprov"}}}
	res, err := Compute(Input{Setup: s})
	if err != nil {
		t.Fatal(err)
	}
	cp := res.CredentialProvider
	if cp == nil || cp.Config != "/etc/kubernetes/credprov.yaml" || len(cp.Problems) != 0 || len(cp.Read.Providers) != 1 || cp.Read.Providers[0].Line != 4 {
		t.Fatalf("%+v", cp)
	}
	// The plugin is not in the bin dir: the kubelet exits at start.
	os.Remove(filepath.Join(root, "usr/libexec/credprov/ecr"))
	res, err = Compute(Input{Setup: s})
	if err != nil || len(res.CredentialProvider.Problems) != 1 || !strings.Contains(warningText(res), "plugin binary executable /usr/libexec/credprov/ecr did not exist") {
		t.Fatalf("%+v %q %v", res.CredentialProvider, res.Warnings, err)
	}
	// No such flags: no layer.
	if res, err := Compute(Input{Setup: node.Given(v)}); err != nil || res.CredentialProvider != nil {
		t.Fatalf("%v %v", res, err)
	}
}
