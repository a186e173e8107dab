package criruntime

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The live query speaks gRPC's wire format (HTTP/2 without TLS, each
// message a 5-byte prefix and its protobuf bytes, the status in trailers)
// on net/http, which the binary carries anyway, and decodes the two small
// replies it needs by hand. google.golang.org/grpc with k8s.io/cri-api
// would add 13 MB to the binary for two calls (measured: README).

// QueryOptions bound a query of a live runtime.
type QueryOptions struct {
	// Timeout bounds the whole query: connecting, both calls, reading
	// (5 s when zero).
	Timeout time.Duration
	// MaxReply bounds each reply, headers apart (64 KiB when zero); a
	// RuntimeConfig reply is a few bytes.
	MaxReply int64
}

const (
	defaultQueryTimeout = 5 * time.Second
	defaultMaxReply     = 64 << 10
	maxReplyHeaders     = 16 << 10
)

// grpc status codes the answer depends on.
const grpcUnimplemented = 12

// grpcStatus is a call that the runtime answered with a non-OK status.
type grpcStatus struct {
	Code    int
	Message string
}

func (s *grpcStatus) Error() string {
	return fmt.Sprintf("rpc error: code = %s desc = %s", grpcCodeName(s.Code), s.Message)
}

func grpcCodeName(c int) string {
	names := []string{"OK", "Canceled", "Unknown", "InvalidArgument", "DeadlineExceeded", "NotFound", "AlreadyExists",
		"PermissionDenied", "ResourceExhausted", "FailedPrecondition", "Aborted", "OutOfRange", "Unimplemented",
		"Internal", "Unavailable", "DataLoss", "Unauthenticated"}
	if c >= 0 && c < len(names) {
		return names[c]
	}
	return "Code(" + strconv.Itoa(c) + ")"
}

// SocketPath is the path of a CRI endpoint as the kubelet reads it: a
// unix:// URL, or a bare path (deprecated); other schemes are refused, as
// the kubelet on Linux refuses them.
func SocketPath(endpoint string) (string, error) {
	u, err := url.Parse(endpoint)
	if err == nil && u.Scheme == "" {
		u, err = url.Parse("unix://" + endpoint)
	}
	if err != nil {
		return "", fmt.Errorf("container runtime endpoint %q: %v", endpoint, err)
	}
	switch u.Scheme {
	case "unix":
		if u.Path == "" {
			return "", fmt.Errorf("container runtime endpoint %q names no socket path", endpoint)
		}
		return u.Path, nil
	case "tcp":
		return "", fmt.Errorf("container runtime endpoint %q: only support unix socket endpoint (the kubelet's words)", endpoint)
	default:
		return "", fmt.Errorf("container runtime endpoint %q: protocol %q not supported", endpoint, u.Scheme)
	}
}

// Query asks the runtime at endpoint (the kubelet's
// containerRuntimeEndpoint) what the kubelet asks it at start-up: its
// Version, then RuntimeConfig. The error is a runtime that could not be
// asked — not there, silent past the timeout, not speaking gRPC, or
// replying what cannot be read — never a guess; an Answer says what the
// runtime answered, including that it does not implement RuntimeConfig
// (Unsupported) or answers what makes the kubelet exit (Fatal).
func Query(ctx context.Context, endpoint string, o QueryOptions) (*Answer, error) {
	sock, err := SocketPath(endpoint)
	if err != nil {
		return nil, err
	}
	if o.Timeout <= 0 {
		o.Timeout = defaultQueryTimeout
	}
	if o.MaxReply <= 0 {
		o.MaxReply = defaultMaxReply
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	c := newCRIClient(sock, o)
	defer c.close()
	a := &Answer{Source: "CRI " + endpoint, Live: true}

	// The kubelet checks the runtime's Version first and exits when the
	// runtime serves no CRI v1.
	reply, err := c.call(ctx, "/runtime.v1.RuntimeService/Version", protoString(1, "v1"))
	var st *grpcStatus
	switch {
	case errors.As(err, &st):
		a.Fatal = fmt.Sprintf("the runtime does not answer the CRI v1 Version call (%v): the kubelet exits at start", st)
		return a, nil
	case err != nil:
		return nil, c.explain(endpoint, err, o)
	}
	ver, err := decodeVersion(reply)
	if err != nil {
		return nil, fmt.Errorf("%s: the runtime's Version reply: %v", endpoint, err)
	}
	a.Runtime = strings.TrimSpace(ver.name + " " + ver.version)

	reply, err = c.call(ctx, "/runtime.v1.RuntimeService/RuntimeConfig", nil)
	switch {
	case errors.As(err, &st) && st.Code == grpcUnimplemented:
		a.Unsupported = true
		a.Why = "the runtime does not implement RuntimeConfig (" + st.Message + ")"
		return a, nil
	case errors.As(err, &st):
		a.ConfigFatal = fmt.Sprintf("RuntimeConfig fails (%v): the kubelet asks 3 times, 2 s apart, then exits", st)
		return a, nil
	case err != nil:
		return nil, c.explain(endpoint, err, o)
	}
	driver, present, err := decodeRuntimeConfig(reply)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s: the runtime's RuntimeConfig reply: %v", endpoint, err)
	case !present:
		a.Why = "RuntimeConfig answers no Linux configuration"
	case driver == 0:
		a.Driver, a.Why = Systemd, "RuntimeConfig answers cgroup driver SYSTEMD"
	case driver == 1:
		a.Driver, a.Why = Cgroupfs, "RuntimeConfig answers cgroup driver CGROUPFS"
	default:
		a.ConfigFatal = fmt.Sprintf("runtime returned an unknown cgroup driver %d (the kubelet's words): it exits at start", int32(driver))
	}
	return a, nil
}

type criClient struct {
	tr   *http.Transport
	hc   *http.Client
	sock string
	max  int64
}

func newCRIClient(sock string, o QueryOptions) *criClient {
	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		},
		Protocols:              &protocols,
		MaxResponseHeaderBytes: maxReplyHeaders,
		DisableCompression:     true,
		HTTP2:                  &http.HTTP2Config{MaxReceiveBufferPerStream: int(o.MaxReply) + 5},
	}
	return &criClient{tr: tr, hc: &http.Client{Transport: tr}, sock: sock, max: o.MaxReply}
}

func (c *criClient) close() { c.tr.CloseIdleConnections() }

// explain turns a failed call into what the reader can act on.
func (c *criClient) explain(endpoint string, err error, o QueryOptions) error {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s: no answer within %s: the runtime is hung or not a CRI server", endpoint, o.Timeout)
	case isDial(err):
		return fmt.Errorf("%s: cannot connect to %s: %w", endpoint, c.sock, unwrapDial(err))
	}
	return fmt.Errorf("%s: %v", endpoint, err)
}

func isDial(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

func unwrapDial(err error) error {
	var op *net.OpError
	if errors.As(err, &op) {
		return op.Err
	}
	return err
}

// call makes one unary gRPC call and returns the reply's message bytes.
func (c *criClient) call(ctx context.Context, method string, msg []byte) ([]byte, error) {
	body := make([]byte, 5+len(msg))
	binary.BigEndian.PutUint32(body[1:5], uint32(len(msg)))
	copy(body[5:], msg)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://localhost"+method, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("TE", "trailers")
	req.Header.Set("User-Agent", "kubeletcfg")
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("not a gRPC reply: HTTP status %d", resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/grpc") {
		return nil, fmt.Errorf("not a gRPC reply: content type %q", truncate(ct))
	}
	// A trailers-only reply carries its status in the headers.
	if s := resp.Header.Get("Grpc-Status"); s != "" {
		return nil, statusOf(s, resp.Header.Get("Grpc-Message"))
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, c.max+6))
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("reading the reply: %v", err)
	}
	if int64(len(data)) > c.max+5 {
		return nil, fmt.Errorf("the reply is larger than %d bytes (kubeletcfg's limit)", c.max)
	}
	s := resp.Trailer.Get("Grpc-Status")
	if s == "" {
		return nil, errors.New("the reply ends without a gRPC status")
	}
	if st := statusOf(s, resp.Trailer.Get("Grpc-Message")); st != nil {
		return nil, st
	}
	if len(data) < 5 {
		return nil, fmt.Errorf("the reply holds %d bytes, not a gRPC message", len(data))
	}
	if data[0] != 0 {
		return nil, errors.New("the reply is compressed, which was not asked for")
	}
	n := binary.BigEndian.Uint32(data[1:5])
	if int64(n) != int64(len(data)-5) {
		return nil, fmt.Errorf("the reply's message says %d bytes and holds %d", n, len(data)-5)
	}
	return data[5:], nil
}

// statusOf reads a grpc-status value; nil for OK.
func statusOf(code, msg string) error {
	n, err := strconv.Atoi(code)
	if err != nil {
		return fmt.Errorf("the reply's gRPC status %q is not a number", truncate(code))
	}
	if n == 0 {
		return nil
	}
	if m, err := url.PathUnescape(msg); err == nil {
		msg = m
	}
	return &grpcStatus{Code: n, Message: truncate(msg)}
}

func truncate(s string) string {
	const max = 200
	if len(s) > max {
		return s[:max] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}

// protoString encodes a message holding one string field.
func protoString(field int, s string) []byte {
	b := binary.AppendUvarint(nil, uint64(field<<3|2))
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// protoField is one field of a protobuf message: a varint or bytes.
type protoField struct {
	num    int
	wire   int // 0 varint, 2 bytes
	varint uint64
	bytes  []byte
}

// protoFields splits a message into its fields; fixed-size fields are
// skipped, groups and truncated fields are an error.
func protoFields(b []byte) ([]protoField, error) {
	var out []protoField
	for len(b) > 0 {
		key, n := binary.Uvarint(b)
		if n <= 0 {
			return nil, errors.New("malformed protobuf (field key)")
		}
		b = b[n:]
		f := protoField{num: int(key >> 3), wire: int(key & 7)}
		if f.num == 0 {
			return nil, errors.New("malformed protobuf (field 0)")
		}
		switch key & 7 {
		case 0:
			if f.varint, n = binary.Uvarint(b); n <= 0 {
				return nil, errors.New("malformed protobuf (varint)")
			}
			b = b[n:]
		case 1:
			if len(b) < 8 {
				return nil, errors.New("malformed protobuf (fixed64)")
			}
			b = b[8:]
			continue
		case 2:
			l, n := binary.Uvarint(b)
			if n <= 0 || l > uint64(len(b)-n) {
				return nil, errors.New("malformed protobuf (length)")
			}
			f.bytes, b = b[n:n+int(l)], b[n+int(l):]
		case 5:
			if len(b) < 4 {
				return nil, errors.New("malformed protobuf (fixed32)")
			}
			b = b[4:]
			continue
		default:
			return nil, fmt.Errorf("malformed protobuf (wire type %d)", key&7)
		}
		out = append(out, f)
	}
	return out, nil
}

type version struct{ name, version string }

// decodeVersion reads a VersionResponse: runtime_name (2), runtime_version (3).
func decodeVersion(b []byte) (version, error) {
	fs, err := protoFields(b)
	var v version
	for _, f := range fs {
		switch f.num {
		case 2:
			v.name = truncate(string(f.bytes))
		case 3:
			v.version = truncate(string(f.bytes))
		}
	}
	return v, err
}

// decodeRuntimeConfig reads a RuntimeConfigResponse: linux (1), a
// LinuxRuntimeConfiguration whose cgroup_driver (1) is SYSTEMD (0) when
// absent. present is false without a linux field: the kubelet then keeps
// its own driver. The last occurrence of a field wins, as in protobuf.
func decodeRuntimeConfig(b []byte) (driver uint64, present bool, err error) {
	fs, err := protoFields(b)
	if err != nil {
		return 0, false, err
	}
	var linux []byte
	for _, f := range fs {
		if f.num == 1 {
			if f.wire != 2 {
				return 0, false, errors.New("malformed protobuf (linux is not a message)")
			}
			linux, present = append(linux, f.bytes...), true // repeated message fields merge
		}
	}
	if !present {
		return 0, false, nil
	}
	inner, err := protoFields(linux)
	if err != nil {
		return 0, false, err
	}
	for _, f := range inner {
		if f.num == 1 {
			if f.wire != 0 {
				return 0, false, errors.New("malformed protobuf (cgroup_driver is not a number)")
			}
			driver = f.varint
		}
	}
	return driver, true, nil
}
