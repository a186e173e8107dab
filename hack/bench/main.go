// Command bench times whole processes side by side against a fixed floor: in
// every round it runs the floor binary's `version`, and for each case the
// same arguments under the floor binary ("before") and under the binary
// measured ("after"), in a shuffled order, with their output discarded. It
// prints each one's median and minimum wall time, its peak RSS (the largest
// over the rounds) and its median's ratio to the median of the floor's
// `version`, so the denominator is the same for before and after and does not
// move with the code measured.
//
//	bench -n 30 -floor _build/floor/kubeletcfg -bin bin/kubeletcfg \
//	  'validate=validate --kubelet-version 1.37 x.yaml' \
//	  'effective@testdata/bench/effective-node=effective -- --config=config.yaml'
//
// A case is NAME=ARGS, or NAME@DIR=ARGS to run in DIR; words of ARGS after
// " ++ " are given to the measured binary only. Without -floor, the
// first command line given is timed against the second (the old use).
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// Targets the table is checked against: a command's median within 1.5× the
// floor's `version`, its peak RSS within 20 MiB.
const (
	maxRatio  = 1.5
	maxRSSMiB = 20.0
)

type run struct {
	label string
	dir   string
	argv  []string
	walls []time.Duration
	cpus  []time.Duration // user + system
	rssK  int64
}

func main() {
	n := flag.Int("n", 20, "rounds")
	dir := flag.String("dir", "", "run the commands in this directory (cases may name their own)")
	floor := flag.String("floor", "", "the floor binary: its `version` is the denominator, its commands the before column")
	bin := flag.String("bin", "", "the binary measured (the after column)")
	before := flag.String("before", "", "the binary of the before column (default: the floor's), to compare two builds of a change against the floor in one run")
	flag.Parse()
	if *floor == "" {
		pair(*n, *dir, flag.Args())
		return
	}
	if *bin == "" || flag.NArg() == 0 {
		fail("usage: bench -floor BIN -bin BIN [-n N] [-dir D] NAME[@DIR]=ARGS...")
	}
	floorAbs, binAbs := abs(*floor), abs(*bin)
	beforeAbs := floorAbs
	if *before != "" {
		beforeAbs = abs(*before)
	}
	base := &run{label: "floor version", dir: *dir, argv: []string{floorAbs, "version"}}
	runs := []*run{base}
	type pairRuns struct {
		name, args    string
		before, after *run
	}
	var cases []pairRuns
	for _, c := range flag.Args() {
		name, args, ok := strings.Cut(c, "=")
		if !ok {
			fail("bench: a case is NAME=ARGS or NAME@DIR=ARGS: " + c)
		}
		cdir := *dir
		if n, d, ok := strings.Cut(name, "@"); ok {
			name, cdir = n, filepath.Join(*dir, d)
		}
		// Words after " ++ " go to the after column only: flags the binary
		// measured needs that the floor's build does not know.
		common, only, _ := strings.Cut(args, " ++ ")
		f := strings.Fields(common)
		p := pairRuns{name: name, args: args,
			before: &run{label: name + " before", dir: cdir, argv: append([]string{beforeAbs}, f...)},
			after:  &run{label: name + " after", dir: cdir, argv: append(append([]string{binAbs}, f...), strings.Fields(only)...)}}
		cases = append(cases, p)
		runs = append(runs, p.before, p.after)
	}
	order := append([]*run(nil), runs...)
	for range *n {
		rand.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, r := range order {
			r.once()
		}
	}
	fm := median(base.walls)
	fc := median(base.cpus)
	fmt.Printf("floor: %s version: median %.2f ms (CPU %.2f ms), min %.2f ms, peak RSS %.1f MiB (%d rounds)\n",
		*floor, ms(fm), ms(fc), ms(minimum(base.walls)), mib(base.rssK), *n)
	fmt.Printf("%-10s %10s %7s %8s %6s   %10s %7s %8s %6s  %s\n", "command", "before ms", "×floor", "RSS MiB", "CPU×", "after ms", "×floor", "RSS MiB", "CPU×", "target")
	over := 0
	for _, c := range cases {
		b, a := median(c.before.walls), median(c.after.walls)
		ok := "ok"
		if ratio(a, fm) > maxRatio || mib(c.after.rssK) > maxRSSMiB {
			ok, over = "OVER", over+1
		}
		fmt.Printf("%-10s %10.2f %7.2f %8.1f %6.2f   %10.2f %7.2f %8.1f %6.2f  %s\n", c.name,
			ms(b), ratio(b, fm), mib(c.before.rssK), ratio(median(c.before.cpus), fc),
			ms(a), ratio(a, fm), mib(c.after.rssK), ratio(median(c.after.cpus), fc), ok)
	}
	fmt.Printf("target: after ≤ %.1f× the floor's version (median wall time) and peak RSS ≤ %.0f MiB: %d of %d commands over\n", maxRatio, maxRSSMiB, over, len(cases))
	fmt.Println("(CPU×: median user+system time against the floor's version's, for reading only)")
	for _, c := range cases {
		fmt.Printf("  %s: %s\n", c.name, c.args)
	}
}

// pair is the two-command form: the first timed against the second.
func pair(n int, dir string, cmds []string) {
	if len(cmds) < 1 {
		fail("usage: bench [-n N] [-dir D] 'CMD' ['BASELINE CMD']")
	}
	var runs []*run
	for _, c := range cmds {
		runs = append(runs, &run{label: c, dir: dir, argv: strings.Fields(c)})
	}
	for range n {
		for _, r := range runs {
			r.once()
		}
	}
	for i, r := range runs {
		l := "measured"
		if len(runs) == 2 && i == 1 {
			l = "baseline"
		}
		fmt.Printf("%-10s median %8.2f ms  min %8.2f ms  peak RSS %6.1f MiB  %s\n", l, ms(median(r.walls)), ms(minimum(r.walls)), mib(r.rssK), r.label)
	}
	if len(runs) == 2 {
		a, b := median(runs[0].walls), median(runs[1].walls)
		fmt.Printf("ratio      %.3f of the baseline's median time (1/%.1f)\n", ratio(a, b), ratio(b, a))
	}
}

// once runs the command with its output discarded; a non-zero exit is fine
// (validate exits 1 on an invalid file, diff on a change), a failure to
// start is not.
func (r *run) once() {
	cmd := exec.Command(r.argv[0], r.argv[1:]...)
	cmd.Dir = r.dir
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if cmd.ProcessState == nil {
		fail(fmt.Sprintf("bench: %s: %v", r.label, err))
	}
	if code := cmd.ProcessState.ExitCode(); code > 1 {
		fail(fmt.Sprintf("bench: %s: exit %d (usage or I/O error): %s", r.label, code, strings.Join(r.argv, " ")))
	}
	r.walls = append(r.walls, wall)
	r.cpus = append(r.cpus, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
	r.rssK = max(r.rssK, cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss)
}

func abs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		fail(err.Error())
	}
	return a
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, msg)
	os.Exit(2)
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

func ratio(a, b time.Duration) float64 { return float64(a) / float64(b) }
func ms(d time.Duration) float64       { return float64(d) / float64(time.Millisecond) }
func mib(k int64) float64              { return float64(k) / 1024 }
