package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
)

// api is what the package asks of the API server.
type api interface {
	getNode(ctx context.Context, name string) (*corev1.Node, error)
	patchNode(ctx context.Context, name string, mergePatch []byte) error
	// listPods lists the pods bound to a node, in every namespace.
	listPods(ctx context.Context, node string) ([]corev1.Pod, error)
	getPod(ctx context.Context, namespace, name string) (*corev1.Pod, error)
	evict(ctx context.Context, ev *policyv1.Eviction) error
	getDaemonSet(ctx context.Context, namespace, name string) error
	getLease(ctx context.Context, namespace, name string) (*coordinationv1.Lease, error)
}

// requestTimeout bounds each request to the API server, whatever the
// caller's context: one the API server never answers fails, and the
// caller's own deadline (the health watch's) holds.
var requestTimeout = 10 * time.Second

// bounded is ctx bounded by requestTimeout.
func bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, requestTimeout)
}

// podPage is how many pods one list request asks for (kubectl drain's chunk).
const podPage = 500

// restAPI is client-go's REST client with only the API groups the package
// reads: the generated typed clients register every group there is, which
// cost every kubeletcfg command 16 MB of binary and 9 MB of memory.
type restAPI struct {
	core, apps, coordination rest.Interface
}

func newRESTAPI(cfg *rest.Config) (*restAPI, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme, coordinationv1.AddToScheme, policyv1.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	codecs := serializer.NewCodecFactory(scheme).WithoutConversion()
	client := func(gv schema.GroupVersion, path string) (rest.Interface, error) {
		c := rest.CopyConfig(cfg)
		c.GroupVersion, c.APIPath, c.NegotiatedSerializer = &gv, path, codecs
		if c.Timeout == 0 || c.Timeout > requestTimeout {
			c.Timeout = requestTimeout
		}
		// HTTP/1.1: a request that times out closes its own connection.
		// Over HTTP/2 every request shares one, and one the network
		// black-holes takes every later request with it until its ping
		// times out (45 s), past the health watch.
		c.NextProtos = []string{"http/1.1"}
		if c.UserAgent == "" {
			c.UserAgent = "kubeletcfg"
		}
		return rest.RESTClientFor(c)
	}
	var a restAPI
	var err error
	if a.core, err = client(corev1.SchemeGroupVersion, "/api"); err != nil {
		return nil, err
	}
	if a.apps, err = client(appsv1.SchemeGroupVersion, "/apis"); err != nil {
		return nil, err
	}
	if a.coordination, err = client(coordinationv1.SchemeGroupVersion, "/apis"); err != nil {
		return nil, err
	}
	return &a, nil
}

func (a *restAPI) getNode(ctx context.Context, name string) (*corev1.Node, error) {
	ctx, cancel := bounded(ctx)
	defer cancel()
	n := &corev1.Node{}
	return n, a.core.Get().Resource("nodes").Name(name).Do(ctx).Into(n)
}

func (a *restAPI) patchNode(ctx context.Context, name string, mergePatch []byte) error {
	ctx, cancel := bounded(ctx)
	defer cancel()
	return a.core.Patch(types.MergePatchType).Resource("nodes").Name(name).Body(mergePatch).Do(ctx).Error()
}

func (a *restAPI) listPods(ctx context.Context, node string) ([]corev1.Pod, error) {
	var out []corev1.Pod
	next := ""
	for {
		list := &corev1.PodList{}
		req := a.core.Get().Resource("pods").Param("fieldSelector", "spec.nodeName="+node).Param("limit", fmt.Sprint(podPage))
		if next != "" {
			req = req.Param("continue", next)
		}
		pctx, cancel := bounded(ctx)
		err := req.Do(pctx).Into(list)
		cancel()
		if err != nil {
			return nil, err
		}
		out = append(out, list.Items...)
		if next = list.Continue; next == "" {
			return out, nil
		}
	}
}

func (a *restAPI) getPod(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
	ctx, cancel := bounded(ctx)
	defer cancel()
	p := &corev1.Pod{}
	return p, a.core.Get().Namespace(namespace).Resource("pods").Name(name).Do(ctx).Into(p)
}

func (a *restAPI) evict(ctx context.Context, ev *policyv1.Eviction) error {
	ctx, cancel := bounded(ctx)
	defer cancel()
	ev = ev.DeepCopy()
	ev.TypeMeta = metav1.TypeMeta{APIVersion: policyv1.SchemeGroupVersion.String(), Kind: "Eviction"}
	body, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	return a.core.Post().Namespace(ev.Namespace).Resource("pods").Name(ev.Name).SubResource("eviction").
		SetHeader("Content-Type", "application/json").Body(body).Do(ctx).Error()
}

func (a *restAPI) getDaemonSet(ctx context.Context, namespace, name string) error {
	ctx, cancel := bounded(ctx)
	defer cancel()
	return a.apps.Get().Namespace(namespace).Resource("daemonsets").Name(name).Do(ctx).Into(&appsv1.DaemonSet{})
}

func (a *restAPI) getLease(ctx context.Context, namespace, name string) (*coordinationv1.Lease, error) {
	ctx, cancel := bounded(ctx)
	defer cancel()
	l := &coordinationv1.Lease{}
	return l, a.coordination.Get().Namespace(namespace).Resource("leases").Name(name).Do(ctx).Into(l)
}
