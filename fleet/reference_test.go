package fleet

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kubeletcfg/kubeletcfg/kubeletapi"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

// --against-configmap compares with what kubeadm of each node's minor
// writes from the ConfigMap: its defaults from the ClusterConfiguration
// filled in, the fields its types lack dropped.
func TestConfigMapReferenceIsKubeadmsRendering(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data := map[string]map[string]string{
			"/api/v1/namespaces/kube-system/configmaps/kubelet-config": {"kubelet": "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: 90\ntlsCurvePreferences: [29]\n"},
			"/api/v1/namespaces/kube-system/configmaps/kubeadm-config": {"ClusterConfiguration": "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nnetworking:\n  serviceSubnet: 10.100.0.0/16\n"},
		}[r.URL.Path]
		if data == nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, Data: data})
	}))
	defer srv.Close()
	c, err := kubeletapi.CoreClient(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	ref, err := configMapReference(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	for minor, curves := range map[string]bool{"1.35": false, "1.37": true} {
		v, _ := schema.Resolve(minor)
		m, err := ref.running(v)
		if err != nil {
			t.Fatal(err)
		}
		dns, _ := m["clusterDNS"].([]any)
		if len(dns) != 1 || dns[0] != "10.100.0.10" || m["maxPods"] != float64(90) || m["rotateCertificates"] != true {
			t.Errorf("%s: clusterDNS %v, maxPods %v, rotateCertificates %v", minor, m["clusterDNS"], m["maxPods"], m["rotateCertificates"])
		}
		if _, ok := m["tlsCurvePreferences"]; ok != curves {
			t.Errorf("%s: tlsCurvePreferences kept %v, want %v", minor, ok, curves)
		}
	}
}
