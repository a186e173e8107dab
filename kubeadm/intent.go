package kubeadm

import (
	"context"

	"github.com/kubeletcfg/kubeletcfg/kubeletapi"
	"github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/nodefile"
)

// IntentOptions: a new kubelet-config value (File: the value, or the
// ConfigMap), the cluster, and whether to write it.
type IntentOptions struct {
	File                string
	Kubeconfig, Context string
	Update              bool
	// ResourceVersion is the version the ConfigMap must still be at; "" the
	// one read now.
	ResourceVersion string
}

// Intent is a new ConfigMap value checked for the cluster, and written.
type Intent struct {
	ResourceVersion string      `json:"resourceVersion"`
	Plans           []MinorPlan `json:"minors"`
	Updated         bool        `json:"updated"`
	NewVersion      string      `json:"newResourceVersion,omitempty"`
}

// CheckConfigMap reads the cluster's ConfigMaps and Nodes, checks the new
// value for every kubelet minor, and with Update writes it if every minor
// accepts it, at the resourceVersion given or read (ErrConcurrentEdit if
// the ConfigMap changed). The Intent is returned with an update's error.
func CheckConfigMap(ctx context.Context, o IntentOptions) (*Intent, error) {
	data, err := nodefile.ReadFile(o.File, nodefile.Config)
	if err != nil {
		return nil, err
	}
	next, err := FromManifest(data, o.File, ConfigMapKey)
	if err != nil {
		return nil, err
	}
	cfg, err := node.RESTConfig(o.Kubeconfig, o.Context)
	if err != nil {
		return nil, err
	}
	c, err := kubeletapi.CoreClient(cfg)
	if err != nil {
		return nil, err
	}
	newest := releases[len(releases)-1]
	live, err := ReadLive(ctx, c, &newest)
	if err != nil {
		return nil, err
	}
	minors, err := KubeletMinors(ctx, c)
	if err != nil {
		return nil, err
	}
	res := &Intent{ResourceVersion: live.ResourceVersion, Plans: PlanConfigMap(live.ConfigMap, next, live.Cluster, minors)}
	if !o.Update || !Valid(res.Plans) {
		return res, nil
	}
	rv := live.ResourceVersion
	if o.ResourceVersion != "" {
		rv = o.ResourceVersion
	}
	res.NewVersion, err = UpdateConfigMap(ctx, c, string(next.Data), rv)
	res.Updated = err == nil
	return res, err
}
