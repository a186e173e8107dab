package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkCommand runs each command of make bench in this process, on the
// same inputs (testdata/bench): the warm cost of a command, the process's
// start and its first-use costs (tables read, reflection caches, pages
// touched) left out; make bench measures whole processes. A run after the
// first finds the documents it decodes remembered (config.Decode).
func BenchmarkCommand(b *testing.B) {
	bench, err := filepath.Abs("../../testdata/bench")
	if err != nil {
		b.Fatal(err)
	}
	read := func(name string) string {
		raw, err := os.ReadFile(filepath.Join(bench, name, "args"))
		if err != nil {
			b.Fatal(err)
		}
		return strings.Join(strings.Fields(string(raw)), " ")
	}
	for _, c := range []struct{ name, dir, args string }{
		{"validate", bench, "validate --kubelet-version 1.37 ../nodes/kubeadm-1.31/var/lib/kubelet/config.yaml"},
		{"effective", filepath.Join(bench, "effective-node"), "effective --kubelet-version 1.37 -- " + read("effective-node")},
		{"migrate", bench, "migrate --kubelet-version 1.37 -- " + read("migrate-node")},
		{"diff", bench, "diff --kubelet-version 1.37 --root node node/new-config.yaml"},
		{"audit", bench, "audit --kubelet-version 1.37 --root node"},
		{"apply", bench, "apply --dry-run --kubelet-version 1.37 --root node --node node-21 -f node/new-config.yaml"},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.Chdir(c.dir)
			args := strings.Fields(c.args)
			b.ReportAllocs()
			for b.Loop() {
				if code := run(args, streams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard}); code > exitFailed {
					b.Fatalf("%s: exit %d", c.name, code)
				}
			}
		})
	}
}
