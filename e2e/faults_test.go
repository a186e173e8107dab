//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeletcfg/kubeletcfg/cluster"
)

// bgRun is a kubeletcfg started in the background, its output gathered.
type bgRun struct {
	cmd         *exec.Cmd
	mu          sync.Mutex
	out, errOut strings.Builder
	done        chan struct{}
	code        int
	started     time.Time
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *strings.Builder
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// startKubeletcfg starts kubeletcfg ARGS (the failpoints build when env
// names a failpoint) without waiting for it.
func startKubeletcfg(t *testing.T, env []string, args ...string) *bgRun {
	t.Helper()
	bin := kit.kubeletcfg
	for _, e := range env {
		if strings.HasPrefix(e, "KUBELETCFG_FAILPOINT") {
			bin = kit.kubeletcfgFailpoints
		}
	}
	r := &bgRun{cmd: exec.Command(bin, args...), done: make(chan struct{}), started: time.Now()}
	r.cmd.Env = append(os.Environ(), env...)
	r.cmd.Stdout, r.cmd.Stderr = lockedWriter{&r.mu, &r.out}, lockedWriter{&r.mu, &r.errOut}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		err := r.cmd.Wait()
		r.code = 0
		if ee, ok := err.(*exec.ExitError); ok {
			r.code = ee.ExitCode()
		}
		close(r.done)
	}()
	t.Cleanup(func() {
		select {
		case <-r.done:
		default:
			r.cmd.Process.Kill()
			<-r.done
		}
	})
	return r
}

// stderr is what it wrote on stderr so far.
func (r *bgRun) stderr() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.errOut.String()
}

func (r *bgRun) stdout() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.out.String()
}

// waitFor waits until its stderr holds s.
func (r *bgRun) waitFor(t *testing.T, s string, timeout time.Duration) {
	t.Helper()
	for end := time.Now().Add(timeout); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if strings.Contains(r.stderr(), s) {
			return
		}
		select {
		case <-r.done:
			t.Fatalf("kubeletcfg ended (exit %d) before it said %q:\n%s%s", r.code, s, r.stdout(), r.stderr())
		default:
		}
	}
	t.Fatalf("kubeletcfg did not say %q within %s:\n%s", s, timeout, r.stderr())
}

// wait waits for its end, at most timeout, and says its exit code and how
// long it ran.
func (r *bgRun) wait(t *testing.T, timeout time.Duration) (int, time.Duration) {
	t.Helper()
	select {
	case <-r.done:
		return r.code, time.Since(r.started)
	case <-time.After(timeout):
		t.Fatalf("kubeletcfg still runs after %s:\n%s", timeout, r.stderr())
	}
	return 0, 0
}

// outcome reads apply's -o json.
func outcome(t *testing.T, out string) map[string]any {
	t.Helper()
	var o map[string]any
	// The outcome first; an error follows it as a JSON object of its own.
	if err := json.NewDecoder(strings.NewReader(out)).Decode(&o); err != nil {
		t.Fatalf("apply's -o json: %v\n%s", err, out)
	}
	return o
}

// silencer is a TCP proxy in front of the API server that can stop
// answering: while silent, the bytes of every connection, open or new, go
// nowhere (a load balancer that black-holes them); once it answers again,
// new connections pass (the silenced ones stay dead).
type silencer struct {
	ln     net.Listener
	mu     sync.Mutex
	silent bool
	gen    chan struct{} // closed when silenced
	conns  []net.Conn
}

func startSilencer(t *testing.T, target string) *silencer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &silencer{ln: ln, gen: make(chan struct{})}
	t.Cleanup(func() {
		ln.Close()
		s.mu.Lock()
		for _, c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			silent, gen := s.silent, s.gen
			s.conns = append(s.conns, c)
			s.mu.Unlock()
			if silent {
				continue // accepted, never answered
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			s.mu.Lock()
			s.conns = append(s.conns, up)
			s.mu.Unlock()
			pipe := func(dst, src net.Conn) {
				buf := make([]byte, 32<<10)
				for {
					n, err := src.Read(buf)
					select {
					case <-gen:
						return // silenced: nothing more passes, nothing is closed
					default:
					}
					if n > 0 {
						dst.Write(buf[:n])
					}
					if err != nil {
						dst.Close()
						return
					}
				}
			}
			go pipe(up, c)
			go pipe(c, up)
		}
	}()
	return s
}

func (s *silencer) addr() string { return s.ln.Addr().String() }

// silence stops answering: open connections and new ones.
func (s *silencer) silence() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.silent {
		s.silent = true
		close(s.gen)
	}
}

// answer lets new connections through again.
func (s *silencer) answer() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.silent, s.gen = false, make(chan struct{})
}

// annotated says whether the Node bears kubeletcfg's cordon mark.
func annotated(t *testing.T, n *kubeletNode) bool {
	t.Helper()
	node, err := n.API.Client.CoreV1().Nodes().Get(context.Background(), n.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, ok := node.Annotations[cluster.CordonedByAnnotation]
	return ok
}

// restartScriptWith writes a restart script that stops the kubelet of the
// pid file and then runs lines (which start the next one and write its
// PID), and returns its path.
func restartScriptWith(t *testing.T, n *kubeletNode, name, lines string) string {
	t.Helper()
	path := filepath.Join(n.Dir, name)
	write(t, path, fmt.Sprintf(`#!/bin/sh
pid=%[1]s
if [ -f $pid ]; then
  p=$(cat $pid); kill $p 2>/dev/null; i=0
  while [ -e /proc/$p ] && [ "$(sed 's/.*) //' /proc/$p/stat 2>/dev/null | cut -c1)" != Z ] && [ $i -lt 500 ]; do sleep 0.02; i=$((i+1)); done
  kill -9 $p 2>/dev/null
fi
%[2]s
`, n.PidFile, lines))
	if err := os.Chmod(path, 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// kubeletLine is the shell command that runs the node's kubelet through
// the commands wrap (nohup setsid).
func kubeletLine(n *kubeletNode, wrap string) string {
	quoted := make([]string, len(n.Args))
	for i, a := range n.Args {
		quoted[i] = shellQuote(a)
	}
	return "KUBELET_CONFIG_DROPIN_DIR_ALPHA= " + wrap + " " + n.Kubelet + " " + strings.Join(quoted, " ")
}

// TestApplyFaults runs kubeletcfg apply the way nodes and operators really
// behave, on the real kubelet and control plane: Ctrl-C during a drain a
// PodDisruptionBudget blocks, an edit of the config file during the drain,
// an API server that stops answering during the watch, a restart command
// that starts the kubelet with nohup and no redirection, and a script that
// stops the kubelet and starts it in the background.
func TestApplyFaults(t *testing.T) {
	n := newNode(t, nodeOptions{cluster: true})
	ctx := context.Background()
	kc := n.API.Kubeconfig
	original := n.Base + "cgroupDriver: cgroupfs\nmaxPods: 100\n"
	apply := func(content string, more ...string) *bgRun {
		return startKubeletcfg(t, nil, n.argv("apply", append([]string{"-f", n.writeNew(t, content), "--kubeconfig", kc,
			"--stable-for", "2s", "-o", "json"}, more...)...)...)
	}

	// Ctrl-C during a drain a PodDisruptionBudget blocks: the drain stops,
	// nothing is written, the node is uncordoned, the result is printed.
	n.replicaSet(t, "web")
	n.budget(t, "web")
	r := apply("cgroupDriver: cgroupfs\nmaxPods: 121\n", "--drain", "--drain-timeout", "120s")
	r.waitFor(t, "refused", 60*time.Second)
	if !n.cordoned(t) || !annotated(t, n) {
		t.Fatal("the drain runs on a node not cordoned by kubeletcfg")
	}
	signaled := time.Now()
	r.cmd.Process.Signal(os.Interrupt)
	code, _ := r.wait(t, 30*time.Second)
	res := outcome(t, r.stdout())
	if code != 2 || res["interrupted"] != true || res["applied"] == true {
		t.Errorf("SIGINT during the drain: exit %d, %v\n%s", code, res, r.stderr())
	}
	if n.cordoned(t) || annotated(t, n) {
		t.Errorf("the node stays cordoned after SIGINT:\n%s", r.stderr())
	}
	if b, _ := os.ReadFile(n.Config); string(b) != original {
		t.Errorf("the config file changed:\n%s", b)
	}
	t.Logf("SIGINT during a blocked drain: ended, uncordoned, in %s", time.Since(signaled).Round(time.Millisecond))

	// An edit of the config file during the drain: the apply refuses it by
	// name once the drain is over, and writes nothing.
	r = apply("cgroupDriver: cgroupfs\nmaxPods: 122\n", "--drain", "--drain-timeout", "120s")
	r.waitFor(t, "refused", 60*time.Second)
	edited := original + "# edited by hand during the drain\n"
	write(t, n.Config, edited)
	if err := n.API.Client.PolicyV1().PodDisruptionBudgets(n.Namespace).Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	code, _ = r.wait(t, 60*time.Second)
	if code != 2 || !strings.Contains(r.stdout()+r.stderr(), n.Config) || !strings.Contains(r.stdout()+r.stderr(), "changed since the plan") {
		t.Errorf("an edit during the drain: exit %d\n%s%s", code, r.stdout(), r.stderr())
	}
	if b, _ := os.ReadFile(n.Config); string(b) != edited {
		t.Errorf("the edit was overwritten:\n%s", b)
	}
	if n.cordoned(t) {
		t.Error("the node stays cordoned after the refusal")
	}
	write(t, n.Config, original)

	// The API server stops answering during the watch: the change cannot be
	// confirmed, so it is rolled back within --health-timeout with the full
	// result (exit 3), and the node is uncordoned once the API server
	// answers again — not left to the guard's SIGKILL.
	proxy := startSilencer(t, strings.TrimPrefix(n.API.URL, "https://"))
	viaProxy := n.API.CA.kubeconfig(t, "https://"+proxy.addr(), "faults-admin", "kubeletcfg-e2e-faults", "system:masters")
	r = startKubeletcfg(t, nil, n.argv("apply", "-f", n.writeNew(t, "cgroupDriver: cgroupfs\nmaxPods: 123\n"), "--kubeconfig", viaProxy,
		"--drain", "--stable-for", "2s", "--health-timeout", "20s", "-o", "json")...)
	r.waitFor(t, "restarted", 60*time.Second)
	proxy.silence()
	silenced := time.Now()
	r.waitFor(t, "rolling back", 40*time.Second)
	watched := time.Since(silenced)
	proxy.answer()
	code, _ = r.wait(t, 60*time.Second)
	res = outcome(t, r.stdout())
	if code != 3 || res["rolledBack"] != true {
		t.Errorf("a silent API server during the watch: exit %d, %v\n%s", code, res, r.stderr())
	}
	if watched > 20*time.Second+2*time.Second+5*time.Second {
		t.Errorf("the watch ended %s after the API server went silent, with --health-timeout 20s", watched)
	}
	if n.cordoned(t) {
		t.Errorf("the node stays cordoned:\n%s", r.stderr())
	}
	if b, _ := os.ReadFile(n.Config); string(b) != original {
		t.Errorf("the config file after the rollback:\n%s", b)
	}
	t.Logf("a silent API server during the watch: rolled back after %s, exit 3 %s after the start", watched.Round(time.Millisecond), time.Since(r.started).Round(time.Millisecond))

	// A restart command that starts the kubelet in the background with
	// nohup and no redirection: a healthy apply, and the kubelet lives on.
	nohup := restartScriptWith(t, n, "restart-nohup.sh", kubeletLine(n, "nohup setsid")+" &\necho $! >$pid\n"+recordLine())
	code, out, errOut := kubeletcfg(t, nil, append(append(append([]string{"apply"}, withRestart(n.applyArgs(), nohup)...),
		"-f", n.writeNew(t, "cgroupDriver: cgroupfs\nmaxPods: 124\n"), "--stable-for", "2s", "--"), n.Args...)...)
	if code != 0 {
		t.Errorf("a nohup-style restart command: exit %d\n%s%s", code, out, errOut)
	}
	pid := readPid(n.PidFile)
	time.Sleep(3 * time.Second)
	if !running(pid) {
		t.Errorf("the kubelet the nohup-style command started (pid %d) died after the apply", pid)
	}
	n.waitHealthy(t)

	// A script that stops the kubelet, then starts it in the background and
	// writes its PID a while later: the apply waits for the new PID.
	later := restartScriptWith(t, n, "restart-later.sh", "rm -f $pid\n( sleep 2; "+kubeletLine(n, "setsid")+" >>"+n.Log+" 2>&1 </dev/null & echo $! >$pid; "+recordLine()+" ) >/dev/null 2>&1 &")
	code, out, errOut = kubeletcfg(t, nil, append(append(append([]string{"apply"}, withRestart(n.applyArgs(), later)...),
		"-f", n.writeNew(t, "cgroupDriver: cgroupfs\nmaxPods: 125\n"), "--stable-for", "2s", "--"), n.Args...)...)
	if code != 0 {
		t.Errorf("a restart script that starts the kubelet in the background: exit %d\n%s%s", code, out, errOut)
	}
	n.waitHealthy(t)
}

// withRestart is a node's apply flags with another restart command.
func withRestart(args []string, restart string) []string {
	out := append([]string(nil), args...)
	for i := range out {
		if out[i] == "--restart-command" && i+1 < len(out) {
			out[i+1] = restart
		}
	}
	return out
}

// TestApplyFailpoints stops kubeletcfg apply --drain at every step — kill
// -9, SIGINT and SIGTERM — on the real kubelet and control plane, and
// checks each time: the config file holds the old content or the new, byte
// for byte; the kubelet runs healthy on it (diff --live through the API
// server: no drift); the node is uncordoned once recover --kubeconfig has run
// (after a kill -9: what an operator does); and the next apply succeeds.
func TestApplyFailpoints(t *testing.T) {
	n := newNode(t, nodeOptions{cluster: true})
	kc := n.API.Kubeconfig
	start := time.Now()
	good := 200
	for _, step := range []string{"after-cordon", "mid-drain", "after-backup", "after-write", "after-restart", "during-watch", "during-rollback", "before-uncordon"} {
		for _, sig := range []string{"KILL", "INT", "TERM"} {
			name := step + "/" + sig
			old, _ := os.ReadFile(n.Config)
			content := fmt.Sprintf("cgroupDriver: cgroupfs\nmaxPods: %d\n", good+1)
			if step == "during-rollback" {
				// The kubelet exits on it: a rollback (past the preflight,
				// which would refuse it before anything is written).
				content += fatalAtStart
			}
			if step == "mid-drain" {
				n.replicaSet(t, fmt.Sprintf("web-%s", strings.ToLower(sig)))
			}
			newFile := n.writeNew(t, content)
			want, _ := os.ReadFile(newFile)
			code, out, errOut := kubeletcfg(t, []string{"KUBELETCFG_FAILPOINT=" + step, "KUBELETCFG_FAILPOINT_SIGNAL=" + sig},
				n.argv("apply", "-f", newFile, "--skip-preflight", "--kubeconfig", kc, "--drain", "--drain-timeout", "60s", "--stable-for", "1s", "--health-timeout", "20s")...)
			if sig == "KILL" && code != -1 {
				t.Errorf("%s: not killed: exit %d\n%s%s", name, code, out, errOut)
			}
			if sig != "KILL" && code == -1 {
				t.Errorf("%s: killed by the signal, not ended by its handler\n%s", name, errOut)
			}
			if sig == "KILL" {
				// The guard (when the journal was written) finishes; then the
				// operator's recover lifts what kubeletcfg cordoned.
				waitGuard(t, n)
				if code, out, errOut := kubeletcfg(t, nil, "recover", "--state-dir", n.StateDir, "--restart-command", n.Restart,
					"--pid-file", n.PidFile, "--kubelet-log", n.Log, "--kubeconfig", kc, "--node", n.Name); code != 0 {
					t.Errorf("%s: recover: exit %d\n%s%s", name, code, out, errOut)
				}
			}
			got, _ := os.ReadFile(n.Config)
			if string(got) != string(old) && string(got) != string(want) {
				t.Errorf("%s: the config file is neither the old nor the new:\n%s", name, got)
			}
			n.waitHealthy(t)
			n.waitReady(t, time.Time{}, 60*time.Second)
			live := func() (int, string) {
				code, out, errOut := kubeletcfg(t, nil, append([]string{"diff", "--live", "--kubeconfig", kc, "--node", n.Name, "--kubelet-version", n.Minor, "--"}, n.Args...)...)
				return code, out + errOut
			}
			code, said := live()
			for end := time.Now().Add(15 * time.Second); code == 2 && time.Now().Before(end); time.Sleep(500 * time.Millisecond) {
				code, said = live() // the kubelet's API a moment after its healthz
			}
			if code != 0 {
				t.Errorf("%s: the kubelet does not run the file (diff --live exit %d)\n%s", name, code, said)
			}
			if n.cordoned(t) {
				t.Errorf("%s: the node stays cordoned\n%s", name, errOut)
			}
			good += 2
			next := n.writeNew(t, fmt.Sprintf("cgroupDriver: cgroupfs\nmaxPods: %d\n", good))
			if code, out, errOut := kubeletcfg(t, nil, n.argv("apply", "-f", next, "--stable-for", "1s")...); code != 0 {
				t.Fatalf("%s: the next apply: exit %d\n%s%s", name, code, out, errOut)
			}
		}
	}
	t.Logf("24 applies stopped at 8 steps by 3 signals, each checked and followed by a good apply: %s", time.Since(start).Round(time.Second))
}

// waitGuard waits until no apply's guard holds the node: the lock free and
// no journal left (the guard, started with the journal, removed it; before
// the journal there is no guard).
func waitGuard(t *testing.T, n *kubeletNode) {
	t.Helper()
	for end := time.Now().Add(60 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(n.StateDir, "journal.json")); err != nil {
			if f, err := os.OpenFile(filepath.Join(n.StateDir, "lock"), os.O_RDWR, 0); err == nil {
				free := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
				f.Close()
				if free {
					return
				}
			} else {
				return
			}
		}
	}
	log, _ := os.ReadFile(filepath.Join(n.StateDir, "guard.log"))
	t.Fatalf("the guard did not finish within 60 s:\n%s", log)
}
