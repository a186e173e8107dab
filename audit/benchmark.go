package audit

import (
	"fmt"
	"io/fs"
	"strings"

	"github.com/kubeletcfg/kubeletcfg/schema"
)

// benchmark is one profile the audit judges against: a version of the CIS
// Kubernetes Benchmark as far as the kubelet's checks differ between
// versions (the wording and the tests follow kube-bench's
// cfg/cis-*/node.yaml), or the DISA Kubernetes STIG (its kubelet rules, as
// their check text words them).
type benchmark struct {
	name string
	// section is the section of its checks: SectionCIS or SectionSTIG.
	section string
	since   string // first kubelet minor it covers; "" for none we support
	until   string // first kubelet minor it no longer covers; "" if the newest
	// covers names the kubelets it was written for, as kube-bench maps them
	// (docs/platforms.md); last is the newest of them.
	covers, last string
	// caMode is the most 4.1.7 allows on the client CA file.
	caMode fs.FileMode
	// ciphers are the cipher suites 4.2.12 accepts.
	ciphers []string
}

var strongCiphersRSA = []string{
	"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
	"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305", "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
	"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305", "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
	"TLS_RSA_WITH_AES_256_GCM_SHA384", "TLS_RSA_WITH_AES_128_GCM_SHA256",
}

// strongCiphers drops the two RSA key-exchange suites (no forward secrecy).
var strongCiphers = strongCiphersRSA[:6]

// benchmarks lists the profiles modelled: the CIS versions oldest first
// (auto picks among them by kubelet version, the newest for kubelets newer
// than any, with a note), then the STIG, which auto never picks.
var benchmarks = []*benchmark{
	{name: "cis-1.9", section: SectionCIS, covers: "1.27", last: "1.27", caMode: 0o600, ciphers: strongCiphersRSA},
	{name: "cis-1.10", section: SectionCIS, since: "1.28", until: "1.29", covers: "1.28", last: "1.28", caMode: 0o600, ciphers: strongCiphersRSA},
	{name: "cis-1.11", section: SectionCIS, since: "1.29", until: "1.32", covers: "1.29-1.31", last: "1.31", caMode: 0o644, ciphers: strongCiphersRSA},
	{name: "cis-1.12", section: SectionCIS, since: "1.32", until: "1.34", covers: "1.32-1.33", last: "1.33", caMode: 0o644, ciphers: strongCiphers},
	{name: "cis-2.0", section: SectionCIS, since: "1.34", covers: "1.34-1.35", last: "1.35", caMode: 0o644, ciphers: strongCiphers},
	{name: benchmarkSTIG, section: SectionSTIG, caMode: 0o644},
}

// pickBenchmark returns the benchmark named, or for "auto" (or "") the one
// for kubelet v, with a note when v is newer than any benchmark modelled.
func pickBenchmark(name string, v *schema.Version) (*benchmark, string, error) {
	if name != "" && name != "auto" {
		var names []string
		for _, b := range benchmarks {
			if b.name == name {
				return b, "", nil
			}
			names = append(names, b.name)
		}
		return nil, "", fmt.Errorf("--benchmark %q: not one of auto, %s", name, strings.Join(names, ", "))
	}
	for _, b := range benchmarks {
		if b.since != "" && v.AtLeast(b.since) && (b.until == "" || !v.AtLeast(b.until)) {
			note := ""
			if v.AtLeast(b.last) && v.Minor != b.last {
				note = fmt.Sprintf("%s was written for kubelets %s; it is the newest benchmark modelled, used for kubelet %s", b.name, b.covers, v.Minor)
			}
			return b, note, nil
		}
	}
	return nil, "", fmt.Errorf("no CIS benchmark modelled for kubelet %s", v.Minor)
}

// Benchmarks lists the benchmark names --benchmark accepts.
func Benchmarks() []string {
	out := []string{"auto"}
	for _, b := range benchmarks {
		out = append(out, b.name)
	}
	return out
}
