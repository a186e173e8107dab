//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/kubeletcfg/kubeletcfg/internal/ociimage"
)

// rolloutImageName is the name kubeletcfg's image has in the kit's
// containerds.
const rolloutImageName = "e2e.local/kubeletcfg:e2e"

var kubeletcfgImage struct {
	once sync.Once
	path string
	err  error
}

// rolloutImage packs the run's kubeletcfg (static) as an OCI archive, the
// way make image does, once a run; n.importImage imports it.
func rolloutImage(t testing.TB) string {
	t.Helper()
	kubeletcfgImage.once.Do(func() {
		bin, err := os.ReadFile(kit.kubeletcfg)
		if err != nil {
			kubeletcfgImage.err = err
			return
		}
		path := filepath.Join(kit.dir, "kubeletcfg-image.tar")
		f, err := os.Create(path)
		if err != nil {
			kubeletcfgImage.err = err
			return
		}
		defer f.Close()
		_, kubeletcfgImage.err = ociimage.Pack(f, ociimage.Image{Name: rolloutImageName, Binary: bin, Path: "kubeletcfg"})
		kubeletcfgImage.path = path
	})
	if kubeletcfgImage.err != nil {
		t.Fatal(kubeletcfgImage.err)
	}
	return kubeletcfgImage.path
}

// importImage imports kubeletcfg's image into the node's containerd.
func (n *kubeletNode) importImage(t testing.TB) {
	t.Helper()
	if out, err := n.Runtime.ctrCmd("images", "import", rolloutImage(t)); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}
