// Command kubeletcfg owns a node's kubelet configuration, exactly as each
// kubelet version reads it: validate, effective (with origins), migrate,
// diff, apply (with backup, guard and rollback), audit, fleet. The commands
// (root.go lists them) are flags, one library call and printing.
package main

import (
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], streams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}))
}
