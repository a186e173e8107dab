package criruntime

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A fake runtime on a unix socket, speaking HTTP/2 without TLS as gRPC
// does. It is for the failure paths; the real containerd 2.4 and 1.6 answer
// in the e2e tests.
type fakeRuntime struct {
	version func(w http.ResponseWriter)
	config  func(w http.ResponseWriter)
}

func grpcReply(w http.ResponseWriter, msg []byte, status string) {
	w.Header().Set("Content-Type", "application/grpc")
	w.Header().Set("Trailer", "Grpc-Status, Grpc-Message")
	w.WriteHeader(http.StatusOK)
	if msg != nil {
		var p [5]byte
		binary.BigEndian.PutUint32(p[1:], uint32(len(msg)))
		w.Write(p[:])
		w.Write(msg)
	}
	w.Header().Set("Grpc-Status", status)
	if status != "0" {
		w.Header().Set("Grpc-Message", "unknown method RuntimeConfig for service runtime.v1.RuntimeService")
	}
}

func trailersOnly(w http.ResponseWriter, status string) {
	w.Header().Set("Content-Type", "application/grpc")
	w.Header().Set("Grpc-Status", status)
	w.Header().Set("Grpc-Message", "unknown%20service")
	w.WriteHeader(http.StatusOK)
}

func versionOK(w http.ResponseWriter) {
	grpcReply(w, append(protoString(2, "containerd"), protoString(3, "v2.4.2")...), "0")
}

func linux(driver uint64) []byte {
	inner := binary.AppendUvarint([]byte{1 << 3}, driver)
	return append([]byte{1<<3 | 2, byte(len(inner))}, inner...)
}

func serve(t *testing.T, f fakeRuntime) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "cri.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	srv := &http.Server{Protocols: &p, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		switch r.URL.Path {
		case "/runtime.v1.RuntimeService/Version":
			if f.version == nil {
				versionOK(w)
				return
			}
			f.version(w)
		case "/runtime.v1.RuntimeService/RuntimeConfig":
			f.config(w)
		default:
			trailersOnly(w, "12")
		}
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return "unix://" + sock
}

func TestQueryAnswers(t *testing.T) {
	for _, tc := range []struct {
		name        string
		config      func(w http.ResponseWriter)
		driver      string
		unsupported bool
		fatal       string
	}{
		{"systemd", func(w http.ResponseWriter) { grpcReply(w, linux(0), "0") }, Systemd, false, ""},
		{"cgroupfs", func(w http.ResponseWriter) { grpcReply(w, linux(1), "0") }, Cgroupfs, false, ""},
		// An empty Linux part is SYSTEMD, the enum's zero.
		{"empty linux", func(w http.ResponseWriter) { grpcReply(w, []byte{1<<3 | 2, 0}, "0") }, Systemd, false, ""},
		// No Linux part: the kubelet keeps its own driver.
		{"no linux", func(w http.ResponseWriter) { grpcReply(w, []byte{}, "0") }, "", false, ""},
		{"unknown fields skipped", func(w http.ResponseWriter) {
			grpcReply(w, append(append(protoString(7, "x"), linux(1)...), 0x45, 1, 2, 3, 4), "0")
		}, Cgroupfs, false, ""},
		{"unimplemented (containerd 1.x)", func(w http.ResponseWriter) { trailersOnly(w, "12") }, "", true, ""},
		{"unimplemented in trailers", func(w http.ResponseWriter) { grpcReply(w, nil, "12") }, "", true, ""},
		{"failing", func(w http.ResponseWriter) { grpcReply(w, nil, "14") }, "", false, "RuntimeConfig fails (rpc error: code = Unavailable"},
		{"unknown driver", func(w http.ResponseWriter) { grpcReply(w, linux(7), "0") }, "", false, "unknown cgroup driver 7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ep := serve(t, fakeRuntime{config: tc.config})
			a, err := Query(context.Background(), ep, QueryOptions{Timeout: 3 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if a.Driver != tc.driver || a.Unsupported != tc.unsupported || !strings.Contains(a.ConfigFatal, tc.fatal) || (tc.fatal == "") != (a.ConfigFatal == "") {
				t.Fatalf("answer %s (%+v)", a, a)
			}
			if a.Runtime != "containerd v2.4.2" {
				t.Errorf("runtime %q", a.Runtime)
			}
		})
	}
}

// A runtime that lies or misbehaves is an error that says so, in bounded
// time, never an answer.
func TestQueryRefusesLies(t *testing.T) {
	for _, tc := range []struct {
		name   string
		config func(w http.ResponseWriter)
		want   string
	}{
		{"not grpc", func(w http.ResponseWriter) { w.Header().Set("Content-Type", "text/html"); w.Write([]byte("<html>")) }, `content type "text/html"`},
		{"http error", func(w http.ResponseWriter) { w.WriteHeader(http.StatusNotFound) }, "HTTP status 404"},
		{"no status", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/grpc")
			w.Write([]byte{0, 0, 0, 0, 4, 10, 2, 8, 1})
		}, "without a gRPC status"},
		{"length lies", func(w http.ResponseWriter) { grpcReply(w, nil, "0"); w.Write([]byte{0, 0, 0, 0, 9, 1}) }, "says 9 bytes and holds 1"},
		{"compressed", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/grpc")
			w.Header().Set("Trailer", "Grpc-Status")
			w.Write([]byte{1, 0, 0, 0, 1, 0})
			w.Header().Set("Grpc-Status", "0")
		}, "compressed"},
		{"malformed protobuf", func(w http.ResponseWriter) { grpcReply(w, []byte{1<<3 | 2, 50, 1}, "0") }, "malformed protobuf"},
		{"linux not a message", func(w http.ResponseWriter) { grpcReply(w, []byte{1 << 3, 1}, "0") }, "linux is not a message"},
		{"huge", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/grpc")
			w.Write([]byte{0, 0x7f, 0xff, 0xff, 0xff})
			chunk := make([]byte, 32<<10)
			for i := 0; i < 64; i++ {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		}, "larger than 65536 bytes"},
		{"bad status", func(w http.ResponseWriter) { trailersOnly(w, "zero") }, `status "zero" is not a number`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ep := serve(t, fakeRuntime{config: tc.config})
			start := time.Now()
			a, err := Query(context.Background(), ep, QueryOptions{Timeout: 3 * time.Second})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("answer %v, error %v; want an error with %q", a, err, tc.want)
			}
			if time.Since(start) > 3*time.Second {
				t.Errorf("took %s", time.Since(start))
			}
		})
	}
}

func TestQuerySockets(t *testing.T) {
	dir := t.TempDir()
	// Not there.
	if _, err := Query(context.Background(), "unix://"+filepath.Join(dir, "none.sock"), QueryOptions{}); err == nil || !strings.Contains(err.Error(), "cannot connect") {
		t.Errorf("missing socket: %v", err)
	}
	// A socket that accepts and never answers: the timeout, not a hang.
	silent := filepath.Join(dir, "silent.sock")
	l, err := net.Listen("unix", silent)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	start := time.Now()
	if _, err := Query(context.Background(), "unix://"+silent, QueryOptions{Timeout: 500 * time.Millisecond}); err == nil || !strings.Contains(err.Error(), "no answer within 500ms") {
		t.Errorf("silent socket: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("silent socket took %s", d)
	}
	// A socket that answers garbage.
	garbage := filepath.Join(dir, "garbage.sock")
	g, err := net.Listen("unix", garbage)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	go func() {
		for {
			c, err := g.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"))
			c.Close()
		}
	}()
	if a, err := Query(context.Background(), "unix://"+garbage, QueryOptions{Timeout: time.Second}); err == nil {
		t.Errorf("garbage: answer %v", a)
	}
	// Endpoints the kubelet refuses.
	for _, ep := range []string{"tcp://127.0.0.1:1234", "npipe:////./pipe/x", "unix://"} {
		if _, err := Query(context.Background(), ep, QueryOptions{}); err == nil {
			t.Errorf("%s: no error", ep)
		}
	}
	if p, err := SocketPath("/run/containerd/containerd.sock"); err != nil || p != "/run/containerd/containerd.sock" {
		t.Errorf("bare path: %q %v", p, err)
	}
}

func TestQueryVersionRefused(t *testing.T) {
	ep := serve(t, fakeRuntime{version: func(w http.ResponseWriter) { trailersOnly(w, "12") }, config: func(w http.ResponseWriter) { grpcReply(w, linux(1), "0") }})
	a, err := Query(context.Background(), ep, QueryOptions{})
	if err != nil || !strings.Contains(a.Fatal, "does not answer the CRI v1 Version call") {
		t.Fatalf("%v %v", a, err)
	}
}

func TestAsk(t *testing.T) {
	dir := t.TempDir()
	// Nothing listens: a live node falls back to containerd's configuration.
	conf, _ := filepath.Abs(filepath.Join("testdata", "containerd", "v3-systemd", "etc", "containerd", "config.toml"))
	ask, err := Ask("", AskOptions{ContainerdConfig: conf, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	a, err := ask("unix://" + filepath.Join(dir, "containerd.sock"))
	if err != nil || a.Driver != Systemd || !strings.Contains(a.Notes[0], "no runtime answers on") {
		t.Fatalf("%v %v", a, err)
	}
	// A runtime that answers wrongly is an error, not a fallback.
	ep := serve(t, fakeRuntime{config: func(w http.ResponseWriter) { grpcReply(w, linux(9), "0") }})
	if a, err := ask(ep); err != nil || a.ConfigFatal == "" {
		t.Fatalf("unknown driver: %v %v", a, err)
	}
	lie := serve(t, fakeRuntime{config: func(w http.ResponseWriter) { w.WriteHeader(500) }})
	if a, err := ask(lie); err == nil {
		t.Fatalf("lying runtime: %v", a)
	}
	// Under --root the image's configuration is read; no socket is asked.
	if _, err := Ask(dir, AskOptions{Mode: Socket}); err == nil {
		t.Fatal("socket under --root")
	}
	rooted, _ := Ask(filepath.Join("testdata", "containerd", "v2-systemd"), AskOptions{})
	if a, err := rooted("unix:///run/containerd/containerd.sock"); err != nil || a.Driver != Systemd {
		t.Fatalf("root: %v %v", a, err)
	}
	if _, err := rooted("unix:///var/run/crio/crio.sock"); err == nil || !strings.Contains(err.Error(), "not containerd") {
		t.Fatalf("crio: %v", err)
	}
	none, _ := Ask(dir, AskOptions{Mode: None})
	if a, err := none("unix:///x"); a != nil || err != nil {
		t.Fatal("none")
	}
}
