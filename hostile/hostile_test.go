package hostile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/kubeletcfg/kubeletcfg/internal/testkit"
)

// bin is the kubeletcfg binary under test, built by TestMain.
var bin string

// atimeWorks says whether reading a file updates its access time here (not
// on a noatime mount), so that a sentinel's atime shows it was read.
var atimeWorks bool

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "kubeletcfg-hostile-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	// KUBELETCFG_BIN runs the suite on another build (to see it fail on one
	// without the defences).
	if bin = os.Getenv("KUBELETCFG_BIN"); bin == "" {
		bin = filepath.Join(dir, "kubeletcfg")
		out, err := exec.Command("go", "build", "-o", bin, "../cmd/kubeletcfg").CombinedOutput()
		if err != nil {
			fmt.Fprintf(os.Stderr, "building kubeletcfg: %v\n%s", err, out)
			os.Exit(2)
		}
	}
	atimeWorks = probeAtime(dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func probeAtime(dir string) bool {
	p := filepath.Join(dir, "probe")
	if os.WriteFile(p, []byte("x"), 0o600) != nil || setOldAtime(p) != nil {
		return false
	}
	before := atime(p)
	if _, err := os.ReadFile(p); err != nil {
		return false
	}
	return atime(p) != before
}

// setOldAtime puts a file's access time before its modification time, so
// that any read updates it even under relatime.
func setOldAtime(p string) error {
	return os.Chtimes(p, time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2002, 1, 1, 0, 0, 0, 0, time.UTC))
}

func atime(p string) int64 {
	var st syscall.Stat_t
	if syscall.Lstat(p, &st) != nil {
		return -1
	}
	return st.Atim.Nano()
}

// dirs are the places of one case: R the node image (--root), I other
// inputs, O the sentinels outside the root that must stay unread.
type dirs struct{ R, I, O string }

// expand replaces @R, @I and @O in s, and @H with this machine's host
// name (what apply takes as the running node's name).
func (d dirs) expand(s string) string {
	return strings.NewReplacer("@R", d.R, "@I", d.I, "@O", d.O, "@H", hostname).Replace(s)
}

var hostname, _ = os.Hostname()

// The sentinels: a config and an env file with a value that must never show,
// a FIFO that blocks whoever opens it, and a drop-in directory.
const outsideMaxPods = "7919731"

var sentinels = map[string]string{
	"config.yaml":         "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: " + outsideMaxPods + "\n",
	"kubelet.env":         "KUBELET_EXTRA_ARGS=--max-pods=" + outsideMaxPods + "\n",
	"conf.d/50-out.conf":  "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: " + outsideMaxPods + "\n",
	"kubelet.service":     "[Service]\nExecStart=/usr/bin/kubelet --max-pods=" + outsideMaxPods + "\n",
	"fifo":                "<fifo>",
	"conf.d/fifo.conf":    "<fifo>",
	"var/lib/kubelet/x":   "x",
	"etc/hostname":        "outside-host\n",
	"var/lib/dpkg/status": "Package: kubelet\nStatus: install ok installed\nVersion: 1.30.0-1.1\n",
}

// makeFiles writes files under base: a value "-> T" is a symbolic link to T,
// "<fifo>" a FIFO, "<dir>" a directory, "<sparse N>TEXT" N bytes of a hole
// then TEXT; @R, @I, @O are expanded.
func makeFiles(t *testing.T, d dirs, base string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(base, d.expand(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.RemoveAll(p); err != nil {
			t.Fatal(err)
		}
		var err error
		switch {
		case strings.HasPrefix(content, "-> "):
			err = os.Symlink(d.expand(strings.TrimPrefix(content, "-> ")), p)
		case content == "<fifo>":
			err = syscall.Mkfifo(p, 0o600)
		case content == "<dir>":
			err = os.MkdirAll(p, 0o755)
		case strings.HasPrefix(content, "<sparse "):
			// "<sparse N>TEXT": N bytes of a hole, then TEXT (a huge file
			// that costs the test no memory).
			var n int64
			size, text, _ := strings.Cut(strings.TrimPrefix(content, "<sparse "), ">")
			if _, err = fmt.Sscan(size, &n); err == nil {
				if err = os.WriteFile(p, nil, 0o644); err == nil {
					if err = os.Truncate(p, n); err == nil {
						var f *os.File
						if f, err = os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0); err == nil {
							_, err = f.WriteString(text)
							f.Close()
						}
					}
				}
			}
		default:
			err = os.WriteFile(p, []byte(d.expand(content)), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// sample copies the embedded kubeadm node into the root.
func sample(t *testing.T, root string) {
	t.Helper()
	if err := testkit.CopyTree("../testdata/nodes/kubeadm-1.31", root); err != nil {
		t.Fatal(err)
	}
}

type hostileCase struct {
	name   string
	sample bool              // start from the embedded kubeadm node
	root   map[string]string // files of the node image
	in     map[string]string // other input files
	gen    map[string]func() []byte
	args   []string // @R, @I, @O expanded
	code   int
	want   []string // each in stdout or stderr
	stdout []string // each in stdout
	absent []string // paths that must not exist afterwards
	maxOut int      // bytes of output; default 64 KiB
	// progs are programs (shell scripts) written in @I/bin, put first on
	// PATH (a journalctl that misbehaves).
	progs map[string]string
}

const (
	maxTime = 10 * time.Second // generous for a loaded CI machine; the cases take well under a second
	maxRSS  = 200 << 20        // bytes, of the child process
)

const V = "--kubelet-version=1.31"

func repeat(s string, n int) func() []byte {
	return func() []byte { return bytes.Repeat([]byte(s), n) }
}

const head = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"

func TestHostileInput(t *testing.T) {
	for _, tc := range hostileCases {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			d := dirs{R: filepath.Join(base, "root"), I: filepath.Join(base, "in"), O: filepath.Join(base, "outside")}
			for _, p := range []string{d.R, d.I, d.O} {
				if err := os.MkdirAll(p, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if tc.sample {
				sample(t, d.R)
			}
			makeFiles(t, d, d.O, sentinels)
			makeFiles(t, d, d.R, tc.root)
			makeFiles(t, d, d.I, tc.in)
			for name, gen := range tc.gen {
				p := filepath.Join(base, d.expand(name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, gen(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			before := snapshot(t, d.O)
			stopWatch := watchFIFOs(t, d.O)

			var args []string
			for _, a := range tc.args {
				args = append(args, d.expand(a))
			}
			ctx, cancel := context.WithTimeout(context.Background(), 4*maxTime)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, args...)
			cmd.Dir = base
			if len(tc.progs) > 0 {
				progDir := filepath.Join(d.I, "bin")
				for name, script := range tc.progs {
					p := filepath.Join(progDir, name)
					if err := os.MkdirAll(progDir, 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(p, []byte("#!/bin/sh\n"+d.expand(script)), 0o755); err != nil {
						t.Fatal(err)
					}
				}
				cmd.Env = append(os.Environ(), "PATH="+progDir+":"+os.Getenv("PATH"))
			}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			start := time.Now()
			err := cmd.Run()
			elapsed := time.Since(start)
			opened := stopWatch()
			out := stdout.String() + stderr.String()
			short := out
			if len(short) > 4000 {
				short = short[:4000] + "…"
			}

			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatalf("running kubeletcfg: %v", err)
			}
			if ctx.Err() != nil {
				t.Fatalf("still running after %v: killed", 4*maxTime)
			}
			if code != tc.code {
				t.Errorf("exit %d, want %d\n%s", code, tc.code, short)
			}
			if elapsed > maxTime {
				t.Errorf("took %v, more than %v", elapsed, maxTime)
			}
			if rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10; rss > maxRSS {
				t.Errorf("peak RSS %d MiB, more than %d MiB", rss>>20, maxRSS>>20)
			}
			limit := tc.maxOut
			if limit == 0 {
				limit = 64 << 10
			}
			if len(out) > limit {
				t.Errorf("%d bytes of output, more than %d", len(out), limit)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, d.expand(w)) {
					t.Errorf("output lacks %q:\n%s", d.expand(w), short)
				}
			}
			for _, w := range tc.stdout {
				if !strings.Contains(stdout.String(), d.expand(w)) {
					t.Errorf("stdout lacks %q:\n%s", d.expand(w), stdout.String())
				}
			}
			for _, p := range tc.absent {
				if _, err := os.Lstat(d.expand(p)); err == nil {
					t.Errorf("%s was written", d.expand(p))
				}
			}
			if strings.Contains(out, outsideMaxPods) {
				t.Errorf("the output shows a value only a file outside the root holds:\n%s", short)
			}
			if opened != "" {
				t.Errorf("the FIFO %s outside the root was opened", opened)
			}
			checkUntouched(t, d.O, before)
		})
	}
}

type fileState struct {
	content string
	atime   int64
	mode    fs.FileMode
}

// snapshot records the sentinels' contents, their access times made older
// than their modification times first, so that any read shows.
func snapshot(t *testing.T, dir string) map[string]fileState {
	t.Helper()
	m := map[string]fileState{}
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		st := fileState{mode: e.Type()}
		if e.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if err := setOldAtime(p); err != nil {
				return err
			}
			st.content, st.atime = string(b), atime(p)
		}
		m[p] = st
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func checkUntouched(t *testing.T, dir string, before map[string]fileState) {
	t.Helper()
	after := map[string]bool{}
	filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		after[p] = true
		b, ok := before[p]
		switch {
		case !ok:
			t.Errorf("%s was created outside the root", p)
		case e.Type().IsRegular():
			if data, _ := os.ReadFile(p); string(data) != b.content {
				t.Errorf("%s outside the root was changed", p)
			}
			// Reading it just now does not count: compare first.
		}
		return nil
	})
	for p := range before {
		if !after[p] {
			t.Errorf("%s outside the root was removed", p)
		}
	}
	if !atimeWorks {
		return
	}
	for p, b := range before {
		if b.mode.IsRegular() && b.atime != atimeAtCheck[p] {
			t.Errorf("%s outside the root was read", p)
		}
	}
}

// atimeAtCheck holds the access times taken right after the run, before
// checkUntouched reads the files to compare them.
var atimeAtCheck = map[string]int64{}

// watchFIFOs notices any opening of the FIFOs under dir for reading: it
// keeps trying to open them for writing without blocking, which succeeds
// only while a reader has them open. The returned func stops it, records
// the sentinels' access times, and names a FIFO that was opened.
func watchFIFOs(t *testing.T, dir string) func() string {
	var fifos []string
	filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err == nil && e.Type()&fs.ModeNamedPipe != 0 {
			fifos = append(fifos, p)
		}
		return nil
	})
	var opened atomic.Value
	opened.Store("")
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			for _, p := range fifos {
				if f, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					f.Close()
					opened.Store(p)
				}
			}
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	return func() string {
		close(done)
		<-stopped
		clear(atimeAtCheck)
		filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
			if err == nil && e.Type().IsRegular() {
				atimeAtCheck[p] = atime(p)
			}
			return nil
		})
		return opened.Load().(string)
	}
}
