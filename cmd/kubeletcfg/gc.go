package main

import (
	"os"
	"runtime/debug"
)

// A run reads a few small files and exits. With the collector's default
// first goal (a 4 MiB heap) a typical run collects once, which costs more
// time and memory than the garbage it frees: the first collection comes at
// a 16 MiB heap instead. Files at kubeletcfg's size limits are still
// collected in proportion, and at the latest when the heap reaches 256 MiB.
// GOGC and GOMEMLIMIT, when set, win.
func init() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(256 << 20)
	}
}
