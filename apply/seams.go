package apply

import (
	"context"
	"time"
)

// Check is a health check beyond the kubelet's own, run by the watch
// phase once the restarted kubelet answers locally (the Node's Ready
// condition and its Lease, read from the API server). A check must pass
// within --health-timeout of the restart, or the change is rolled back.
type Check interface {
	// Name says what is checked ("node Ready", "lease").
	Name() string
	// Check reports whether what it watches has seen the kubelet restarted
	// at restartedAt. An error is a failed probe, retried like a false one.
	Check(ctx context.Context, restartedAt time.Time) (Answer, error)
}

// Answer is what a Check says once.
type Answer struct {
	OK     bool   `json:"ok"`
	Detail string `json:"detail,omitempty"`
	// Times are the instants the answer rests on, by name
	// (lastHeartbeatTime, renewTime).
	Times map[string]time.Time `json:"times,omitempty"`
}

// CheckResult is the last answer of a Check in an apply.
type CheckResult struct {
	Name   string `json:"name"`
	Answer Answer `json:"answer"`
}

// Clock is the time the apply's watches run on.
type Clock interface {
	Now() time.Time
	// Sleep waits d, or until ctx ends (then its error).
	Sleep(ctx context.Context, d time.Duration) error
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
