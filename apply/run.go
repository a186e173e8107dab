package apply

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/kubelet/config/v1beta1"

	"github.com/kubeletcfg/kubeletcfg/config"
	"github.com/kubeletcfg/kubeletcfg/diff"
	"github.com/kubeletcfg/kubeletcfg/dropins"
	"github.com/kubeletcfg/kubeletcfg/validate"
)

// Options describe one change of a node's kubelet config file.
type Options struct {
	Node    string          // must name this node
	Setup   dropins.Options // how the kubelet is started today (its --config names the file)
	NewFile []byte          // the new content of the --config file
	// Dropin, when set, names a drop-in of the kubelet's --config-dir that
	// NewFile becomes (created or replaced) instead of the --config file.
	Dropin string
	// MoreDropins are further drop-ins (Path: the file name) written with it.
	MoreDropins []FileWrite
	// Extra are more files written in the same transaction (the flag files
	// a migration rewrites).
	Extra []FileWrite
	// NewArgs, when set, is the kubelet's command line after the change (a
	// migration moves flags into the file), and ConfigPath the --config file
	// it names when the current command line names none.
	NewArgs    []string
	ConfigPath string
	DryRun     bool
	Drained    bool   // the operator confirms the node is drained (for changes that need it)
	Restart    string // shell command that restarts the kubelet
	// PIDFile, when set, holds the restarted kubelet's process ID: a kubelet
	// that exits is seen at once instead of at the end of the timeout.
	PIDFile string
	// Unit is the systemd unit restarted over D-Bus when Restart is empty
	// (default kubelet.service).
	Unit string
	// KubeletLog is the kubelet's log file, read for the cause of a failure
	// with Restart (under systemd its journal is read).
	KubeletLog string
	// KeepBackups is how many backups of the config file to keep (0: all).
	KeepBackups int
	// Configz, when set, reads the restarted kubelet's /configz: once it is
	// stable it must serve the intended configuration.
	Configz   func(ctx context.Context) ([]byte, error)
	Timeout   time.Duration
	StableFor time.Duration
	Progress  io.Writer // live progress lines; nil for none
	Now       func() time.Time
	// StartGuard starts, detached, a process that runs Guard(configFile):
	// it puts the old file back if this apply dies before confirming.
	StartGuard func(configFile string) error
}

// Outcome is what an apply did.
type Outcome struct {
	Changes    []diff.Change `json:"changes"`
	ConfigFile string        `json:"configFile"`
	Backup     string        `json:"backup,omitempty"`
	Applied    bool          `json:"applied"`
	RolledBack bool          `json:"rolledBack"`
	Cause      string        `json:"cause,omitempty"`
	// HealthyAfter is the time from the restart to the healthy verdict
	// (stability window excluded).
	HealthyAfter time.Duration `json:"healthyAfterNs,omitempty"`
	// KubeletVersion is the kubelet minor the change was judged for.
	KubeletVersion string `json:"kubeletVersion"`
	// Before and After are the effective configuration the kubelet runs
	// now and would run with the change (v1beta1 JSON of that version).
	Before json.RawMessage `json:"before,omitempty"`
	After  json.RawMessage `json:"after,omitempty"`
	// Writes are the files the change writes (or, in a dry run, would):
	// none when the change is semantically empty.
	Writes []string `json:"writes"`
}

// ErrRolledBack: the new configuration failed and the old one is back.
var ErrRolledBack = errors.New("the new configuration failed; the old one was restored")

// Run plans the change, and unless it is a dry run, applies it: lock,
// backup, atomic write, restart, health watch over a stability window, and
// on failure the old file back, a restart and a second watch.
func Run(ctx context.Context, o Options) (*Outcome, error) {
	now := o.Now
	if now == nil {
		now = time.Now
	}
	v := o.Setup.Version
	old, err := dropins.Effective(o.Setup)
	if err != nil {
		return nil, fmt.Errorf("the current setup: %w", err)
	}
	configFile := old.ConfigFile
	if configFile == "" {
		configFile = o.ConfigPath
	}
	if configFile == "" {
		return nil, fmt.Errorf("the kubelet runs without --config: migrate it first (kubeletcfg apply --from-migrate)")
	}
	path := onDisk(o.Setup, configFile)
	if err := checkNode(o, old); err != nil {
		return nil, err
	}
	if !o.DryRun {
		if was, err := Recover(path, "kubeletcfg apply --node "+o.Node, now()); err != nil {
			return nil, err
		} else if was {
			o.progress("an earlier apply of %s was interrupted: its backup is restored", path)
			if old, err = dropins.Effective(o.Setup); err != nil {
				return nil, fmt.Errorf("the current setup: %w", err)
			}
		}
	}
	target := path
	var next *dropins.Result
	if o.Dropin != "" {
		if target, err = dropinTarget(o, old, o.Dropin); err != nil {
			return nil, err
		}
		all := append([]FileWrite{{Path: o.Dropin, Content: o.NewFile}}, o.MoreDropins...)
		for _, d := range o.MoreDropins {
			full, err := dropinTarget(o, old, d.Path)
			if err != nil {
				return nil, err
			}
			o.Extra = append(o.Extra, FileWrite{Path: full, Content: d.Content})
		}
		next, err = layerWithDropins(o, old, all)
	} else {
		next, err = layerWith(o, path, o.NewFile)
	}
	if err != nil {
		return nil, fmt.Errorf("the new configuration: %w", err)
	}
	if errs := append(validate.Config(next.Config, v), validate.Startup(next.Config, v)...); len(errs) > 0 {
		var msgs []string
		for _, e := range errs {
			msgs = append(msgs, e.Message)
		}
		return nil, fmt.Errorf("the new configuration is invalid for kubelet %s: %s", v.Minor, strings.Join(msgs, "; "))
	}
	changes, err := diff.Compute(old.Config, next.Config, v)
	if err != nil {
		return nil, err
	}
	out := &Outcome{Changes: changes, ConfigFile: target, KubeletVersion: v.Minor}
	if out.Before, err = config.JSON(old.Config, v); err != nil {
		return nil, err
	}
	if out.After, err = config.JSON(next.Config, v); err != nil {
		return nil, err
	}
	if len(changes) == 0 && len(o.Extra) == 0 {
		return out, nil
	}
	out.Writes = append(out.Writes, target)
	for _, w := range o.Extra {
		out.Writes = append(out.Writes, w.Path)
	}
	if o.DryRun {
		return out, nil
	}
	var stateFiles []string
	for _, c := range changes {
		for _, cl := range c.Classes {
			switch {
			case cl == diff.DrainState && !o.Drained:
				return out, fmt.Errorf("%s changes: the node must be drained and %s removed first; drain it and give --drained", c.Path, c.StateFile)
			case cl == diff.DrainState && c.StateFile != "":
				stateFiles = append(stateFiles, filepath.Join(onDisk(o.Setup, rootDir(old)), c.StateFile))
			case cl == diff.Security:
				o.progress("security: %s %s -> %s changes the kubelet API's exposure", c.Path, diff.Value(c.Old), diff.Value(c.New))
			}
		}
	}

	lock, err := Acquire(lockPath(path), "kubeletcfg apply --node "+o.Node, now())
	if err != nil {
		return out, err
	}
	defer lock.Release()
	writes := []FileWrite{{Path: target, Content: o.NewFile}}
	writes = append(writes, o.Extra...)
	// The guard's deadline: two full watches (the change and a rollback) and
	// a margin; an apply still holding the node then is stuck.
	jr := Journal{ConfigFile: path, Restart: o.Restart, Unit: o.Unit, Started: now(), PID: os.Getpid(),
		Deadline: now().Add(2*(o.Timeout+o.StableFor) + 10*time.Second)}
	for _, w := range writes {
		fc := FileChange{Path: w.Path}
		switch _, err := os.Lstat(w.Path); {
		case errors.Is(err, fs.ErrNotExist):
			fc.Created = true
		case err != nil:
			return out, err
		default:
			if fc.Backup, err = Backup(w.Path, now()); err != nil {
				return out, err
			}
			o.progress("backup: %s", fc.Backup)
			if w.Path == target {
				out.Backup = fc.Backup
			}
		}
		jr.Files = append(jr.Files, fc)
	}
	failpoint("after-backup")
	// From here the journal says what to undo, and a guard outside this
	// process undoes it if this process dies before it confirms.
	if err := writeJournal(jr); err != nil {
		return out, err
	}
	if o.StartGuard != nil {
		if err := o.StartGuard(path); err != nil {
			removeJournal(path)
			return out, fmt.Errorf("starting the guard: %w", err)
		}
	}
	for _, w := range writes {
		if _, err := WriteFile(w.Path, w.Content); err != nil {
			if uerr := jr.undo(); uerr != nil {
				return out, fmt.Errorf("writing %s: %v; undoing: %w", w.Path, err, uerr)
			}
			removeJournal(path)
			return out, err
		}
		o.progress("wrote %s", w.Path)
	}
	// The kubelet refuses to start with a checkpoint of another policy: the
	// operator drained the node, so the stale state goes (backed up first).
	for _, sf := range stateFiles {
		if _, err := os.Stat(sf); err != nil {
			continue
		}
		b, err := Backup(sf, now())
		if err != nil {
			return out, err
		}
		if err := os.Remove(sf); err != nil {
			return out, err
		}
		o.progress("removed %s (backup %s)", sf, b)
	}
	out.Applied = true
	failpoint("after-write")
	hangpoint("after-write")

	healthy, cause := o.restartAndWatch(ctx, next.Config, &out.HealthyAfter)
	if healthy && o.Configz != nil {
		if cause = o.verifyConfigz(ctx, next); cause != "" {
			healthy = false
		}
	}
	if healthy {
		if err := removeJournal(path); err != nil {
			return out, err
		}
		if o.KeepBackups > 0 {
			if pruned, err := Prune(target, o.KeepBackups); err != nil {
				return out, err
			} else if len(pruned) > 0 {
				o.progress("removed %d old backups, keeping %d", len(pruned), o.KeepBackups)
			}
		}
		return out, nil
	}
	out.Cause = cause
	o.progress("unhealthy (%s): rolling back", cause)
	if err := jr.undo(); err != nil {
		return out, fmt.Errorf("rollback: %w (cause of the rollback: %s)", err, cause)
	}
	out.RolledBack = true
	var back time.Duration
	ok, why := o.restartAndWatch(ctx, old.Config, &back)
	if err := removeJournal(path); err != nil {
		return out, err
	}
	if !ok {
		return out, fmt.Errorf("rolled back to %s, but the kubelet is not healthy on it either: %s (cause of the rollback: %s)", out.Backup, why, cause)
	}
	return out, fmt.Errorf("%w: %s", ErrRolledBack, cause)
}

// FileWrite is a file (disk path) and its new content.
type FileWrite struct {
	Path    string
	Content []byte
}

// dropinTarget is the drop-in file --dropin names, in the kubelet's
// --config-dir.
func dropinTarget(o Options, cur *dropins.Result, name string) (string, error) {
	if name != filepath.Base(name) || filepath.Ext(name) != ".conf" || strings.HasPrefix(name, ".") {
		return "", fmt.Errorf("--dropin %q: a file name in the --config-dir ending in .conf (the kubelet reads no other), not a path", name)
	}
	if cur.ConfigDir == "" {
		return "", fmt.Errorf("--dropin: the kubelet runs without --config-dir")
	}
	if o.Setup.Root != "" {
		return "", fmt.Errorf("--dropin with --root is not supported yet")
	}
	return filepath.Join(cur.ConfigDir, name), nil
}

// layerWithDropins layers the setup with the given drop-ins (Path: file
// name) written: a copy of the --config-dir with them is layered in the
// directory's place.
func layerWithDropins(o Options, cur *dropins.Result, ds []FileWrite) (*dropins.Result, error) {
	tmp, err := os.MkdirTemp("", "kubeletcfg-dropins")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	if err := copyTree(cur.ConfigDir, tmp); err != nil {
		return nil, err
	}
	for _, d := range ds {
		if err := os.WriteFile(filepath.Join(tmp, d.Path), d.Content, 0o600); err != nil {
			return nil, err
		}
	}
	s := o.Setup
	s.Args = nil
	for _, a := range o.Setup.Args {
		if n, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); n == "config-dir" {
			continue
		}
		s.Args = append(s.Args, a)
	}
	s.Args = append(s.Args, "--config-dir="+tmp)
	res, err := dropins.Effective(s)
	if err != nil {
		return nil, err
	}
	res.ConfigDir = cur.ConfigDir
	return res, nil
}

// copyTree copies the regular files (links followed) and directories below src.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o700)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o600)
	})
}

// layerWith layers the setup (with NewArgs when set) with content as its
// --config file at path (disk path).
func layerWith(o Options, path string, content []byte) (*dropins.Result, error) {
	v := o.Setup.Version
	doc, err := config.Decode(content, config.DecodeOptions{File: path, Version: v})
	if err != nil {
		return nil, err
	}
	if errs := doc.Errors(); len(errs) > 0 {
		return nil, errs[0]
	}
	if errs := v.CheckGates(doc.Config.FeatureGates); len(errs) > 0 {
		return nil, fmt.Errorf("%s: %s", path, strings.Join(errs, "; "))
	}
	s := o.Setup
	if o.NewArgs != nil {
		s.Args, s.ArgSources = o.NewArgs, nil
	}
	s.Base = config.Default(doc.Config, v) // relative paths resolve against the real file's directory
	return dropins.Effective(s)
}

// rootDir is the kubelet's --root-dir.
func rootDir(r *dropins.Result) string {
	dir := "/var/lib/kubelet"
	if f, ok := r.Version.Flag("root-dir"); ok && f.Default != "" {
		dir = f.Default
	}
	for _, o := range r.Flags {
		if o.Flag.Name == "root-dir" {
			dir = o.Value
		}
	}
	return dir
}

func onDisk(s dropins.Options, p string) string {
	if s.Root == "" {
		return p
	}
	return filepath.Join(s.Root, p)
}

// checkNode refuses to touch a node other than the one named.
func checkNode(o Options, cur *dropins.Result) error {
	name := ""
	for _, f := range cur.Flags {
		if f.Flag.Name == "hostname-override" {
			name = f.Value
		}
	}
	if name == "" {
		if o.Setup.Root != "" {
			b, _ := os.ReadFile(filepath.Join(o.Setup.Root, "etc/hostname"))
			name = strings.TrimSpace(string(b))
		} else {
			name, _ = os.Hostname()
		}
	}
	if !strings.EqualFold(name, o.Node) {
		return fmt.Errorf("--node %s, but this node is %q: refusing to touch it", o.Node, name)
	}
	return nil
}

// restartAndWatch restarts the kubelet and watches it become healthy and
// stay so for the stability window.
func (o Options) restartAndWatch(ctx context.Context, cfg *v1beta1.KubeletConfiguration, took *time.Duration) (bool, string) {
	r := newRestarter(o.Restart, o.PIDFile, o.KubeletLog, o.Unit, o.Timeout)
	before, _, _ := r.State(ctx)
	start := time.Now()
	if err := r.Restart(ctx); err != nil {
		return false, err.Error()
	}
	o.progress("restarted (%.2fs)", time.Since(start).Seconds())
	failpoint("after-restart")
	// The old kubelet answers healthz until it is gone: when the process is
	// known, the watch starts once a new one is there.
	if before != 0 {
		for {
			if pid, _, _ := r.State(ctx); pid != 0 && pid != before {
				break // a new process (the watch below sees if it dies)
			}
			if time.Since(start) > o.Timeout {
				return false, fmt.Sprintf("no new kubelet process within %s (still pid %d)", o.Timeout, before)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	url := healthzURL(cfg)
	if url == "" {
		// healthz disabled: the process or unit must stay up for the window.
		for stable := time.Now(); time.Since(stable) < o.StableFor; time.Sleep(100 * time.Millisecond) {
			if gone, why := stateGone(ctx, r); gone {
				return false, goneCause(r, why, start)
			}
		}
		return true, ""
	}
	client := &http.Client{Timeout: time.Second}
	deadline := start.Add(o.Timeout)
	healthySince := time.Time{}
	for time.Now().Before(deadline) {
		if gone, why := stateGone(ctx, r); gone {
			return false, goneCause(r, why, start)
		}
		ok := healthz(ctx, client, url)
		switch {
		case ok && healthySince.IsZero():
			healthySince = time.Now()
			*took = healthySince.Sub(start)
			o.progress("healthy after %.2fs; watching %s", took.Seconds(), o.StableFor)
		case ok && time.Since(healthySince) >= o.StableFor:
			o.progress("stable for %s", o.StableFor)
			return true, ""
		case !ok && !healthySince.IsZero():
			return false, fmt.Sprintf("healthz answered, then failed %.2fs later (the kubelet died after starting)", time.Since(healthySince).Seconds())
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err().Error()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return false, fmt.Sprintf("not healthy within %s (%s)", o.Timeout, url)
}

// verifyConfigz compares what the kubelet serves with what it should run.
func (o Options) verifyConfigz(ctx context.Context, want *dropins.Result) string {
	raw, err := o.Configz(ctx)
	if err != nil {
		return "reading /configz: " + err.Error()
	}
	v := o.Setup.Version
	got := &v1beta1.KubeletConfiguration{}
	if err := json.Unmarshal(raw, got); err != nil {
		return "reading /configz: " + err.Error()
	}
	got, err = config.Prune(got, v)
	if err != nil {
		return err.Error()
	}
	changes, err := diff.Compute(want.Running(), got, v)
	if err != nil {
		return err.Error()
	}
	if len(changes) > 0 {
		var fields []string
		for _, c := range changes {
			fields = append(fields, fmt.Sprintf("%s %s (intended %s)", c.Path, diff.Value(c.New), diff.Value(c.Old)))
		}
		return "the kubelet serves another configuration than intended: " + strings.Join(fields, ", ")
	}
	o.progress("/configz serves the intended configuration")
	return ""
}

// goneCause says that the kubelet went away, with its own last words.
func goneCause(r restarter, why string, start time.Time) string {
	msg := fmt.Sprintf("the kubelet %s %.2fs after the restart", why, time.Since(start).Seconds())
	if cause := r.Cause(start.Add(-time.Second)); cause != "" {
		msg += ": " + cause
	}
	return msg
}

func stateGone(ctx context.Context, r restarter) (bool, string) {
	pid, gone, why := r.State(ctx)
	if !gone {
		return false, ""
	}
	if why == "exited" {
		why = fmt.Sprintf("(pid %d) exited", pid)
	}
	return true, why
}

func healthz(ctx context.Context, c *http.Client, url string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := c.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// healthzURL is where the kubelet with cfg answers healthz, "" if nowhere.
func healthzURL(cfg *v1beta1.KubeletConfiguration) string {
	if cfg.HealthzPort == nil || *cfg.HealthzPort == 0 {
		return ""
	}
	host := cfg.HealthzBindAddress
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return "http://" + host + ":" + strconv.Itoa(int(*cfg.HealthzPort)) + "/healthz"
}

func (o Options) progress(format string, args ...any) {
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, "apply: "+format+"\n", args...)
	}
}

// hangpoint stops this process for good at the named step when
// KUBELETCFG_HANGPOINT names it: a stuck kubeletcfg, for the guard's deadline.
func hangpoint(step string) {
	for os.Getenv("KUBELETCFG_HANGPOINT") == step {
		time.Sleep(time.Hour)
	}
}

// failpoint kills this process at the named step when KUBELETCFG_FAILPOINT
// names it: the tests use it to prove that a kubeletcfg that dies at any
// step leaves the node consistent.
func failpoint(step string) {
	if os.Getenv("KUBELETCFG_FAILPOINT") == step {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		time.Sleep(time.Hour) // the signal is on its way
	}
}
