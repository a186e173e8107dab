package audit

import (
	"context"
	"fmt"
	"strings"

	"github.com/kubeletcfg/kubeletcfg/effective"
	"github.com/kubeletcfg/kubeletcfg/kubeadm"
)

var kubeadmChecks = []*check{{id: "ops.kubeadm", section: SectionOps,
	title:  "The next kubeadm upgrade node keeps the kubelet's configuration",
	reason: "kubeadm rewrites the config.yaml it wrote from its kubelet-config ConfigMap, its patches and instance-config.yaml on every upgrade: a value set only in the file is lost then",
	rule: func(s *state) outcome {
		k := s.kubeadm
		switch {
		case k == nil || !k.Owned:
			return outcome{status: Pass, value: "not kubeadm's config.yaml", detail: "kubeadm does not rewrite this node's config file"}
		case k.Drift == nil:
			return outcome{status: Manual, value: "kubeadm's ConfigMap not known", detail: k.Why,
				remedy: "give --kubeconfig (or --kubeadm-configmap FILE) to compare config.yaml with what kubeadm writes"}
		}
		d := k.Drift
		if len(d.Reverts)+len(d.Brings) == 0 {
			return outcome{status: Pass, value: "config.yaml is what kubeadm writes", detail: d.Note}
		}
		var parts []string
		for _, c := range d.Reverts {
			parts = append(parts, fmt.Sprintf("%s %s -> %s (%s; config.yaml:%d)", c.Field, show(c.Now), show(c.Next), c.Origin, c.NowLine))
		}
		for _, c := range d.Brings {
			parts = append(parts, fmt.Sprintf("%s %s -> %s (%s)", c.Field, show(c.Now), show(c.Next), c.Origin))
		}
		return outcome{status: Warn, value: strings.Join(parts, "; "), origin: d.File,
			detail: fmt.Sprintf("the next kubeadm upgrade node reverts %d and brings %d values; %s", len(d.Reverts), len(d.Brings), d.Note),
			remedy: "keep the change where kubeadm keeps it (kubeletcfg apply -f config.yaml --persist patch, or --persist dropin), or make it the cluster's (kubeletcfg kubeadm configmap)"}
	}}}

func show(x any) string {
	if x == nil {
		return "(unset)"
	}
	return fmt.Sprint(x)
}

// assessKubeadm is what the next kubeadm upgrade node does with the node's
// config file (nil: not asked).
func assessKubeadm(opts Options, eff *effective.Result) (*kubeadm.Assessment, error) {
	if opts.Kubeadm == nil {
		return nil, nil
	}
	return kubeadm.AssessSetup(context.Background(), *opts.Kubeadm, opts.Setup, eff)
}
