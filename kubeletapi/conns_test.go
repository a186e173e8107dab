package kubeletapi

import (
	"context"
	"crypto/tls"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// A reader of many kubelets lets go of each one's connection once no
// reader is at its address any more (Begin and its end), whether the
// kubelet offers HTTP/2 or not; the next read dials again. Without it the connection stays
// open, kept alive, as long as the client lives.
func TestBeginClosesTheNodesConnections(t *testing.T) {
	cluster := newCA(t, "kubernetes")
	for _, h2 := range []bool{false, true} {
		var open, proto atomic.Int64
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			proto.Store(int64(r.ProtoMajor))
			w.Write([]byte(`{"kubeletconfig":{"maxPods":44}}`))
		}))
		srv.EnableHTTP2 = h2
		srv.TLS = &tls.Config{Certificates: []tls.Certificate{cluster.serving(t, "kubelet")}} // names no node: both read it
		srv.Config.ErrorLog = log.New(io.Discard, "", 0)
		srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
			switch s {
			case http.StateNew:
				open.Add(1)
			case http.StateClosed, http.StateHijacked:
				open.Add(-1)
			}
		}
		srv.StartTLS()
		t.Cleanup(srv.Close)
		h, p, _ := net.SplitHostPort(srv.Listener.Addr().String())
		port, _ := strconv.Atoi(p)
		c, err := New(restConfig(cluster.pem), Options{Via: Direct})
		if err != nil {
			t.Fatal(err)
		}
		a, b := nodeAt(t, "a", "1.37", h, int32(port)), nodeAt(t, "b", "1.37", h, int32(port)) // one address
		addr := a.hostPort()
		ctx := context.Background()
		read := func(n Node) {
			t.Helper()
			if raw, _, err := c.Configz(ctx, n); err != nil || string(raw) != `{"maxPods":44}` {
				t.Fatalf("h2 %v: %s %v", h2, raw, err)
			}
			// HTTP/1.1 even where the kubelet offers HTTP/2: net/http keeps
			// an HTTP/2 connection's first TLS state per host for good
			// (about the size of its certificates, per kubelet read).
			if proto.Load() != 1 {
				t.Fatalf("read over HTTP/%d, want HTTP/1.1", proto.Load())
			}
		}
		closed := func(want int64) {
			t.Helper()
			for deadline := time.Now().Add(5 * time.Second); open.Load() != want && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond)
			}
			if got := open.Load(); got != want {
				t.Errorf("h2 %v: %d connections open at the kubelet, want %d", h2, got, want)
			}
		}
		endA := c.Begin(a)
		read(a)
		endB := c.Begin(b)
		read(b)
		endA()
		if n := c.conns.openTo(addr); n != 1 {
			t.Errorf("h2 %v: %d connections after a's end with b still reading, want the one kept alive", h2, n)
		}
		read(b)
		endB()
		endB() // a second end changes nothing
		if n := c.conns.openTo(addr); n != 0 {
			t.Errorf("h2 %v: %d connections open after the last reader's end", h2, n)
		}
		closed(0)
		// The next reader dials again.
		end := c.Begin(a)
		read(a)
		end()
		closed(0)
		// Without Begin, kept alive.
		read(a)
		time.Sleep(100 * time.Millisecond)
		if n := c.conns.openTo(addr); n != 1 || open.Load() != 1 {
			t.Errorf("h2 %v: %d connections (%d at the kubelet) after a read outside Begin, want 1 kept alive", h2, n, open.Load())
		}
	}
}
