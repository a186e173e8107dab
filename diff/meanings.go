package diff

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kubeletcfg/kubeletcfg/config"
	"github.com/kubeletcfg/kubeletcfg/effective"
	"github.com/kubeletcfg/kubeletcfg/flags"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

// meaningFindings are the values of the node whose meaning the upgrade
// changes while they stay as written (schema.Meanings): each is a "change"
// finding, with what it means today and under kubelet to.
func meaningFindings(before, after *effective.Result, from, to *schema.Version) ([]Finding, error) {
	n, err := nodeView(before)
	if err != nil {
		return nil, err
	}
	var out []Finding
	for _, c := range schema.MeaningChanges(n, from, before.Config.FeatureGates, to, after.Config.FeatureGates) {
		subject := c.Field
		if subject == "" {
			subject = c.ID
		}
		msg := fmt.Sprintf("kubelet %s: %s; kubelet %s: %s", from.Minor, c.From, to.Minor, c.To)
		if len(c.Refs) > 0 {
			msg += " (" + strings.Join(c.Refs, ", ") + ")"
		}
		out = append(out, Finding{Severity: "change", Subject: subject, Message: msg})
	}
	return out, nil
}

// nodeView is what a meaning looks at in an effective configuration: its
// values, the fields its files or flags set, its command line's flags.
func nodeView(res *effective.Result) (*schema.NodeView, error) {
	m, err := config.ToMap(res.Config, res.Version)
	if err != nil {
		return nil, err
	}
	n := &schema.NodeView{Config: m, Set: map[string]bool{}}
	for path, o := range res.Origins {
		if o.Kind != "default" && o.Kind != "flags-default" {
			n.Set[path] = true
		}
	}
	if cl, err := flags.Parse(res.Args, res.Version); err == nil {
		for _, o := range cl.Occurrences {
			n.Flags = append(n.Flags, o.Flag.Name)
		}
	}
	return n, nil
}

// mergeFindings adds more to out; a finding about a subject out already
// has (a default that changes, and what it means) is said in that one.
func mergeFindings(out, more []Finding) []Finding {
	for _, m := range more {
		i := slices.IndexFunc(out, func(f Finding) bool { return f.Subject == m.Subject })
		if i < 0 {
			out = append(out, m)
			continue
		}
		out[i].Message += "; " + m.Message
	}
	return out
}

// credentialFindings are what kubelet to refuses in the credential provider
// configuration (it exits at start): a blocker for each problem today's
// kubelet does not have.
func credentialFindings(before, after *effective.Result, to *schema.Version) []Finding {
	if after.CredentialProvider == nil {
		return nil
	}
	today := map[string]bool{}
	if before.CredentialProvider != nil {
		for _, p := range before.CredentialProvider.Problems {
			today[p.Field+"\x00"+p.Message] = true
		}
	}
	var out []Finding
	for _, p := range after.CredentialProvider.Problems {
		if today[p.Field+"\x00"+p.Message] {
			continue
		}
		out = append(out, Finding{Severity: "blocker", Subject: "--image-credential-provider-config",
			Message: fmt.Sprintf("kubelet %s exits at start: %s", to.Minor, p),
			Do:      "make the credential provider configuration one kubelet " + to.Minor + " reads (kubeletcfg effective --kubelet-version " + to.Minor + " shows it)"})
	}
	return out
}
