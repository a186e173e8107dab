package rollout

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeletcfg/kubeletcfg/apply"
)

// fakeAPI is an API server with a Job controller and kubelets that run
// each Job's pod at once: what the pod ends with is run(job).
type fakeAPI struct {
	mu      sync.Mutex
	rv      int
	nodes   map[string]*corev1.Node
	leases  map[string]*coordinationv1.Lease
	cms     map[string]*corev1.ConfigMap
	secrets map[string]*corev1.Secret
	jobs    map[string]*batchv1.Job
	pods    map[string]*corev1.Pod // by Job
	noSA    bool
	// run is what a Job's pod does (nil: it runs on).
	run func(job *batchv1.Job) podEnd
	// created is the Jobs in creation order, with the outcomes the
	// progress held when each was created.
	created []createdJob
	dryRuns []string
	calls   int
}

type createdJob struct {
	name, node, wave string
}

// podEnd is how a fake pod ends.
type podEnd struct {
	report   *apply.Report // its termination message
	message  string        // or this one
	exit     int32
	waiting  string // it never starts: this reason
	jobFails string // no pod: the Job fails with this reason
	pending  bool   // it runs on
}

func newFake(nodes ...string) *fakeAPI {
	f := &fakeAPI{nodes: map[string]*corev1.Node{}, leases: map[string]*coordinationv1.Lease{}, cms: map[string]*corev1.ConfigMap{},
		secrets: map[string]*corev1.Secret{}, jobs: map[string]*batchv1.Job{}, pods: map[string]*corev1.Pod{}}
	for _, n := range nodes {
		name, version, _ := strings.Cut(n, "@")
		if version == "" {
			version = "v1.37.2"
		}
		f.nodes[name] = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"name": name}},
			Status: corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{KubeletVersion: version},
				Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	}
	return f
}

// applies makes every Job's apply end with outcome (cause) per node.
func applies(hash func() string, outcomes map[string]string) func(*batchv1.Job) podEnd {
	return func(j *batchv1.Job) podEnd {
		node := j.Spec.Template.Spec.NodeName
		o := outcomes[node]
		if o == "" {
			o = apply.OutcomeApplied
		}
		r := apply.Report{Version: 1, Node: node, Outcome: o, Change: hash(), Time: time.Now()}
		if o != apply.OutcomeApplied {
			r.Cause = "cause on " + node
		}
		return podEnd{report: &r}
	}
}

func (f *fakeAPI) nextRV() string {
	f.rv++
	return strconv.Itoa(f.rv)
}

func notFound(resource, name string) error {
	return apierrors.NewNotFound(schema.GroupResource{Resource: resource}, name)
}

func (f *fakeAPI) ListNodes(_ context.Context, selector string) ([]corev1.Node, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	sel, err := labels.Parse(selector)
	if err != nil {
		return nil, err
	}
	var out []corev1.Node
	for _, n := range f.nodes {
		if sel.Matches(labels.Set(n.Labels)) {
			out = append(out, *n.DeepCopy())
		}
	}
	return out, nil
}

func (f *fakeAPI) GetNode(_ context.Context, name string) (*corev1.Node, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, ok := f.nodes[name]
	if !ok {
		return nil, notFound("nodes", name)
	}
	return n.DeepCopy(), nil
}

func (f *fakeAPI) AnnotateNode(_ context.Context, name, key, value string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, ok := f.nodes[name]
	if !ok {
		return notFound("nodes", name)
	}
	if n.Annotations == nil {
		n.Annotations = map[string]string{}
	}
	n.Annotations[key] = value
	return nil
}

func (f *fakeAPI) GetServiceAccount(_ context.Context, ns, name string) error {
	if f.noSA {
		return notFound("serviceaccounts", name)
	}
	return nil
}

func (f *fakeAPI) GetLease(_ context.Context, ns, name string) (*coordinationv1.Lease, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	l, ok := f.leases[ns+"/"+name]
	if !ok {
		return nil, notFound("leases", name)
	}
	return l.DeepCopy(), nil
}

func (f *fakeAPI) CreateLease(_ context.Context, l *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	key := l.Namespace + "/" + l.Name
	if _, ok := f.leases[key]; ok {
		return nil, apierrors.NewAlreadyExists(schema.GroupResource{Resource: "leases"}, l.Name)
	}
	l = l.DeepCopy()
	l.ResourceVersion = f.nextRV()
	f.leases[key] = l
	return l.DeepCopy(), nil
}

func (f *fakeAPI) UpdateLease(_ context.Context, l *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	key := l.Namespace + "/" + l.Name
	cur, ok := f.leases[key]
	if !ok {
		return nil, notFound("leases", l.Name)
	}
	if cur.ResourceVersion != l.ResourceVersion {
		return nil, apierrors.NewConflict(schema.GroupResource{Resource: "leases"}, l.Name, fmt.Errorf("at %s, not %s", cur.ResourceVersion, l.ResourceVersion))
	}
	l = l.DeepCopy()
	l.ResourceVersion = f.nextRV()
	f.leases[key] = l
	return l.DeepCopy(), nil
}

// holdLease makes holder hold the namespace's Lease, renewed now.
func (f *fakeAPI) holdLease(ns, holder string, renewed time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	secs := int32(1)
	t := metav1.NewMicroTime(renewed)
	f.leases[ns+"/"+ObjectName] = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: ObjectName, Namespace: ns, ResourceVersion: f.nextRV()},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &secs, RenewTime: &t}}
}

func (f *fakeAPI) GetConfigMap(_ context.Context, ns, name string) (*corev1.ConfigMap, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	cm, ok := f.cms[ns+"/"+name]
	if !ok {
		return nil, notFound("configmaps", name)
	}
	return cm.DeepCopy(), nil
}

func (f *fakeAPI) CreateConfigMap(_ context.Context, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	key := cm.Namespace + "/" + cm.Name
	if _, ok := f.cms[key]; ok {
		return nil, apierrors.NewAlreadyExists(schema.GroupResource{Resource: "configmaps"}, cm.Name)
	}
	cm = cm.DeepCopy()
	cm.ResourceVersion = f.nextRV()
	f.cms[key] = cm
	return cm.DeepCopy(), nil
}

func (f *fakeAPI) UpdateConfigMap(_ context.Context, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	key := cm.Namespace + "/" + cm.Name
	cur, ok := f.cms[key]
	if !ok {
		return nil, notFound("configmaps", cm.Name)
	}
	if cur.ResourceVersion != cm.ResourceVersion {
		return nil, apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, cm.Name, fmt.Errorf("stale"))
	}
	cm = cm.DeepCopy()
	cm.ResourceVersion = f.nextRV()
	f.cms[key] = cm
	return cm.DeepCopy(), nil
}

func (f *fakeAPI) GetSecret(_ context.Context, ns, name string) (*corev1.Secret, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.secrets[ns+"/"+name]
	if !ok {
		return nil, notFound("secrets", name)
	}
	return s.DeepCopy(), nil
}

func (f *fakeAPI) CreateSecret(_ context.Context, s *corev1.Secret) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.secrets[s.Namespace+"/"+s.Name]; ok {
		return apierrors.NewAlreadyExists(schema.GroupResource{Resource: "secrets"}, s.Name)
	}
	s = s.DeepCopy()
	if s.Data == nil {
		s.Data = map[string][]byte{}
	}
	for k, v := range s.StringData {
		s.Data[k] = []byte(v)
	}
	s.StringData = nil
	f.secrets[s.Namespace+"/"+s.Name] = s
	return nil
}

func (f *fakeAPI) DeleteSecret(_ context.Context, ns, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.secrets, ns+"/"+name)
	return nil
}

func (f *fakeAPI) CreateJob(_ context.Context, j *batchv1.Job) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.jobs[j.Name]; ok {
		return apierrors.NewAlreadyExists(schema.GroupResource{Resource: "jobs"}, j.Name)
	}
	j = j.DeepCopy()
	f.jobs[j.Name] = j
	f.created = append(f.created, createdJob{name: j.Name, node: j.Spec.Template.Spec.NodeName, wave: j.Annotations[AnnotationWave]})
	end := podEnd{pending: true}
	if f.run != nil {
		end = f.run(j)
	}
	if end.jobFails != "" {
		j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: end.jobFails, Message: "fake"})
		return nil
	}
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: j.Name + "-x", Namespace: j.Namespace,
		Labels: map[string]string{"batch.kubernetes.io/job-name": j.Name, LabelRollout: j.Labels[LabelRollout]}}}
	cs := corev1.ContainerStatus{Name: "apply"}
	switch {
	case end.waiting != "":
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: end.waiting, Message: "no such image"}
	case end.pending:
		cs.State.Running = &corev1.ContainerStateRunning{}
	default:
		msg := end.message
		if end.report != nil {
			msg = string(end.report.Encode())
		}
		cs.State.Terminated = &corev1.ContainerStateTerminated{ExitCode: end.exit, Message: msg, Reason: "Completed"}
	}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{cs}
	f.pods[j.Name] = p
	return nil
}

func (f *fakeAPI) DeleteJob(_ context.Context, ns, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.jobs, name)
	delete(f.pods, name)
	return nil
}

func (f *fakeAPI) ListJobs(_ context.Context, ns, selector string) ([]batchv1.Job, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	sel, err := labels.Parse(selector)
	if err != nil {
		return nil, err
	}
	var out []batchv1.Job
	for _, j := range f.jobs {
		if j.Namespace == ns && sel.Matches(labels.Set(j.Labels)) {
			out = append(out, *j.DeepCopy())
		}
	}
	return out, nil
}

func (f *fakeAPI) ListPods(_ context.Context, ns, selector string) ([]corev1.Pod, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	sel, err := labels.Parse(selector)
	if err != nil {
		return nil, err
	}
	var out []corev1.Pod
	for _, p := range f.pods {
		if p.Namespace == ns && sel.Matches(labels.Set(p.Labels)) {
			out = append(out, *p.DeepCopy())
		}
	}
	return out, nil
}

func (f *fakeAPI) DryRun(_ context.Context, obj runtime.Object) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dryRuns = append(f.dryRuns, fmt.Sprintf("%T %s", obj, name(obj)))
	return nil
}

// objects counts what exists.
func (f *fakeAPI) objects() (jobs, secrets, cms int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.jobs), len(f.secrets), len(f.cms)
}
