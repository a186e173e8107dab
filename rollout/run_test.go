package rollout

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubeletcfg/kubeletcfg/apply"
)

const header = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"

func dropinChange(content string) Change {
	return Change{Kind: KindDropin, Name: "50-rollout.conf", File: "pods.conf", Content: []byte(header + content)}
}

// options of a rollout against f, with every wait short.
func options(f *fakeAPI, c Change) Options {
	return Options{Change: c, API: f, Namespace: "ns", ID: "abc", Waves: Waves{Canary: 1, Batch: "2"},
		LeaseDuration: 300 * time.Millisecond, Poll: 5 * time.Millisecond, ImageGrace: 30 * time.Millisecond,
		Apply: ApplyArgs{HealthTimeout: 20 * time.Second, StableFor: 2 * time.Second}}
}

func TestRunWaveByWave(t *testing.T) {
	f := newFake("n1", "n2", "n3", "n4", "n5")
	o := options(f, dropinChange("maxPods: 111\n"))
	var progress bytes.Buffer
	o.Progress = &progress
	o.Soak = 20 * time.Millisecond
	f.run = applies(o.Change.Hash, nil)
	rep, err := Run(context.Background(), o)
	if err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	var order []string
	for _, c := range f.created {
		order = append(order, c.wave+":"+c.node)
	}
	if got := strings.Join(order, " "); got != "canary:n1 1:n2 1:n3 2:n4 2:n5" {
		t.Errorf("Jobs created %s", got)
	}
	if rep.Phase != PhaseDone || len(rep.Nodes) != 5 {
		t.Fatalf("report %+v", rep)
	}
	for _, n := range rep.Nodes {
		if n.Outcome != apply.OutcomeApplied {
			t.Errorf("%s: %s", n.Name, n.Outcome)
		}
		var a nodeAnnotation
		if err := json.Unmarshal([]byte(f.nodes[n.Name].Annotations[AnnotationApply]), &a); err != nil || a.Outcome != apply.OutcomeApplied || a.Change != o.Change.Hash() || a.Rollout != "abc" {
			t.Errorf("%s's annotation %+v %v", n.Name, a, err)
		}
	}
	st, _ := ReadState(context.Background(), f, "ns")
	if st.Phase != PhaseDone || st.Wave != 3 {
		t.Errorf("progress %s at wave %d", st.Phase, st.Wave)
	}
	if _, secrets, _ := f.objects(); secrets != 0 {
		t.Errorf("the change's Secret stays after the rollout")
	}
	if l := f.leases["ns/"+ObjectName]; l.Spec.HolderIdentity != nil {
		t.Errorf("the Lease is still held by %s", *l.Spec.HolderIdentity)
	}
	if !strings.Contains(progress.String(), "soaking") {
		t.Errorf("no soak:\n%s", progress.String())
	}
}

// The first node that does not take the change stops the rollout: the
// Jobs of its wave end, no later wave starts, the nodes not reached keep
// no Job, and the report says each node's outcome and why.
func TestRunStopsAtTheFirstRollback(t *testing.T) {
	f := newFake("n1", "n2", "n3", "n4", "n5")
	o := options(f, dropinChange("maxPods: 111\n"))
	f.run = applies(o.Change.Hash, map[string]string{"n2": apply.OutcomeRolledBack})
	rep, err := Run(context.Background(), o)
	if !errors.Is(err, ErrStopped) || !rep.RolledBack() {
		t.Fatalf("%v, rolled back %v", err, rep.RolledBack())
	}
	want := map[string]string{"n1": apply.OutcomeApplied, "n2": apply.OutcomeRolledBack, "n3": apply.OutcomeApplied, "n4": OutcomeNotReached, "n5": OutcomeNotReached}
	for _, n := range rep.Nodes {
		if n.Outcome != want[n.Name] {
			t.Errorf("%s: %s, want %s", n.Name, n.Outcome, want[n.Name])
		}
	}
	if len(f.created) != 3 || rep.Phase != PhaseStopped || !strings.Contains(rep.Stop, "node n2: rolled back: cause on n2") {
		t.Errorf("%d Jobs, %s: %s", len(f.created), rep.Phase, rep.Stop)
	}
	if _, ok := f.nodes["n4"].Annotations[AnnotationApply]; ok {
		t.Error("a node not reached is annotated")
	}
	if _, secrets, _ := f.objects(); secrets != 1 {
		t.Errorf("%d Secrets after a stopped rollout, want its own", secrets)
	}
	// A stopped rollout does not block the next, which deletes its Secret.
	o.ID = "def"
	o.Change = dropinChange("maxPods: 112\n")
	f.run = applies(o.Change.Hash, nil)
	if _, err := Run(context.Background(), o); err != nil {
		t.Errorf("the next rollout: %v", err)
	}
	if _, secrets, _ := f.objects(); secrets != 0 {
		t.Errorf("%d Secrets after the next rollout", secrets)
	}
}

// Outcomes come from apply's report in the termination message, never
// from the exit code: a pod that ends 0 without a report failed, 2 with a
// report of "unchanged" did not; a report of another change is not this
// one's.
func TestRunJudgesByTheReport(t *testing.T) {
	f := newFake("n1", "n2", "n3", "n4", "n5")
	o := options(f, dropinChange("maxPods: 111\n"))
	o.Waves = Waves{Canary: 0, Batch: "100%"}
	f.run = func(j *batchv1.Job) podEnd {
		switch j.Spec.Template.Spec.NodeName {
		case "n1":
			return podEnd{exit: 0}
		case "n2":
			return podEnd{exit: 2, report: &apply.Report{Version: 1, Outcome: apply.OutcomeUnchanged, Change: o.Change.Hash()}}
		case "n3":
			return podEnd{report: &apply.Report{Version: 1, Outcome: apply.OutcomeApplied, Change: "sha256:other"}}
		case "n4":
			return podEnd{jobFails: "DeadlineExceeded"}
		}
		return podEnd{exit: 2, report: &apply.Report{Version: 1, Outcome: apply.OutcomeRefused, Change: o.Change.Hash(), Cause: "interrupted (terminated)", LeftCordoned: "uncordon failed: kubectl uncordon n5"}}
	}
	o.Apply.Drain, o.APIServer = true, "https://10.0.0.1:6443"
	rep, err := Run(context.Background(), o)
	if !errors.Is(err, ErrStopped) {
		t.Fatal(err)
	}
	for _, c := range []struct{ node, outcome, cause string }{
		{"n1", apply.OutcomeFailed, "ended without apply's report (exit 0"},
		{"n1", apply.OutcomeFailed, "a cordon the apply made stays"},
		{"n2", apply.OutcomeUnchanged, ""},
		{"n3", apply.OutcomeFailed, "applied change sha256:other"},
		{"n4", apply.OutcomeFailed, "failed without apply's report (DeadlineExceeded"},
		{"n4", apply.OutcomeFailed, "kubeletcfg recover --kubeconfig on the node lifts it"},
		{"n5", apply.OutcomeRefused, "interrupted (terminated); left cordoned: uncordon failed: kubectl uncordon n5"},
	} {
		n := nodeOf(rep, c.node)
		if n.Outcome != c.outcome || !strings.Contains(n.Cause, c.cause) {
			t.Errorf("%s: %s (%s), want %s (%s)", c.node, n.Outcome, n.Cause, c.outcome, c.cause)
		}
	}
}

func nodeOf(r *Report, name string) NodeState {
	for _, n := range r.Nodes {
		if n.Name == name {
			return n
		}
	}
	return NodeState{}
}

// A change a kubelet minor of the nodes refuses reaches no node: nothing
// is created, not even the Lease.
func TestRunRefusesAChangeForAnyMinor(t *testing.T) {
	f := newFake("old@v1.28.15", "new@v1.37.2")
	// failCgroupV1 came with 1.31: kubelet 1.28 does not know it.
	o := options(f, Change{Kind: KindFile, File: "new.yaml", Content: []byte(header + "failCgroupV1: false\n")})
	_, err := Run(context.Background(), o)
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "kubelet 1.28") || strings.Contains(err.Error(), "kubelet 1.37") {
		t.Fatalf("%v", err)
	}
	o.Change.Content = []byte(header + "maxPods: -5\n")
	if _, err := Run(context.Background(), o); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "kubelet 1.37") {
		t.Fatalf("%v", err)
	}
	o.Change = dropinChange("maxPodz: 3\n")
	if _, err := Run(context.Background(), o); !errors.Is(err, ErrInvalid) {
		t.Fatalf("an unknown field in a drop-in: %v", err)
	}
	f.nodes["older"] = newFake("older@v1.27.3").nodes["older"]
	o.Change = dropinChange("maxPods: 3\n")
	if _, err := Run(context.Background(), o); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "1.27.3 is not supported") {
		t.Fatalf("a kubelet kubeletcfg does not know: %v", err)
	}
	if jobs, secrets, cms := f.objects(); jobs+secrets+cms+len(f.leases) != 0 {
		t.Errorf("a refused change created %d Jobs, %d Secrets, %d ConfigMaps, %d Leases", jobs, secrets, cms, len(f.leases))
	}
}

// One rollout at a time: a Lease another holds refuses a second one, and
// an unfinished rollout (its Lease lapsed) too, pointing at --resume.
func TestRunRefusesASecondRollout(t *testing.T) {
	f := newFake("n1", "n2")
	o := options(f, dropinChange("maxPods: 111\n"))
	f.holdLease("ns", "other-1/host/42", time.Now())
	if _, err := Run(context.Background(), o); !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "held by other-1/host/42") {
		t.Fatalf("%v", err)
	}
	if len(f.created) != 0 || len(f.secrets) != 0 {
		t.Error("a refused rollout created objects")
	}

	// A rollout whose process died: its Lease lapses, its progress stays.
	f.holdLease("ns", "dead/host/1", time.Now().Add(-time.Hour))
	st := newState(Spec{ID: "dead", Namespace: "ns"}, time.Now())
	if err := (&progressStore{api: f, ns: "ns"}).save(context.Background(), st, time.Now()); err != nil {
		t.Fatal(err)
	}
	_, err := Run(context.Background(), o)
	if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "rollout dead did not finish") || !strings.Contains(err.Error(), "--resume") {
		t.Fatalf("%v", err)
	}
	if l := f.leases["ns/"+ObjectName]; l.Spec.HolderIdentity != nil {
		t.Errorf("the refused rollout keeps the Lease: %s", *l.Spec.HolderIdentity)
	}
}

// The rollout's process dies during the soak; --resume waits until its
// Lease goes unrenewed, then goes on from the next wave, with the change
// from the Secret and the rest from the progress.
func TestResume(t *testing.T) {
	f := newFake("n1", "n2", "n3")
	o := options(f, dropinChange("maxPods: 111\n"))
	o.Soak = time.Hour
	f.run = applies(o.Change.Hash, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := Run(ctx, o)
		done <- err
	}()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		st, _ := ReadState(context.Background(), f, "ns")
		if st != nil && st.SoakUntil != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the canary did not end")
		}
	}
	cancel()
	<-done
	// As if killed: its Lease still held, renewed just now.
	f.holdLease("ns", holderID("abc"), time.Now())

	r := Options{API: f, Namespace: "ns", Resume: true, LeaseDuration: 300 * time.Millisecond, Poll: 5 * time.Millisecond}
	var progress bytes.Buffer
	r.Progress = &progress
	// The soak it resumes is the one recorded: shorten it.
	st, cm, _ := readState(context.Background(), f, "ns")
	soon := time.Now().Add(10 * time.Millisecond)
	st.SoakUntil = &soon
	if err := (&progressStore{api: f, ns: "ns", cm: cm}).save(context.Background(), st, time.Now()); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	rep, err := Run(context.Background(), r)
	if err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	if waited := time.Since(start); waited < 300*time.Millisecond {
		t.Errorf("took the Lease over after %s, before it lapsed", waited)
	}
	if rep.Phase != PhaseDone || len(f.created) != 3 {
		t.Errorf("%s, %d Jobs", rep.Phase, len(f.created))
	}
	for _, n := range rep.Nodes {
		if n.Outcome != apply.OutcomeApplied {
			t.Errorf("%s: %s", n.Name, n.Outcome)
		}
	}
	if _, err := Run(context.Background(), r); err == nil || !strings.Contains(err.Error(), "is done: nothing to resume") {
		t.Errorf("resuming a finished rollout: %v", err)
	}
}

// A Job whose pod cannot start (a wrong --image) is refused for the node
// (nothing ran there) once the grace has passed, and its Job deleted; a
// node not Ready gets no Job.
func TestRunPodsThatNeverStart(t *testing.T) {
	f := newFake("n1", "n2")
	o := options(f, dropinChange("maxPods: 111\n"))
	f.run = func(*batchv1.Job) podEnd { return podEnd{waiting: "ErrImagePull"} }
	rep, err := Run(context.Background(), o)
	if !errors.Is(err, ErrStopped) {
		t.Fatal(err)
	}
	if n := nodeOf(rep, "n1"); n.Outcome != apply.OutcomeRefused || !strings.Contains(n.Cause, "never started (ErrImagePull") {
		t.Errorf("%+v", n)
	}
	if jobs, _, _ := f.objects(); jobs != 0 {
		t.Errorf("%d Jobs left", jobs)
	}

	g := newFake("n1", "n2")
	g.nodes["n1"].Status.Conditions[0].Status = corev1.ConditionFalse
	o = options(g, dropinChange("maxPods: 111\n"))
	rep, err = Run(context.Background(), o)
	if !errors.Is(err, ErrStopped) || len(g.created) != 0 || !strings.Contains(nodeOf(rep, "n1").Cause, "not Ready") {
		t.Errorf("%v, %d Jobs, %+v", err, len(g.created), rep.Nodes)
	}
}

// A server dry run has the API server admit every object and creates
// none.
func TestServerDryRun(t *testing.T) {
	f := newFake("n1", "n2")
	o := options(f, dropinChange("maxPods: 111\n"))
	o.DryRun = "server"
	if _, err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(f.dryRuns, ", ")
	for _, want := range []string{"*v1.Secret kubeletcfg-abc", "*v1.Job kubeletcfg-abc-0", "*v1.Job kubeletcfg-abc-1", "*v1.ConfigMap", "*v1.Lease"} {
		if !strings.Contains(got, want) {
			t.Errorf("dry runs %s lack %s", got, want)
		}
	}
	if jobs, secrets, cms := f.objects(); jobs+secrets+cms+len(f.leases) != 0 {
		t.Error("a dry run created objects")
	}
}

func TestRunNeedsTheServiceAccount(t *testing.T) {
	f := newFake("n1")
	f.noSA = true
	if _, err := Run(context.Background(), options(f, dropinChange("maxPods: 1\n"))); err == nil || !strings.Contains(err.Error(), "deploy/rollout.yaml") {
		t.Errorf("%v", err)
	}
}
