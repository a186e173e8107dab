package validate

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"

	"github.com/kubeletcfg/kubeletcfg/config"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

// version returns a supported minor, skipping the test when its schema data
// has not been generated.
func version(t *testing.T, minor string) *schema.Version {
	t.Helper()
	v, err := schema.Resolve(minor)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if r := recover(); r != nil {
			t.Skipf("no schema data for %s: %v", minor, r)
		}
	}()
	v.Gates()
	return v
}

// defaulted is the configuration a kubelet of v runs with when its file sets
// only what mutate sets.
func defaulted(t *testing.T, v *schema.Version, mutate func(*v1beta1.KubeletConfiguration)) *v1beta1.KubeletConfiguration {
	t.Helper()
	cfg := &v1beta1.KubeletConfiguration{}
	if mutate != nil {
		mutate(cfg)
	}
	return config.Default(cfg, v)
}

func TestGateSemantics(t *testing.T) {
	v := version(t, "1.37")
	cases := []struct {
		name    string
		set     map[string]bool
		gate    string
		enabled bool
		errs    []string
	}{
		{name: "default", gate: "GracefulNodeShutdown", enabled: true},
		{name: "AllBeta off turns beta gates off", set: map[string]bool{"AllBeta": false}, gate: "GracefulNodeShutdown", enabled: false},
		{name: "explicit value beats AllBeta", set: map[string]bool{"AllBeta": false, "GracefulNodeShutdown": true}, gate: "GracefulNodeShutdown", enabled: true},
		{name: "AllBeta leaves GA gates", set: map[string]bool{"AllBeta": false}, gate: "CustomCPUCFSQuotaPeriod", enabled: true},
		// Kubelet 1.37 itself refuses AllAlpha: some alpha gates depend on a
		// beta gate that is off by default (the reference verdict of
		// gate-all-alpha.yaml is this panic).
		{name: "AllAlpha turns alpha gates on", set: map[string]bool{"AllAlpha": true}, gate: "LoggingAlphaOptions", enabled: true, errs: []string{
			"CompositePodGroup is enabled, but depends on features that are disabled: [GenericWorkload]",
			"PodGroupPreemptionPolicy is enabled, but depends on features that are disabled: [GenericWorkload]",
			"TopologyAwareWorkloadScheduling is enabled, but depends on features that are disabled: [GenericWorkload]",
			"WorkloadWithJob is enabled, but depends on features that are disabled: [GenericWorkload]",
		}},
		{name: "unknown gate", set: map[string]bool{"NoSuchGate": true}, errs: []string{"unrecognized feature gate: NoSuchGate"}},
		{name: "locked gate", set: map[string]bool{"NodeSwap": false}, errs: []string{"cannot set feature gate NodeSwap to false, feature is locked to true"}},
		{name: "locked gate at its value", set: map[string]bool{"NodeSwap": true}, gate: "NodeSwap", enabled: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g, errs := newGates(v, tc.set)
			if diff := cmp.Diff(tc.errs, messagesOrNil(errs)); diff != "" {
				t.Fatalf("errors (-want +got):\n%s", diff)
			}
			if g != nil && g.enabled(tc.gate) != tc.enabled {
				t.Errorf("%s enabled = %v, want %v", tc.gate, !tc.enabled, tc.enabled)
			}
		})
	}
}

// TestGateDependencies checks the dependency rule against the kubelet's
// verdict on gate-dependency-graceful-shutdown.yaml, with the two entries of
// 1.37's dependency table (pkg/features) that case involves.
func TestGateDependencies(t *testing.T) {
	v := version(t, "1.37")
	saved := gateDependencies
	defer func() { gateDependencies = saved }()
	gateDependencies = func(*schema.Version) map[string][]string {
		return map[string][]string{
			"GracefulNodeShutdownBasedOnPodPriority": {"GracefulNodeShutdown"},
			"WindowsGracefulNodeShutdown":            {"GracefulNodeShutdown"},
		}
	}
	_, errs := newGates(v, map[string]bool{"GracefulNodeShutdown": false})
	kubelet := "[WindowsGracefulNodeShutdown is enabled, but depends on features that are disabled: [GracefulNodeShutdown], " +
		"GracefulNodeShutdownBasedOnPodPriority is enabled, but depends on features that are disabled: [GracefulNodeShutdown]]"
	if !aggregateOf(kubelet, Messages(errs)) {
		t.Errorf("got %q, want the parts of %q", Messages(errs), kubelet)
	}
	if _, errs := newGates(v, map[string]bool{"GracefulNodeShutdown": false, "AllBeta": false}); len(errs) != 0 {
		t.Errorf("AllBeta=false turns the dependents off too, got %q", Messages(errs))
	}
}

func messagesOrNil(errs []Error) []string {
	if len(errs) == 0 {
		return nil
	}
	return Messages(errs)
}

func TestHostDependentRules(t *testing.T) {
	cases := []struct {
		minor  string
		host   Host
		mutate func(*v1beta1.KubeletConfiguration)
		want   []string
	}{
		{"1.30", Host{CgroupV1: true}, func(c *v1beta1.KubeletConfiguration) { c.FailCgroupV1 = ptr.To(true) }, nil},
		{"1.31", Host{CgroupV1: true}, func(c *v1beta1.KubeletConfiguration) { c.FailCgroupV1 = ptr.To(true) },
			[]string{"kubelet is configured to not run on a host using cgroup v1. cgroup v1 support is in maintenance mode"}},
		{"1.37", Host{CgroupV1: true}, nil,
			[]string{"kubelet is configured to not run on a host using cgroup v1. cgroup v1 support is unsupported and will be removed in a future release"}},
		{"1.37", Host{}, nil, nil},
		{"1.32", Host{CgroupV1: true}, func(c *v1beta1.KubeletConfiguration) { c.SingleProcessOOMKill = ptr.To(false) },
			[]string{"invalid configuration: singleProcessOOMKill must not be explicitly set to false when using cgroup v1"}},
		{"1.32", Host{}, func(c *v1beta1.KubeletConfiguration) { c.SingleProcessOOMKill = ptr.To(false) }, nil},
		// Only the first host problem is reported.
		{"1.37", Host{CgroupV1: true}, func(c *v1beta1.KubeletConfiguration) {
			c.UserNamespaces = &v1beta1.UserNamespaces{IDsPerPod: ptr.To[int64](1)}
		}, []string{"kubelet is configured to not run on a host using cgroup v1. cgroup v1 support is unsupported and will be removed in a future release"}},
		{"1.37", Host{}, func(c *v1beta1.KubeletConfiguration) {
			c.UserNamespaces = &v1beta1.UserNamespaces{IDsPerPod: ptr.To[int64](1)}
		}, []string{"invalid configuration: userNamespaces.idsPerPod must not be less than 65536"}},
	}
	for _, tc := range cases {
		t.Run(tc.minor, func(t *testing.T) {
			v := version(t, tc.minor)
			got := messagesOrNil(ConfigOnHost(defaulted(t, v, tc.mutate), v, tc.host))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestShowHiddenMetricsForVersion(t *testing.T) {
	for _, tc := range []struct{ minor, value, want string }{
		{"1.31", "1.30", ""},
		{"1.31", "1.29", "--show-hidden-metrics-for-version must be omitted or have the value '1.30'. Only the previous minor version is allowed"},
		{"1.37", "1.36", ""},
		{"1.37", "1.35", `invalid showHiddenMetricsForVersion: showHiddenMetricsForVersion: Invalid value: "1.35": must be omitted or have the value '1.36'; only the previous minor version is allowed`},
	} {
		v := version(t, tc.minor)
		got := Messages(Config(defaulted(t, v, func(c *v1beta1.KubeletConfiguration) { c.ShowHiddenMetricsForVersion = tc.value }), v))
		want := []string{}
		if tc.want != "" {
			want = []string{tc.want}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s %q (-want +got):\n%s", tc.minor, tc.value, diff)
		}
	}
}

func TestImageAllowlistPatterns(t *testing.T) {
	for _, tc := range []struct{ minor, pattern, want string }{
		{"1.37", "registry.k8s.io/pause", ""},
		{"1.37", "nginx", ""},
		{"1.35", "nginx", "neither tag nor digest is accepted in an image reference: nginx"},
		{"1.35", "docker.io/library/nginx", ""},
		{"1.37", "registry.k8s.io/pause:3.10", "neither tag nor digest is accepted in an image reference: registry.k8s.io/pause:3.10"},
		{"1.37", "example.com/*", ""},
		{"1.37", "/*", "at least registry hostname is required"},
		{"1.37", "", "the supplied pattern is too short: "},
		{"1.37", "a*b", "not a valid wildcard pattern, only patterns ending with '/*' are allowed: a*b"},
		{"1.37", "Example.com/App", "failed to parse as an image name: repository name must be lowercase"},
		{"1.33", "Example.com/App", "failed to parse as an image name: invalid reference format: repository name (App) must be lowercase"},
		{"1.34", "example.com/a@sha256:abc", `failed to parse as an image name: invalid reference format`},
		{"1.37", "example.com/a@sha256:" + repeat("0", 32), "failed to parse as an image name: invalid checksum digest length"},
		{"1.37", "example.com/a@md5:" + repeat("0", 32), "failed to parse as an image name: unsupported digest algorithm"},
		{"1.37", "example.com/a@sha256:" + repeat("A", 64), "failed to parse as an image name: invalid checksum digest format"},
		{"1.37", "example.com/a@sha256:" + repeat("a", 64), "neither tag nor digest is accepted in an image reference: example.com/a@sha256:" + repeat("a", 64)},
		{"1.33", repeat("a", 64), "failed to parse as an image name: invalid repository name (" + repeat("a", 64) + "), cannot specify 64-byte hexadecimal strings"},
	} {
		v := version(t, tc.minor)
		got := ""
		if err := allowlistPatternError(&checker{v: v}, tc.pattern); err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%s %q: got %q, want %q", tc.minor, tc.pattern, got, tc.want)
		}
	}
}

func repeat(s string, n int) string {
	out := ""
	for i := 0; i < n; i++ {
		out += s
	}
	return out
}

func TestStartup(t *testing.T) {
	v := version(t, "1.37")
	cfg := defaulted(t, v, func(c *v1beta1.KubeletConfiguration) {
		c.TLSCipherSuites = []string{"TLS_AES_128_GCM_SHA256", "TLS_RSA_WITH_RC4_128_SHA", "TLS_NOPE"}
		c.TLSMinVersion = "VersionTLS14"
		c.TLSCurvePreferences = []int32{23, 23, 0, 77}
		c.KubeReserved = map[string]string{"cpu": "-1", "gpu": "1", "memory": "lots"}
		c.SystemReserved = map[string]string{"pid": "1000"}
		c.EvictionHard = map[string]string{"memory.available": "0", "nodefs.available": "110%", "disk.available": "1Gi", "imagefs.available": "0%"}
		c.EvictionSoft = map[string]string{"memory.available": "500Mi", "nodefs.available": "x%"}
		c.EvictionSoftGracePeriod = map[string]string{"nodefs.available": "-1m", "imagefs.available": "soon"}
		c.EvictionMinimumReclaim = map[string]string{"memory.available": "0%", "nodefs.available": "-1Gi"}
		c.QOSReserved = map[string]string{"memory": "50", "cpu": "10%"}
		c.SyncFrequency = metav1.Duration{Duration: -1}
		c.ConfigMapAndSecretChangeDetectionStrategy = "Poll"
		c.ContainerLogMaxSize = "1Ei0"
	})
	want := []string{
		"--kube-reserved value failed to parse: cannot reserve \"gpu\" resource",
		"--kube-reserved value failed to parse: failed to parse quantity \"lots\" for \"memory\" resource: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
		"--kube-reserved value failed to parse: resource quantity for \"cpu\" cannot be negative: -1",
		"--qos-reserved value failed to parse: cannot reserve \"cpu\" resource",
		"--qos-reserved value failed to parse: failed to parse percentage \"50\" for \"memory\" resource: percentage expected, got '50'",
		"Cipher suite TLS_NOPE not supported or doesn't exist",
		"curve preference 0 is out of range (must be 1-65535)",
		"curve preference 77 is not supported by the current Go version",
		"duplicate curve preference 23",
		"eviction percentage minimum reclaim memory.available must be positive: 0%",
		"eviction percentage threshold nodefs.available must be <= 100%: 110%",
		"eviction threshold memory.available must be positive: 0",
		"failed to parse container log max size \"1Ei0\": unable to parse quantity's suffix",
		"grace period must be specified for the soft eviction threshold memory.available",
		"invalid eviction grace period specified: -1m, must be a positive value",
		"invalid sync frequency -1 (-1ns: it must be positive)",
		"negative eviction minimum reclaim specified for nodefs.available",
		"strconv.ParseFloat: parsing \"x\": invalid syntax",
		"time: invalid duration \"soon\"",
		"unknown configmap and secret manager mode: Poll",
		"unknown tls version \"VersionTLS14\"",
		"unsupported eviction signal disk.available",
	}
	if diff := cmp.Diff(want, Messages(Startup(cfg, v))); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if errs := Startup(defaulted(t, v, nil), v); len(errs) != 0 {
		t.Errorf("defaults fail at startup: %v", errs)
	}
}

func TestStartupReservedCPUsReplaceReservedCPU(t *testing.T) {
	v := version(t, "1.37")
	cfg := defaulted(t, v, func(c *v1beta1.KubeletConfiguration) {
		c.ReservedSystemCPUs = "0-1"
		c.KubeReserved = map[string]string{"cpu": "lots"}
	})
	if errs := Startup(cfg, v); len(errs) != 0 {
		t.Errorf("kubeReserved cpu is dropped when reservedSystemCPUs is set, got %v", errs)
	}
}

func TestEveryRuleVersionExists(t *testing.T) {
	supported := map[string]bool{}
	for _, m := range schema.Supported() {
		supported[m] = true
	}
	for _, r := range rules {
		for _, m := range []string{r.since, r.until} {
			if m != "" && !supported[m] {
				t.Errorf("rule %q names unsupported minor %s", r.name, m)
			}
		}
	}
}
