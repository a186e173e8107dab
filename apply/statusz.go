package apply

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/kubeletcfg/kubeletcfg/kubeletapi"
)

// StatuszProof is what the kubelet's /statusz says of the restart: its
// start time and binary version before and after, against the process
// pinned; Unread says why it could not say (not served, refused).
type StatuszProof struct {
	kubeletapi.Restart
	Unread string `json:"unread,omitempty"`
}

// statuszTimeout bounds each /statusz read.
const statuszTimeout = 3 * time.Second

// startTimePhase reads, with Options.Statusz, the running kubelet's start
// time before anything is written: what the restart must move. A kubelet
// that does not answer is no reason to stop.
type startTimePhase struct{}

func (startTimePhase) Name() string { return "starttime" }

func (startTimePhase) Run(ctx context.Context, t *Tx) error {
	if t.o.Statusz == nil {
		return nil
	}
	rctx, cancel := context.WithTimeout(ctx, statuszTimeout)
	defer cancel()
	t.statuszBefore, t.statuszBeforeErr = t.o.Statusz(rctx)
	if t.statuszBeforeErr != nil {
		t.o.progress("/statusz before the change: %v", t.statuszBeforeErr)
	}
	return nil
}

// statuszPhase proves, with Options.Statusz, that the kubelet that passed
// the watch is the one started: its /statusz start time moved past the old
// one's and is the pinned process's, to the second. A contradiction rolls
// back; a kubelet that does not serve /statusz (before 1.33, the gate off)
// or refuses it leaves the proof to the process, and says so.
type statuszPhase struct{}

func (statuszPhase) Name() string { return "statusz" }

func (statuszPhase) Run(ctx context.Context, t *Tx) error {
	if t.o.Statusz == nil {
		return nil
	}
	rctx, cancel := context.WithTimeout(ctx, statuszTimeout)
	defer cancel()
	after, err := t.o.Statusz(rctx)
	var e *kubeletapi.Error
	switch {
	case errors.As(err, &e) && e.Reason == kubeletapi.OtherNode:
		return &unhealthy{cause: "/statusz: " + err.Error()}
	case err != nil:
		t.out.Statusz = &StatuszProof{Unread: err.Error()}
		t.o.progress("/statusz after the restart: %v: the restart is proven by the process alone", err)
		return nil
	}
	var pinned time.Time
	if k := t.out.Kubelet; k != nil && k.PID > 0 {
		pinned = t.o.started(k.PID)
	}
	before := t.statuszBefore
	r, perr := kubeletapi.ProveRestart(before, after, pinned)
	t.out.Statusz = &StatuszProof{Restart: r}
	if perr != nil {
		return &unhealthy{cause: "/statusz: " + perr.Error()}
	}
	t.o.progress("/statusz: %s", r.Said)
	return nil
}

// processStarted is when process pid started (zero if unknown): its start
// in clock ticks after boot (/proc/PID/stat), on the boot time
// (/proc/stat btime). Linux counts USER_HZ, 100, ticks a second.
func processStarted(pid int) time.Time {
	ticks := procStart(pid)
	if ticks == 0 {
		return time.Time{}
	}
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return time.Time{}
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			boot, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return time.Time{}
			}
			const userHZ = 100
			return time.Unix(boot, 0).Add(time.Duration(ticks) * time.Second / userHZ)
		}
	}
	return time.Time{}
}

func (p StatuszProof) String() string {
	if p.Unread != "" {
		return fmt.Sprintf("not read (%s): the restart is proven by the process alone", p.Unread)
	}
	return p.Said
}
