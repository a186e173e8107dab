//go:build e2e

package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/kubeletcfg/kubeletcfg/internal/testkit"
)

// testCA is a throwaway certificate authority: the API server trusts client
// certificates it signs, and the clients trust the API server's serving
// certificate it signs.
type testCA struct {
	dir      string
	cert     *x509.Certificate
	key      *ecdsa.PrivateKey
	CertFile string
	serial   int64
}

func newTestCA(t testing.TB, dir string) *testCA {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "kubeletcfg-e2e-ca"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	ca := &testCA{dir: dir, cert: cert, key: key, CertFile: filepath.Join(dir, "ca.crt"), serial: 1}
	write(t, ca.CertFile, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})))
	write(t, filepath.Join(dir, "ca.key"), keyPEM(t, key))
	return ca
}

// issue writes NAME.crt and NAME.key: a client certificate for the user CN
// in the groups orgs, and a serving certificate too when hosts are given.
func (ca *testCA) issue(t testing.TB, name, cn string, orgs []string, hosts ...string) (certFile, keyFile string) {
	t.Helper()
	key := newKey(t)
	ca.serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(ca.serial),
		Subject:      pkix.Name{CommonName: cn, Organization: orgs},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if len(hosts) > 0 {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(ca.dir, name+".crt"), filepath.Join(ca.dir, name+".key")
	write(t, certFile, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})))
	write(t, keyFile, keyPEM(t, key))
	return certFile, keyFile
}

// kubeconfig writes NAME.kubeconfig: the server, this CA, and a client
// certificate for the user CN in the groups orgs.
func (ca *testCA) kubeconfig(t testing.TB, server, name, cn string, orgs ...string) string {
	t.Helper()
	cert, key := ca.issue(t, name, cn, orgs)
	path := filepath.Join(ca.dir, name+".kubeconfig")
	if err := (testkit.Kubeconfig{Server: server, CAFile: ca.CertFile, ClientCert: cert, ClientKey: key}).Write(path); err != nil {
		t.Fatal(err)
	}
	return path
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func keyPEM(t testing.TB, key *ecdsa.PrivateKey) string {
	t.Helper()
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}))
}
