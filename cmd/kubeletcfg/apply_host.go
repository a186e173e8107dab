package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/kubeletcfg/kubeletcfg/apply"
	"github.com/kubeletcfg/kubeletcfg/hostexec"
	"github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/nodefile"
)

// podFlags are apply's side of a rollout's Job: run in a privileged pod
// with the host's root mounted at --root, apply acts as on the host, and
// says its outcome in a file the pod's status carries.
type podFlags struct {
	rootIsHost  bool
	outcomeFile string
	keepPod     string

	report  *os.File       // the outcome file, opened before anything else
	change  string         // apply.ChangeHash of the inputs
	restCfg *rest.Config   // the API server's, loaded before entering the host
	bin     string         // kubeletcfg as the host runs it
	host    *hostexec.Host // the host's namespaces (a restart command, the guard without systemd)

	ran      bool // apply.Run ran: out and applyErr are its
	out      *apply.Outcome
	applyErr error
}

func (p *podFlags) bind(fl *pflag.FlagSet) {
	fl.BoolVar(&p.rootIsHost, "root-is-host", false, "--root is this host's own root, mounted in a privileged pod (a rollout's Job): apply enters it and runs as on the host (its paths, its state directory, its systemd over D-Bus; a --restart-command and the guard run in the host's namespaces and cgroups, through the host's nsenter)")
	fl.StringVar(&p.outcomeFile, "outcome-file", "", "write the outcome as JSON (at most 4 KiB: outcome applied|unchanged|rolled back|refused|failed, the change's hash, time, cause) to this file, e.g. the pod's /dev/termination-log")
	fl.StringVar(&p.keepPod, "drain-keep-pod", "", "with --drain: the UID of a pod the drain leaves (the rollout Job's own pod)")
}

// enterHost prepares an apply in a pod: the outcome file is opened, the
// change's inputs and the API server's credentials read, then (with
// --root-is-host) the host's root entered, kubeletcfg copied where the host
// runs it, and the host's namespaces held for a restart command.
func (f *applyFlags) enterHost() error {
	p := &f.pod
	if p.outcomeFile != "" && p.report == nil {
		r, err := os.OpenFile(p.outcomeFile, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			return fmt.Errorf("--outcome-file: %w", err)
		}
		p.report = r
	}
	// The change's inputs, read once: hashed for the report, and kept for
	// apply (the pod's files are out of reach in the host's root).
	files := map[string][]byte{}
	f.change.ReadFile = func(path string) ([]byte, error) {
		if b, ok := files[path]; ok {
			return b, nil
		}
		b, err := nodefile.ReadFile(path, nodefile.Config)
		if err == nil {
			files[path] = b
		}
		return b, err
	}
	inputs, err := f.change.Files()
	if err != nil {
		return err
	}
	p.change = apply.ChangeHash(inputs...)
	if p.keepPod != "" {
		f.cluster.KeepPod = types.UID(p.keepPod)
	}
	if !p.rootIsHost {
		return nil
	}
	if f.root == "" {
		return fmt.Errorf("--root-is-host needs --root (where the pod mounts the host's /)")
	}
	if f.cluster.Access.Kubeconfig != "" && !f.opts.DryRun {
		cfg, err := node.RESTConfig(f.cluster.Access.Kubeconfig, f.cluster.Access.Context)
		if err != nil {
			return err
		}
		// Nothing of the pod's files is read once the host's root is
		// entered: the CA's bytes and the token, kept.
		if err := rest.LoadTLSFiles(cfg); err != nil {
			return fmt.Errorf("--kubeconfig: %w", err)
		}
		if cfg.BearerTokenFile != "" && cfg.BearerToken == "" {
			b, err := os.ReadFile(cfg.BearerTokenFile)
			if err != nil {
				return fmt.Errorf("--kubeconfig: %w", err)
			}
			cfg.BearerToken = strings.TrimSpace(string(b))
		}
		cfg.BearerTokenFile = ""
		p.restCfg = cfg
	}
	if err := hostexec.Enter(f.root); err != nil {
		return err
	}
	f.root = ""
	if f.opts.DryRun {
		return nil
	}
	if p.bin, err = apply.InstallBinary(apply.StateDirOf("", f.opts.StateDir), "/proc/self/exe"); err != nil {
		return fmt.Errorf("copying kubeletcfg to the host: %w", err)
	}
	if f.opts.Restart != "" {
		// The namespaces of the running kubelet (the host's init's when none
		// runs), held: a rollback restarts a kubelet that may be gone.
		pid := 1
		if b, err := os.ReadFile(f.opts.PIDFile); err == nil {
			if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && n > 0 && syscall.Kill(n, 0) == nil {
				pid = n
			}
		}
		if p.host, err = hostexec.Capture(pid, p.bin); err != nil {
			return err
		}
	}
	return nil
}

// inPod makes o an apply in a pod's: its restart command run on the host
// (in its namespaces and cgroups), its guard owned by the host and given
// the plain restart command and no kubeconfig — the pod's, and its token,
// are neither in the host's root where the guard runs nor outlive the pod,
// so that guard lifts no cordon (recover --kubeconfig, or the next apply,
// takes kubeletcfg's cordon over).
func (f *applyFlags) inPod(o *apply.Options) {
	p := &f.pod
	if !p.rootIsHost {
		return
	}
	plain := *o
	o.StartGuard = func(dir, id string) error {
		return f.startPodGuard(dir, id, podGuardArgs(&plain, dir, id))
	}
	if p.host != nil && o.Restart != "" {
		o.Restart = p.host.Shell(o.Restart)
	}
}

// podGuardArgs is the guard's command line for an apply in a pod.
func podGuardArgs(o *apply.Options, dir, id string) []string {
	return apply.GuardArgs(o, dir, id, "", "")
}

// startPodGuard starts the guard of an apply in a pod where the host owns
// it: a transient unit of the host's systemd running kubeletcfg's copy in
// the host's file system, or without systemd that copy started in the
// host's namespaces and cgroups. Never in the pod's cgroup, which ends
// with the pod.
func (f *applyFlags) startPodGuard(dir, id string, args []string) error {
	p := &f.pod
	if st, err := os.Stat("/run/systemd/system"); err == nil && st.IsDir() {
		return apply.StartHostGuard(context.Background(), p.bin, args, dir, id, f.opts.Unit)
	}
	if p.host == nil {
		return errors.New("the host runs no systemd: give --restart-command (run on the host) for its guard and restarts")
	}
	log, err := os.OpenFile(filepath.Join(dir, "guard.log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return err
	}
	defer log.Close()
	return p.host.Start(log, append([]string{p.bin}, args...)...)
}

// finishPod writes the outcome file, whatever the end: err is what
// runApply returned.
func (f *applyFlags) finishPod(err error) error {
	p := &f.pod
	if p.host != nil {
		p.host.Close()
	}
	if p.report == nil {
		return err
	}
	defer p.report.Close()
	exit := exitOK
	switch {
	case errors.Is(err, errRolledBack):
		exit = exitRolledBack
	case errors.Is(err, errCheckFailed):
		exit = exitFailed
	case err != nil:
		exit = exitUsage
	}
	out, aerr := p.out, p.applyErr
	if !p.ran {
		out, aerr = nil, err
	}
	r := apply.ReportOf(f.opts.Node, p.change, out, aerr, exit, time.Now())
	if _, werr := p.report.Write(r.Encode()); werr != nil {
		return errors.Join(err, fmt.Errorf("--outcome-file: %w", werr))
	}
	return err
}

// newInHostCmd is the step a command run on the host takes once in its
// namespaces: out of the pod's cgroups into the host init's, then the
// command.
func newInHostCmd() *cobra.Command {
	return &cobra.Command{
		Use:    hostexec.InHostCommand + " -- COMMAND...",
		Hidden: true,
		RunE: func(_ *cobra.Command, args []string) error {
			return hostexec.JoinInit(args)
		},
	}
}
