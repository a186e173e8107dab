package rollout

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// An API server that never answers ends the request within the bound, not
// never.
func TestRequestsAreBounded(t *testing.T) {
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-stop:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(stop)
	old := requestTimeout
	requestTimeout = 300 * time.Millisecond
	defer func() { requestTimeout = old }()
	api, err := NewAPI(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	done := make(chan error, 1)
	go func() {
		_, err := api.ListNodes(context.Background(), "")
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a silent API server's list succeeded")
		}
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("the request ended after %s, want about %s", took, requestTimeout)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a request to a silent API server never ended")
	}
}
