package diff

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/kubeletcfg/kubeletcfg/criruntime"
	"github.com/kubeletcfg/kubeletcfg/kubeletapi"
	"github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/nodefile"
	"github.com/kubeletcfg/kubeletcfg/schema"
	"github.com/kubeletcfg/kubeletcfg/warning"
)

// Request says what to compare, as kubelet Version runs it: NEW (a file)
// with Against (default the node's /var/lib/kubelet/config.yaml, under
// Source.Root); or, with Live, what the running kubelet serves with NEW,
// or with the node's setup (read from Source) when NEW is "".
type Request struct {
	Version *schema.Version
	New     string
	Against string
	Source  node.Source
	Live    *Live
	// Runtime reads what the container runtime answers the kubelet
	// (criruntime.Ask): the side the running kubelet is compared with
	// then runs the driver it takes from its runtime (nil: not read).
	Runtime criruntime.Asker
}

// Live says how to reach the running kubelet: on its port at URL (with a
// client certificate, a CA, or Insecure); through the API server of
// Kubeconfig (its Context) to the Node's kubelet (default: this host's
// name) by the node proxy; or, Direct, on its port at the address its Node
// reports (verified by CA, else the kubeconfig's cluster CA; the nodes in
// InsecureNodes unverified).
type Live struct {
	URL, ClientCert, ClientKey, CA string
	Insecure                       bool
	Kubeconfig, Context, Node      string
	Direct                         bool
	InsecureNodes                  []string
}

// Result is a comparison, with the running kubelet's command line (Live)
// and the warnings of the node's setup when it was read.
type Result struct {
	*Comparison
	Flags    *LiveFlags
	Warnings []warning.Warning
}

// Run picks the two sides of req and compares them. An error may be the
// kubelet's refusal (*effective.Refused) to start with a side.
func Run(ctx context.Context, req Request) (*Result, error) {
	if req.Live != nil {
		return runLive(ctx, req)
	}
	if req.New == "" {
		return nil, fmt.Errorf("give NEW, or --live, or --to-version")
	}
	against := req.Against
	if against == "" {
		var err error
		if against, err = nodefile.HostPath(req.Source.Root, "/var/lib/kubelet/config.yaml"); err != nil {
			return nil, err
		}
	}
	old, err := FileSide(against, req.Version, false)
	if err != nil {
		return nil, err
	}
	old.Refused = nil // only NEW's refusal counts
	nw, err := FileSide(req.New, req.Version, false)
	if err != nil {
		return nil, err
	}
	c, err := Compare(old, nw, req.Version)
	if err != nil {
		return nil, err
	}
	return &Result{Comparison: c}, nil
}

// runLive compares the running kubelet's /configz with NEW as the started
// kubelet would serve it, or with the node's setup; and its /flagz with
// the setup's command line.
func runLive(ctx context.Context, req Request) (*Result, error) {
	c, n, err := req.Live.dial(ctx, req.Version)
	if err != nil {
		return nil, err
	}
	raw, from, err := c.Configz(ctx, n)
	if err != nil {
		return nil, err
	}
	running, err := LiveSide(raw, from, req.Version)
	if err != nil {
		return nil, err
	}
	res := &Result{}
	var setup *node.Setup
	var nw Side
	if req.New != "" {
		given := node.Given(req.Version)
		given.Runtime = req.Runtime
		nw, err = RunningFileSide(req.New, given)
	} else if setup, err = node.ReadSetupAs(req.Version, req.Source); err == nil {
		res.Warnings = setup.Warnings
		setup.Runtime = req.Runtime
		nw, err = SetupSide(setup)
	}
	if err != nil {
		return nil, err
	}
	if res.Flags, err = readLiveFlags(ctx, c, n, raw, setup); err != nil {
		return nil, err
	}
	if res.Comparison, err = Compare(running, nw, req.Version); err != nil {
		return nil, err
	}
	return res, nil
}

// dial reaches the kubelet as l says.
func (l *Live) dial(ctx context.Context, v *schema.Version) (*kubeletapi.Client, kubeletapi.Node, error) {
	if l.Kubeconfig == "" && l.Node == "" && l.Context == "" && !l.Direct {
		c, err := kubeletapi.NewLocal(strings.TrimSuffix(l.URL, "/configz"), l.ClientCert, l.ClientKey, l.CA, l.Insecure)
		return c, kubeletapi.Node{Version: v}, err
	}
	name, err := kubeletapi.NodeName(l.Node)
	if err != nil {
		return nil, kubeletapi.Node{}, err
	}
	cfg, err := node.RESTConfig(l.Kubeconfig, l.Context)
	if err != nil {
		return nil, kubeletapi.Node{}, err
	}
	if !l.Direct {
		c, err := kubeletapi.New(cfg, kubeletapi.Options{Via: kubeletapi.Proxy})
		return c, kubeletapi.Node{Name: name, Version: v}, err
	}
	core, err := kubeletapi.CoreClient(cfg)
	if err != nil {
		return nil, kubeletapi.Node{}, err
	}
	n, err := kubeletapi.GetNode(ctx, core, name)
	if err != nil {
		return nil, n, err
	}
	n.Version = v
	c, err := kubeletapi.New(cfg, kubeletapi.Options{Via: kubeletapi.Direct, KubeletCA: l.CA, Insecure: l.InsecureNodes})
	return c, n, err
}

// LiveFlags is the running kubelet's command line (/flagz) and, against a
// node's setup, how it differs.
type LiveFlags struct {
	// Form is how /flagz was served; Why why it was not read.
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
func readLiveFlags(ctx context.Context, c *kubeletapi.Client, n kubeletapi.Node, configz []byte, setup *node.Setup) (*LiveFlags, error) {
	var gates struct {
		FeatureGates map[string]bool `json:"featureGates"`
	}
	_ = json.Unmarshal(configz, &gates)
	n.Gates = gates.FeatureGates
	out := &LiveFlags{Flags: []kubeletapi.Flag{}}
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
