package kubeadm

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kubeletcfg/kubeletcfg/kubeletapi"
)

// fakeAPI serves the two ConfigMaps and the Nodes, and refuses an update
// whose resourceVersion is not the current one, as the API server does. A
// unit test of the failure path; the e2e test runs the real one.
type fakeAPI struct {
	mu    sync.Mutex
	rv    int
	value string
	nodes []corev1.Node
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	cm := func(name, key, val string) corev1.ConfigMap {
		return corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: Namespace, ResourceVersion: itoa(f.rv)}, Data: map[string]string{key: val}}
	}
	switch {
	case r.URL.Path == "/api/v1/namespaces/kube-system/configmaps/kubelet-config" && r.Method == http.MethodGet:
		json.NewEncoder(w).Encode(cm(ConfigMapName, ConfigMapKey, f.value))
	case r.URL.Path == "/api/v1/namespaces/kube-system/configmaps/kubelet-config" && r.Method == http.MethodPut:
		var in corev1.ConfigMap
		body, _ := io.ReadAll(r.Body)
		json.Unmarshal(body, &in)
		if in.ResourceVersion != itoa(f.rv) {
			w.WriteHeader(http.StatusConflict)
			json.NewEncoder(w).Encode(metav1.Status{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}, Status: "Failure", Reason: metav1.StatusReasonConflict, Code: 409,
				Message: "the object has been modified; please apply your changes to the latest version and try again"})
			return
		}
		f.rv++
		f.value = in.Data[ConfigMapKey]
		json.NewEncoder(w).Encode(cm(ConfigMapName, ConfigMapKey, f.value))
	case r.URL.Path == "/api/v1/namespaces/kube-system/configmaps/kubeadm-config":
		json.NewEncoder(w).Encode(cm(ClusterConfigMapName, ClusterConfigKey, "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nnetworking:\n  serviceSubnet: 10.200.0.0/16\n"))
	case r.URL.Path == "/api/v1/nodes":
		json.NewEncoder(w).Encode(corev1.NodeList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "NodeList"}, Items: f.nodes})
	default:
		http.NotFound(w, r)
	}
}

func nodeAt(name, version string) corev1.Node {
	return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{KubeletVersion: version}}}
}

func TestConfigMapIntent(t *testing.T) {
	api := &fakeAPI{rv: 7, value: "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: 110\n",
		nodes: []corev1.Node{nodeAt("cp", "v1.37.2"), nodeAt("w1", "v1.35.4"), nodeAt("w2", "v1.37.1")}}
	srv := httptest.NewServer(api)
	defer srv.Close()
	c, err := kubeletapi.CoreClient(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	live, err := ReadLive(ctx, c, release(t, "1.37"))
	if err != nil {
		t.Fatal(err)
	}
	if live.ResourceVersion != "7" || live.Cluster.ServiceSubnet != "10.200.0.0/16" {
		t.Fatalf("live %+v", live)
	}
	minors, err := KubeletMinors(ctx, c)
	if err != nil || len(minors["1.37"]) != 2 || len(minors["1.35"]) != 1 {
		t.Fatalf("minors %v %v", minors, err)
	}
	next := Text{Data: []byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: 150\ntlsCurvePreferences: [29]\n"), File: "new.yaml"}
	plans := PlanConfigMap(live.ConfigMap, next, live.Cluster, minors)
	if len(plans) != 2 || !Valid(plans) {
		t.Fatalf("plans %+v", plans)
	}
	for _, p := range plans {
		var fields []string
		for _, c := range p.Changes {
			fields = append(fields, c.Field)
		}
		want := "maxPods tlsCurvePreferences"
		if p.KubeletMinor == "1.35" {
			want = "maxPods" // 1.35 has no tlsCurvePreferences: kubeadm 1.35 drops it
		}
		if strings.Join(fields, " ") != want {
			t.Errorf("%s: changes %v, want %s", p.KubeletMinor, fields, want)
		}
	}
	bad := Text{Data: []byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: -1\n"), File: "bad.yaml"}
	if Valid(PlanConfigMap(live.ConfigMap, bad, live.Cluster, minors)) {
		t.Error("maxPods: -1 judged valid")
	}

	// Someone edits the ConfigMap between the read and the update.
	if _, err := UpdateConfigMap(ctx, c, "concurrent", live.ResourceVersion); err != nil {
		t.Fatal(err)
	}
	_, err = UpdateConfigMap(ctx, c, string(next.Data), live.ResourceVersion)
	if !errors.Is(err, ErrConcurrentEdit) {
		t.Fatalf("err %v, want a concurrent edit refused", err)
	}
	if api.value != "concurrent" {
		t.Errorf("the concurrent edit was overwritten: %q", api.value)
	}
	rv, err := UpdateConfigMap(ctx, c, string(next.Data), "8")
	if err != nil || rv != "9" || api.value != string(next.Data) {
		t.Errorf("update at the current version: %q %v %q", rv, err, api.value)
	}
}
