package fleet

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Through the node proxy, every read of a kubelet is a request the API
// server serves (two where /flagz is read): a scan of thousands of nodes at
// a fixed concurrency slows the API server's other clients down (at 16 at
// once, other requests took 9–16 ms against 4 ms idle; at 64, 17–28 ms).
// The limiter holds the reads to what the API server keeps up with, judged
// by the scan's own reads, which queue where the others do. It starts with
// limiterStart reads at once, whose window's median latency is the pace;
// each window (limiterWindow reads) whose median stays within 1.5 times the
// pace doubles the reads at once (until the first slow window, then adds
// one), up to --concurrency; a window whose median is more than twice the
// pace gives up a quarter of them (never below limiterMin). Failed reads
// (timeouts, refusals) do not count.
const (
	limiterWindow = 32
	limiterStart  = 4
	limiterMin    = 2
)

type limiter struct {
	mu       sync.Mutex
	cond     *sync.Cond
	max      int
	limit    int
	lowest   int
	inFlight int
	base     time.Duration
	window   []time.Duration
	slowed   bool // a window was slow: grow by one, no longer double
}

func newLimiter(max int) *limiter {
	start := min(max, limiterStart)
	l := &limiter{max: max, limit: start, lowest: start}
	l.cond = sync.NewCond(&l.mu)
	return l
}

// acquire waits for a read to be allowed; a nil limiter allows all.
func (l *limiter) acquire(ctx context.Context) {
	if l == nil {
		return
	}
	stop := context.AfterFunc(ctx, func() {
		l.mu.Lock()
		l.cond.Broadcast()
		l.mu.Unlock()
	})
	defer stop()
	l.mu.Lock()
	for l.inFlight >= l.limit && ctx.Err() == nil {
		l.cond.Wait()
	}
	l.inFlight++
	l.mu.Unlock()
}

// release ends a read that took d; ok says it read the node at the first
// attempt (only those say how fast the API server answers).
func (l *limiter) release(d time.Duration, ok bool) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.inFlight--
	defer l.cond.Broadcast()
	if !ok {
		return
	}
	l.window = append(l.window, d)
	if len(l.window) < limiterWindow {
		return
	}
	slices.Sort(l.window)
	median := l.window[len(l.window)/2]
	l.window = l.window[:0]
	switch {
	case l.base == 0:
		l.base = median
		l.limit = min(l.max, 2*l.limit)
	case median > 2*l.base:
		l.slowed = true
		l.limit = max(limiterMin, l.limit*3/4)
		l.lowest = min(l.lowest, l.limit)
	case median*2 <= 3*l.base && !l.slowed:
		l.limit = min(l.max, 2*l.limit)
	case median*2 <= 3*l.base:
		l.limit = min(l.max, l.limit+1)
	}
}

// report says how the scan was paced.
func (l *limiter) report() *Concurrency {
	l.mu.Lock()
	defer l.mu.Unlock()
	return &Concurrency{Max: l.max, Min: l.lowest, Final: l.limit, BaseLatency: float64(l.base.Microseconds()) / 1000}
}
