package main

import (
	"fmt"
	"strings"

	"github.com/kubeletcfg/kubeletcfg/diff"
)

// printLiveFlags says how the running command line differs (diff --live).
func printLiveFlags(s streams, l *diff.LiveFlags) {
	if l == nil {
		return
	}
	if l.Why != "" {
		fmt.Fprintf(s.Out, "command line: /flagz not read: %s\n", l.Why)
		return
	}
	if l.Against == "" {
		var set []string
		for _, f := range l.Flags {
			set = append(set, "--"+f.Name+"="+f.Value)
		}
		fmt.Fprintf(s.Out, "running command line (/flagz): %s\n", strings.Join(set, " "))
		return
	}
	for _, d := range l.Differs {
		given := d.Given + " (" + orCommandLine(d.Source) + ")"
		if d.Unset {
			given = "not given (default " + orNone(d.Given) + ")"
		}
		fmt.Fprintf(s.Out, "flag --%s: running %s, %s\n", d.Name, orNone(d.Running), given)
	}
	for _, name := range l.Classified {
		fmt.Fprintf(s.Out, "flag --%s: CLASSIFIED by the kubelet, not compared\n", name)
	}
	if len(l.Differs) == 0 {
		fmt.Fprintf(s.Out, "command line: the running kubelet's (/flagz, %d flags away from their defaults) is %s\n", len(l.Flags), l.Against)
		return
	}
	fmt.Fprintf(s.Out, "%s against %s\n", count(len(l.Differs), "flag difference"), l.Against)
}

func orCommandLine(src string) string {
	if src == "" {
		return "on the command line"
	}
	return "at " + src
}
