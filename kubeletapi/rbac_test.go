package kubeletapi

import (
	"bytes"
	"os"
	"slices"
	"sort"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubeletcfg/kubeletcfg/schema"
)

// The shipped ClusterRole names exactly what the direct way reads: the
// Nodes, and the subresource of each kubelet path; no nodes/proxy. The Role
// reads only kubeadm's kubelet-config ConfigMap.
func TestShippedRBAC(t *testing.T) {
	raw, err := os.ReadFile("../deploy/rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	docs := bytes.Split(raw, []byte("\n---\n"))
	if len(docs) != 2 {
		t.Fatalf("%d documents, want a ClusterRole and a Role", len(docs))
	}
	var cr rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(docs[0], &cr); err != nil || cr.Kind != "ClusterRole" {
		t.Fatalf("ClusterRole: %v %s", err, cr.Kind)
	}
	var subs []string
	for _, p := range schema.KubeletPaths {
		if !slices.Contains(subs, "nodes/"+p.Subresource) {
			subs = append(subs, "nodes/"+p.Subresource)
		}
	}
	sort.Strings(subs)
	want := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list"}},
		{APIGroups: []string{""}, Resources: subs, Verbs: []string{"get"}},
	}
	if len(cr.Rules) != len(want) {
		t.Fatalf("rules %+v, want %+v", cr.Rules, want)
	}
	for i := range want {
		got := cr.Rules[i]
		if !slices.Equal(got.APIGroups, want[i].APIGroups) || !slices.Equal(got.Resources, want[i].Resources) || !slices.Equal(got.Verbs, want[i].Verbs) || len(got.ResourceNames)+len(got.NonResourceURLs) > 0 {
			t.Errorf("rule %d: %+v, want %+v", i, got, want[i])
		}
		if slices.Contains(got.Resources, "nodes/proxy") {
			t.Error("the reader role holds nodes/proxy")
		}
	}
	var role rbacv1.Role
	if err := yaml.UnmarshalStrict(docs[1], &role); err != nil || role.Kind != "Role" || role.Namespace != "kube-system" {
		t.Fatalf("Role: %v %+v", err, role.ObjectMeta)
	}
	if len(role.Rules) != 1 || !slices.Equal(role.Rules[0].Resources, []string{"configmaps"}) || !slices.Equal(role.Rules[0].ResourceNames, []string{"kubelet-config"}) ||
		!slices.Equal(role.Rules[0].Verbs, []string{"get"}) {
		t.Errorf("Role rules %+v", role.Rules)
	}
}
