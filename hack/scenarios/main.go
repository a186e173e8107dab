// Command scenarios writes the kubelet setups that the differential test of
// effective/ runs through both kubeletcfg and the kubelet's own code
// (schemagen scenarios). The setups are random but seeded: the same seed
// writes the same files.
//
//	go run ./hack/scenarios -n 240 -seed 1 -out testdata/effective/scenarios
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/kubeletcfg/kubeletcfg/internal/testkit"
)

const header = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"

func main() {
	n := flag.Int("n", 240, "number of scenarios")
	seed := flag.Uint64("seed", 1, "random seed")
	out := flag.String("out", "testdata/effective/scenarios", "output directory (replaced)")
	flag.Parse()
	if err := os.RemoveAll(*out); err != nil {
		fail(err)
	}
	r := rand.New(rand.NewPCG(*seed, 0))
	for i := 0; i < *n; i++ {
		dir := filepath.Join(*out, fmt.Sprintf("s%03d", i))
		if err := write(r, dir); err != nil {
			fail(err)
		}
	}
	for name, files := range fixed {
		if err := testkit.WriteTree(filepath.Join(*out, name), files); err != nil {
			fail(err)
		}
	}
}

// fixed are setups every run has, whatever the draw: each class of setup
// that once set kubeletcfg apart from the kubelet.
var fixed = map[string]map[string]string{
	// An empty command line: the flags-only baseline.
	"empty-command-line": {"args": "\n"},
	// A gate others depend on, turned off in a drop-in, on the command
	// line, on the command line under a file that turns a dependant on, and
	// in a file whose dependants the command line turns off (the kubelet
	// checks the file's gates over those of its command line).
	"gate-dependency-dropin": {"args": "--config-dir=conf.d\n", "env": "KUBELET_CONFIG_DROPIN_DIR_ALPHA=\n",
		"conf.d/10-shutdown.conf": header + "featureGates:\n  GracefulNodeShutdown: false\n"},
	"gate-dependency-flag": {"args": "--config=config.yaml\n--feature-gates=GracefulNodeShutdown=false\n",
		"config.yaml": header + "maxPods: 50\n"},
	"gate-dependency-flag-under-file": {"args": "--feature-gates=GracefulNodeShutdownBasedOnPodPriority=false,GracefulNodeShutdown=false,WindowsGracefulNodeShutdown=false\n--config=config.yaml\n",
		"config.yaml": header + "featureGates:\n  GracefulNodeShutdownBasedOnPodPriority: true\n"},
	"gate-dependency-file-completed-by-flag": {"args": "--feature-gates=GracefulNodeShutdownBasedOnPodPriority=false,WindowsGracefulNodeShutdown=false\n--config=config.yaml\n",
		"config.yaml": header + "featureGates:\n  GracefulNodeShutdown: false\n"},
	// null inside a map of a drop-in, alone and followed by another drop-in.
	"null-in-map-dropin": {"args": "--config=config.yaml\n--config-dir=conf.d\n", "env": "KUBELET_CONFIG_DROPIN_DIR_ALPHA=\n",
		"config.yaml":      header + "evictionHard:\n  memory.available: 500Mi\n",
		"conf.d/10-a.conf": header + "evictionHard:\n  imagefs.available: null\n  nodefs.available: 8%\n"},
	"null-in-map-dropins": {"args": "--config-dir=conf.d\n", "env": "KUBELET_CONFIG_DROPIN_DIR_ALPHA=\n",
		"conf.d/10-a.conf": header + "systemReserved:\n  cpu: 200m\n  memory: null\n",
		"conf.d/20-b.conf": header + "maxPods: 70\n"},
	// Node labels the kubelet may not set on its own node (OpenShift 3
	// set this one), refused before any file is read.
	"node-labels-forbidden": {"args": "--config=config.yaml\n--node-labels=node-role.kubernetes.io/compute=true,pool=a\n",
		"config.yaml": header + "maxPods: 50\n"},
	// A duplicate key in a drop-in.
	"duplicate-key-dropin": {"args": "--config=config.yaml\n--config-dir=conf.d\n", "env": "KUBELET_CONFIG_DROPIN_DIR_ALPHA=\n",
		"config.yaml":      header + "maxPods: 20\n",
		"conf.d/10-a.conf": header + "maxPods: 21\nmaxPods: 22\n"},
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "scenarios:", err)
	os.Exit(2)
}

// fragments are values every supported kubelet accepts in a config file or a
// drop-in, plus the awkward ones: nulls, zero values, wrong case, unknown keys.
var fragments = []string{
	"maxPods: 42",
	"maxPods: 0",
	"maxPods: null",
	"MaxPods: 77",
	"maxpods: 78",
	"fooBar: 1",
	"evictionHard:\n  memory.available: 1Gi",
	"evictionHard:\n  nodefs.available: 7%\n  imagefs.available: 12%",
	"evictionHard: null",
	"evictionHard: {}",
	"evictionHard:\n  memory.available: null",
	"systemReserved:\n  cpu: 500m",
	"systemReserved:\n  memory: 1Gi\n  cpu: \"1\"",
	"systemReserved:\n  cpu: 1",
	"kubeReserved:\n  memory: 256Mi",
	"featureGates:\n  AllAlpha: false",
	"featureGates:\n  NodeSwap: true",
	"featureGates:\n  NoSuchGate: true",
	"authentication:\n  anonymous:\n    enabled: true",
	"authentication:\n  webhook:\n    enabled: false",
	"authentication:\n  webhook:\n    cacheTTL: 30s",
	"authorization:\n  mode: AlwaysAllow",
	"authorization:\n  mode: Webhook",
	"readOnlyPort: 10255",
	"readOnlyPort: 0",
	"clusterDNS:\n- 10.96.0.10",
	"clusterDNS:\n- 10.0.0.1\n- 10.0.0.2",
	"clusterDNS: []",
	"clusterDomain: cluster.local",
	"resolvConf: /run/systemd/resolve/resolv.conf",
	"staticPodPath: manifests",
	"cgroupDriver: systemd",
	"registerNode: false",
	"serializeImagePulls: false",
	"failSwapOn: false",
	"imageGCHighThresholdPercent: 90",
	"syncFrequency: 30s",
	"syncFrequency: 0s",
	"logging:\n  verbosity: 3",
	"logging:\n  format: json",
	"tlsCipherSuites:\n- TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
	"nodeStatusUpdateFrequency: 20s",
	"containerLogMaxSize: 50Mi",
	"enforceNodeAllocatable:\n- pods",
	"podPidsLimit: 4096",
	"registerWithTaints:\n- key: dedicated\n  value: infra\n  effect: NoSchedule",
	// null inside maps: an empty value where a whole file is decoded (1.28
	// drop-ins, every --config file), a deleted key in a merge patch.
	"evictionHard:\n  imagefs.available: null\n  memory.available: 2Gi",
	"systemReserved:\n  memory: null",
	"featureGates:\n  GracefulNodeShutdown: null",
	// Duplicate keys: lenient in a --config file and a 1.28 drop-in, fatal
	// in a later drop-in.
	"maxPods: 31\nmaxPods: 32",
	"evictionHard:\n  memory.available: 1Gi\n  memory.available: 3Gi",
}

// gateFragments set gates other gates depend on (1.35+ checks the
// dependencies), on and off, and their dependants. They are drawn apart, and
// seldom: most of them make kubelet 1.35+ refuse the whole setup.
var gateFragments = []string{
	"featureGates:\n  GracefulNodeShutdown: false",
	"featureGates:\n  GracefulNodeShutdown: true",
	"featureGates:\n  GracefulNodeShutdown: false\n  GracefulNodeShutdownBasedOnPodPriority: false",
	"featureGates:\n  GracefulNodeShutdownBasedOnPodPriority: true",
	"featureGates:\n  APIServerIdentity: false",
	"featureGates:\n  APIServerIdentity: true\n  StorageVersionAPI: true",
	"featureGates:\n  UserNamespacesSupport: false",
}

var flagPool = []string{
	"--max-pods=61",
	"--max_pods=62",
	"--eviction-hard=memory.available<300Mi",
	"--eviction-hard=nodefs.available<9%",
	"--system-reserved=cpu=250m",
	"--feature-gates=AllAlpha=false",
	"--cluster-dns=10.100.0.10",
	"--read-only-port=0",
	"--v=2",
	"--node-labels=pool=a",
	"--kubeconfig=/etc/kubernetes/kubelet.conf",
	"--fail-swap-on=false",
	"--register-node=false",
	"--sync-frequency=45s",
}

// gateFlags are gateFragments' counterparts on the command line.
var gateFlags = []string{
	"--feature-gates=GracefulNodeShutdown=false",
	"--feature-gates=GracefulNodeShutdownBasedOnPodPriority=false",
	"--feature-gates=GracefulNodeShutdown=true",
	"--feature-gates=APIServerIdentity=false",
}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

func doc(r *rand.Rand, min, max int) string {
	var b strings.Builder
	b.WriteString(header)
	seen := map[string]bool{}
	n := min + r.IntN(max-min+1)
	for k := n; k > 0; k-- {
		f := pick(r, fragments)
		if k == n && r.IntN(12) == 0 {
			f = pick(r, gateFragments)
		}
		key := strings.SplitN(f, ":", 2)[0]
		if seen[key] {
			continue // a duplicate key is tested elsewhere
		}
		seen[key] = true
		b.WriteString(f + "\n")
	}
	return b.String()
}

func write(r *rand.Rand, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var args []string
	files := map[string]string{}
	if r.IntN(5) > 0 {
		files["config.yaml"] = doc(r, 0, 5)
		args = append(args, "--config=config.yaml")
	}
	if r.IntN(4) > 0 {
		args = append(args, "--config-dir=conf.d")
		names := []string{"10-a.conf", "20-b.conf", "05-first.conf", "sub/30-c.conf", "sub/deeper/01-d.conf",
			".hidden.conf", ".hiddendir/50-e.conf", "a-sub/99-z.conf", "ignored.yaml", "UPPER.CONF", "90-last.conf"}
		for k := r.IntN(6); k > 0; k-- {
			files["conf.d/"+pick(r, names)] = doc(r, 1, 3)
		}
		if len(files) == 0 || r.IntN(10) == 0 {
			files["conf.d/.keep"] = ""
		}
	}
	for k := r.IntN(4); k > 0; k-- {
		args = append(args, pick(r, flagPool))
	}
	if r.IntN(12) == 0 {
		args = append(args, pick(r, gateFlags))
	}
	r.Shuffle(len(args), func(i, j int) { args[i], args[j] = args[j], args[i] })
	files["args"] = strings.Join(args, "\n") + "\n"
	if r.IntN(8) > 0 {
		files["env"] = "KUBELET_CONFIG_DROPIN_DIR_ALPHA=\n"
	}
	if _, ok := files["conf.d/.keep"]; !ok && strings.Contains(files["args"], "--config-dir") {
		files["conf.d/.keep"] = "" // the directory exists even with no drop-in
	}
	return testkit.WriteTree(dir, files)
}
