package kubeletapi

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kubeletcfg/kubeletcfg/schema"
)

// The real kubelet's /flagz against the command line it was started with is
// no difference; against other command lines, each difference named with
// where the flag was written.
func TestCompareCommandLine(t *testing.T) {
	f, err := parseFlagzJSON(fixture(t, "flagz-1.37.json"))
	if err != nil {
		t.Fatal(err)
	}
	v, _ := schema.Resolve("1.37")
	started := []string{"--config=/tmp/fz/run/config.yaml", "--config-dir=/tmp/fz/run/conf.d", "--root-dir=/tmp/fz/run/root", "--cert-dir=/tmp/fz/run/pki",
		"--hostname-override=fixture-node", "--node-labels=team=a", "--v=2", "--max-pods=44"}
	diffs, classified, err := CompareCommandLine(v, started, nil, f)
	if err != nil || len(diffs) != 0 || len(classified) != 0 {
		t.Fatalf("the kubelet's own command line: %+v %v %v", diffs, classified, err)
	}
	// Written otherwise, meaning the same: defaults given, units, order.
	same := append(append([]string{}, started...), "--anonymous-auth", "--authentication-token-webhook-cache-ttl=120s", "--max-pods", "44",
		"--eviction-hard=", "--v=02")
	if diffs, _, err := CompareCommandLine(v, same, nil, f); err != nil || len(diffs) != 0 {
		t.Errorf("the same, written otherwise: %+v %v", diffs, err)
	}
	other := []string{"--config=/tmp/fz/run/config.yaml", "--config-dir=/tmp/fz/run/conf.d", "--root-dir=/tmp/fz/run/root", "--cert-dir=/tmp/fz/run/pki",
		"--hostname-override=fixture-node", "--v=2", "--max-pods=50", "--read-only-port=10255"}
	sources := make([]string, len(other))
	for i := range sources {
		sources[i] = fmt.Sprintf("/etc/default/kubelet:%d ($KUBELET_EXTRA_ARGS)", i+1)
	}
	diffs, _, err = CompareCommandLine(v, other, sources, f)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range diffs {
		got = append(got, fmt.Sprintf("%s running=%s given=%s unset=%t from=%s", d.Name, d.Running, d.Given, d.Unset, d.Source))
	}
	// --read-only-port=10255 is its default: /flagz cannot tell it from
	// one not given, and neither does the comparison.
	want := "max-pods running=44 given=50 unset=false from=/etc/default/kubelet:7 ($KUBELET_EXTRA_ARGS)\n" +
		"node-labels running=team=a given= unset=true from="
	if strings.Join(got, "\n") != want {
		t.Errorf("diffs:\n%s\nwant\n%s", strings.Join(got, "\n"), want)
	}
	f.Values["tls-private-key-file"] = Classified
	if _, classified, _ := CompareCommandLine(v, started, nil, f); len(classified) != 1 {
		t.Errorf("classified %v", classified)
	}
	if _, _, err := CompareCommandLine(v, []string{"--no-such-flag"}, nil, f); err == nil {
		t.Error("a command line the kubelet refuses: no error")
	}
}

func TestNormalize(t *testing.T) {
	v, _ := schema.Resolve("1.37")
	for _, tc := range []struct{ flag, a, b string }{
		{"feature-gates", "B=true,A=False", "A=false,B=true"},
		{"allowed-unsafe-sysctls", "[net.core.somaxconn,kernel.msg*]", "net.core.somaxconn, kernel.msg*"},
		{"node-labels", "b=2,a=1", "a=1,b=2"},
		{"streaming-connection-idle-timeout", "4h", "4h0m0s"},
		{"address", "::0", "::"},
		{"eviction-hard", "memory.available<100Mi,nodefs.available<10%", "nodefs.available<10%,memory.available<100Mi"},
	} {
		f, ok := v.Flag(tc.flag)
		if !ok {
			t.Fatalf("no flag %s", tc.flag)
		}
		if Normalize(f, tc.a) != Normalize(f, tc.b) {
			t.Errorf("%s: %q -> %q, %q -> %q", tc.flag, tc.a, Normalize(f, tc.a), tc.b, Normalize(f, tc.b))
		}
	}
}
