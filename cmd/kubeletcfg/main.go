// Command kubeletcfg owns a node's kubelet configuration: it validates it for a
// kubelet version, shows that version's defaults and explains its fields.
package main

import (
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], streams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}))
}
