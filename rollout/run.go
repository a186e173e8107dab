package rollout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeletcfg/kubeletcfg/apply"
)

// Defaults of a rollout.
const (
	DefaultNamespace      = "kube-system"
	DefaultServiceAccount = "kubeletcfg-rollout"
	DefaultImage          = "ghcr.io/kubeletcfg/kubeletcfg:latest"
)

// Options say what to roll out where, and how.
type Options struct {
	Change   Change
	Selector string // label selector of the Nodes to change ("" all)
	Waves    Waves
	// Soak is how long to wait after a wave, its nodes then still Ready,
	// before the next starts.
	Soak           time.Duration
	Image          string
	Namespace      string
	ServiceAccount string
	// APIServer is the API server's address as the nodes reach it, for the
	// Jobs ("": they work without it: no --drain, no Node checks).
	APIServer string
	Apply     ApplyArgs
	// JobTimeout bounds each Job (0: the apply's own bounds and margins).
	JobTimeout time.Duration
	// ID names the rollout and its objects (default: from the change's
	// hash and the time).
	ID string

	// API is the cluster; without it only a client dry run runs, on Nodes.
	API   API
	Nodes []Node
	// DryRun is "client" (print the objects, touch nothing) or "server"
	// (the API server admits every object, nothing is created).
	DryRun string
	// Resume continues the namespace's unfinished rollout (its spec from
	// the progress ConfigMap) whose process died.
	Resume bool

	LeaseDuration time.Duration
	Poll          time.Duration
	// ImageGrace is how long a Job's pod may fail to pull or create its
	// container before the node counts as refused (nothing ran on it).
	ImageGrace time.Duration
	Progress   io.Writer
	Clock      Clock

	started map[string]time.Time // when this process created each node's Job
}

// Clock is the time as the rollout sees it.
type Clock interface {
	Now() time.Time
	Sleep(ctx context.Context, d time.Duration) error
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}

// Report is a rollout's end: every node's outcome, in rollout order.
type Report struct {
	Version int         `json:"version"`
	ID      string      `json:"id"`
	Change  string      `json:"change"`
	Phase   string      `json:"phase"`
	Stop    string      `json:"stop,omitempty"`
	Waves   []Wave      `json:"waves"`
	Nodes   []NodeState `json:"nodes"`
	// YAML is a client dry run's objects.
	YAML []byte `json:"-"`
}

// RolledBack says whether a node's change was rolled back.
func (r *Report) RolledBack() bool {
	for _, n := range r.Nodes {
		if n.Outcome == apply.OutcomeRolledBack {
			return true
		}
	}
	return false
}

// ErrStopped: a node did not take the change; no further wave ran.
var ErrStopped = errors.New("the rollout stopped")

func (o *Options) defaults() {
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	if o.ServiceAccount == "" {
		o.ServiceAccount = DefaultServiceAccount
	}
	if o.Image == "" {
		o.Image = DefaultImage
	}
	if o.Clock == nil {
		o.Clock = realClock{}
	}
	if o.LeaseDuration <= 0 {
		o.LeaseDuration = DefaultLeaseDuration
	}
	if o.Poll <= 0 {
		o.Poll = 2 * time.Second
	}
	if o.ImageGrace <= 0 {
		o.ImageGrace = time.Minute
	}
	a := &o.Apply
	if a.HealthTimeout <= 0 {
		a.HealthTimeout = 30 * time.Second
	}
	if a.StableFor < 0 {
		a.StableFor = apply.DefaultStableFor
	}
	if a.Drain && a.DrainTimeout <= 0 {
		a.DrainTimeout = 5 * time.Minute
	}
	if o.JobTimeout <= 0 {
		// apply's own deadline (two watches and a margin), the drain, and
		// time for the pod to start.
		o.JobTimeout = 2*(a.HealthTimeout+a.StableFor) + 10*time.Second + a.DrainTimeout + 2*time.Minute
	}
}

func (o *Options) progress(format string, args ...any) {
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, "rollout: "+format+"\n", args...)
	}
}

// Run rolls the change out (or, with DryRun, shows or checks what it would
// create). A change refused for one of the nodes' kubelet minors touches
// nothing (ErrInvalid); a rollout that stops returns its report and
// ErrStopped.
func Run(ctx context.Context, o Options) (*Report, error) {
	o.defaults()
	if o.Resume {
		return o.resume(ctx)
	}
	if o.API == nil && o.DryRun != "client" {
		return nil, errors.New("a rollout needs the API server (--kubeconfig); without it only --dry-run (with --node NAME --kubelet-version V)")
	}
	nodes, err := o.nodes(ctx)
	if err != nil {
		return nil, err
	}
	if err := o.Change.Validate(minorsOf(nodes)); err != nil {
		return nil, err
	}
	waves, err := o.Waves.Plan(nodes)
	if err != nil {
		return nil, err
	}
	if o.Apply.Drain && o.APIServer == "" {
		return nil, errors.New("--drain: the Jobs drain through the API server: give its address as the nodes reach it (--api-server)")
	}
	hash := o.Change.Hash()
	if o.ID == "" {
		o.ID = hash[len("sha256:"):][:8] + "-" + strconv.FormatInt(o.Clock.Now().Unix(), 36)
	}
	spec := Spec{ID: o.ID, Namespace: o.Namespace, Change: o.Change, Hash: hash, Image: o.Image, ServiceAccount: o.ServiceAccount,
		APIServer: o.APIServer, Apply: o.Apply, Soak: o.Soak, JobTimeout: o.JobTimeout, Waves: waves, Nodes: nodes}
	rep := &Report{Version: 1, ID: spec.ID, Change: hash, Waves: waves}
	switch o.DryRun {
	case "client":
		rep.YAML, err = spec.YAML()
		return rep, err
	case "server":
		return rep, o.serverDryRun(ctx, &spec)
	case "":
	default:
		return nil, fmt.Errorf("--dry-run=%s: client or server", o.DryRun)
	}
	if err := o.API.GetServiceAccount(ctx, o.Namespace, o.ServiceAccount); err != nil {
		return nil, fmt.Errorf("the Jobs' ServiceAccount %s/%s: %w (kubectl apply -f deploy/rollout.yaml)", o.Namespace, o.ServiceAccount, err)
	}
	l := o.lease(spec.ID)
	if err := l.acquire(ctx, ""); err != nil {
		return nil, err
	}
	prev, cm, err := readState(ctx, o.API, o.Namespace)
	if err == nil && prev != nil && prev.Phase == PhaseRunning {
		err = fmt.Errorf("%w: rollout %s did not finish (its process died?): kubeletcfg rollout --resume continues it", ErrBusy, prev.Spec.ID)
	}
	if err != nil {
		_ = l.release(context.WithoutCancel(ctx))
		return nil, err
	}
	if prev != nil {
		// The last rollout's change stays until the next starts (its Jobs
		// may still mount it).
		if err := o.API.DeleteSecret(ctx, o.Namespace, prev.Spec.secretName()); err != nil && !apierrors.IsNotFound(err) {
			o.progress("deleting the last rollout's secret %s: %v", prev.Spec.secretName(), err)
		}
	}
	st := newState(spec, o.Clock.Now())
	st.Holder = l.holder
	store := &progressStore{api: o.API, ns: o.Namespace, cm: cm}
	if err := o.API.CreateSecret(ctx, spec.Secret()); err != nil && !apierrors.IsAlreadyExists(err) {
		_ = l.release(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("secret %s/%s: %w", o.Namespace, spec.secretName(), err)
	}
	if err := store.save(ctx, st, o.Clock.Now()); err != nil {
		_ = l.release(context.WithoutCancel(ctx))
		return nil, err
	}
	o.progress("%s: %s of %s to %d nodes in %d waves (image %s)", spec.ID, spec.Change.Kind, spec.Change.File, len(nodes), len(waves), spec.Image)
	return o.drive(ctx, l, store, st)
}

func (o *Options) lease(id string) *lease {
	return &lease{api: o.API, ns: o.Namespace, holder: holderID(id), duration: o.LeaseDuration, clock: o.Clock,
		progress: o.progress, pollEvery: min(o.Poll, o.LeaseDuration/3)}
}

// nodes are the Nodes the selector picks, each with its kubelet's minor.
func (o *Options) nodes(ctx context.Context) ([]Node, error) {
	if o.API == nil {
		if len(o.Nodes) == 0 {
			return nil, errors.New("no node: give --kubeconfig, or --node NAME --kubelet-version V for a dry run")
		}
		return o.Nodes, nil
	}
	list, err := o.API.ListNodes(ctx, o.Selector)
	if err != nil {
		return nil, fmt.Errorf("nodes: %w", err)
	}
	var out []Node
	var errs []error
	for _, n := range list {
		node, err := NewNode(n.Name, n.Status.NodeInfo.KubeletVersion, n.Labels)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, node)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no node matches the selector %q", o.Selector)
	}
	return out, nil
}

// serverDryRun has the API server admit every object the rollout would
// create, creating none.
func (o *Options) serverDryRun(ctx context.Context, spec *Spec) error {
	st := newState(*spec, o.Clock.Now())
	data, err := json.Marshal(st)
	if err != nil {
		return err
	}
	l := o.lease(spec.ID)
	objs := []runtime.Object{spec.Secret()}
	for _, j := range spec.Jobs() {
		objs = append(objs, j)
	}
	cm := &corev1.ConfigMap{Data: map[string]string{stateKey: string(data)}}
	cm.Name, cm.Namespace = ObjectName+"-dry-run", spec.Namespace
	lease := newLeaseObject(l, o.Clock.Now())
	lease.Name += "-dry-run"
	objs = append(objs, cm, lease)
	var errs []error
	for _, obj := range objs {
		if err := o.API.DryRun(ctx, obj); err != nil {
			errs = append(errs, fmt.Errorf("%T %s: %w", obj, name(obj), err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("the API server refuses: %w", err)
	}
	o.progress("%d objects admitted by the API server (server dry run)", len(objs))
	return nil
}

func name(obj runtime.Object) string {
	if m, ok := obj.(interface{ GetName() string }); ok {
		return m.GetName()
	}
	return ""
}

// resume continues the namespace's unfinished rollout.
func (o *Options) resume(ctx context.Context) (*Report, error) {
	if o.API == nil {
		return nil, errors.New("--resume needs the API server (--kubeconfig)")
	}
	st, _, err := readState(ctx, o.API, o.Namespace)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return nil, fmt.Errorf("no rollout to resume in %s", o.Namespace)
	}
	if st.Phase != PhaseRunning {
		return nil, fmt.Errorf("rollout %s is %s: nothing to resume", st.Spec.ID, st.Phase)
	}
	l := o.lease(st.Spec.ID)
	if err := l.acquire(ctx, st.Spec.ID); err != nil {
		return nil, err
	}
	// What the dead process wrote last.
	st, cm, err := readState(ctx, o.API, o.Namespace)
	if err == nil && (st == nil || st.Phase != PhaseRunning) {
		err = errors.New("the rollout ended while its lease was taken over")
	}
	if err == nil {
		var sec *corev1.Secret
		if sec, err = o.API.GetSecret(ctx, o.Namespace, st.Spec.secretName()); err == nil && sec.Annotations[AnnotationHash] != st.Spec.Hash {
			err = fmt.Errorf("secret %s/%s holds change %s, not the rollout's %s", o.Namespace, st.Spec.secretName(), sec.Annotations[AnnotationHash], st.Spec.Hash)
		}
		if sec != nil {
			st.Spec.Change.Content = sec.Data[secretKey]
		}
	}
	if err != nil {
		_ = l.release(context.WithoutCancel(ctx))
		return nil, err
	}
	st.Holder = l.holder
	o.progress("%s: resuming at wave %d of %d", st.Spec.ID, st.Wave+1, len(st.Spec.Waves))
	return o.drive(ctx, l, &progressStore{api: o.API, ns: o.Namespace, cm: cm}, st)
}

// drive runs the waves from st.Wave on, holding the lease.
func (o *Options) drive(ctx context.Context, l *lease, store *progressStore, st *State) (*Report, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	lost := make(chan struct{})
	go l.keep(ctx, func(err error) {
		close(lost)
		cancel(fmt.Errorf("lost the rollout's lease: %w", err))
	})
	defer func() {
		cancel(nil)
		select {
		case <-lost:
		default:
			// Interrupted or ended: the next rollout (or --resume) may start
			// at once; the progress says whether this one finished.
			_ = l.release(context.WithoutCancel(ctx))
		}
	}()
	spec := &st.Spec
	save := func() error { return store.save(ctx, st, o.Clock.Now()) }
	for st.Wave < len(spec.Waves) {
		w := spec.Waves[st.Wave]
		if st.SoakUntil != nil {
			if d := st.SoakUntil.Sub(o.Clock.Now()); d > 0 {
				o.progress("soaking %s before wave %s", d.Round(time.Second), w.Name)
				if err := o.Clock.Sleep(ctx, d); err != nil {
					return o.report(st), err
				}
			}
			if why := o.notReady(ctx, spec.Waves[st.Wave-1].Nodes); why != "" {
				return o.stop(ctx, st, store, fmt.Sprintf("after the soak of wave %s: %s", spec.Waves[st.Wave-1].Name, why))
			}
			st.SoakUntil = nil
		}
		if err := o.startWave(ctx, st, w); err != nil {
			return o.report(st), err
		}
		if err := save(); err != nil {
			return o.report(st), err
		}
		if err := o.waitWave(ctx, st, store, w); err != nil {
			return o.report(st), err
		}
		for _, name := range w.Nodes {
			n := st.node(name)
			if !ok(n.Outcome) {
				return o.stop(ctx, st, store, fmt.Sprintf("node %s: %s: %s", n.Name, n.Outcome, n.Cause))
			}
		}
		st.Wave++
		if st.Wave < len(spec.Waves) && spec.Soak > 0 {
			t := o.Clock.Now().Add(spec.Soak)
			st.SoakUntil = &t
		}
		if err := save(); err != nil {
			return o.report(st), err
		}
		o.progress("wave %s done (%d nodes)", w.Name, len(w.Nodes))
	}
	st.Phase = PhaseDone
	if err := save(); err != nil {
		return o.report(st), err
	}
	if err := o.API.DeleteSecret(ctx, spec.Namespace, spec.secretName()); err != nil && !apierrors.IsNotFound(err) {
		o.progress("deleting secret %s: %v", spec.secretName(), err)
	}
	o.progress("%s: done: %d nodes", spec.ID, len(st.Nodes))
	return o.report(st), nil
}

// stop ends the rollout where it is: the nodes no Job reached stay
// untouched.
func (o *Options) stop(ctx context.Context, st *State, store *progressStore, why string) (*Report, error) {
	st.Phase, st.Stop = PhaseStopped, why
	for i := range st.Nodes {
		if st.Nodes[i].Outcome == "" {
			st.Nodes[i].Outcome = OutcomeNotReached
		}
	}
	o.progress("%s: stopped: %s", st.Spec.ID, why)
	if err := store.save(ctx, st, o.Clock.Now()); err != nil {
		return o.report(st), err
	}
	// The Secret stays for the Jobs that ran; the next rollout deletes it.
	return o.report(st), fmt.Errorf("%w: %s", ErrStopped, why)
}

func (o *Options) report(st *State) *Report {
	return &Report{Version: 1, ID: st.Spec.ID, Change: st.Spec.Hash, Phase: st.Phase, Stop: st.Stop, Waves: st.Spec.Waves, Nodes: st.Nodes}
}

// notReady says which of the nodes is not Ready, or "".
func (o *Options) notReady(ctx context.Context, nodes []string) string {
	for _, name := range nodes {
		n, err := o.API.GetNode(ctx, name)
		if err != nil {
			return fmt.Sprintf("node %s: %v", name, err)
		}
		if !ready(n) {
			return fmt.Sprintf("node %s is not Ready", name)
		}
	}
	return ""
}

func ready(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// startWave creates the Jobs of the wave's nodes that have none yet. A
// node not Ready is refused without a Job (nothing would run there).
func (o *Options) startWave(ctx context.Context, st *State, w Wave) error {
	spec := &st.Spec
	o.progress("wave %s: %d nodes", w.Name, len(w.Nodes))
	for _, name := range w.Nodes {
		n := st.node(name)
		if n.Outcome != "" {
			continue // a resumed wave: its Job was created
		}
		node, err := o.API.GetNode(ctx, name)
		switch {
		case apierrors.IsNotFound(err):
			n.Outcome, n.Cause = apply.OutcomeRefused, "the Node is gone"
			continue
		case err != nil:
			return fmt.Errorf("node %s: %w", name, err)
		case !ready(node):
			n.Outcome, n.Cause = apply.OutcomeRefused, "the Node is not Ready: nothing runs there"
			continue
		}
		job := spec.Job(spec.jobIndex(name), spec.node(name), w.Name)
		err = o.API.CreateJob(ctx, job)
		switch {
		case err == nil:
			n.Outcome = OutcomeRunning
			if o.started == nil {
				o.started = map[string]time.Time{}
			}
			o.started[name] = o.Clock.Now()
		case apierrors.IsAlreadyExists(err):
			n.Outcome = OutcomeRunning
		case apierrors.IsInvalid(err), apierrors.IsForbidden(err):
			n.Outcome, n.Cause = apply.OutcomeRefused, fmt.Sprintf("the API server refuses its Job: %v", err)
		default:
			return fmt.Errorf("job %s/%s: %w", job.Namespace, job.Name, err)
		}
	}
	return nil
}

// waitWave waits until every node of the wave has an outcome, each taken
// from its Job's pod's termination message (apply's report), saving the
// progress and annotating the Node as each ends.
func (o *Options) waitWave(ctx context.Context, st *State, store *progressStore, w Wave) error {
	waiting := map[string]time.Time{} // pods that cannot start, since
	for {
		changed, pending, err := o.collect(ctx, st, w, waiting)
		if err != nil {
			return err
		}
		if changed {
			if err := store.save(ctx, st, o.Clock.Now()); err != nil {
				return err
			}
		}
		if pending == 0 {
			return nil
		}
		if err := o.Clock.Sleep(ctx, o.Poll); err != nil {
			return err
		}
	}
}

// collect reads the wave's Jobs and pods once: it records the outcome of
// every node whose Job has ended and says how many run on.
func (o *Options) collect(ctx context.Context, st *State, w Wave, waiting map[string]time.Time) (changed bool, pending int, err error) {
	spec := &st.Spec
	sel := LabelRollout + "=" + spec.ID
	jobs, err := o.API.ListJobs(ctx, spec.Namespace, sel)
	if err != nil {
		return false, 0, fmt.Errorf("jobs: %w", err)
	}
	pods, err := o.API.ListPods(ctx, spec.Namespace, sel)
	if err != nil {
		return false, 0, fmt.Errorf("pods: %w", err)
	}
	jobByName := map[string]*batchv1.Job{}
	for i := range jobs {
		jobByName[jobs[i].Name] = &jobs[i]
	}
	podsOf := map[string][]*corev1.Pod{}
	for i := range pods {
		p := &pods[i]
		job := p.Labels["batch.kubernetes.io/job-name"]
		if job == "" {
			job = p.Labels["job-name"]
		}
		podsOf[job] = append(podsOf[job], p)
	}
	for _, name := range w.Nodes {
		n := st.node(name)
		if n.Outcome != OutcomeRunning {
			continue
		}
		jobName := spec.jobName(spec.jobIndex(name))
		outcome, cause, healthy := o.judge(jobByName[jobName], podsOf[jobName], spec.Hash, waiting)
		if outcome == "" {
			pending++
			continue
		}
		if outcome == apply.OutcomeRefused && strings.HasPrefix(cause, "its pod never started") {
			if err := o.API.DeleteJob(ctx, spec.Namespace, jobName); err != nil && !apierrors.IsNotFound(err) {
				return false, 0, fmt.Errorf("job %s: %w", jobName, err)
			}
		}
		if spec.Apply.Drain && strings.Contains(cause, "without apply's report") {
			// The guard of a Job's apply has no credentials (the pod's
			// token goes with it): a cordon the apply made stays.
			cause += "; a cordon the apply made stays (kubeletcfg's mark on the Node): the next apply takes it over, or kubeletcfg recover --kubeconfig on the node lifts it"
		}
		n.Outcome, n.Cause, n.HealthyAfter = outcome, cause, healthy
		took := ""
		if t, ok := o.started[name]; ok {
			n.Took = o.Clock.Now().Sub(t).Round(10 * time.Millisecond).Seconds()
			took = fmt.Sprintf(" after %.1fs", n.Took)
		}
		changed = true
		o.progress("node %s: %s%s%s", name, outcome, took, ifCause(cause))
		o.annotate(ctx, spec, n)
	}
	return changed, pending, nil
}

func ifCause(c string) string {
	if c == "" {
		return ""
	}
	return ": " + c
}

// Reasons a pod's container cannot start that waiting does not cure.
var startFailures = map[string]bool{"ErrImagePull": true, "ImagePullBackOff": true, "InvalidImageName": true,
	"ErrImageNeverPull": true, "CreateContainerConfigError": true, "CreateContainerError": true}

// judge is a node's outcome from its Job and pods ("" while it runs).
func (o *Options) judge(job *batchv1.Job, pods []*corev1.Pod, hash string, waiting map[string]time.Time) (outcome, cause string, healthy float64) {
	for _, p := range pods {
		for _, cs := range p.Status.ContainerStatuses {
			if t := cs.State.Terminated; t != nil {
				if t.Message == "" {
					return apply.OutcomeFailed, fmt.Sprintf("its pod %s ended without apply's report (exit %d, %s): the node's guard undoes a change apply did not confirm", p.Name, t.ExitCode, t.Reason), 0
				}
				r, err := apply.DecodeReport([]byte(t.Message))
				if err != nil {
					return apply.OutcomeFailed, fmt.Sprintf("its pod %s: %v", p.Name, err), 0
				}
				if r.Change != hash {
					return apply.OutcomeFailed, fmt.Sprintf("its pod %s applied change %s, not %s", p.Name, r.Change, hash), 0
				}
				if r.LeftCordoned != "" {
					r.Cause = strings.TrimPrefix(r.Cause+"; ", "; ") + "left cordoned: " + r.LeftCordoned
				}
				return r.Outcome, r.Cause, r.HealthyAfter
			}
			if wt := cs.State.Waiting; wt != nil && startFailures[wt.Reason] {
				since, seen := waiting[p.Name]
				if !seen {
					waiting[p.Name] = o.Clock.Now()
				} else if o.Clock.Now().Sub(since) >= o.ImageGrace {
					return apply.OutcomeRefused, fmt.Sprintf("its pod never started (%s: %s): nothing ran on the node", wt.Reason, wt.Message), 0
				}
			}
		}
	}
	if job == nil {
		return "", "", 0
	}
	for _, c := range job.Status.Conditions {
		if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue {
			return apply.OutcomeFailed, fmt.Sprintf("Job %s failed without apply's report (%s: %s): the node's guard undoes a change apply did not confirm", job.Name, c.Reason, c.Message), 0
		}
	}
	return "", "", 0
}

// nodeAnnotation is the Node's record of its last apply.
type nodeAnnotation struct {
	Outcome string    `json:"outcome"`
	Change  string    `json:"change"`
	Rollout string    `json:"rollout"`
	Time    time.Time `json:"time"`
	Cause   string    `json:"cause,omitempty"`
}

// annotate records a node's outcome on its Node (the rollout writes it:
// the Jobs need no right to patch Nodes).
func (o *Options) annotate(ctx context.Context, spec *Spec, n *NodeState) {
	cause := n.Cause
	if len(cause) > 1024 {
		cause = cause[:1024] + "…"
	}
	b, _ := json.Marshal(nodeAnnotation{Outcome: n.Outcome, Change: spec.Hash, Rollout: spec.ID, Time: o.Clock.Now().UTC().Truncate(time.Second), Cause: cause})
	if err := o.API.AnnotateNode(ctx, n.Name, AnnotationApply, string(b)); err != nil {
		o.progress("node %s: annotating its outcome: %v", n.Name, err)
	}
}
