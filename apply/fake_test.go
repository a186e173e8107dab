package apply

import (
	"bytes"
	"context"
	"errors"
	"os"
	"sync"
	"time"

	"k8s.io/kubelet/config/v1beta1"

	"github.com/kubeletcfg/kubeletcfg/why"
)

// fakeClock advances only when slept on.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
	return ctx.Err()
}

// life is how a fake kubelet started on some config behaves: healthz
// answers healthyAfter its start, and it exits diesAfter its start (0:
// never; healthyAfter < 0: never healthy).
type life struct {
	healthyAfter, diesAfter time.Duration
	// words are what it logs (its log file's lines).
	words []string
}

// fakeKubelet is a kubelet that reads its config file at each restart and
// behaves as behave says for that content.
type fakeKubelet struct {
	clock      *fakeClock
	config     string
	behave     func(config []byte) life
	pid        int
	cur        life
	startedAt  time.Time
	restarts   int
	restartErr error
	stateErr   error
	// sticky: Restart succeeds but the old process stays.
	sticky bool
}

func (k *fakeKubelet) Restart(context.Context) error {
	if k.restartErr != nil {
		return k.restartErr
	}
	k.restarts++
	if k.sticky {
		return nil
	}
	b, _ := os.ReadFile(k.config)
	k.pid++
	k.cur = k.behave(b)
	k.startedAt = k.clock.Now()
	return nil
}

func (k *fakeKubelet) running() bool {
	return k.pid > 0 && (k.cur.diesAfter == 0 || k.clock.Now().Before(k.startedAt.Add(k.cur.diesAfter)))
}

func (k *fakeKubelet) State(context.Context) (Proc, error) {
	if k.stateErr != nil {
		return Proc{}, k.stateErr
	}
	p := Proc{PID: 1000 + k.pid, Running: k.running()}
	if !p.Running {
		p.Why = "exited"
	}
	return p, nil
}

func (k *fakeKubelet) Restarted() why.Restarted {
	return why.Restarted{PID: 1000 + k.pid, Lines: k.cur.words}
}

func (k *fakeKubelet) probe(_ context.Context, cfg *v1beta1.KubeletConfiguration) (bool, string) {
	if cfg.HealthzPort != nil && *cfg.HealthzPort == 0 {
		return true, ""
	}
	return k.running() && k.cur.healthyAfter >= 0 && !k.clock.Now().Before(k.startedAt.Add(k.cur.healthyAfter)), "healthz"
}

// byContent behaves per marker in the config: the first marker found wins,
// anything else is a kubelet healthy after 0.4 s.
func byContent(m map[string]life) func([]byte) life {
	return func(b []byte) life {
		for marker, l := range m {
			if bytes.Contains(b, []byte(marker)) {
				return l
			}
		}
		return life{healthyAfter: 400 * time.Millisecond}
	}
}

// fakeCheck passes once the clock is at or after at, unless never says so.
type fakeCheck struct {
	clock *fakeClock
	at    time.Time
	never func() bool
}

func (c *fakeCheck) Name() string { return "node Ready" }

func (c *fakeCheck) Check(_ context.Context, restartedAt time.Time) (Answer, error) {
	if c.never != nil && c.never() {
		return Answer{}, errors.New("no heartbeat")
	}
	if c.clock.Now().Before(c.at) {
		return Answer{Detail: "lastHeartbeatTime before the restart"}, nil
	}
	return Answer{OK: true, Detail: "Ready", Times: map[string]time.Time{"lastHeartbeatTime": c.clock.Now(), "restartedAt": restartedAt}}, nil
}
