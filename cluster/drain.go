package cluster

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeletcfg/kubeletcfg/apply"
)

// DrainOptions are kubectl drain's: DaemonSet and mirror pods always stay.
type DrainOptions struct {
	// Timeout bounds the whole drain, evictions refused by a
	// PodDisruptionBudget retried until then (0: no bound).
	Timeout time.Duration
	// GracePeriodSeconds overrides each pod's termination grace period
	// when >= 0 (0: at once); negative keeps each pod's own.
	GracePeriodSeconds int64
	// DeleteEmptyDirData lets pods with emptyDir volumes go (their data is
	// lost); Force lets pods go that no controller will recreate.
	DeleteEmptyDirData bool
	Force              bool
	// KeepPod is the pod that runs this apply (a rollout's Job, on the
	// node it drains): it stays.
	KeepPod types.UID
}

const mirrorAnnotation = "kubernetes.io/config.mirror"

// Drain evicts the node's pods through the Eviction API and waits until
// they are gone, by kubectl drain's rules. It evicts nothing when a pod
// may not go (emptyDir data, no controller, a missing DaemonSet): the error
// names each such pod and the option that lets it go.
func (n *Node) Drain(ctx context.Context, o DrainOptions) error {
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	pods, err := n.api.listPods(ctx, n.Name)
	if err != nil {
		return fmt.Errorf("pods of node %s: %w", n.Name, err)
	}
	var evict []corev1.Pod
	var refused []string
	for _, p := range pods {
		if p.Spec.NodeName != n.Name {
			continue
		}
		if o.KeepPod != "" && p.UID == o.KeepPod {
			n.step("leaving pod %s/%s: it runs this apply", p.Namespace, p.Name)
			continue
		}
		why, goes, err := n.mayEvict(ctx, p, o)
		switch {
		case err != nil:
			return err
		case goes:
			evict = append(evict, p)
		case why != "":
			refused = append(refused, fmt.Sprintf("%s/%s (%s)", p.Namespace, p.Name, why))
		default:
			// left in place; mayEvict said nothing to refuse
		}
	}
	if len(refused) > 0 {
		sort.Strings(refused)
		return fmt.Errorf("cannot drain node %s: %s", n.Name, strings.Join(refused, "; "))
	}
	if len(evict) == 0 {
		n.step("no pods to evict")
		return nil
	}

	errs := make([]error, len(evict))
	var wg sync.WaitGroup
	for i := range evict {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = n.evict(ctx, evict[i], o.GracePeriodSeconds)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) && o.Timeout > 0 {
			return fmt.Errorf("drain of node %s did not finish within %s: %w", n.Name, o.Timeout, err)
		}
		return err
	}
	n.step("drained (%d evicted)", len(evict))
	return nil
}

// mayEvict applies kubectl drain's filters, in its order: it says whether
// the pod goes, and if it may not, why (empty for pods left on purpose).
func (n *Node) mayEvict(ctx context.Context, p corev1.Pod, o DrainOptions) (why string, evict bool, err error) {
	finished := p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
	owner := metav1.GetControllerOf(&p)
	// A finished pod goes, even a DaemonSet's (kubectl drain's filter).
	if owner != nil && owner.Kind == "DaemonSet" && strings.HasPrefix(owner.APIVersion, "apps/") && !finished {
		err := n.api.getDaemonSet(ctx, p.Namespace, owner.Name)
		switch {
		case apierrors.IsNotFound(err) && !o.Force:
			return "its DaemonSet " + owner.Name + " is gone; --force evicts it", false, nil
		case apierrors.IsNotFound(err):
		case err != nil:
			return "", false, fmt.Errorf("DaemonSet %s/%s of pod %s: %w", p.Namespace, owner.Name, p.Name, err)
		default:
			n.step("leaving DaemonSet pod %s/%s", p.Namespace, p.Name)
			return "", false, nil
		}
	}
	if _, ok := p.Annotations[mirrorAnnotation]; ok {
		n.step("leaving static pod %s/%s", p.Namespace, p.Name)
		return "", false, nil
	}
	if !finished && hasEmptyDir(p) && !o.DeleteEmptyDirData {
		return "emptyDir data would be lost; --delete-emptydir-data evicts it", false, nil
	}
	if !finished && owner == nil && !o.Force {
		return "no controller recreates it; --force evicts it", false, nil
	}
	return "", true, nil
}

func hasEmptyDir(p corev1.Pod) bool {
	for _, v := range p.Spec.Volumes {
		if v.EmptyDir != nil {
			return true
		}
	}
	return false
}

// evict asks for the pod's eviction until the API server accepts it (a 429
// is a PodDisruptionBudget that does not allow it yet), then waits until
// the pod is gone.
func (n *Node) evict(ctx context.Context, p corev1.Pod, grace int64) error {
	ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace}}
	if grace >= 0 {
		ev.DeleteOptions = &metav1.DeleteOptions{GracePeriodSeconds: &grace}
	}
	n.step("evicting pod %s/%s", p.Namespace, p.Name)
	for {
		err := n.api.evict(ctx, ev)
		if err == nil || apierrors.IsNotFound(err) {
			break
		}
		if apierrors.IsForbidden(err) && apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			// No eviction in a namespace being deleted. As kubectl drain:
			// once the pod is marked deleted, wait for it to go; until
			// then, ask again (deleting it would skip its budget).
			cur, gerr := n.api.getPod(ctx, p.Namespace, p.Name)
			if apierrors.IsNotFound(gerr) || (gerr == nil && (cur.UID != p.UID || cur.DeletionTimestamp != nil)) {
				break
			}
			n.step("eviction of %s/%s refused: its namespace is terminating; retrying in %s", p.Namespace, p.Name, n.EvictRetry)
			if sleep(ctx, n.EvictRetry) != nil {
				return fmt.Errorf("evict pod %s/%s: %w", p.Namespace, p.Name, err)
			}
			continue
		}
		if !apierrors.IsTooManyRequests(err) {
			return fmt.Errorf("evict pod %s/%s: %w", p.Namespace, p.Name, err)
		}
		n.step("eviction of %s/%s refused (%v); retrying in %s", p.Namespace, p.Name, err, n.EvictRetry)
		if sleep(ctx, n.EvictRetry) != nil {
			return fmt.Errorf("evict pod %s/%s: %w", p.Namespace, p.Name, err)
		}
	}
	apply.Failpoint("mid-drain") // an eviction asked, the drain not over
	for {
		cur, err := n.api.getPod(ctx, p.Namespace, p.Name)
		if apierrors.IsNotFound(err) || (err == nil && cur.UID != p.UID) {
			n.step("pod %s/%s evicted", p.Namespace, p.Name)
			return nil
		}
		if err != nil && ctx.Err() == nil {
			return fmt.Errorf("pod %s/%s: %w", p.Namespace, p.Name, err)
		}
		if sleep(ctx, n.Poll) != nil {
			return fmt.Errorf("pod %s/%s evicted but not gone yet", p.Namespace, p.Name)
		}
	}
}
