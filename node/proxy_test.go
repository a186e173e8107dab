package node

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubeletcfg/kubeletcfg/internal/testkit"
)

// TestConfigzViaAPIServer checks the request the node proxy gets: the
// kubeconfig's server (with its path prefix), the node's name escaped, and
// the kubeconfig's token. The e2e test runs it against a real kube-apiserver.
func TestConfigzViaAPIServer(t *testing.T) {
	var gotPath, gotAuth string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotPath, gotAuth = r.URL.EscapedPath(), r.Header.Get("Authorization")
		if !strings.HasSuffix(r.URL.Path, "/proxy/configz") {
			http.Error(w, `{"kind":"Status","message":"nodes \"x\" not found","code":404}`, http.StatusNotFound)
			return
		}
		fmt.Fprint(w, `{"kubeletconfig":{"maxPods":42}}`)
	}))
	defer srv.Close()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := (testkit.Kubeconfig{Server: srv.URL + "/rancher/k8s", Token: "sekrit"}).Write(kubeconfig); err != nil {
		t.Fatal(err)
	}

	raw, u, err := ConfigzViaAPIServer(context.Background(), ViaAPIServer{Kubeconfig: kubeconfig, Node: "worker 1"})
	if err != nil {
		t.Fatal(err)
	}
	if want := srv.URL + "/rancher/k8s/api/v1/nodes/worker%201/proxy/configz"; u != want {
		t.Errorf("URL = %s, want %s", u, want)
	}
	if string(raw) != `{"maxPods":42}` {
		t.Errorf("configz = %s", raw)
	}
	if want := "/rancher/k8s/api/v1/nodes/worker%201/proxy/configz"; gotPath != want {
		t.Errorf("path = %s, want %s", gotPath, want)
	}
	if gotAuth != "Bearer sekrit" {
		t.Errorf("Authorization = %q, want the kubeconfig's token", gotAuth)
	}

	host, _ := os.Hostname()
	if _, _, err := ConfigzViaAPIServer(context.Background(), ViaAPIServer{Kubeconfig: kubeconfig}); err != nil || gotPath != "/rancher/k8s/api/v1/nodes/"+url.PathEscape(strings.ToLower(host))+"/proxy/configz" {
		t.Errorf("no node name: want this host's, got path %s (%v)", gotPath, err)
	}
	missing := filepath.Join(t.TempDir(), "nope")
	if _, _, err := ConfigzViaAPIServer(context.Background(), ViaAPIServer{Kubeconfig: missing, Node: "n"}); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing kubeconfig: %v", err)
	}
	if _, _, err := ConfigzViaAPIServer(context.Background(), ViaAPIServer{Kubeconfig: kubeconfig, Context: "other", Node: "n"}); err == nil || !strings.Contains(err.Error(), "other") {
		t.Errorf("unknown context: %v", err)
	}
}
