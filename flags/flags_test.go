package flags

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/kubelet/config/v1beta1"

	"github.com/kubeletcfg/kubeletcfg/schema"
)

func version(t *testing.T, minor string) *schema.Version {
	t.Helper()
	v, err := schema.Resolve(minor)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func apply(t *testing.T, minor string, cfg *v1beta1.KubeletConfiguration, args ...string) *v1beta1.KubeletConfiguration {
	t.Helper()
	cl, err := Parse(args, version(t, minor))
	if err != nil {
		t.Fatalf("Parse(%q): %v", args, err)
	}
	if _, err := cl.Apply(cfg); err != nil {
		t.Fatalf("Apply(%q): %v", args, err)
	}
	return cfg
}

func TestLastWinsAndSpellings(t *testing.T) {
	cfg := apply(t, "1.37", &v1beta1.KubeletConfiguration{}, "--max-pods=10", "--max_pods", "20", "-v", "4", "--fail-swap-on", "--read-only-port=0x10")
	if cfg.MaxPods != 20 || cfg.Logging.Verbosity != 4 || cfg.FailSwapOn == nil || !*cfg.FailSwapOn || cfg.ReadOnlyPort != 16 {
		t.Errorf("maxPods=%d verbosity=%d failSwapOn=%v readOnlyPort=%d", cfg.MaxPods, cfg.Logging.Verbosity, cfg.FailSwapOn, cfg.ReadOnlyPort)
	}
}

func TestMapFlagsReplaceTheWholeMap(t *testing.T) {
	cfg := &v1beta1.KubeletConfiguration{
		EvictionHard:   map[string]string{"imagefs.available": "15%", "memory.available": "100Mi"},
		SystemReserved: map[string]string{"cpu": "1"},
		FeatureGates:   map[string]bool{"A": true, "B": true},
	}
	apply(t, "1.37", cfg, "--eviction-hard=memory.available<1Gi", "--eviction-hard", "nodefs.available<5%",
		"--system-reserved=memory=1Gi", "--feature-gates=B=false,C=true")
	want := &v1beta1.KubeletConfiguration{
		EvictionHard:   map[string]string{"memory.available": "1Gi", "nodefs.available": "5%"},
		SystemReserved: map[string]string{"memory": "1Gi"},
		FeatureGates:   map[string]bool{"A": true, "B": false, "C": true},
	}
	if diff := cmp.Diff(want, cfg); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestListsAndStructuredFlags(t *testing.T) {
	cfg := apply(t, "1.37", &v1beta1.KubeletConfiguration{ClusterDNS: []string{"1.1.1.1"}},
		"--cluster-dns=10.0.0.10,10.0.0.11", "--cluster-dns=10.0.0.12",
		"--register-with-taints=dedicated=infra:NoSchedule,gpu:NoExecute",
		"--reserved-memory=0:memory=1Gi,hugepages-2Mi=2Gi", "--vmodule=foo*=3", "--address=10.1.2.3")
	if diff := cmp.Diff([]string{"10.0.0.10", "10.0.0.11", "10.0.0.12"}, cfg.ClusterDNS); diff != "" {
		t.Errorf("clusterDNS (-want +got):\n%s", diff)
	}
	if len(cfg.RegisterWithTaints) != 2 || cfg.RegisterWithTaints[0].Key != "dedicated" || cfg.RegisterWithTaints[0].Value != "infra" || cfg.RegisterWithTaints[1].Effect != "NoExecute" {
		t.Errorf("registerWithTaints = %+v", cfg.RegisterWithTaints)
	}
	if len(cfg.ReservedMemory) != 1 || cfg.ReservedMemory[0].Limits.Name("hugepages-2Mi", "").Cmp(resourceMust(t, "2Gi")) != 0 {
		t.Errorf("reservedMemory = %+v", cfg.ReservedMemory)
	}
	if len(cfg.Logging.VModule) != 1 || cfg.Logging.VModule[0].FilePattern != "foo*" || cfg.Logging.VModule[0].Verbosity != 3 {
		t.Errorf("vmodule = %+v", cfg.Logging.VModule)
	}
	if cfg.Address != "10.1.2.3" {
		t.Errorf("address = %q", cfg.Address)
	}
}

func TestRemainingFlags(t *testing.T) {
	cl, err := Parse([]string{"--kubeconfig=/etc/kubernetes/kubelet.conf", "--max-pods=5", "--node-labels=a=b", "--hostname-override", "n1"}, version(t, "1.37"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range cl.Remaining() {
		names = append(names, o.Flag.Name+"="+o.Value)
	}
	if diff := cmp.Diff([]string{"kubeconfig=/etc/kubernetes/kubelet.conf", "node-labels=a=b", "hostname-override=n1"}, names); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if o := cl.Occurrences[3]; o.Index != 3 {
		t.Errorf("hostname-override index = %d, want 3", o.Index)
	}
}

func TestRefusedCommandLines(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"removed long ago", []string{"--network-plugin=cni"}, `"--network-plugin": kubelet 1.37 has no such flag`},
		{"stray word", []string{"--register-node", "true"}, `--register-node is a boolean flag: write --register-node=true`},
		{"em dash", []string{"\u2014max-pods=10"}, "U+2014"},
		{"bad int", []string{"--max-pods=lots"}, `invalid argument "lots" for "--max-pods"`},
		{"bad eviction", []string{"--eviction-hard=memory.available=1Gi"}, "malformed pair, expect string<string"},
		{"bad gate value", []string{"--feature-gates=A=maybe"}, "invalid value of A=maybe"},
		{"bad ip", []string{"--address=10.0.0.300"}, `"10.0.0.300" is not a valid IP address`},
		{"bad taint", []string{"--register-with-taints=a=b:Sometimes"}, "invalid taint effect"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.args, version(t, "1.37"))
			var fe *Error
			if !errors.As(err, &fe) {
				t.Fatalf("err = %v (%T), want *Error", err, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %q, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestFlagRemovedWithinSupportedVersions(t *testing.T) {
	// A flag an older supported kubelet had and a newer one dropped.
	for _, f := range version(t, "1.28").Flags() {
		removed := schema.FlagRemovedIn(f.Name)
		if removed == "" {
			continue
		}
		_, err := Parse([]string{"--" + f.Name + "=" + sampleValue(f)}, version(t, removed))
		if err == nil || !strings.Contains(err.Error(), "removed in "+removed) {
			t.Errorf("--%s under kubelet %s: err = %v, want it to say it was removed in %s", f.Name, removed, err, removed)
		}
		if _, err := Parse([]string{"--" + f.Name + "=" + sampleValue(f)}, version(t, "1.28")); err != nil {
			t.Errorf("--%s under kubelet 1.28: %v", f.Name, err)
		}
		return
	}
	t.Fatal("no flag of 1.28 was removed by 1.37: check the schema data")
}

func sampleValue(f schema.Flag) string {
	switch f.Type {
	case "bool":
		return "true"
	case "int32", "int64", "int", "Level":
		return "1"
	case "duration":
		return "1s"
	}
	return f.Default
}

func FuzzParse(f *testing.F) {
	f.Add("--max-pods=10 --eviction-hard=memory.available<1Gi --feature-gates=A=true")
	f.Add("-v 4 --fail-swap-on --register-node true")
	f.Add("--register-with-taints=a=b:NoSchedule --reserved-memory=0:memory=1Gi")
	f.Add("\u2014x --cluster-dns=1.1.1.1,\"2.2.2.2\"")
	v := schema.Newest()
	f.Fuzz(func(t *testing.T, line string) {
		cl, err := Parse(strings.Fields(line), v)
		if err != nil {
			return
		}
		if _, err := cl.Apply(&v1beta1.KubeletConfiguration{}); err != nil {
			t.Fatalf("parsed but did not apply: %v", err)
		}
	})
}

func resourceMust(t *testing.T, s string) resource.Quantity {
	t.Helper()
	q, err := resource.ParseQuantity(s)
	if err != nil {
		t.Fatal(err)
	}
	return q
}
