package node

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kubeletcfg/kubeletcfg/units"
	"github.com/kubeletcfg/kubeletcfg/warning"
)

// Kubelet is how the node starts its kubelet.
type Kubelet struct {
	Unit string   // the unit file (node path)
	Args []string // the kubelet's arguments, after the binary
	// Sources says where each of Args was written: "file:line" or
	// "file:line ($VAR)".
	Sources []string
	// Origins says the same, structured: the file (node path), its line and
	// the variable the word was expanded from ("" when written literally).
	Origins []units.Source
	Env     map[string]string // the kubelet process's environment
	Files   []string          // the unit, its drop-ins and the environment files read
	// Warnings are what systemd ignores in those files, and variables that
	// reach no kubelet flag.
	Warnings []warning.Warning
}

// LookupEnv reads the kubelet's environment.
func (k *Kubelet) LookupEnv(name string) (string, bool) {
	v, ok := k.Env[name]
	return v, ok
}

// DiscoverKubelet reads the node's kubelet.service, its drop-ins and the
// environment files they name, as systemd does (root "" is the live node).
func DiscoverKubelet(root string) (*Kubelet, error) {
	s, err := units.Discover(root)
	if err != nil {
		return nil, err
	}
	return fromService(s)
}

func fromService(s *units.Service) (*Kubelet, error) {
	if len(s.Exec) == 0 {
		return nil, fmt.Errorf("%s: ExecStart= runs nothing", s.Unit)
	}
	k := &Kubelet{Unit: s.Unit, Args: s.Exec[1:], Env: s.Env, Warnings: s.Warnings}
	k.Files = append(append(append(k.Files, s.Unit), s.Dropins...), s.EnvFiles...)
	for i := range k.Args {
		src := ""
		if i < len(s.Sources) {
			k.Origins = append(k.Origins, s.Sources[i])
			src = fmt.Sprintf("%s:%d", s.Sources[i].File, s.Sources[i].Line)
			if s.Sources[i].Var != "" {
				src += " ($" + s.Sources[i].Var + ")"
			}
		}
		k.Sources = append(k.Sources, src)
	}
	return k, nil
}

// argVariables are the variables that distributions put kubelet flags in.
var argVariables = map[string]bool{
	"KUBELET_KUBEADM_ARGS": true, "KUBELET_EXTRA_ARGS": true, "KUBELET_ARGS": true,
	"KUBELET_OPTS": true, "KUBELET_FLAGS": true, "DAEMON_ARGS": true,
	"KUBELET_KUBECONFIG_ARGS": true, "KUBELET_CONFIG_ARGS": true, "KUBELET_SYSTEM_PODS_ARGS": true,
}

// FromFiles reads the kubelet's command line from the given files, in the
// order the kubelet's command line has them: a systemd unit (*.service, with
// its drop-ins found as systemd finds them under root) gives its ExecStart;
// an environment file (kubeadm-flags.env, /etc/default/kubelet,
// /etc/sysconfig/kubelet) gives the flags in its KUBELET_*ARGS variables,
// split as systemd splits $VAR.
func FromFiles(root string, files []string) (*Kubelet, error) {
	k := &Kubelet{Env: map[string]string{}}
	for _, f := range files {
		if root == "" {
			abs, err := filepath.Abs(f) // on the live node, relative to here
			if err != nil {
				return nil, err
			}
			f = abs
		}
		if strings.HasSuffix(f, ".service") {
			s, err := units.FromUnit(root, f)
			if err != nil {
				return nil, err
			}
			one, err := fromService(s)
			if err != nil {
				return nil, err
			}
			k.Args = append(k.Args, one.Args...)
			k.Sources = append(k.Sources, one.Sources...)
			k.Origins = append(k.Origins, one.Origins...)
			k.Files = append(k.Files, one.Files...)
			k.Warnings = append(k.Warnings, one.Warnings...)
			for name, val := range one.Env {
				k.Env[name] = val
			}
			continue
		}
		env, lines, err := units.ReadNodeEnvFile(root, f)
		if err != nil {
			return nil, err
		}
		k.Files = append(k.Files, f)
		for name, val := range env {
			k.Env[name] = val
		}
		used := false
		for _, l := range lines {
			if l.Ignored != "" {
				k.Warnings = append(k.Warnings, warning.At(warning.SystemdIgnored, f, l.Line, "%s: systemd ignores this line", l.Ignored))
				continue
			}
			if !argVariables[l.Key] {
				continue
			}
			used = true
			words, err := units.SplitCommandLine("$"+l.Key, env)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %s: %w", f, l.Line, l.Key, err)
			}
			for _, w := range words {
				k.Args = append(k.Args, w)
				k.Sources = append(k.Sources, fmt.Sprintf("%s:%d ($%s)", f, l.Line, l.Key))
				k.Origins = append(k.Origins, units.Source{File: f, Line: l.Line, Var: l.Key})
			}
		}
		if !used {
			k.Warnings = append(k.Warnings, warning.At(warning.VariableUnused, f, 0,
				"sets none of the variables kubelet units pass as flags (%s): none of it reaches the kubelet's command line", strings.Join(argVariableNames(), ", ")))
		}
	}
	if len(k.Files) == 0 {
		return nil, fmt.Errorf("no file given")
	}
	return k, nil
}

func argVariableNames() []string {
	names := slices.Collect(maps.Keys(argVariables))
	slices.Sort(names)
	return names
}
