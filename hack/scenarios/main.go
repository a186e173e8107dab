// Command scenarios writes the kubelet setups that the differential test of
// dropins/ runs through both kubeletcfg and the kubelet's own code
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

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

func doc(r *rand.Rand, min, max int) string {
	var b strings.Builder
	b.WriteString(header)
	seen := map[string]bool{}
	for k := min + r.IntN(max-min+1); k > 0; k-- {
		f := pick(r, fragments)
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
	r.Shuffle(len(args), func(i, j int) { args[i], args[j] = args[j], args[i] })
	files["args"] = strings.Join(args, "\n") + "\n"
	if r.IntN(8) > 0 {
		files["env"] = "KUBELET_CONFIG_DROPIN_DIR_ALPHA=\n"
	}
	if _, ok := files["conf.d/.keep"]; !ok && strings.Contains(files["args"], "--config-dir") {
		files["conf.d/.keep"] = "" // the directory exists even with no drop-in
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}
