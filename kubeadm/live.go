package kubeadm

import (
	"context"
	"errors"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"

	"github.com/kubeletcfg/kubeletcfg/filecheck"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

// Namespace holds kubeadm's ConfigMaps.
const Namespace = "kube-system"

// Live is the cluster's side of what kubeadm reads on upgrade.
type Live struct {
	// ConfigMap is kube-system/kubelet-config's kubelet value.
	ConfigMap       Text   `json:"-"`
	ResourceVersion string `json:"resourceVersion"`
	// Cluster is kubeadm-config's ClusterConfiguration, nil when there is
	// none (then kubeadm's defaults are assumed, and said).
	Cluster *Cluster `json:"cluster,omitempty"`
	Notes   []string `json:"notes,omitempty"`
}

// ReadLive reads the two ConfigMaps kubeadm r reads.
func ReadLive(ctx context.Context, c rest.Interface, r *Release) (*Live, error) {
	cm, err := getConfigMap(ctx, c, ConfigMapName)
	if err != nil {
		return nil, err
	}
	name := "ConfigMap " + Namespace + "/" + ConfigMapName
	val, ok := cm.Data[ConfigMapKey]
	if !ok {
		return nil, fmt.Errorf("%s has no key %q: kubeadm fails on it (it keeps the KubeletConfiguration there)", name, ConfigMapKey)
	}
	live := &Live{ConfigMap: Text{Data: []byte(val), File: name}, ResourceVersion: cm.ResourceVersion}
	kc, err := getConfigMap(ctx, c, ClusterConfigMapName)
	if apierrors.IsNotFound(err) || apierrors.IsForbidden(err) {
		live.Notes = append(live.Notes, fmt.Sprintf("%v: kubeadm's defaults assumed for the ClusterConfiguration (kubeadm upgrade itself fails without it)", err))
		return live, nil
	}
	if err != nil {
		return nil, err
	}
	cc, ok := kc.Data[ClusterConfigKey]
	if !ok {
		return nil, fmt.Errorf("ConfigMap %s/%s has no key %q: kubeadm fails on it", Namespace, ClusterConfigMapName, ClusterConfigKey)
	}
	live.Cluster, err = ParseCluster(Text{Data: []byte(cc), File: "ConfigMap " + Namespace + "/" + ClusterConfigMapName}, r)
	if err != nil {
		return nil, err
	}
	return live, nil
}

func getConfigMap(ctx context.Context, c rest.Interface, name string) (*corev1.ConfigMap, error) {
	cm := &corev1.ConfigMap{}
	if err := c.Get().Namespace(Namespace).Resource("configmaps").Name(name).Do(ctx).Into(cm); err != nil {
		return nil, fmt.Errorf("ConfigMap %s/%s: %w", Namespace, name, err)
	}
	return cm, nil
}

// KubeletMinors are the Nodes by the minor of the kubelet they report.
func KubeletMinors(ctx context.Context, c rest.Interface) (map[string][]string, error) {
	out := map[string][]string{}
	next := ""
	for {
		list := &corev1.NodeList{}
		req := c.Get().Resource("nodes").Param("limit", "500")
		if next != "" {
			req = req.Param("continue", next)
		}
		if err := req.Do(ctx).Into(list); err != nil {
			return nil, fmt.Errorf("listing Nodes: %w", err)
		}
		for _, n := range list.Items {
			minor := n.Status.NodeInfo.KubeletVersion
			if v, err := schema.Resolve(minor); err == nil {
				minor = v.Minor
			}
			out[minor] = append(out[minor], n.Name)
		}
		if next = list.Continue; next == "" {
			return out, nil
		}
	}
}

// ErrConcurrentEdit is a ConfigMap changed since it was read.
var ErrConcurrentEdit = errors.New("the ConfigMap changed since it was read")

// UpdateConfigMap replaces the kubelet value of kube-system/kubelet-config
// if the ConfigMap is still at resourceVersion: an edit made meanwhile is
// refused (ErrConcurrentEdit), never overwritten. It returns the new
// resourceVersion.
func UpdateConfigMap(ctx context.Context, c rest.Interface, value, resourceVersion string) (string, error) {
	if resourceVersion == "" {
		return "", errors.New("no resourceVersion to update from: read the ConfigMap first")
	}
	cm, err := getConfigMap(ctx, c, ConfigMapName)
	if err != nil {
		return "", err
	}
	if cm.ResourceVersion != resourceVersion {
		return "", fmt.Errorf("ConfigMap %s/%s is at resourceVersion %s, not %s: %w", Namespace, ConfigMapName, cm.ResourceVersion, resourceVersion, ErrConcurrentEdit)
	}
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	cm.Data[ConfigMapKey] = value
	// The update carries resourceVersion: the API server refuses it (409)
	// if anything wrote the ConfigMap after that version.
	cm.ResourceVersion = resourceVersion
	out := &corev1.ConfigMap{}
	err = c.Put().Namespace(Namespace).Resource("configmaps").Name(ConfigMapName).Body(cm).Do(ctx).Into(out)
	if apierrors.IsConflict(err) {
		return "", fmt.Errorf("ConfigMap %s/%s changed after resourceVersion %s: %w", Namespace, ConfigMapName, resourceVersion, ErrConcurrentEdit)
	}
	if err != nil {
		return "", fmt.Errorf("updating ConfigMap %s/%s: %w", Namespace, ConfigMapName, err)
	}
	return out.ResourceVersion, nil
}

// MinorPlan is a new ConfigMap value as the kubelets of one minor get it.
type MinorPlan struct {
	KubeletMinor   string   `json:"kubeletMinor"`
	Nodes          []string `json:"nodes"`
	KubeadmVersion string   `json:"kubeadmVersion,omitempty"`
	// Verdict is the kubelet's on the file kubeadm writes from the new value
	// (patches and instance-config.yaml aside: those are each node's).
	Verdict *filecheck.Report `json:"verdict,omitempty"`
	// Changes are what those kubelets run differently: old value → new.
	Changes []Change `json:"changes"`
	Error   string   `json:"error,omitempty"`
}

// Valid tells whether every minor starts with the new value.
func Valid(plans []MinorPlan) bool {
	for _, p := range plans {
		if p.Error != "" || p.Verdict == nil || !p.Verdict.Valid {
			return false
		}
	}
	return true
}

// PlanConfigMap checks a new ConfigMap value for every kubelet minor among
// minors (minor → nodes): kubeadm of that minor renders it with the cluster's
// ClusterConfiguration, the kubelet of that minor judges the result, and the
// changes from the old value are listed as that kubelet runs them.
func PlanConfigMap(old, next Text, cluster *Cluster, minors map[string][]string) []MinorPlan {
	var plans []MinorPlan
	for _, m := range sortedKeys(minors) {
		nodes := append([]string(nil), minors[m]...)
		sort.Strings(nodes)
		p := MinorPlan{KubeletMinor: m, Nodes: nodes, Changes: []Change{}}
		plans = append(plans, p)
		pp := &plans[len(plans)-1]
		rel, err := ResolveRelease(m)
		if err != nil {
			pp.Error = err.Error()
			continue
		}
		pp.KubeadmVersion = rel.Minor
		v, err := schema.Resolve(m)
		if err != nil {
			pp.Error = err.Error()
			continue
		}
		after, err := Render(Input{Release: rel, ConfigMap: next, Cluster: cluster, Resolved: No})
		if err != nil {
			pp.Error = err.Error()
			continue
		}
		written, err := after.YAML()
		if err != nil {
			pp.Error = err.Error()
			continue
		}
		pp.Verdict = filecheck.Bytes(written, filecheck.Options{File: next.File + " (as kubeadm " + rel.Minor + " writes it)", Version: v, AllowUnknownFields: true})
		before, err := Render(Input{Release: rel, ConfigMap: old, Cluster: cluster, Resolved: No})
		if err != nil {
			pp.Error = "the current value: " + err.Error()
			continue
		}
		was, err := before.YAML()
		if err != nil {
			pp.Error = err.Error()
			continue
		}
		d, err := CompareDrift(was, old.File, after, v)
		if err != nil {
			pp.Error = err.Error()
			continue
		}
		pp.Changes = append(append(pp.Changes, d.Reverts...), d.Brings...)
		sort.Slice(pp.Changes, func(i, j int) bool { return pp.Changes[i].Field < pp.Changes[j].Field })
	}
	return plans
}
