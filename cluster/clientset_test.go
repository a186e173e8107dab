package cluster

import (
	"context"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
)

// clientsetAPI is the package's api over a typed clientset: client-go's fake
// one in unit tests.
type clientsetAPI struct{ cs kubernetes.Interface }

func fakeNode(name string, objs ...runtime.Object) (*Node, *fake.Clientset) {
	cs := fake.NewClientset(objs...)
	return newNode(clientsetAPI{cs}, name, nil), cs
}

func (c clientsetAPI) getNode(ctx context.Context, name string) (*corev1.Node, error) {
	return c.cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
}

func (c clientsetAPI) patchNode(ctx context.Context, name string, patch []byte) error {
	_, err := c.cs.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	return err
}

func (c clientsetAPI) listPods(ctx context.Context, node string) ([]corev1.Pod, error) {
	// The fake ignores field selectors: the package filters by node too.
	l, err := c.cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
	if err != nil {
		return nil, err
	}
	return l.Items, nil
}

func (c clientsetAPI) getPod(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
	return c.cs.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
}

func (c clientsetAPI) evict(ctx context.Context, ev *policyv1.Eviction) error {
	return c.cs.PolicyV1().Evictions(ev.Namespace).Evict(ctx, ev)
}

func (c clientsetAPI) getDaemonSet(ctx context.Context, namespace, name string) error {
	_, err := c.cs.AppsV1().DaemonSets(namespace).Get(ctx, name, metav1.GetOptions{})
	return err
}

func (c clientsetAPI) getLease(ctx context.Context, namespace, name string) (*coordinationv1.Lease, error) {
	return c.cs.CoordinationV1().Leases(namespace).Get(ctx, name, metav1.GetOptions{})
}
