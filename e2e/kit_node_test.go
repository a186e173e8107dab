//go:build e2e

package e2e

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

const (
	clusterNodeName = "e2e-node"
	podImage        = "e2e.local/pause:1" // the sandbox image and every test pod's
	podBridge       = "kcfg-pods0"
	podSubnet       = "10.213.1.0/24"
)

// clusterNode is a real kubelet registered with a real control plane: x509
// client certificates, webhook authentication and authorization, containerd
// with a CNI bridge (network ready, so the Node turns Ready) and a local
// image its pods run.
type clusterNode struct {
	API                    *apiServer
	Name                   string
	Kubelet, Minor         string
	Dir, Config, ConfigDir string
	Args                   []string // the kubelet's command line after its binary
	Restart, PidFile, Log  string
	Base                   string // the config file's lines every test keeps
	containerdS            string
}

func startClusterNode(t *testing.T) *clusterNode {
	t.Helper()
	// The network namespaces of pod sandboxes the kubelet did not stop
	// before it was: e2e tests run one at a time, so those that appear
	// during the test are its own.
	before := podNetns()
	t.Cleanup(func() {
		for name := range podNetns() {
			if !before[name] {
				_ = exec.Command("ip", "netns", "del", name).Run()
			}
		}
		_ = exec.Command("ip", "link", "del", podBridge).Run()
	})
	kubelet, minor, dir, sock := kubeletNode(t, func(dir string) string {
		write(t, filepath.Join(dir, "cni", "10-e2e.conflist"), fmt.Sprintf(`{"cniVersion": "0.4.0", "name": "e2e-pods", "plugins": [
  {"type": "bridge", "bridge": %q, "isGateway": true, "ipMasq": false,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": %q}]], "dataDir": %q}}]}
`, podBridge, podSubnet, filepath.Join(dir, "cni-ipam")))
		return fmt.Sprintf(`  sandbox_image = %q
[plugins."io.containerd.grpc.v1.cri".cni]
  bin_dir = "/usr/lib/cni"
  conf_dir = %q
`, podImage, filepath.Join(dir, "cni"))
	})
	importPodImage(t, dir, sock)

	api := startAPIServer(t, dir)
	n := &clusterNode{API: api, Name: clusterNodeName, Kubelet: kubelet, Minor: minor, Dir: dir,
		Config: filepath.Join(dir, "config.yaml"), ConfigDir: filepath.Join(dir, "conf.d"),
		PidFile: filepath.Join(dir, "kubelet.pid"), Log: filepath.Join(dir, "kubelet.log"), containerdS: sock}
	n.Base = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncontainerRuntimeEndpoint: unix://" + sock +
		"\nfailCgroupV1: false\nauthentication:\n  anonymous:\n    enabled: false\n  webhook:\n    enabled: true\n  x509:\n    clientCAFile: " +
		api.CA.CertFile + "\nauthorization:\n  mode: Webhook\n"
	write(t, n.Config, n.Base+"cgroupDriver: cgroupfs\nmaxPods: 100\n")
	if err := os.MkdirAll(n.ConfigDir, 0o755); err != nil {
		t.Fatal(err)
	}
	n.Args = []string{"--config=" + n.Config, "--config-dir=" + n.ConfigDir, "--root-dir=" + filepath.Join(dir, "root"),
		"--cert-dir=" + filepath.Join(dir, "pki"), "--kubeconfig=" + api.kubeletKubeconfig(t, n.Name),
		"--hostname-override=" + n.Name, "--node-ip=" + api.Net.HostIP}
	n.Restart = restartScript(t, dir, "KUBELET_CONFIG_DROPIN_DIR_ALPHA= setsid "+kubelet+" "+strings.Join(n.Args, " "))
	t.Cleanup(n.stop)
	if out, err := exec.Command(n.Restart).CombinedOutput(); err != nil {
		t.Fatalf("start the kubelet: %v %s", err, out)
	}
	n.waitReady(t, time.Time{}, 60*time.Second)
	return n
}

// stop deletes the pods (so the kubelet tears their sandboxes and network
// down), then stops the kubelet of the pid file and whatever containers are
// left.
func (n *clusterNode) stop() {
	ctx := context.Background()
	pods, err := n.API.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + n.Name})
	if err == nil {
		zero := int64(0)
		for _, p := range pods.Items {
			_ = n.API.Client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
		}
	}
	ctr := func(args ...string) string {
		out, _ := exec.Command("ctr", append([]string{"-a", n.containerdS, "-n", "k8s.io"}, args...)...).Output()
		return strings.TrimSpace(string(out))
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline) && ctr("tasks", "ls", "-q") != ""; {
		time.Sleep(250 * time.Millisecond)
	}
	if b, err := os.ReadFile(n.PidFile); err == nil {
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			_ = exec.Command("kill", "-9", strconv.Itoa(pid)).Run()
		}
	}
	for _, id := range strings.Fields(ctr("tasks", "ls", "-q")) {
		ctr("tasks", "kill", "-s", "SIGKILL", id)
	}
	time.Sleep(300 * time.Millisecond)
}

// waitReady waits until the Node is Ready with a heartbeat not before since
// and says when it saw that.
func (n *clusterNode) waitReady(t *testing.T, since time.Time, timeout time.Duration) time.Time {
	t.Helper()
	var last string
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		node, err := n.API.Client.CoreV1().Nodes().Get(context.Background(), n.Name, metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			continue
		}
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady {
				last = fmt.Sprintf("Ready=%s (%s) heartbeat %s", c.Status, c.Message, c.LastHeartbeatTime.UTC().Format(time.RFC3339))
				if c.Status == corev1.ConditionTrue && !c.LastHeartbeatTime.Time.Before(since.Truncate(time.Second)) {
					return time.Now()
				}
			}
		}
	}
	log, _ := os.ReadFile(n.Log)
	t.Fatalf("node %s not Ready within %s (last: %s); kubelet log:\n%s", n.Name, timeout, last, tail(log))
	return time.Time{}
}

// replicaSet creates a ReplicaSet of one pod labelled app=NAME, and binds
// its pod to the node as the scheduler would (there is none).
func (n *clusterNode) replicaSet(t *testing.T, name string) *corev1.Pod {
	t.Helper()
	one := int32(1)
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: appsv1.ReplicaSetSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: podTemplate(name)},
	}
	if _, err := n.API.Client.AppsV1().ReplicaSets("default").Create(context.Background(), rs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return n.bindRunning(t, name)
}

// daemonSet creates a DaemonSet labelled app=NAME and binds its pod.
func (n *clusterNode) daemonSet(t *testing.T, name string) *corev1.Pod {
	t.Helper()
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: podTemplate(name)},
	}
	if _, err := n.API.Client.AppsV1().DaemonSets("default").Create(context.Background(), ds, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return n.bindRunning(t, name)
}

func podTemplate(app string) corev1.PodTemplateSpec {
	no, grace := false, int64(5)
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}},
		Spec: corev1.PodSpec{
			AutomountServiceAccountToken:  &no,
			TerminationGracePeriodSeconds: &grace,
			Containers:                    []corev1.Container{{Name: "main", Image: podImage, ImagePullPolicy: corev1.PullNever}},
		},
	}
}

// bindRunning binds the pending pod labelled app=APP to the node and waits
// until it runs and is ready.
func (n *clusterNode) bindRunning(t *testing.T, app string) *corev1.Pod {
	t.Helper()
	ctx := context.Background()
	sel := labels.SelectorFromSet(labels.Set{"app": app}).String()
	bound := false
	var last string
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		pods, err := n.API.Client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil || len(pods.Items) == 0 {
			continue
		}
		p := pods.Items[0]
		if p.Spec.NodeName == "" && !bound {
			b := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace},
				Target: corev1.ObjectReference{Kind: "Node", Name: n.Name}}
			if err := n.API.Client.CoreV1().Pods(p.Namespace).Bind(ctx, b, metav1.CreateOptions{}); err != nil {
				t.Fatalf("bind %s: %v", p.Name, err)
			}
			bound = true
			continue
		}
		last = fmt.Sprintf("%s on %q: %s", p.Name, p.Spec.NodeName, p.Status.Phase)
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				return &p
			}
		}
	}
	log, _ := os.ReadFile(n.Log)
	t.Fatalf("pod app=%s not running within 60 s (%s); kubelet log:\n%s", app, last, tail(log))
	return nil
}

// importPodImage builds a static program that waits for SIGTERM, packs it as
// an image (docker save layout) and imports it into containerd: nothing can
// be pulled here, and it serves as the pods' sandbox too.
func importPodImage(t *testing.T, dir, sock string) {
	t.Helper()
	src := filepath.Join(dir, "pause", "main.go")
	write(t, src, "package main\n\nimport (\n\t\"os\"\n\t\"os/signal\"\n\t\"syscall\"\n)\n\nfunc main() {\n\tc := make(chan os.Signal, 1)\n\tsignal.Notify(c, syscall.SIGTERM, syscall.SIGINT)\n\t<-c\n}\n")
	bin := filepath.Join(dir, "pause", "pause")
	build := exec.Command("go", "build", "-o", bin, src)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the pause program: %v\n%s", err, out)
	}
	prog, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	var layer bytes.Buffer
	tw := tar.NewWriter(&layer)
	if err := tw.WriteHeader(&tar.Header{Name: "pause", Mode: 0o755, Size: int64(len(prog)), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	_, _ = tw.Write(prog)
	_ = tw.Close()
	config, _ := json.Marshal(map[string]any{
		"architecture": "amd64", "os": "linux",
		"config": map[string]any{"Entrypoint": []string{"/pause"}},
		"rootfs": map[string]any{"type": "layers", "diff_ids": []string{fmt.Sprintf("sha256:%x", sha256.Sum256(layer.Bytes()))}},
	})
	manifest, _ := json.Marshal([]map[string]any{{"Config": "config.json", "RepoTags": []string{podImage}, "Layers": []string{"layer.tar"}}})
	var image bytes.Buffer
	tw = tar.NewWriter(&image)
	for _, f := range []struct {
		name string
		data []byte
	}{{"layer.tar", layer.Bytes()}, {"config.json", config}, {"manifest.json", manifest}} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.data)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		_, _ = tw.Write(f.data)
	}
	_ = tw.Close()
	archive := filepath.Join(dir, "pause", "image.tar")
	write(t, archive, image.String())
	if out, err := exec.Command("ctr", "-a", sock, "-n", "k8s.io", "images", "import", archive).CombinedOutput(); err != nil {
		t.Fatalf("ctr images import: %v\n%s", err, out)
	}
}

// podNetns names the network namespaces containerd made for pod sandboxes.
func podNetns() map[string]bool {
	names := map[string]bool{}
	entries, _ := os.ReadDir("/var/run/netns")
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "cni-") {
			names[e.Name()] = true
		}
	}
	return names
}
