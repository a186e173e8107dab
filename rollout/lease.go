package rollout

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ObjectName names the rollout's Lease and progress ConfigMap: one rollout
// at a time per namespace.
const ObjectName = "kubeletcfg-rollout"

// DefaultLeaseDuration is how long a rollout holds the Lease without
// renewing it (it renews every third of it); a rollout whose process died
// is taken over by --resume once its Lease went that long unrenewed.
const DefaultLeaseDuration = 30 * time.Second

// ErrBusy: another rollout holds the Lease.
var ErrBusy = errors.New("another rollout is running")

// lease is the rollout's hold on the namespace's Lease.
type lease struct {
	api       API
	ns        string
	holder    string // ID/host/pid
	duration  time.Duration
	clock     Clock
	cur       *coordinationv1.Lease
	progress  func(string, ...any)
	pollEvery time.Duration
}

func holderID(id string) string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s/%s/%d", id, host, os.Getpid())
}

// rolloutOf is the rollout ID a holder identity names.
func rolloutOf(holder string) string {
	id, _, _ := strings.Cut(holder, "/")
	return id
}

func (l *lease) spec(now time.Time) coordinationv1.LeaseSpec {
	secs := int32(l.duration / time.Second)
	t := metav1.NewMicroTime(now)
	return coordinationv1.LeaseSpec{HolderIdentity: &l.holder, LeaseDurationSeconds: &secs, AcquireTime: &t, RenewTime: &t}
}

// newLeaseObject is the Lease l holds from now.
func newLeaseObject(l *lease, now time.Time) *coordinationv1.Lease {
	return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: ObjectName, Namespace: l.ns,
		Labels: map[string]string{labelName: "kubeletcfg", labelComponent: "rollout"}}, Spec: l.spec(now)}
}

// acquire takes the Lease. A Lease another rollout holds, renewed within
// its duration, refuses (ErrBusy). With takeOver (--resume of rollout
// resume), a Lease that rollout's dead process still holds is taken once
// it went a whole duration unrenewed, as this process sees the time pass
// (no clocks compared).
func (l *lease) acquire(ctx context.Context, takeOver string) error {
	var seen string // the renewTime last seen, and since when
	var since time.Time
	for {
		cur, err := l.api.GetLease(ctx, l.ns, ObjectName)
		if apierrors.IsNotFound(err) {
			created, err := l.api.CreateLease(ctx, newLeaseObject(l, l.clock.Now()))
			if apierrors.IsAlreadyExists(err) {
				continue
			}
			if err != nil {
				return fmt.Errorf("lease %s/%s: %w", l.ns, ObjectName, err)
			}
			l.cur = created
			return nil
		}
		if err != nil {
			return fmt.Errorf("lease %s/%s: %w", l.ns, ObjectName, err)
		}
		holder := ""
		if cur.Spec.HolderIdentity != nil {
			holder = *cur.Spec.HolderIdentity
		}
		free := holder == ""
		if !free && takeOver != "" && rolloutOf(holder) == takeOver {
			renew := ""
			if cur.Spec.RenewTime != nil {
				renew = cur.Spec.RenewTime.UTC().Format(time.RFC3339Nano)
			}
			if renew != seen {
				seen, since = renew, l.clock.Now()
				l.progress("rollout %s's lease is held by %s (renewed %s): taking it over once it goes %s unrenewed", takeOver, holder, renew, l.duration)
			}
			free = l.clock.Now().Sub(since) >= l.duration
		}
		if !free && takeOver == "" && expired(cur, l.clock.Now()) {
			free = true
		}
		if !free {
			if takeOver != "" && rolloutOf(holder) == takeOver {
				if err := l.clock.Sleep(ctx, l.pollEvery); err != nil {
					return err
				}
				continue
			}
			renewed := ""
			if cur.Spec.RenewTime != nil {
				renewed = ", renewed " + cur.Spec.RenewTime.UTC().Format(time.RFC3339)
			}
			return fmt.Errorf("%w: lease %s/%s is held by %s%s", ErrBusy, l.ns, ObjectName, holder, renewed)
		}
		cur.Spec = l.spec(l.clock.Now())
		updated, err := l.api.UpdateLease(ctx, cur)
		if apierrors.IsConflict(err) {
			continue // someone else wrote it: look again
		}
		if err != nil {
			return fmt.Errorf("lease %s/%s: %w", l.ns, ObjectName, err)
		}
		l.cur = updated
		return nil
	}
}

// expired: renewed longer than its duration ago by the clock here.
func expired(l *coordinationv1.Lease, now time.Time) bool {
	if l.Spec.RenewTime == nil || l.Spec.LeaseDurationSeconds == nil {
		return true
	}
	return now.After(l.Spec.RenewTime.Add(time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second))
}

// renew renews the Lease; an error means it is lost (someone took it).
func (l *lease) renew(ctx context.Context) error {
	next := l.cur.DeepCopy()
	t := metav1.NewMicroTime(l.clock.Now())
	next.Spec.RenewTime = &t
	updated, err := l.api.UpdateLease(ctx, next)
	if err != nil {
		return fmt.Errorf("renewing lease %s/%s: %w", l.ns, ObjectName, err)
	}
	l.cur = updated
	return nil
}

// keep renews the Lease every third of its duration until ctx ends; it
// calls lost when it cannot (after retrying within the duration).
func (l *lease) keep(ctx context.Context, lost func(error)) {
	var failing time.Time
	for {
		if l.clock.Sleep(ctx, l.duration/3) != nil {
			return
		}
		err := l.renew(ctx)
		switch {
		case ctx.Err() != nil:
			return
		case err == nil:
			failing = time.Time{}
		case apierrors.IsConflict(err):
			lost(err)
			return
		case failing.IsZero():
			failing = l.clock.Now()
		case l.clock.Now().Sub(failing) > l.duration*2/3:
			lost(err)
			return
		}
	}
}

// release lets the Lease go: the next rollout may start at once.
func (l *lease) release(ctx context.Context) error {
	if l.cur == nil {
		return nil
	}
	next := l.cur.DeepCopy()
	next.Spec.HolderIdentity = nil
	next.Spec.RenewTime = nil
	next.Spec.AcquireTime = nil
	_, err := l.api.UpdateLease(ctx, next)
	return err
}
