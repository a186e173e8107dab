package effective

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	kubeletapis "k8s.io/kubelet/pkg/apis"

	"github.com/kubeletcfg/kubeletcfg/flags"
)

// checkNodeLabels is the kubelet's check of its command-line flags before it
// reads any file (ValidateKubeletFlags): --node-labels in the kubernetes.io
// and k8s.io namespaces must be ones the kubelet may set on its node, and
// every label must be a valid one. The allowed labels are the kubelet's own
// list (k8s.io/kubelet/pkg/apis).
func checkNodeLabels(cl *flags.CommandLine) error {
	labels := map[string]string{}
	for _, o := range cl.Occurrences {
		if o.Flag.Name != "node-labels" {
			continue
		}
		for _, pair := range strings.Split(o.Value, ",") {
			if k, v, ok := strings.Cut(pair, "="); ok {
				labels[strings.TrimSpace(k)] = strings.TrimSpace(v)
			}
		}
	}
	var unknown, invalid []string
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		if isKubernetesLabel(k) && !kubeletapis.IsKubeletLabel(k) {
			unknown = append(unknown, k)
		}
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			invalid = append(invalid, fmt.Sprintf("'%s' - %s", k, strings.Join(errs, ", ")))
		}
		if errs := validation.IsValidLabelValue(labels[k]); len(errs) > 0 {
			invalid = append(invalid, fmt.Sprintf("'%s' - %s", labels[k], strings.Join(errs, ", ")))
		}
	}
	if len(unknown) > 0 {
		return fmt.Errorf("unknown 'kubernetes.io' or 'k8s.io' labels specified with --node-labels: %v\n--node-labels in the 'kubernetes.io' namespace must begin with an allowed prefix (%s) or be in the specifically allowed set (%s)",
			unknown, strings.Join(kubeletapis.KubeletLabelNamespaces(), ", "), strings.Join(kubeletapis.KubeletLabels(), ", "))
	}
	if len(invalid) > 0 {
		sort.Strings(invalid)
		return fmt.Errorf("invalid node labels: %s", strings.Join(invalid, "; "))
	}
	return nil
}

// isKubernetesLabel tells a label in the kubernetes.io or k8s.io namespace
// (or one below them).
func isKubernetesLabel(key string) bool {
	namespace, _, ok := strings.Cut(key, "/")
	if !ok {
		return false
	}
	for _, ns := range []string{"kubernetes.io", "k8s.io"} {
		if namespace == ns || strings.HasSuffix(namespace, "."+ns) {
			return true
		}
	}
	return false
}
