package apply

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/kubelet/config/v1beta1"

	"github.com/kubeletcfg/kubeletcfg/config"
	"github.com/kubeletcfg/kubeletcfg/diff"
	"github.com/kubeletcfg/kubeletcfg/effective"
	hostnode "github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/why"
)

// restartPhase restarts the kubelet on the new files. A restart command's
// process group is recorded in the journal, which exists by now, while it
// runs (no later restart starts while it still does).
type restartPhase struct{}

func (restartPhase) Name() string { return "restart" }

func (restartPhase) Run(ctx context.Context, t *Tx) error {
	if t.restarter == nil {
		t.restarter = t.o.Restarter
		if t.restarter == nil {
			t.restarter = t.o.restartSpec().Restarter()
		}
	}
	if c, ok := t.restarter.(*commandRestarter); ok {
		if c.started == nil {
			c.started = t.recordRestart
		}
		if c.output == "" {
			c.output = filepath.Join(t.dir, restartLog)
		}
	}
	t.restarted = true
	rs, err := t.watcher().restart(ctx)
	if err != nil {
		return &unhealthy{cause: err.Error()}
	}
	t.restart = rs
	return nil
}

// recordRestart writes the restart command's process group in the journal.
func (t *Tx) recordRestart(pgid int) error {
	t.journal.Restart = &procRef{PID: pgid, Start: procStart(pgid)}
	return writeJournal(t.dir, t.journal)
}

// watchPhase watches the restarted kubelet: a new process, healthy within
// Timeout (healthz and every Check), then so for StableFor more.
type watchPhase struct{}

func (watchPhase) Name() string { return "watch" }

func (watchPhase) Run(ctx context.Context, t *Tx) error {
	if ok, cause := t.watcher().watch(ctx, t.restart, t.plan.next.Config, t.out); !ok {
		return &unhealthy{cause: cause}
	}
	return nil
}

// configzPhase checks, with Options.Configz, that the kubelet serves the
// intended configuration.
type configzPhase struct{}

func (configzPhase) Name() string { return "configz" }

func (configzPhase) Run(ctx context.Context, t *Tx) error {
	if t.o.Configz == nil {
		return nil
	}
	if cause := t.o.verifyConfigz(ctx, t.plan.next); cause != "" {
		return &unhealthy{cause: cause}
	}
	return nil
}

// confirmPhase confirms the change: the journal goes, the record says
// applied, old records are pruned.
type confirmPhase struct{}

func (confirmPhase) Name() string { return "confirm" }

func (confirmPhase) Run(_ context.Context, t *Tx) error {
	t.confirmed = true
	t.journal.settle()
	if err := removeJournal(t.dir); err != nil {
		return err
	}
	setOutcome(t.dir, t.out.BackupN, "applied")
	if t.o.KeepBackups > 0 {
		if pruned, err := pruneRecords(t.dir, t.o.Setup.Root, t.o.KeepBackups); err != nil {
			return err
		} else if pruned > 0 {
			t.o.progress("removed %d old backups, keeping %d", pruned, t.o.KeepBackups)
		}
	}
	return nil
}

// probeGrace is how long a kubelet that answered healthz, the same process
// still running, may fail it before the watch calls it failed: a probe
// that times out once on a loaded node is not a death.
const probeGrace = time.Second

// rollbackStableFor caps the stability window of a rollback's watch.
const rollbackStableFor = 2 * time.Second

// watch restarts the kubelet and judges it.
type watch struct {
	Options
	r Restarter
	// layers are the layers the kubelet is restarted on, for the cause of
	// its failure.
	layers func() *why.Layers
}

func (t *Tx) watcher() watch { return watch{Options: t.o, r: t.restarter, layers: t.nextLayers} }

// nextLayers are the layers the kubelet was restarted on: the node's files
// as the apply wrote them, read again (their origins name the node's files
// and lines, not the file the change was given as), else as planned.
func (t *Tx) nextLayers() *why.Layers {
	setup := t.o.Setup
	if t.o.NewArgs != nil {
		// A migration's command line: where each flag was written is
		// not the old command line's place.
		s := *setup
		s.Args, s.Origins = t.o.NewArgs, nil
		setup = &s
	}
	res, err := effective.Compute(effective.Input{Setup: setup, ReadAs: t.o.ReadAs})
	if err != nil {
		return why.LayersOf(t.o.Setup, t.plan.next)
	}
	return why.LayersOf(setup, res)
}

// explain explains the failure of the kubelet restarted (why.Cause): the
// words of its own process since the restart, on the layers it runs.
func (w watch) explain(ctx context.Context) *why.Explanation {
	var l *why.Layers
	if w.layers != nil {
		l = w.layers()
	}
	src := hostnode.Source{Root: w.Setup.Root}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer cancel()
	return why.Cause(ctx, l, src, w.r.Restarted())
}

// restartState is the kubelet before a restart, and when it was asked.
type restartState struct {
	before Proc
	berr   error
	start  time.Time
}

// restart restarts the kubelet, noting which process ran it before.
func (w watch) restart(ctx context.Context) (restartState, error) {
	before, berr := w.r.State(ctx)
	rs := restartState{before: before, berr: berr, start: w.Clock.Now()}
	if err := w.r.Restart(ctx); err != nil {
		return rs, err
	}
	w.progress("restarted (%.2fs)", w.Clock.Now().Sub(rs.start).Seconds())
	failpoint("after-restart")
	return rs, nil
}

// restartAndWatch restarts the kubelet and watches it on cfg.
func (w watch) restartAndWatch(ctx context.Context, cfg *v1beta1.KubeletConfiguration, out *Outcome) (bool, string) {
	rs, err := w.restart(ctx)
	if err != nil {
		return false, err.Error()
	}
	return w.watch(ctx, rs, cfg, out)
}

// watch pins the process that runs the kubelet after the restart rs, and
// watches it become healthy within Timeout (its healthz, and every Check),
// then stay so — the same process — for StableFor more.
func (w watch) watch(ctx context.Context, rs restartState, cfg *v1beta1.KubeletConfiguration, out *Outcome) (bool, string) {
	clock := w.Clock
	before, berr, start := rs.before, rs.berr, rs.start
	var pinned Proc
	var healthySince, failingSince time.Time
	answers := make([]*Answer, len(w.Checks))
	elapsed := func() float64 { return clock.Now().Sub(start).Seconds() }
	// Nothing the watch asks may outlast it: a request that never answers
	// (a silent API server, a hung D-Bus) ends with the watch's budget, and
	// the watch ends within --health-timeout (+ --stable-for).
	end := start.Add(w.Timeout + w.StableFor)
	bounded := func(d time.Duration) (context.Context, context.CancelFunc) {
		return context.WithTimeout(ctx, min(d, max(end.Sub(clock.Now()), 100*time.Millisecond)))
	}
	for ; ; clock.Sleep(ctx, 100*time.Millisecond) {
		if ctx.Err() != nil {
			return false, fmt.Sprintf("stopped during the watch, %.2fs after the restart", elapsed())
		}
		now := clock.Now()
		sctx, cancel := bounded(10 * time.Second)
		st, err := w.r.State(sctx)
		cancel()
		if err != nil {
			// Not knowing is not alive.
			return false, fmt.Sprintf("the kubelet's state is unknown %.2fs after the restart: %v", elapsed(), err)
		}
		if pinned == (Proc{}) {
			switch {
			case berr != nil || !st.same(before):
				// A new kubelet (one already gone fails just below).
				pinned = st
				out.Kubelet = &pinned
			case now.Sub(start) > w.Timeout:
				return false, fmt.Sprintf("no new kubelet process within %s (still %s)", w.Timeout, before)
			default:
				continue // the old kubelet (or none yet): its healthz says nothing
			}
		}
		if !st.Running || !st.same(pinned) {
			why := st.Why
			if st.Running {
				why = fmt.Sprintf("restarted (%s, was %s)", st, pinned)
			}
			msg := fmt.Sprintf("the kubelet %s %.2fs after the restart", why, elapsed())
			out.Explanation = w.explain(ctx)
			if out.Explanation.Failed() {
				msg += ": " + out.Explanation.Summary()
			}
			return false, msg
		}
		ok, where := w.probe(ctx, cfg)
		switch {
		case ok && healthySince.IsZero():
			healthySince = now
			out.HealthyAfter = now.Sub(start)
			failpoint("during-watch")
			if where == "" {
				w.progress("healthzPort is 0: the kubelet is judged by its process only (%s); watching it %s", pinned, w.StableFor)
			} else {
				w.progress("healthy after %.2fs (%s, %s); watching %s", out.HealthyAfter.Seconds(), where, pinned, w.StableFor)
			}
		case !ok && healthySince.IsZero():
			if now.Sub(start) > w.Timeout {
				msg := fmt.Sprintf("not healthy within %s (%s)", w.Timeout, where)
				// A kubelet that runs, never healthy, may say why (its
				// healthz port taken).
				if x := w.explain(ctx); x.Failed() {
					out.Explanation = x
					msg += ": " + x.Summary()
				}
				return false, msg
			}
			continue
		case !ok && failingSince.IsZero():
			// One probe lost on a loaded node is not a death: the same
			// process must keep failing it for probeGrace.
			failingSince = now
			continue
		case !ok && now.Sub(failingSince) < probeGrace:
			continue
		case !ok:
			return false, fmt.Sprintf("%s answered, then failed %.2fs later (the kubelet died after starting)", where, failingSince.Sub(healthySince).Seconds())
		default:
			failingSince = time.Time{}
		}
		cctx, cancel := bounded(w.Timeout + w.StableFor)
		pending := w.runChecks(cctx, start, answers)
		cancel()
		if ctx.Err() != nil {
			continue // said at the top
		}
		now = clock.Now()
		if pending == "" && now.Sub(healthySince) >= w.StableFor {
			out.Checks = results(w.Checks, answers)
			w.progress("stable for %s", w.StableFor)
			return true, ""
		}
		if pending != "" && now.After(start.Add(w.Timeout)) && now.Sub(healthySince) >= w.StableFor {
			out.Checks = results(w.Checks, answers)
			return false, fmt.Sprintf("healthy locally, but %s within %s", pending, w.Timeout)
		}
	}
}

// runChecks asks every check not yet passed; it returns what is still
// pending ("" when all passed).
func (w watch) runChecks(ctx context.Context, restartedAt time.Time, answers []*Answer) string {
	var pending []string
	for i, c := range w.Checks {
		if answers[i] != nil && answers[i].OK {
			continue
		}
		v, err := c.Check(ctx, restartedAt)
		if err != nil {
			v = Answer{Detail: err.Error()}
		}
		if v.OK {
			w.progress("%s: %s", c.Name(), v.Detail)
		}
		answers[i] = &v
		if !v.OK {
			pending = append(pending, fmt.Sprintf("%s not ok (%s)", c.Name(), v.Detail))
		}
	}
	return strings.Join(pending, ", ")
}

func results(cs []Check, vs []*Answer) []CheckResult {
	var out []CheckResult
	for i, c := range cs {
		if vs[i] != nil {
			out = append(out, CheckResult{Name: c.Name(), Answer: *vs[i]})
		}
	}
	return out
}

// verifyConfigz compares what the kubelet serves with what it should run.
func (o Options) verifyConfigz(ctx context.Context, want *effective.Result) string {
	raw, err := o.Configz(ctx)
	if err != nil {
		return "reading /configz: " + err.Error()
	}
	v := o.Setup.Version
	got := &v1beta1.KubeletConfiguration{}
	if err := json.Unmarshal(raw, got); err != nil {
		return "reading /configz: " + err.Error()
	}
	got, err = config.Prune(got, v)
	if err != nil {
		return err.Error()
	}
	changes, err := diff.Compute(want.Running(), got, v)
	if err != nil {
		return err.Error()
	}
	if len(changes) > 0 {
		var fields []string
		for _, c := range changes {
			fields = append(fields, fmt.Sprintf("%s %s (intended %s)", c.Path, diff.Value(c.New), diff.Value(c.Old)))
		}
		return "the kubelet serves another configuration than intended: " + strings.Join(fields, ", ")
	}
	o.progress("/configz serves the intended configuration")
	return ""
}

var healthzClient = &http.Client{Timeout: time.Second}

// healthProbe asks the kubelet's authenticated /healthz when it has a
// client for it, else (or once that is refused) the healthz port.
type healthProbe struct {
	api      *http.Client
	refused  bool
	progress func(format string, args ...any)
}

// probe reports the kubelet's health; where is "" when healthz is off.
func (h *healthProbe) probe(ctx context.Context, cfg *v1beta1.KubeletConfiguration) (bool, string) {
	if h.api != nil && !h.refused {
		url := apiHealthzURL(cfg)
		code := get(ctx, h.api, url)
		if code != http.StatusUnauthorized && code != http.StatusForbidden {
			return code == http.StatusOK, url
		}
		h.refused = true
		h.progress("%s refuses the credentials (%d): judging by the healthz port", url, code)
	}
	url := healthzURL(cfg)
	if url == "" {
		return true, ""
	}
	return get(ctx, healthzClient, url) == http.StatusOK, url
}

// get is the status of GET url, 0 when there is no answer.
func get(ctx context.Context, c *http.Client, url string) int {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0
	}
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	resp, err := c.Do(req.WithContext(ctx))
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// apiHealthzURL is the kubelet API's /healthz (sync loop included).
func apiHealthzURL(cfg *v1beta1.KubeletConfiguration) string {
	port := int32(10250)
	if cfg.Port != 0 {
		port = cfg.Port
	}
	return "https://" + net.JoinHostPort(localHost(cfg.Address), strconv.Itoa(int(port))) + "/healthz"
}

// localHost is how this host reaches a server bound to addr.
func localHost(addr string) string {
	switch addr {
	case "", "0.0.0.0":
		return "127.0.0.1"
	case "::":
		return "::1"
	}
	return addr
}

// healthzURL is where the kubelet with cfg answers healthz, "" if nowhere.
func healthzURL(cfg *v1beta1.KubeletConfiguration) string {
	if cfg.HealthzPort == nil || *cfg.HealthzPort == 0 {
		return ""
	}
	return "http://" + net.JoinHostPort(localHost(cfg.HealthzBindAddress), strconv.Itoa(int(*cfg.HealthzPort))) + "/healthz"
}
