package rollout

import (
	"encoding/json"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// Labels and annotations of the rollout's objects.
const (
	LabelRollout    = "kubeletcfg.io/rollout"
	AnnotationWave  = "kubeletcfg.io/wave"
	AnnotationNode  = "kubeletcfg.io/node"
	AnnotationHash  = "kubeletcfg.io/change"
	AnnotationApply = "kubeletcfg.io/apply" // on a Node: its last outcome (JSON)

	labelName      = "app.kubernetes.io/name"
	labelComponent = "app.kubernetes.io/component"
)

// Where the Job's container has things.
const (
	hostMount   = "/host"
	changeMount = "/change"
	saDir       = "/var/run/secrets/kubernetes.io/serviceaccount"
	kubeconfigK = "kubeconfig"
)

// ApplyArgs are the flags of apply every Job passes on, as apply takes
// them. A value may name $(NODE_NAME), which Kubernetes replaces with the
// Job's node (a path of each node's own).
type ApplyArgs struct {
	RestartCommand string        `json:"restartCommand,omitempty"`
	PIDFile        string        `json:"pidFile,omitempty"`
	KubeletLog     string        `json:"kubeletLog,omitempty"`
	Unit           string        `json:"unit,omitempty"`
	StateDir       string        `json:"stateDir,omitempty"`
	From           []string      `json:"from,omitempty"`
	HealthTimeout  time.Duration `json:"healthTimeout"`
	StableFor      time.Duration `json:"stableFor"`
	Drain          bool          `json:"drain,omitempty"`
	DrainTimeout   time.Duration `json:"drainTimeout,omitempty"`
	DeleteEmptyDir bool          `json:"deleteEmptyDirData,omitempty"`
	Force          bool          `json:"force,omitempty"`
	GracePeriod    int64         `json:"gracePeriod"`
	AllowInsecure  bool          `json:"allowInsecure,omitempty"`
	Drained        bool          `json:"drained,omitempty"`
	VerifyConfigz  bool          `json:"verifyConfigz,omitempty"`
	// Flags are more of apply's flags, verbatim (--persist=patch on
	// kubeadm nodes).
	Flags []string `json:"flags,omitempty"`
	// KubeletArgs is the kubelet's command line, after --, when the nodes'
	// units do not say it.
	KubeletArgs []string `json:"kubeletArgs,omitempty"`
}

// Spec is everything the rollout's objects are made from: what --resume
// reads back from the progress ConfigMap.
type Spec struct {
	ID        string `json:"id"`
	Namespace string `json:"namespace"`
	Change    Change `json:"change"`
	Hash      string `json:"hash"`
	Image     string `json:"image"`
	// ServiceAccount runs the Jobs: the API server's checks after a restart
	// and --drain need its rights (deploy/rollout.yaml).
	ServiceAccount string `json:"serviceAccount"`
	// APIServer is the API server's address as the nodes reach it ("": the
	// Jobs do not use the API server).
	APIServer string        `json:"apiServer,omitempty"`
	Apply     ApplyArgs     `json:"apply"`
	Soak      time.Duration `json:"soak"`
	// JobTimeout bounds each Job (activeDeadlineSeconds).
	JobTimeout time.Duration `json:"jobTimeout"`
	// Waves and Nodes are kept in the progress once, as its nodes' states
	// (the progress of 5,000 nodes fits a ConfigMap).
	Waves []Wave `json:"-"`
	Nodes []Node `json:"-"`
}

// secretName is the Secret that holds the change (and the Jobs'
// kubeconfig).
func (s *Spec) secretName() string { return "kubeletcfg-" + s.ID }

// jobName is the Job of the i-th node in rollout order.
func (s *Spec) jobName(i int) string { return fmt.Sprintf("kubeletcfg-%s-%d", s.ID, i) }

func (s *Spec) node(name string) Node {
	for _, n := range s.Nodes {
		if n.Name == name {
			return n
		}
	}
	return Node{Name: name}
}

func (s *Spec) labels() map[string]string {
	return map[string]string{labelName: "kubeletcfg", labelComponent: "rollout", LabelRollout: s.ID}
}

// Secret holds the change, and the kubeconfig the Jobs reach the API
// server with (their ServiceAccount's token and CA, at the address given).
func (s *Spec) Secret() *corev1.Secret {
	// As text, so that a dry run shows the change itself (the API server
	// keeps it as data).
	data := map[string]string{secretKey: string(s.Change.Content)}
	if s.APIServer != "" {
		data[kubeconfigK] = fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: cluster
  cluster:
    server: %s
    certificate-authority: %s/ca.crt
users:
- name: rollout-job
  user:
    tokenFile: %s/token
contexts:
- name: rollout-job
  context:
    cluster: cluster
    user: rollout-job
current-context: rollout-job
`, s.APIServer, saDir, saDir)
	}
	sec := &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: s.secretName(), Namespace: s.Namespace, Labels: s.labels(), Annotations: map[string]string{AnnotationHash: s.Hash}},
		Type:       corev1.SecretTypeOpaque,
		StringData: data,
	}
	if !utf8.Valid(s.Change.Content) {
		sec.Data = map[string][]byte{secretKey: s.Change.Content}
		delete(sec.StringData, secretKey)
	}
	return sec
}

// args is apply's command line in the Job for node n.
func (s *Spec) args(n Node) []string {
	a := s.Apply
	args := []string{"apply", "--root=" + hostMount, "--root-is-host", "--node=" + n.Name, "--kubelet-version=" + n.Minor,
		"--outcome-file=/dev/termination-log"}
	args = append(args, s.Change.applyArgs(changeMount)...)
	if s.APIServer != "" {
		args = append(args, "--kubeconfig="+path.Join(changeMount, kubeconfigK))
	}
	if a.Drain {
		args = append(args, "--drain", "--drain-keep-pod=$(POD_UID)", "--drain-timeout="+a.DrainTimeout.String(),
			"--grace-period="+strconv.FormatInt(a.GracePeriod, 10))
		if a.DeleteEmptyDir {
			args = append(args, "--delete-emptydir-data")
		}
		if a.Force {
			args = append(args, "--force")
		}
	}
	opt := func(flag, v string) {
		if v != "" {
			args = append(args, flag+"="+v)
		}
	}
	opt("--restart-command", a.RestartCommand)
	opt("--pid-file", a.PIDFile)
	opt("--kubelet-log", a.KubeletLog)
	opt("--unit", a.Unit)
	opt("--state-dir", a.StateDir)
	for _, f := range a.From {
		opt("--from", f)
	}
	args = append(args, "--health-timeout="+a.HealthTimeout.String(), "--stable-for="+a.StableFor.String())
	if a.AllowInsecure {
		args = append(args, "--allow-insecure")
	}
	if a.Drained {
		args = append(args, "--drained")
	}
	if a.VerifyConfigz {
		args = append(args, "--verify-configz")
	}
	args = append(args, a.Flags...)
	if len(a.KubeletArgs) > 0 {
		args = append(append(args, "--"), a.KubeletArgs...)
	}
	return args
}

// Job is the Job that applies the change on the i-th node of the rollout
// (wave w): pinned to the node (no scheduler involved, whatever its
// taints or cordon), privileged with the host's PID namespace and network
// and the host's / at /host, run once (never retried: a failed apply is a
// verdict), bounded by JobTimeout.
func (s *Spec) Job(i int, n Node, wave string) *batchv1.Job {
	zero, yes, no := int32(0), true, false
	deadline := int64(s.JobTimeout / time.Second)
	ttl := int32(24 * 60 * 60)
	// The pod gets the time apply takes to end a watch and roll back.
	grace := int64(2*(s.Apply.HealthTimeout+s.Apply.StableFor)/time.Second) + 30
	dir := corev1.HostPathDirectory
	mode := int32(0o400)
	ann := map[string]string{AnnotationWave: wave, AnnotationNode: n.Name, AnnotationHash: s.Hash}
	podLabels := s.labels()
	return &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: s.jobName(i), Namespace: s.Namespace, Labels: s.labels(), Annotations: ann},
		Spec: batchv1.JobSpec{
			BackoffLimit:            &zero,
			ActiveDeadlineSeconds:   &deadline,
			TTLSecondsAfterFinished: &ttl,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels, Annotations: ann},
				Spec: corev1.PodSpec{
					NodeName:                      n.Name,
					RestartPolicy:                 corev1.RestartPolicyNever,
					HostPID:                       true,
					HostNetwork:                   true,
					DNSPolicy:                     corev1.DNSDefault,
					PriorityClassName:             "system-node-critical",
					ServiceAccountName:            s.ServiceAccount,
					AutomountServiceAccountToken:  &yes,
					EnableServiceLinks:            &no,
					TerminationGracePeriodSeconds: &grace,
					Tolerations:                   []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
					Containers: []corev1.Container{{
						Name:            "apply",
						Image:           s.Image,
						ImagePullPolicy: corev1.PullIfNotPresent,
						Command:         []string{"/kubeletcfg"},
						Args:            s.args(n),
						Env: []corev1.EnvVar{
							{Name: "NODE_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
							{Name: "POD_UID", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.uid"}}},
						},
						SecurityContext: &corev1.SecurityContext{Privileged: &yes},
						Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
							corev1.ResourceCPU:    resource.MustParse("10m"),
							corev1.ResourceMemory: resource.MustParse("64Mi"),
						}},
						TerminationMessagePath:   "/dev/termination-log",
						TerminationMessagePolicy: corev1.TerminationMessageReadFile,
						VolumeMounts: []corev1.VolumeMount{
							{Name: "host", MountPath: hostMount},
							{Name: "change", MountPath: changeMount, ReadOnly: true},
						},
					}},
					Volumes: []corev1.Volume{
						{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/", Type: &dir}}},
						{Name: "change", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: s.secretName(), DefaultMode: &mode}}},
					},
				},
			},
		},
	}
}

// Jobs are the rollout's Jobs in rollout order: wave by wave, each wave's
// nodes in name order.
func (s *Spec) Jobs() []*batchv1.Job {
	var out []*batchv1.Job
	i := 0
	for _, w := range s.Waves {
		for _, name := range w.Nodes {
			out = append(out, s.Job(i, s.node(name), w.Name))
			i++
		}
	}
	return out
}

// jobIndex is the index of node's Job in rollout order.
func (s *Spec) jobIndex(node string) int {
	i := 0
	for _, w := range s.Waves {
		for _, name := range w.Nodes {
			if name == node {
				return i
			}
			i++
		}
	}
	return -1
}

// YAML prints the objects a rollout creates, in order, as one YAML stream
// (--dry-run -o yaml): the Secret, then the Jobs.
func (s *Spec) YAML() ([]byte, error) {
	var b strings.Builder
	objs := []any{s.Secret()}
	for _, j := range s.Jobs() {
		objs = append(objs, j)
	}
	for _, o := range objs {
		y, err := cleanYAML(o)
		if err != nil {
			return nil, err
		}
		b.WriteString("---\n")
		b.Write(y)
	}
	return []byte(b.String()), nil
}

// cleanYAML is an object's YAML without what the API server fills
// (status, creationTimestamp).
func cleanYAML(o any) ([]byte, error) {
	js, err := json.Marshal(o)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(js, &m); err != nil {
		return nil, err
	}
	delete(m, "status")
	prune(m)
	return yaml.Marshal(m)
}

// prune drops creationTimestamp: null and empty maps the typed objects
// carry.
func prune(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			if (k == "creationTimestamp" && c == nil) || k == "resources" && isEmpty(c) {
				delete(x, k)
				continue
			}
			prune(c)
			if m, ok := c.(map[string]any); ok && len(m) == 0 && k != "emptyDir" {
				delete(x, k)
			}
		}
	case []any:
		for _, c := range x {
			prune(c)
		}
	}
}

func isEmpty(v any) bool {
	m, ok := v.(map[string]any)
	return ok && len(m) == 0
}
