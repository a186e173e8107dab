package rollout

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
)

// API is what a rollout asks of the API server.
type API interface {
	ListNodes(ctx context.Context, selector string) ([]corev1.Node, error)
	GetNode(ctx context.Context, name string) (*corev1.Node, error)
	// AnnotateNode sets one annotation of a Node (a merge patch).
	AnnotateNode(ctx context.Context, name, key, value string) error
	GetServiceAccount(ctx context.Context, ns, name string) error

	GetLease(ctx context.Context, ns, name string) (*coordinationv1.Lease, error)
	CreateLease(ctx context.Context, l *coordinationv1.Lease) (*coordinationv1.Lease, error)
	// UpdateLease replaces the Lease at its resourceVersion (a conflict if
	// someone wrote it since).
	UpdateLease(ctx context.Context, l *coordinationv1.Lease) (*coordinationv1.Lease, error)

	GetConfigMap(ctx context.Context, ns, name string) (*corev1.ConfigMap, error)
	CreateConfigMap(ctx context.Context, cm *corev1.ConfigMap) (*corev1.ConfigMap, error)
	UpdateConfigMap(ctx context.Context, cm *corev1.ConfigMap) (*corev1.ConfigMap, error)

	GetSecret(ctx context.Context, ns, name string) (*corev1.Secret, error)
	CreateSecret(ctx context.Context, s *corev1.Secret) error
	DeleteSecret(ctx context.Context, ns, name string) error

	CreateJob(ctx context.Context, j *batchv1.Job) error
	DeleteJob(ctx context.Context, ns, name string) error
	ListJobs(ctx context.Context, ns, selector string) ([]batchv1.Job, error)
	ListPods(ctx context.Context, ns, selector string) ([]corev1.Pod, error)

	// DryRun has the API server admit obj (a Secret, Job, Lease or
	// ConfigMap) as it would create it, without creating it.
	DryRun(ctx context.Context, obj runtime.Object) error
}

// restAPI is client-go's REST client with only the groups a rollout uses
// (the typed clientset would add every group to the binary).
type restAPI struct {
	core, batch, coordination rest.Interface
}

// requestTimeout bounds each request to the API server.
var requestTimeout = 30 * time.Second

// NewAPI is the API of the cluster cfg names.
func NewAPI(cfg *rest.Config) (API, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, batchv1.AddToScheme, coordinationv1.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	codecs := serializer.NewCodecFactory(scheme).WithoutConversion()
	client := func(gv schema.GroupVersion, path string) (rest.Interface, error) {
		c := rest.CopyConfig(cfg)
		c.GroupVersion, c.APIPath, c.NegotiatedSerializer = &gv, path, codecs
		if c.UserAgent == "" {
			c.UserAgent = "kubeletcfg-rollout"
		}
		// A request the API server never answers ends (the rollout's loop
		// then tries again or stops), and takes only its own connection
		// with it: over HTTP/2 every later request would share the
		// black-holed one.
		if c.Timeout == 0 {
			c.Timeout = requestTimeout
		}
		c.NextProtos = []string{"http/1.1"}
		// Hundreds of Jobs a wave: client-go's default 5 requests/s would
		// be the bottleneck.
		if c.QPS == 0 {
			c.QPS, c.Burst = 50, 100
		}
		return rest.RESTClientFor(c)
	}
	var a restAPI
	var err error
	if a.core, err = client(corev1.SchemeGroupVersion, "/api"); err != nil {
		return nil, err
	}
	if a.batch, err = client(batchv1.SchemeGroupVersion, "/apis"); err != nil {
		return nil, err
	}
	if a.coordination, err = client(coordinationv1.SchemeGroupVersion, "/apis"); err != nil {
		return nil, err
	}
	return &a, nil
}

func (a *restAPI) ListNodes(ctx context.Context, selector string) ([]corev1.Node, error) {
	var out []corev1.Node
	next := ""
	for {
		list := &corev1.NodeList{}
		req := a.core.Get().Resource("nodes").Param("limit", "500")
		if selector != "" {
			req = req.Param("labelSelector", selector)
		}
		if next != "" {
			req = req.Param("continue", next)
		}
		if err := req.Do(ctx).Into(list); err != nil {
			return nil, err
		}
		out = append(out, list.Items...)
		if next = list.Continue; next == "" {
			return out, nil
		}
	}
}

func (a *restAPI) GetNode(ctx context.Context, name string) (*corev1.Node, error) {
	n := &corev1.Node{}
	return n, a.core.Get().Resource("nodes").Name(name).Do(ctx).Into(n)
}

func (a *restAPI) AnnotateNode(ctx context.Context, name, key, value string) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{key: value}}})
	if err != nil {
		return err
	}
	return a.core.Patch(types.MergePatchType).Resource("nodes").Name(name).Body(patch).Do(ctx).Error()
}

func (a *restAPI) GetServiceAccount(ctx context.Context, ns, name string) error {
	return a.core.Get().Namespace(ns).Resource("serviceaccounts").Name(name).Do(ctx).Into(&corev1.ServiceAccount{})
}

func (a *restAPI) GetLease(ctx context.Context, ns, name string) (*coordinationv1.Lease, error) {
	l := &coordinationv1.Lease{}
	return l, a.coordination.Get().Namespace(ns).Resource("leases").Name(name).Do(ctx).Into(l)
}

func (a *restAPI) CreateLease(ctx context.Context, l *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	out := &coordinationv1.Lease{}
	return out, a.coordination.Post().Namespace(l.Namespace).Resource("leases").Body(l).Do(ctx).Into(out)
}

func (a *restAPI) UpdateLease(ctx context.Context, l *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	out := &coordinationv1.Lease{}
	return out, a.coordination.Put().Namespace(l.Namespace).Resource("leases").Name(l.Name).Body(l).Do(ctx).Into(out)
}

func (a *restAPI) GetConfigMap(ctx context.Context, ns, name string) (*corev1.ConfigMap, error) {
	cm := &corev1.ConfigMap{}
	return cm, a.core.Get().Namespace(ns).Resource("configmaps").Name(name).Do(ctx).Into(cm)
}

func (a *restAPI) CreateConfigMap(ctx context.Context, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
	out := &corev1.ConfigMap{}
	return out, a.core.Post().Namespace(cm.Namespace).Resource("configmaps").Body(cm).Do(ctx).Into(out)
}

func (a *restAPI) UpdateConfigMap(ctx context.Context, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
	out := &corev1.ConfigMap{}
	return out, a.core.Put().Namespace(cm.Namespace).Resource("configmaps").Name(cm.Name).Body(cm).Do(ctx).Into(out)
}

func (a *restAPI) GetSecret(ctx context.Context, ns, name string) (*corev1.Secret, error) {
	s := &corev1.Secret{}
	return s, a.core.Get().Namespace(ns).Resource("secrets").Name(name).Do(ctx).Into(s)
}

func (a *restAPI) CreateSecret(ctx context.Context, s *corev1.Secret) error {
	return a.core.Post().Namespace(s.Namespace).Resource("secrets").Body(s).Do(ctx).Error()
}

func (a *restAPI) DeleteSecret(ctx context.Context, ns, name string) error {
	return a.core.Delete().Namespace(ns).Resource("secrets").Name(name).Do(ctx).Error()
}

func (a *restAPI) CreateJob(ctx context.Context, j *batchv1.Job) error {
	return a.batch.Post().Namespace(j.Namespace).Resource("jobs").Body(j).Do(ctx).Error()
}

func (a *restAPI) DeleteJob(ctx context.Context, ns, name string) error {
	bg := metav1.DeletePropagationBackground
	body, _ := json.Marshal(metav1.DeleteOptions{PropagationPolicy: &bg})
	return a.batch.Delete().Namespace(ns).Resource("jobs").Name(name).Body(body).Do(ctx).Error()
}

func (a *restAPI) ListJobs(ctx context.Context, ns, selector string) ([]batchv1.Job, error) {
	list := &batchv1.JobList{}
	return list.Items, a.batch.Get().Namespace(ns).Resource("jobs").Param("labelSelector", selector).Do(ctx).Into(list)
}

func (a *restAPI) ListPods(ctx context.Context, ns, selector string) ([]corev1.Pod, error) {
	list := &corev1.PodList{}
	return list.Items, a.core.Get().Namespace(ns).Resource("pods").Param("labelSelector", selector).Do(ctx).Into(list)
}

func (a *restAPI) DryRun(ctx context.Context, obj runtime.Object) error {
	var client rest.Interface
	var resource, ns string
	switch o := obj.(type) {
	case *corev1.Secret:
		client, resource, ns = a.core, "secrets", o.Namespace
	case *corev1.ConfigMap:
		client, resource, ns = a.core, "configmaps", o.Namespace
	case *batchv1.Job:
		client, resource, ns = a.batch, "jobs", o.Namespace
	case *coordinationv1.Lease:
		client, resource, ns = a.coordination, "leases", o.Namespace
	default:
		return fmt.Errorf("no dry run for a %T", obj)
	}
	return client.Post().Namespace(ns).Resource(resource).Param("dryRun", "All").Body(obj).Do(ctx).Error()
}
