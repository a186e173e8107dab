package effective

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

// BenchmarkEffective layers the bench node: a config, 20 drop-ins, 30 flags.
func BenchmarkEffective(b *testing.B) {
	dir, _ := filepath.Abs("../testdata/bench/effective-node")
	raw, err := os.ReadFile(filepath.Join(dir, "args"))
	if err != nil {
		b.Fatal(err)
	}
	args := strings.Fields(string(raw))
	v := schema.Newest()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compute(Input{Setup: &node.Setup{Version: v, Kubelet: node.Kubelet{Args: args}, Dir: dir}}); err != nil {
			b.Fatal(err)
		}
	}
}
