package node

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
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
	tlsCfg := &tls.Config{InsecureSkipVerify: l.Insecure} //nolint:gosec // only on request, for self-signed kubelets
	if l.CA != "" {
		pem, err := os.ReadFile(l.CA)
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
	timeout := l.Timeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	client := &http.Client{Timeout: timeout, Transport: &http.Transport{TLSClientConfig: tlsCfg}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, l.URL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", l.URL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s: %s", l.URL, resp.Status, body)
	}
	var wrapped struct {
		KubeletConfig json.RawMessage `json:"kubeletconfig"`
	}
	if err := json.Unmarshal(body, &wrapped); err != nil || len(wrapped.KubeletConfig) == 0 {
		return nil, fmt.Errorf("GET %s: not a configz answer: %.200s", l.URL, body)
	}
	return wrapped.KubeletConfig, nil
}
