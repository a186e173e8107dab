package cluster

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"
)

// Every request to the API server is bounded: one that is never answered
// fails within the request timeout, whatever the caller's context.
func TestEveryRequestIsBounded(t *testing.T) {
	hang := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-hang }))
	defer srv.Close()
	defer close(hang)
	defer func(d time.Duration) { requestTimeout = d }(requestTimeout)
	requestTimeout = 200 * time.Millisecond
	a, err := newRESTAPI(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for name, call := range map[string]func() error{
		"get node":   func() error { _, err := a.getNode(ctx, "n1"); return err },
		"patch node": func() error { return a.patchNode(ctx, "n1", []byte(`{}`)) },
		"list pods":  func() error { _, err := a.listPods(ctx, "n1"); return err },
		"get pod":    func() error { _, err := a.getPod(ctx, "default", "p"); return err },
		"evict": func() error {
			return a.evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"}})
		},
		"daemonset": func() error { return a.getDaemonSet(ctx, "default", "ds") },
		"lease":     func() error { _, err := a.getLease(ctx, LeaseNamespace, "n1"); return err },
	} {
		done := make(chan error, 1)
		go func() { done <- call() }()
		select {
		case err := <-done:
			if err == nil {
				t.Errorf("%s: no error from a server that never answers", name)
			}
		case <-time.After(3 * time.Second):
			t.Errorf("%s: still waiting 3s for a server that never answers", name)
		}
	}
}

// kubeletcfg marks its own cordon on the Node; the next apply takes over a
// cordon an interrupted apply left (it is not "cordoned before") and
// uncordons it once healthy, removing the mark.
func TestNextApplyTakesOverItsOwnCordon(t *testing.T) {
	n, cs, _ := testNode()
	first := &Maintenance{Node: n}
	if err := first.Begin(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !unschedulable(t, cs) || annotation(t, cs) == "" {
		t.Fatalf("kubeletcfg's cordon: unschedulable %v, mark %q", unschedulable(t, cs), annotation(t, cs))
	}
	// The first apply dies here (Ctrl-C, kill -9): nobody ends it.
	next := &Maintenance{Node: n}
	if err := next.Begin(context.Background()); err != nil {
		t.Fatal(err)
	}
	left, err := next.End(context.Background(), true)
	if err != nil || left != "" || unschedulable(t, cs) || annotation(t, cs) != "" {
		t.Fatalf("the next apply: %q %v, cordoned %v, mark %q; want uncordoned", left, err, unschedulable(t, cs), annotation(t, cs))
	}
}

// A cordon without kubeletcfg's mark is the operator's: it stays.
func TestOperatorsCordonStays(t *testing.T) {
	n, cs, _ := testNode()
	if _, err := cs.CoreV1().Nodes().Patch(context.Background(), "n1", "application/merge-patch+json", []byte(`{"spec":{"unschedulable":true}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	m := &Maintenance{Node: n}
	if err := m.Begin(context.Background()); err != nil {
		t.Fatal(err)
	}
	if left, _ := m.End(context.Background(), true); !strings.Contains(left, "stays cordoned") || !unschedulable(t, cs) {
		t.Fatalf("%q, cordoned %v", left, unschedulable(t, cs))
	}
	if ours, err := n.ReleaseCordon(context.Background()); ours || err != nil || !unschedulable(t, cs) {
		t.Fatalf("releasing an operator's cordon: %v %v, cordoned %v", ours, err, unschedulable(t, cs))
	}
}

// recover and the guard release a cordon kubeletcfg left, and only that.
func TestReleaseCordon(t *testing.T) {
	n, cs, _ := testNode()
	if err := (&Maintenance{Node: n}).Begin(context.Background()); err != nil {
		t.Fatal(err)
	}
	ours, err := n.ReleaseCordon(context.Background())
	if !ours || err != nil || unschedulable(t, cs) || annotation(t, cs) != "" {
		t.Fatalf("release: %v %v, cordoned %v, mark %q", ours, err, unschedulable(t, cs), annotation(t, cs))
	}
}

// A drain stopped by its context (SIGINT) stops at once and leaves the
// node uncordoned, its mark gone.
func TestCanceledDrainUncordons(t *testing.T) {
	n, cs, _ := testNode(pod("web", nil))
	evictions(cs, func(string) error { return apierrors.NewTooManyRequests("budget", 0) })
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	m := &Maintenance{Node: n, Drain: true, DrainOptions: DrainOptions{GracePeriodSeconds: -1, Timeout: time.Minute}}
	start := time.Now()
	if err := m.Begin(ctx); err == nil {
		t.Fatal("a canceled drain succeeded")
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the canceled drain took %s", took)
	}
	if unschedulable(t, cs) || annotation(t, cs) != "" {
		t.Errorf("after a canceled drain: cordoned %v, mark %q", unschedulable(t, cs), annotation(t, cs))
	}
}

// In a terminating namespace kubectl drain keeps asking for the eviction
// (the namespace controller deletes the pod); it deletes nothing itself.
func TestDrainKeepsEvictingInATerminatingNamespace(t *testing.T) {
	n, cs, _ := testNode(pod("web", nil))
	terminating := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "web", errors.New("namespace default is being terminated"))
	terminating.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: corev1.NamespaceTerminatingCause}}
	calls := 0
	asked := evictions(cs, func(string) error {
		if calls++; calls < 3 {
			return terminating
		}
		return nil
	})
	deleted := 0
	cs.PrependReactor("delete", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		deleted++
		return false, nil, nil
	})
	if err := n.Drain(context.Background(), DrainOptions{GracePeriodSeconds: 3, Timeout: 5 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if deleted != 0 || len(*asked) != 3 {
		t.Errorf("deleted %d times, evictions asked %d; want 0 deletes and the eviction retried until it went", deleted, len(*asked))
	}
}

// A finished pod of a DaemonSet goes, as kubectl drain lets it.
func TestDrainEvictsFinishedDaemonSetPods(t *testing.T) {
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "ds", Namespace: "default"}}
	n, cs, _ := testNode(ds,
		pod("agent", func(p *corev1.Pod) { p.OwnerReferences[0].Kind, p.OwnerReferences[0].Name = "DaemonSet", "ds" }),
		pod("agent-done", func(p *corev1.Pod) {
			p.OwnerReferences[0].Kind, p.OwnerReferences[0].Name = "DaemonSet", "ds"
			p.Status.Phase = corev1.PodFailed
		}),
	)
	asked := evictions(cs, func(string) error { return nil })
	if err := n.Drain(context.Background(), DrainOptions{GracePeriodSeconds: -1}); err != nil {
		t.Fatal(err)
	}
	if got := names(*asked); got != "agent-done" {
		t.Errorf("evicted %q, want agent-done (a running DaemonSet pod stays)", got)
	}
}

func annotation(t *testing.T, cs *fake.Clientset) string {
	t.Helper()
	n, err := cs.CoreV1().Nodes().Get(context.Background(), "n1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return n.Annotations[CordonedByAnnotation]
}

// After a recovery the cordon kubeletcfg left is lifted only once the
// kubelet restarted has reported to the API server; an operator's stays.
func TestLiftAfterRecovery(t *testing.T) {
	restart := time.Now()
	n, cs, _ := testNode()
	if err := (&Maintenance{Node: n}).Begin(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := n.LiftAfter(context.Background(), restart, 50*time.Millisecond); err == nil || !unschedulable(t, cs) {
		t.Fatalf("a kubelet that has not reported: %v, cordoned %v; want it left cordoned, said so", err, unschedulable(t, cs))
	}
	node, _ := cs.CoreV1().Nodes().Get(context.Background(), "n1", metav1.GetOptions{})
	node.Status = nodeStatus(corev1.ConditionTrue, restart.Add(time.Second)).Status
	cs.CoreV1().Nodes().Update(context.Background(), node, metav1.UpdateOptions{})
	cs.CoordinationV1().Leases(LeaseNamespace).Create(context.Background(), lease(restart.Add(time.Second)), metav1.CreateOptions{})
	lifted, err := n.LiftAfter(context.Background(), restart, time.Second)
	if err != nil || !lifted || unschedulable(t, cs) {
		t.Fatalf("once reported: %v %v, cordoned %v", lifted, err, unschedulable(t, cs))
	}
}

// freezer is a TCP proxy that can freeze the connections open at a moment
// (a load balancer that black-holes them): their bytes go nowhere, for
// good; connections made later pass.
type freezer struct {
	ln     net.Listener
	mu     sync.Mutex
	frozen []chan struct{} // per connection: closed once frozen
	conns  []net.Conn
}

func newFreezer(t *testing.T, target string) *freezer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &freezer{ln: ln}
	t.Cleanup(func() {
		ln.Close()
		f.mu.Lock()
		for _, c := range f.conns {
			c.Close()
		}
		f.mu.Unlock()
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			freeze := make(chan struct{})
			f.mu.Lock()
			f.frozen, f.conns = append(f.frozen, freeze), append(f.conns, c, up)
			f.mu.Unlock()
			pipe := func(dst, src net.Conn) {
				buf := make([]byte, 32<<10)
				for {
					n, err := src.Read(buf)
					select {
					case <-freeze:
						<-make(chan struct{}) // black hole: never more
					default:
					}
					if n > 0 {
						dst.Write(buf[:n])
					}
					if err != nil {
						dst.Close()
						return
					}
				}
			}
			go pipe(up, c)
			go pipe(c, up)
		}
	}()
	return f
}

// freeze black-holes every connection open now.
func (f *freezer) freeze() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.frozen {
		select {
		case <-c:
		default:
			close(c)
		}
	}
}

// A request the API server never answers costs that request only: the
// next one does not wait on the same dead connection (HTTP/2 would send
// every request down the one connection until its ping timeout, 45 s).
func TestAHungRequestDoesNotHangTheNext(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"kind":"Node","apiVersion":"v1","metadata":{"name":"n1"}}`))
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	f := newFreezer(t, srv.Listener.Addr().String())
	defer func(d time.Duration) { requestTimeout = d }(requestTimeout)
	requestTimeout = 300 * time.Millisecond
	a, err := newRESTAPI(&rest.Config{Host: "https://" + f.ln.Addr().String(), TLSClientConfig: rest.TLSClientConfig{Insecure: true}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := a.getNode(ctx, "n1"); err != nil {
		t.Fatal(err)
	}
	f.freeze()
	if _, err := a.getNode(ctx, "n1"); err == nil {
		t.Fatal("a frozen connection answered")
	}
	for i := range 3 {
		if _, err := a.getNode(ctx, "n1"); err != nil {
			t.Errorf("request %d after one hung: %v", i+1, err)
		}
	}
}

// A lift after a recovery takes only the cordon it saw: one made since by
// another apply (another mark) stays.
func TestLiftLeavesANewerCordon(t *testing.T) {
	n, cs, _ := testNode()
	if err := (&Maintenance{Node: n}).Begin(context.Background()); err != nil {
		t.Fatal(err)
	}
	if lifted, err := n.releaseIf(context.Background(), "kubeletcfg apply on another host, pid 1"); lifted || err != nil || !unschedulable(t, cs) {
		t.Errorf("a cordon with another mark: lifted %v, %v, cordoned %v", lifted, err, unschedulable(t, cs))
	}
}
