// Package harness runs the collection under ansible/ with the real
// ansible-playbook against hosts on this machine (ansible_connection:
// local), each with its own node tree, and records every task result.
package harness

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubeletcfg/kubeletcfg/internal/testkit"
)

// Env is a built kubeletcfg and the collection installed for one test.
type Env struct {
	Repo        string // the repository's top directory
	Dir         string // the test's directory
	Bin         string // kubeletcfg, built from the checkout
	Collections string // ANSIBLE_COLLECTIONS_PATH with the collection installed
}

// Setup builds kubeletcfg and installs the collection with ansible-galaxy.
func Setup(t testing.TB, repo, dir string) *Env {
	t.Helper()
	e, err := New(repo, dir)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// New is Setup for a TestMain: one build and one installed collection
// shared by every test of a package.
func New(repo, dir string) (*Env, error) {
	for _, tool := range []string{"ansible-playbook", "ansible-galaxy", "ansible-doc"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Errorf("%s is not installed (make ansible-test installs Debian's ansible-core)", tool)
		}
	}
	repo, _ = filepath.Abs(repo)
	e := &Env{Repo: repo, Dir: dir, Bin: filepath.Join(dir, "kubeletcfg"), Collections: filepath.Join(dir, "collections")}
	build := exec.Command("go", "build", "-o", e.Bin, "./cmd/kubeletcfg")
	build.Dir = repo
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("build kubeletcfg: %v\n%s", err, out)
	}
	if out, err := exec.Command("ansible-galaxy", "collection", "install", "--force", "-p", e.Collections, filepath.Join(repo, "ansible")).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("ansible-galaxy collection install: %v\n%s", err, out)
	}
	return e, nil
}

// Environ is the environment every ansible command of the test runs with:
// only the collection installed here, the recorder callback, no cows.
func (e *Env) Environ(record string) []string {
	return append(os.Environ(),
		"ANSIBLE_COLLECTIONS_PATH="+e.Collections,
		"ANSIBLE_CALLBACK_PLUGINS="+filepath.Join(e.Repo, "ansible", "tests", "callback_plugins"),
		"ANSIBLE_CALLBACKS_ENABLED=record",
		"KUBELETCFG_RECORD="+record,
		"ANSIBLE_NOCOWS=1",
		"ANSIBLE_FORCE_COLOR=0",
		"ANSIBLE_HOST_KEY_CHECKING=0",
		"ANSIBLE_LOCAL_TEMP="+filepath.Join(e.Dir, "ansible-tmp"),
		"ANSIBLE_REMOTE_TMP="+filepath.Join(e.Dir, "ansible-tmp"),
		"ANSIBLE_RETRY_FILES_ENABLED=0",
		"PATH="+filepath.Join(e.Dir, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"),
	)
}

// Host is one inventory host and its variables.
type Host struct {
	Name string
	Vars map[string]any
}

// Inventory writes an inventory of hosts in the group kubelet_nodes, all on
// this machine, and returns its path. Privileges are taken with su (this
// machine has no sudo; the tests run as root).
func (e *Env) Inventory(t testing.TB, hosts []Host) string {
	t.Helper()
	return e.GroupInventory(t, hosts, nil)
}

// GroupInventory is Inventory with variables of the group kubelet_nodes
// (as group_vars/kubelet_nodes.yml would give them).
func (e *Env) GroupInventory(t testing.TB, hosts []Host, groupVars map[string]any) string {
	t.Helper()
	all := map[string]any{}
	for _, h := range hosts {
		vars := map[string]any{
			"ansible_connection":         "local",
			"ansible_python_interpreter": "/usr/bin/python3",
			"ansible_become_method":      "su",
			"kubeletcfg_binary":          e.Bin,
		}
		for k, v := range h.Vars {
			vars[k] = v
		}
		all[h.Name] = vars
	}
	group := map[string]any{"hosts": all}
	if groupVars != nil {
		group["vars"] = groupVars
	}
	inv := map[string]any{"kubelet_nodes": group}
	raw, _ := json.MarshalIndent(inv, "", "  ")
	f, err := os.CreateTemp(e.Dir, "inventory-*.yml") // JSON is YAML
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(raw); err != nil {
		t.Fatal(err)
	}
	return f.Name()
}

// Event is one task result as Ansible reported it.
type Event struct {
	Host   string         `json:"host"`
	Task   string         `json:"task"`
	Status string         `json:"status"` // ok, failed, skipped, unreachable
	Become bool           `json:"become"` // the task ran with privilege escalation
	Result map[string]any `json:"result"`
}

// Run is one ansible-playbook run.
type Run struct {
	Code   int
	Output string
	Took   time.Duration
	CPU    time.Duration // user and system time of ansible-playbook and what it ran
	Events []Event
	// Stats is the play recap: per host, ok, changed, failed, ... counts.
	Stats map[string]map[string]int
}

// Playbook runs ansible-playbook (a file, or a collection's playbook by its
// name) with extra variables and arguments.
func (e *Env) Playbook(t testing.TB, inventory, playbook string, extra map[string]any, args ...string) *Run {
	t.Helper()
	record, err := os.CreateTemp(e.Dir, "record-*.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	record.Close()
	argv := []string{"-i", inventory, playbook}
	if extra != nil {
		raw, _ := json.Marshal(extra)
		argv = append(argv, "-e", string(raw))
	}
	cmd := exec.Command("ansible-playbook", append(argv, args...)...)
	cmd.Env = e.Environ(record.Name())
	cmd.Dir = e.Dir
	start := time.Now()
	out, err := cmd.CombinedOutput()
	r := &Run{Output: string(out), Took: time.Since(start)}
	if cmd.ProcessState != nil {
		r.CPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		r.Code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(record.Name())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var ev Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("record: %v", err)
		}
		if ev.Status == "stats" {
			raw, _ := json.Marshal(ev.Result)
			if err := json.Unmarshal(raw, &r.Stats); err != nil {
				t.Fatalf("record: stats: %v", err)
			}
			continue
		}
		r.Events = append(r.Events, ev)
	}
	return r
}

// Of is the events of a task (by name prefix) on a host, in order.
func (r *Run) Of(host, task string) []Event {
	var out []Event
	for _, ev := range r.Events {
		if ev.Host == host && strings.HasPrefix(ev.Task, task) {
			out = append(out, ev)
		}
	}
	return out
}

// One is the single event of a task on a host; the test fails if there is
// not exactly one.
func (r *Run) One(t testing.TB, host, task string) Event {
	t.Helper()
	evs := r.Of(host, task)
	if len(evs) != 1 {
		t.Fatalf("%s on %s: %d results, want one\n%s", task, host, len(evs), r.Output)
	}
	return evs[0]
}

// Task is the single event of the task named exactly name on a host; the
// test fails if there is not exactly one.
func (r *Run) Task(t testing.TB, host, name string) Event {
	t.Helper()
	var out []Event
	for _, ev := range r.Events {
		if ev.Host == host && ev.Task == name {
			out = append(out, ev)
		}
	}
	if len(out) != 1 {
		t.Fatalf("%s on %s: %d results, want one\n%s", name, host, len(out), r.Output)
	}
	return out[0]
}

// Index is the position of the first event of a task on a host, -1 if none.
func (r *Run) Index(host, task string) int {
	for i, ev := range r.Events {
		if ev.Host == host && strings.HasPrefix(ev.Task, task) {
			return i
		}
	}
	return -1
}

// Changed is the event's changed flag.
func (ev Event) Changed() bool { b, _ := ev.Result["changed"].(bool); return b }

// Msg is the event's msg.
func (ev Event) Msg() string { s, _ := ev.Result["msg"].(string); return s }

// String names the event for failure messages.
func (ev Event) String() string {
	raw, _ := json.Marshal(ev.Result)
	return fmt.Sprintf("%s %s: %s %s", ev.Host, ev.Task, ev.Status, raw)
}

// StandIn makes a node tree for a host whose kubelet is a stand-in: a copy
// of the sample kubeadm node (testdata/nodes/kubeadm-1.31) named name, with
// healthz off (--healthz-port=0: the watch is then the process staying up)
// and a restart command that starts a long-running process as the
// "kubelet", or, when the config file asks for the systemd cgroup driver
// (which this machine's kubelet cannot run) or the file "broken" is in the
// tree (a kubelet that no configuration brings up), one that logs an error
// on a klog line of its own process (for the systemd driver, the real
// kubelet's words) and exits half a second after it started, as the real
// kubelet does. The host variables for the rollout playbook are returned.
func (e *Env) StandIn(t testing.TB, name, config string) map[string]any {
	t.Helper()
	root := filepath.Join(e.Dir, "nodes", name)
	if err := testkit.CopyTree(filepath.Join(e.Repo, "testdata", "nodes", "kubeadm-1.31"), root); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "etc", "hostname"), name+"\n")
	writeFile(t, filepath.Join(root, "var", "lib", "kubelet", "config.yaml"), config)
	extra := filepath.Join(root, "etc", "default", "kubelet")
	old, err := os.ReadFile(extra)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, extra, strings.Replace(string(old), `KUBELET_EXTRA_ARGS="`, `KUBELET_EXTRA_ARGS="--healthz-port=0 `, 1))
	script := filepath.Join(root, "restart-kubelet")
	writeFile(t, script, `#!/bin/sh
# A stand-in kubelet for tests: stop the last one, start the next.
root=`+root+`
[ -f $root/kubelet.pid ] && kill "$(cat $root/kubelet.pid)" 2>/dev/null
echo "restart $(date +%s.%N)" >> $root/restarts
if grep -q '^cgroupDriver: systemd' $root/var/lib/kubelet/config.yaml; then
  sh -c 'sleep 0.5; echo "E1201 00:00:00.000000 $$ run.go:72] \"command failed\" err=\"failed to run Kubelet: failed to create kubelet: systemd not running on this host, cannot use systemd cgroups manager\"" >> '$root'/kubelet.log; exit 1' >/dev/null 2>&1 &
elif [ -f $root/broken ]; then
  sh -c 'sleep 0.5; echo "E1201 00:00:00.000000 $$ run.go:72] \"command failed\" err=\"failed to run Kubelet: the stand-in is broken\"" >> '$root'/kubelet.log; exit 1' >/dev/null 2>&1 &
else
  setsid sleep 600 >/dev/null 2>&1 &
fi
echo $! > $root/kubelet.pid
`)
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if b, err := os.ReadFile(filepath.Join(root, "kubelet.pid")); err == nil {
			exec.Command("kill", strings.TrimSpace(string(b))).Run()
		}
	})
	if out, err := exec.Command(script).CombinedOutput(); err != nil {
		t.Fatalf("start the stand-in kubelet of %s: %v\n%s", name, err, out)
	}
	return map[string]any{
		"kubelet_root":            root,
		"kubelet_version":         "1.31",
		"kubelet_restart_command": script,
		"kubelet_pid_file":        filepath.Join(root, "kubelet.pid"),
		"kubelet_log":             filepath.Join(root, "kubelet.log"),
		"kubelet_stable_for":      1,
		"kubelet_health_timeout":  10,
		// A copy of a kubeadm node without kubeadm's ConfigMap: a change of
		// its config.yaml may be reverted by the next kubeadm upgrade, which
		// these stand-ins accept (the kubeadm tests set kubelet_persist).
		"kubelet_force_unmanaged": true,
	}
}

// Restarts is how many times the stand-in kubelet of a tree was (re)started.
func Restarts(t testing.TB, root string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "restarts"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "restart ")
}

// FakeKubectl puts a kubectl on the PATH of the test's ansible commands
// that does what the rollout playbook asks of kubectl to a node's
// schedulability, without an API server: drain and cordon mark the node
// cordoned, uncordon clears it, get node prints spec.unschedulable. Every
// call is logged, one line of arguments each. It returns the log's path.
func (e *Env) FakeKubectl(t testing.TB) string {
	t.Helper()
	state := filepath.Join(e.Dir, "kubectl")
	writeFile(t, filepath.Join(state, "calls"), "")
	writeFile(t, filepath.Join(e.Dir, "bin", "kubectl"), `#!/bin/sh
# A stand-in kubectl for tests: node schedulability in files.
state=`+state+`
echo "$*" >> $state/calls
node=
for a in "$@"; do
  case "$a" in -*|get|node|nodes|drain|cordon|uncordon) ;; *) [ -z "$node" ] && node=$a ;; esac
done
case "$1" in
  drain|cordon) touch "$state/cordoned-$node" ;;
  uncordon) rm -f "$state/cordoned-$node" ;;
  get) if [ -f "$state/cordoned-$node" ]; then echo true; fi ;;
  *) echo "kubectl (test stand-in): $1 not handled" >&2; exit 1 ;;
esac
`)
	if err := os.Chmod(filepath.Join(e.Dir, "bin", "kubectl"), 0o755); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(state, "calls")
}

// Cordoned says whether the fake kubectl has the node cordoned; Cordon
// sets it, as an operator's kubectl cordon would.
func (e *Env) Cordoned(node string) bool {
	_, err := os.Stat(filepath.Join(e.Dir, "kubectl", "cordoned-"+node))
	return err == nil
}

// Cordon marks the node cordoned for the fake kubectl.
func (e *Env) Cordon(t testing.TB, node string) {
	t.Helper()
	writeFile(t, filepath.Join(e.Dir, "kubectl", "cordoned-"+node), "")
}

// Uncordon clears the mark.
func (e *Env) Uncordon(t testing.TB, node string) {
	t.Helper()
	if err := os.Remove(filepath.Join(e.Dir, "kubectl", "cordoned-"+node)); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
}

// WriteFile writes a file of the test (directories made as needed).
func WriteFile(t testing.TB, path, content string) { t.Helper(); writeFile(t, path, content) }

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
