package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/kubeletcfg/kubeletcfg/dropins"
	"github.com/kubeletcfg/kubeletcfg/flags"
	"github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/warning"
)

// sourceFlags say where the kubelet's command line comes from when it is not
// given after --.
type sourceFlags struct {
	from []string
	// warnings are those of the command line read, for -o json.
	warnings []warning.Warning
}

func (f *sourceFlags) bind(fs *pflag.FlagSet) {
	fs.StringArrayVar(&f.from, "from", nil, "read the kubelet's flags from this file (a unit *.service, or an env file such as kubeadm-flags.env or /etc/default/kubelet); repeatable, in command-line order")
}

// commandLine finds the kubelet's command line: the given files, else the
// node's kubelet.service (under root for an offline image).
func (f *sourceFlags) commandLine(root string, s streams) (*node.Kubelet, error) {
	var k *node.Kubelet
	var err error
	if len(f.from) > 0 {
		k, err = node.FromFiles(root, f.from)
	} else {
		k, err = node.DiscoverKubelet(root)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the kubelet's command line (or give it after --): %w", err)
	}
	fmt.Fprintf(s.ErrOut, "note: the kubelet's command line from %s\n", warning.Truncate(strings.Join(k.Files, ", "), 2000))
	warning.Print(s.ErrOut, k.Warnings)
	f.warnings = append(f.warnings, k.Warnings...)
	return k, nil
}

// allWarnings joins the command line's structured warnings and a library's
// plain ones, for printing and for -o json.
func allWarnings(k *node.Kubelet, plain []string, more ...[]warning.Warning) []warning.Warning {
	ws := []warning.Warning{}
	if k != nil {
		ws = append(ws, k.Warnings...)
	}
	for _, m := range more {
		ws = append(ws, m...)
	}
	for _, p := range plain {
		ws = append(ws, warning.Warning{Code: warning.Other, Message: p})
	}
	return ws
}

// placed says where on the node the word an error is about was written: the
// unit or environment file and line, and the variable.
func placed(err error, k *node.Kubelet) error {
	var fe *flags.Error
	if err == nil || k == nil || !errors.As(err, &fe) || fe.Index < 0 || fe.Index >= len(k.Sources) || k.Sources[fe.Index] == "" {
		return err
	}
	src := k.Sources[fe.Index]
	var r *dropins.Refused
	if errors.As(err, &r) && len(r.Reasons) == 1 {
		r.Reasons[0] = src + ": " + r.Reasons[0]
		return err
	}
	return fmt.Errorf("%s: %w", src, err)
}
