// Command bench times whole processes side by side: each command runs in
// turn, -n rounds, and bench prints each one's median wall time and peak RSS
// and the ratio of the first to the second (the baseline).
//
//	bench -n 20 -- 'bin/kubeletcfg validate x.yaml' 'baseline case x.yaml'
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"time"
)

type result struct {
	cmd     string
	walls   []time.Duration
	maxRSSK int64
}

func main() {
	n := flag.Int("n", 20, "rounds")
	dir := flag.String("dir", "", "run the commands in this directory")
	flag.Parse()
	if *dir != "" {
		if err := os.Chdir(*dir); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(2)
		}
	}
	cmds := flag.Args()
	if len(cmds) < 1 {
		fmt.Fprintln(os.Stderr, "usage: bench [-n N] 'CMD' ['BASELINE CMD']")
		os.Exit(2)
	}
	results := make([]*result, len(cmds))
	for i, c := range cmds {
		results[i] = &result{cmd: c}
	}
	for round := 0; round < *n; round++ {
		for i, c := range cmds {
			wall, rss, err := once(c)
			if err != nil {
				fmt.Fprintf(os.Stderr, "bench: %s: %v\n", c, err)
				os.Exit(2)
			}
			results[i].walls = append(results[i].walls, wall)
			results[i].maxRSSK = max(results[i].maxRSSK, rss)
		}
	}
	for _, r := range results {
		fmt.Printf("%-10s median %8.2f ms  min %8.2f ms  peak RSS %6.1f MiB  %s\n", label(r, results), ms(median(r.walls)), ms(minimum(r.walls)), float64(r.maxRSSK)/1024, r.cmd)
	}
	if len(results) == 2 {
		a, b := median(results[0].walls), median(results[1].walls)
		fmt.Printf("ratio      %.3f of the baseline's median time (1/%.1f)\n", float64(a)/float64(b), float64(b)/float64(a))
	}
}

func label(r *result, all []*result) string {
	if len(all) == 2 && r == all[1] {
		return "baseline"
	}
	return "measured"
}

// once runs a command with its output discarded; a non-zero exit is fine
// (validate exits 1 on an invalid file), a failure to start is not.
func once(c string) (time.Duration, int64, error) {
	f := strings.Fields(c)
	cmd := exec.Command(f[0], f[1:]...)
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if cmd.ProcessState == nil {
		return 0, 0, err
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return wall, ru.Maxrss, nil
}

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func minimum(d []time.Duration) time.Duration {
	m := d[0]
	for _, x := range d {
		m = min(m, x)
	}
	return m
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
