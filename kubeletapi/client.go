// Package kubeletapi reads a kubelet's HTTPS API: /configz (the running
// configuration), /flagz (the command line), /statusz (start time, binary
// version) and /healthz. It reaches the kubelet one of two ways:
//
//   - Direct: on the kubelet's own port, at the address its Node reports,
//     with the kubeconfig's credentials, the serving certificate verified
//     against the cluster CA (or --kubelet-ca), or, named per node, not
//     verified. The kubelet authorizes each path as its own subresource of
//     nodes (nodes/configz, nodes/healthz, nodes/statusz) where
//     KubeletFineGrainedAuthz is on (beta 1.33, GA 1.36); older kubelets ask
//     for nodes/proxy even here.
//   - Proxy: through the API server's node proxy, which needs get
//     nodes/proxy: a permission as strong as exec into every container of
//     the node (the proxy reaches every kubelet endpoint, /exec and /run
//     included).
//
// Every answer is bounded in size and checked; every failure is an *Error
// naming the node, the path, the way, the reason and the permission.
package kubeletapi

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"unicode"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kubeletcfg/kubeletcfg/nodefile"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

// Via is the way to the kubelets.
type Via string

const (
	Direct Via = "direct"
	Proxy  Via = "proxy"
)

// Options say how to reach the kubelets.
type Options struct {
	Via Via
	// KubeletCA is a PEM file of the CA that signs the kubelets' serving
	// certificates, for the direct way; "" means the kubeconfig's cluster
	// CA (the signer of serverTLSBootstrap's certificates).
	KubeletCA string
	// Insecure names the nodes whose serving certificate is read without
	// being verified (self-signed kubelets), on the direct way.
	Insecure []string
}

// Client reads kubelets one way. It is safe for concurrent use.
type Client struct {
	via Via
	// client verifies serving certificates (direct) or talks to the API
	// server (proxy); unverified reads the kubelets named in insecure.
	client, unverified *http.Client
	insecure           map[string]bool
	// base is the API server's URL (proxy), or the one kubelet's (NewLocal).
	base *url.URL
	// ca says where the CA comes from; noCA that there is none.
	ca   string
	noCA bool
	// insecureAll: the one kubelet of NewLocal, read unverified.
	insecureAll bool
	// conns are the direct way's connections (see Begin).
	conns *conns
}

// New makes a Client with the credentials of cfg (a kubeconfig's).
func New(cfg *rest.Config, o Options) (*Client, error) {
	switch o.Via {
	case Proxy, "":
		if o.KubeletCA != "" || len(o.Insecure) > 0 {
			return nil, fmt.Errorf("--kubelet-ca and --kubelet-insecure-skip-tls-verify are for reading kubelets directly (--direct): through the node proxy the API server verifies them")
		}
		return newProxy(cfg)
	case Direct:
		return newDirect(cfg, o)
	}
	return nil, fmt.Errorf("kubelet access %q: direct or proxy", o.Via)
}

func newProxy(cfg *rest.Config) (*Client, error) {
	host := cfg.Host
	if !strings.Contains(host, "://") {
		host = "https://" + host
	}
	base, err := url.Parse(host)
	if err != nil {
		return nil, fmt.Errorf("server %q: %w", cfg.Host, err)
	}
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig credentials: %w", err)
	}
	return &Client{via: Proxy, client: client, base: base}, nil
}

func newDirect(cfg *rest.Config, o Options) (*Client, error) {
	c := &Client{via: Direct, insecure: map[string]bool{}}
	for _, n := range o.Insecure {
		if n = strings.TrimSpace(n); n != "" {
			c.insecure[n] = true
		}
	}
	verified := rest.CopyConfig(cfg)
	// The API server's TLS settings are not the kubelets'. HTTP/1.1: one
	// connection a kubelet either way, and net/http keeps an HTTP/2
	// connection's entry per host (its TLS state, about the size of the
	// certificates) for the client's life: memory per kubelet read.
	verified.Insecure, verified.ServerName, verified.NextProtos = false, "", []string{"http/1.1"}
	switch {
	case o.KubeletCA != "":
		pem, err := nodefile.ReadFile(o.KubeletCA, nodefile.PEM)
		if err != nil {
			return nil, fmt.Errorf("--kubelet-ca: %w", err)
		}
		if !x509.NewCertPool().AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--kubelet-ca %s: no certificate in it", o.KubeletCA)
		}
		verified.CAData, verified.CAFile = pem, ""
		c.ca = "--kubelet-ca " + o.KubeletCA
	case len(cfg.CAData) > 0 || cfg.CAFile != "":
		c.ca = "the kubeconfig's cluster CA"
	default:
		c.noCA = true
		verified.CAData, verified.CAFile = nil, ""
	}
	c.conns = newConns()
	verified.Dial = c.conns.dial
	var err error
	if c.client, err = rest.HTTPClientFor(verified); err != nil {
		return nil, fmt.Errorf("kubeconfig credentials: %w", err)
	}
	unverified := rest.CopyConfig(verified)
	unverified.Insecure, unverified.CAData, unverified.CAFile = true, nil, ""
	if c.unverified, err = rest.HTTPClientFor(unverified); err != nil {
		return nil, fmt.Errorf("kubeconfig credentials: %w", err)
	}
	return c, nil
}

// NewLocal makes a Client for one kubelet at a fixed base URL (the node's
// own, https://127.0.0.1:10250), with a client certificate it accepts (or
// none), its serving certificate verified against caFile, or not at all
// with insecure (given by the operator for this one kubelet).
func NewLocal(base, clientCert, clientKey, caFile string, insecure bool) (*Client, error) {
	u, err := url.Parse(base)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("kubelet URL %q: want https://HOST:PORT", base)
	}
	cfg := &rest.Config{Host: base, TLSClientConfig: rest.TLSClientConfig{CertFile: clientCert, KeyFile: clientKey}}
	o := Options{Via: Direct, KubeletCA: caFile}
	c, err := newDirect(cfg, o)
	if err != nil {
		return nil, err
	}
	c.base = u
	if insecure {
		c.client, c.insecureAll = c.unverified, true
	}
	if caFile == "" && !insecure {
		c.noCA = false // this machine's roots, as any HTTPS client
		c.ca = "this machine's CAs"
		sys := rest.CopyConfig(cfg)
		if c.client, err = rest.HTTPClientFor(sys); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// HTTP is the client's HTTP client for node's kubelet, with its
// credentials (for another path of its API: the health watch's /healthz).
func (c *Client) HTTP(node string) *http.Client {
	if c.insecureAll || c.insecure[node] {
		return c.unverified
	}
	return c.client
}

// Via says the client's way.
func (c *Client) Via() Via { return c.via }

// Verified says how node n's serving certificate is checked, on the
// direct way: against the CA and where it comes from, or not at all.
func (c *Client) Verified(node string) string {
	switch {
	case c.via == Proxy:
		return "by the API server (node proxy)"
	case c.insecureAll:
		return "not verified (--insecure)"
	case c.insecure[node]:
		return "not verified (--kubelet-insecure-skip-tls-verify " + node + ")"
	}
	return "verified against " + c.ca
}

// Node is a kubelet to read, as its Node object reports it.
type Node struct {
	Name string
	// Version is the kubelet's version; nil when kubeletcfg does not
	// support it (Reported says what it reported).
	Version  *schema.Version
	Reported string
	// Gates are the kubelet's feature gates when known (its /configz); nil
	// means its version's defaults.
	Gates map[string]bool
	// Address and Port are where the kubelet listens (direct way).
	Address string
	Port    int32
}

func (n Node) hostPort() string {
	port := n.Port
	if port == 0 {
		port = 10250
	}
	return net.JoinHostPort(n.Address, strconv.Itoa(int(port)))
}

// URL is where a path of node n's kubelet is read.
func (c *Client) URL(n Node, path string) string {
	if c.via == Proxy {
		u := *c.base
		prefix, rawPrefix := strings.TrimSuffix(u.Path, "/"), strings.TrimSuffix(u.EscapedPath(), "/")
		u.Path = prefix + "/api/v1/nodes/" + n.Name + "/proxy" + path
		u.RawPath = rawPrefix + "/api/v1/nodes/" + url.PathEscape(n.Name) + "/proxy" + path
		return u.String()
	}
	if c.base != nil { // NewLocal's kubelet
		return strings.TrimSuffix(c.base.String(), "/") + path
	}
	return "https://" + n.hostPort() + path
}

// Access says what reading path from node n needs, the client's way.
func (c *Client) Access(n Node, path string) Access {
	if c.via == Proxy {
		return Access{Needs: "get nodes/proxy", Note: "through the API server's node proxy: nodes/proxy is as much as exec in every container of the node"}
	}
	if n.Version == nil {
		return Access{Needs: "unknown", Note: fmt.Sprintf("kubelet %q: a version kubeletcfg does not know", n.Reported)}
	}
	a, err := n.Version.KubeletPathAccess(path, n.Gates)
	if err != nil {
		return Access{Needs: "unknown", Note: err.Error()}
	}
	out := Access{Needs: a.Needs(), Served: a.Served, NotServed: a.NotServed}
	if a.OnlyProxy() {
		out.Note = fmt.Sprintf("kubelet %s authorizes %s as nodes/proxy only (%s): reading it directly needs nodes/proxy on this node, as much as exec in its containers", n.Version.Minor, path, a.Why)
	}
	return out
}

// Access is what reading one path of one kubelet needs.
type Access struct {
	Needs string // "get nodes/configz (or nodes/proxy)"
	Note  string
	// Served says the kubelet's version and gates serve the path (direct
	// way; the proxy reaches the same kubelet).
	Served    bool
	NotServed string
}

// maxRefusal is how much of a refusal's body is read.
const maxRefusal = 64 << 10

// answer is a 200 OK.
type answer struct {
	body        []byte
	contentType string
	url         string
}

// get reads a path, at most limit bytes of answer.
func (c *Client) get(ctx context.Context, n Node, path, accept string, limit int64) (*answer, error) {
	u := c.URL(n, path)
	fail := func(reason Reason, status int, msg string, err error) *Error {
		e := &Error{Node: n.Name, Path: path, Via: c.via, URL: u, Reason: reason, Status: status, Message: msg, Err: err}
		if reason == Forbidden || reason == Unauthorized {
			a := c.Access(n, path)
			e.Needs, e.Note = a.Needs, a.Note
		}
		return e
	}
	client := c.client
	if c.via == Direct && c.base == nil {
		if n.Address == "" {
			return nil, fail(NoAddress, 0, "the Node reports no address for its kubelet", nil)
		}
		if c.insecure[n.Name] {
			client = c.unverified
		} else if c.noCA {
			return nil, fail(TLS, 0, fmt.Sprintf("nothing to verify the kubelet's serving certificate with: the kubeconfig has no cluster CA; give --kubelet-ca FILE, or --kubelet-insecure-skip-tls-verify %s to read it unverified", n.Name), nil)
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fail(Failed, 0, err.Error(), err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := client.Do(req)
	if err != nil {
		reason, msg := c.classify(ctx, n, err)
		return nil, fail(reason, 0, msg, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		// A refusal's body says why; its first bytes are enough.
		body, _ := io.ReadAll(io.LimitReader(resp.Body, maxRefusal))
		reason, msg := c.refusal(n, path, resp.StatusCode, resp.Status, body)
		return nil, fail(reason, resp.StatusCode, msg, nil)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		reason, msg := c.classify(ctx, n, err)
		return nil, fail(reason, resp.StatusCode, "reading the answer: "+msg, err)
	}
	if int64(len(body)) > limit {
		return nil, fail(TooLarge, resp.StatusCode, fmt.Sprintf("the answer is larger than %d bytes", limit), nil)
	}
	if c.via == Direct && resp.TLS != nil && len(resp.TLS.PeerCertificates) > 0 {
		// A certificate the cluster signed names its node: a kubelet
		// answering at another node's address is not that node.
		cn := resp.TLS.PeerCertificates[0].Subject.CommonName
		if other, ok := strings.CutPrefix(cn, "system:node:"); ok && n.Name != "" && other != n.Name {
			return nil, fail(OtherNode, resp.StatusCode, fmt.Sprintf("the serving certificate at %s is node %q's (%s)", n.hostPort(), other, cn), nil)
		}
	}
	return &answer{body: body, contentType: resp.Header.Get("Content-Type"), url: u}, nil
}

// classify says why a request got no answer.
func (c *Client) classify(ctx context.Context, n Node, err error) (Reason, string) {
	var ue x509.UnknownAuthorityError
	var he x509.HostnameError
	var ce x509.CertificateInvalidError
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return Timeout, "no answer in time"
	case ctx.Err() != nil:
		return Failed, ctx.Err().Error()
	case errors.As(err, &ue):
		msg := "the serving certificate is not signed by " + c.ca
		if selfSigned(ue.Cert) {
			msg = selfSignedMsg(ue.Cert)
		}
		return TLS, msg + c.choices(n)
	case errors.As(err, &he):
		// Go checks the name before the signer: a self-signed kubelet
		// certificate names no address.
		msg := fmt.Sprintf("the serving certificate is not valid for %s (%v)", n.Address, he)
		if selfSigned(he.Certificate) {
			msg = selfSignedMsg(he.Certificate) + ", and names no address " + n.Address
		}
		return TLS, msg + c.choices(n)
	case errors.As(err, &ce):
		return TLS, "the serving certificate: " + ce.Error()
	case errors.Is(err, syscall.ECONNREFUSED):
		return Refused, "connection refused at " + n.hostPort()
	case errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH):
		return Unreachable, err.Error()
	}
	lower := strings.ToLower(err.Error())
	if tlsTrouble(lower) {
		return TLS, err.Error()
	}
	return Failed, err.Error()
}

// selfSigned says a certificate signs itself, or is one the kubelet makes
// at start without a serving certificate (client-go's
// GenerateSelfSignedCertKey: HOST@TIME signed by its own HOST-ca@TIME).
func selfSigned(cert *x509.Certificate) bool {
	if cert == nil {
		return false
	}
	if bytes.Equal(cert.RawIssuer, cert.RawSubject) {
		return true
	}
	// The two times are read apart: a second may pass between them.
	host, _, ok := strings.Cut(cert.Subject.CommonName, "@")
	return ok && strings.HasPrefix(cert.Issuer.CommonName, host+"-ca@")
}

func selfSignedMsg(cert *x509.Certificate) string {
	return fmt.Sprintf("the serving certificate is self-signed (%q: the kubelet makes its own unless serverTLSBootstrap is on and its CSR approved)", cert.Subject.CommonName)
}

// choices says what verifies, or skips verifying, node n's certificate.
func (c *Client) choices(n Node) string {
	if c.base != nil {
		return "; give --kubelet-ca FILE with its signer, or --insecure to read it unverified"
	}
	return fmt.Sprintf("; give --kubelet-ca FILE with its signer, or --kubelet-insecure-skip-tls-verify %s to read it unverified", n.Name)
}

// refusal says why the kubelet or the API server answered other than 200.
func (c *Client) refusal(n Node, path string, code int, status string, body []byte) (Reason, string) {
	msg := snippet(body)
	var st metav1.Status
	if json.Unmarshal(body, &st) == nil && st.Kind == "Status" && st.Message != "" {
		msg = snippet([]byte(st.Message))
	}
	msg = status + ": " + msg
	switch code {
	case http.StatusUnauthorized:
		if c.via == Direct {
			msg += " (the kubelet authenticates client certificates signed by its clientCAFile and, with authentication.webhook, bearer tokens through the API server)"
		}
		return Unauthorized, msg
	case http.StatusForbidden:
		return Forbidden, msg
	case http.StatusNotFound:
		if c.via == Proxy && st.Kind == "Status" && st.Details != nil && st.Details.Kind == "nodes" {
			return NotFound, msg
		}
		if a := c.Access(n, path); a.NotServed != "" {
			return NotServed, msg + " (" + a.NotServed + ")"
		}
		for _, p := range schema.KubeletPaths {
			if p.Path == path && p.Gate != "" {
				msg += fmt.Sprintf(" (the kubelet serves %s only with %s on: off on this node?)", path, p.Gate)
			}
		}
		return NotServed, msg
	case http.StatusNotAcceptable:
		return BadAnswer, msg
	}
	if c.via == Proxy && code >= 500 {
		lower := strings.ToLower(msg)
		switch {
		case strings.Contains(lower, "connection refused"):
			return Refused, msg
		case tlsTrouble(lower):
			return TLS, msg
		case strings.Contains(lower, "no route to host") || strings.Contains(lower, "network is unreachable") || strings.Contains(lower, "i/o timeout"):
			// the API server's dial timed out: no way to the kubelet
			return Unreachable, msg
		case strings.Contains(lower, "timeout") || strings.Contains(lower, "deadline exceeded") || code == http.StatusGatewayTimeout:
			return Timeout, msg
		}
		return ProxyError, msg
	}
	return Failed, msg
}

// tlsTrouble says an error message is about TLS: a certificate, the
// handshake, or plain HTTP where HTTPS was spoken.
func tlsTrouble(lower string) bool {
	for _, s := range []string{"x509", "tls:", "certificate", "https client", "http response to https"} {
		if strings.Contains(lower, s) {
			return true
		}
	}
	return false
}

// snippet is at most 512 bytes of an answer, the node's word: control
// characters and invalid bytes escaped (\x1b), the rest counted.
func snippet(b []byte) string {
	const max = 512
	s := strings.TrimSpace(string(b))
	var out strings.Builder
	i := 0
	for i < len(s) && out.Len() < max {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&out, `\x%02x`, s[i])
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&out, `\x%02x`, r)
		case unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || r == 0x2028 || r == 0x2029:
			fmt.Fprintf(&out, `\u%04x`, r)
		default:
			out.WriteString(s[i : i+size])
		}
		i += size
	}
	if i < len(s) {
		fmt.Fprintf(&out, "... (%d more bytes)", len(s)-i)
	}
	return out.String()
}

// Reason is why a read failed.
type Reason string

const (
	Timeout      Reason = "timeout"
	Refused      Reason = "refused"
	Unreachable  Reason = "unreachable"
	TLS          Reason = "tls"
	Forbidden    Reason = "forbidden"
	Unauthorized Reason = "unauthorized"
	NotFound     Reason = "not-found"  // no such Node (proxy)
	NotServed    Reason = "not-served" // the kubelet does not serve the path
	ProxyError   Reason = "proxy-error"
	BadAnswer    Reason = "bad-answer"
	TooLarge     Reason = "too-large"
	OtherNode    Reason = "other-node" // the answer is another node's
	NoAddress    Reason = "no-address"
	Failed       Reason = "error"
)

// Error is a read that failed.
type Error struct {
	Node   string
	Path   string
	Via    Via
	URL    string
	Reason Reason
	Status int // the HTTP status, 0 without an answer
	// Message says what happened; Needs, for a refusal, the permission
	// the path needs on this node that way, and Note why.
	Message string
	Needs   string
	Note    string
	Err     error
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("node %s: GET %s (%s, %s): %s: %s", e.Node, e.Path, e.Via, e.URL, e.Reason, e.Message)
	if e.Needs != "" {
		msg += "; needs " + e.Needs
	}
	if e.Note != "" {
		msg += "; " + e.Note
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// Transient says a second attempt may succeed.
func (e *Error) Transient() bool {
	switch e.Reason {
	case Timeout, Refused, Unreachable, ProxyError, Failed:
		return true
	}
	return false
}
