package node

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/kubeletcfg/kubeletcfg/nodefile"
)

// Live says how to reach a running kubelet's /configz.
type Live struct {
	URL        string // e.g. https://127.0.0.1:10250/configz
	ClientCert string // client certificate and key the kubelet accepts, if any
	ClientKey  string
	CA         string // CA of the kubelet's serving certificate; "" with Insecure
	Insecure   bool   // skip verifying the serving certificate (self-signed kubelets)
	Timeout    time.Duration
}

// Configz fetches what the running kubelet serves on /configz: its
// configuration as v1beta1 JSON.
func Configz(ctx context.Context, l Live) ([]byte, error) {
	client, err := l.Client()
	if err != nil {
		return nil, err
	}
	return getConfigz(ctx, client, l.URL)
}

// Client is an HTTPS client with l's credentials for the kubelet's API.
func (l Live) Client() (*http.Client, error) {
	tlsCfg := &tls.Config{InsecureSkipVerify: l.Insecure} //nolint:gosec // only on request, for self-signed kubelets
	if l.CA != "" {
		pem, err := nodefile.ReadFile(l.CA, nodefile.PEM)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s: no certificate in it", l.CA)
		}
		tlsCfg.RootCAs = pool
	}
	if l.ClientCert != "" || l.ClientKey != "" {
		pair, err := tls.LoadX509KeyPair(l.ClientCert, l.ClientKey)
		if err != nil {
			return nil, fmt.Errorf("client certificate: %w", err)
		}
		tlsCfg.Certificates = []tls.Certificate{pair}
	}
	return &http.Client{Timeout: timeoutOr(l.Timeout), Transport: &http.Transport{TLSClientConfig: tlsCfg}}, nil
}

func timeoutOr(t time.Duration) time.Duration {
	if t == 0 {
		return 10 * time.Second
	}
	return t
}

// StatusError is an answer other than 200 OK: from the kubelet, or from the
// API server's node proxy (403 forbidden, 404 no such node, 503 the kubelet
// could not be reached, with the proxy's reason in Body).
type StatusError struct {
	URL    string
	Code   int
	Status string
	Body   string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("GET %s: %s: %s", e.URL, e.Status, e.Body)
}

// getConfigz GETs a /configz answer and returns the configuration in it.
func getConfigz(ctx context.Context, client *http.Client, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &StatusError{URL: url, Code: resp.StatusCode, Status: resp.Status, Body: string(bytes.TrimSpace(body))}
	}
	var wrapped struct {
		KubeletConfig json.RawMessage `json:"kubeletconfig"`
	}
	if err := json.Unmarshal(body, &wrapped); err != nil || len(wrapped.KubeletConfig) == 0 {
		return nil, fmt.Errorf("GET %s: not a configz answer: %.200s", url, body)
	}
	return wrapped.KubeletConfig, nil
}
