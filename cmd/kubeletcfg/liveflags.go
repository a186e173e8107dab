package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/kubeletcfg/kubeletcfg/kubeletapi"
	"github.com/kubeletcfg/kubeletcfg/node"
)

// liveFlags is the running kubelet's command line (/flagz) and, against a
// node's setup, how it differs.
type liveFlags struct {
	// Form is how /flagz was served; Unread why it was not read.
	Form   string            `json:"form,omitempty"`
	Unread *kubeletapi.Error `json:"-"`
	Why    string            `json:"unread,omitempty"`
	Reason kubeletapi.Reason `json:"reason,omitempty"`
	Flags  []kubeletapi.Flag `json:"running"`
	// Against says what the flags were compared with ("" for nothing).
	Against    string                `json:"against,omitempty"`
	Differs    []kubeletapi.FlagDiff `json:"differs,omitempty"`
	Classified []string              `json:"classified,omitempty"`
}

// readLiveFlags reads /flagz where the kubelet's version and gates (its
// /configz's) serve it, and compares it with setup's command line when
// there is one. A kubelet that does not serve /flagz, or refuses it, is
// said, not an error; an answer that is wrong is one.
func readLiveFlags(ctx context.Context, c *kubeletapi.Client, n kubeletapi.Node, configz []byte, setup *node.Setup) (*liveFlags, error) {
	var gates struct {
		FeatureGates map[string]bool `json:"featureGates"`
	}
	_ = json.Unmarshal(configz, &gates)
	n.Gates = gates.FeatureGates
	out := &liveFlags{Flags: []kubeletapi.Flag{}}
	if a := c.Access(n, "/flagz"); !a.Served && a.NotServed != "" {
		out.Why, out.Reason = a.NotServed, kubeletapi.NotServed
		return out, nil
	}
	f, err := c.Flagz(ctx, n)
	var e *kubeletapi.Error
	switch {
	case errors.As(err, &e) && (e.Reason == kubeletapi.NotServed || e.Reason == kubeletapi.Forbidden || e.Reason == kubeletapi.Unauthorized):
		out.Unread, out.Why, out.Reason = e, e.Error(), e.Reason
		return out, nil
	case err != nil:
		return nil, err
	}
	out.Form, out.Flags = f.Form, f.NonDefault(n.Version)
	if setup == nil {
		return out, nil
	}
	out.Against = "the node's command line"
	if len(setup.Files) > 0 {
		out.Against += " (" + strings.Join(setup.Files, ", ") + ")"
	}
	out.Differs, out.Classified, err = kubeletapi.CompareCommandLine(setup.Version, setup.Args, setup.Sources, f)
	return out, err
}

func (l *liveFlags) print(s streams) {
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
