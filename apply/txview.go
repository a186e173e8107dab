package apply

import (
	"time"

	"github.com/kubeletcfg/kubeletcfg/effective"
)

// What a hook may read of the transaction beyond its plan and outcome.

// RestartedAt is when the kubelet was restarted on the new files (zero
// before the restart phase ran).
func (t *Tx) RestartedAt() time.Time { return t.restart.start }

// HealthTimeout is how long the restarted kubelet has to become healthy
// (--health-timeout).
func (t *Tx) HealthTimeout() time.Duration { return t.o.Timeout }

// Next is the effective configuration the kubelet runs once changed.
func (p *Plan) Next() *effective.Result { return p.next }
