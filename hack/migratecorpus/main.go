// Command migratecorpus writes the legacy kubelet setups of the migrate
// equivalence test (testdata/migrate/corpus) and, for each target version,
// kubeletcfg's migration of each one (testdata/migrate/out/v1.NN/NAME.old with
// the flags the version still has, NAME.new with the migrated config file and
// the remaining flags). `make schema` then has the kubelet's own code layer
// both, and the test checks they are the same.
//
//	go run ./hack/migratecorpus            # corpus and migrations
//	go run ./hack/migratecorpus -migrate   # migrations only, from the corpus
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/kubeletcfg/kubeletcfg/internal/reftest"
	"github.com/kubeletcfg/kubeletcfg/internal/testkit"
	"github.com/kubeletcfg/kubeletcfg/migrate"
	"github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

const (
	corpusDir = "testdata/migrate/corpus"
	outDir    = "testdata/migrate/out"
)

func main() {
	onlyMigrate := flag.Bool("migrate", false, "only write the migrations of the existing corpus")
	flag.Parse()
	if !*onlyMigrate {
		if err := writeCorpus(); err != nil {
			fail(err)
		}
	}
	if err := writeMigrations(); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "migratecorpus:", err)
	os.Exit(2)
}

// writeMigrations migrates every corpus setup for every version.
func writeMigrations() error {
	// The versions the corpus was migrated for, and the newest: what the
	// equivalence test covers.
	versions := reftest.MigrateVersions()
	if err := os.RemoveAll(outDir); err != nil {
		return err
	}
	names, err := os.ReadDir(corpusDir)
	if err != nil {
		return err
	}
	for _, v := range versions {
		for _, e := range names {
			if err := migrateOne(v, e.Name()); err != nil {
				return fmt.Errorf("%s for %s: %w", e.Name(), v.Minor, err)
			}
		}
	}
	return nil
}

func migrateOne(v *schema.Version, name string) error {
	src, _ := filepath.Abs(filepath.Join(corpusDir, name))
	args, err := reftest.ReadArgs(src)
	if err != nil {
		return err
	}
	// The kubelet's environment has what a --config-dir needs.
	env := map[string]string{}
	if name := v.DropinEnv(); name != "" {
		env[name] = ""
	}
	res, err := migrate.Run(migrate.Options{ConfigPath: "new-config.yaml", Setup: &node.Setup{Version: v, Kubelet: node.Kubelet{Args: args, Env: env}, Dir: src}})
	if err != nil {
		return err
	}
	base := filepath.Join(outDir, "v"+v.Minor)
	old := filepath.Join(base, name+".old")
	if err := testkit.CopyTree(src, old); err != nil {
		return err
	}
	var kept []string
	removed := map[string]bool{}
	for _, r := range res.Removed {
		for _, w := range strings.Fields(r.Flag) {
			removed[w] = true
		}
	}
	gone := map[string]bool{}
	for _, g := range res.DroppedGates {
		gone[g.Name] = true
		if g.Where != "--feature-gates" && g.Where != "" {
			if err := dropGateLines(src, old, g.Where, g.Name); err != nil {
				return err
			}
		}
	}
	for _, a := range args {
		if removed[a] {
			continue
		}
		if a = withoutGates(a, gone); a != "" {
			kept = append(kept, a)
		}
	}
	if err := writeArgs(filepath.Join(old, "args"), kept); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(old, "env"), []byte("KUBELET_CONFIG_DROPIN_DIR_ALPHA=\n"), 0o644); err != nil {
		return err
	}
	nw := filepath.Join(base, name+".new")
	if err := os.MkdirAll(nw, 0o755); err != nil {
		return err
	}
	js, err := json.Marshal(res.Config)
	if err != nil {
		return err
	}
	doc, err := yaml.JSONToYAML(js)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(nw, "new-config.yaml"), doc, 0o644); err != nil {
		return err
	}
	return writeArgs(filepath.Join(nw, "args"), res.Flags)
}

// withoutGates is a --feature-gates word less the gates in gone ("" when
// none is left); any other word as it is.
func withoutGates(arg string, gone map[string]bool) string {
	value, ok := strings.CutPrefix(arg, "--feature-gates=")
	if !ok || len(gone) == 0 {
		return arg
	}
	var keep []string
	for _, kv := range strings.Split(value, ",") {
		name, _, _ := strings.Cut(strings.TrimSpace(kv), "=")
		if !gone[name] {
			keep = append(keep, kv)
		}
	}
	if len(keep) == 0 {
		return ""
	}
	return "--feature-gates=" + strings.Join(keep, ",")
}

// dropGateLines takes the line setting a gate out of the copy (in dst) of a
// file of the setup (path, under src): corpus files set each gate on a line
// of its own.
func dropGateLines(src, dst, path, gate string) error {
	rel, err := filepath.Rel(src, path)
	if err != nil || strings.HasPrefix(rel, "..") {
		return fmt.Errorf("gate %s set in %s, outside the setup", gate, path)
	}
	target := filepath.Join(dst, rel)
	if info, err := os.Stat(target); err == nil && info.IsDir() {
		return fmt.Errorf("gate %s set in the drop-ins of %s: corpus setups set removed gates in flags and config files only", gate, path)
	}
	data, err := os.ReadFile(target)
	if err != nil {
		return err
	}
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		if name, _, ok := strings.Cut(strings.TrimSpace(l), ":"); ok && name == gate {
			continue
		}
		out = append(out, l)
	}
	return os.WriteFile(target, []byte(strings.Join(out, "\n")), 0o644)
}

func writeArgs(path string, args []string) error {
	return os.WriteFile(path, []byte(strings.Join(args, "\n")+"\n"), 0o644)
}

// setup is one legacy node: its kubelet command line and files.
type setup struct {
	name  string
	args  []string
	files map[string]string
}

const header = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"

// realistic are setups as distributions wrote them.
func realistic() []setup {
	kubeadmOld := []string{"--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf", "--kubeconfig=/etc/kubernetes/kubelet.conf",
		"--network-plugin=cni", "--pod-infra-container-image=registry.k8s.io/pause:3.6", "--cgroup-driver=systemd",
		"--cluster-dns=10.96.0.10", "--cluster-domain=cluster.local", "--authorization-mode=Webhook", "--client-ca-file=/etc/kubernetes/pki/ca.crt",
		"--anonymous-auth=false", "--authentication-token-webhook=true", "--rotate-certificates=true", "--pod-manifest-path=/etc/kubernetes/manifests"}
	return []setup{
		{name: "kubeadm-1.10-flags-only", args: append(append([]string{}, kubeadmOld...), "--allow-privileged=true", "--cadvisor-port=0", "--max-pods=110")},
		{name: "kubeadm-1.18-config-and-env", args: []string{"--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf", "--kubeconfig=/etc/kubernetes/kubelet.conf",
			"--config=config.yaml", "--network-plugin=cni", "--pod-infra-container-image=k8s.gcr.io/pause:3.2", "--max-pods=150", "--node-labels=node.kubernetes.io/pool=general"},
			files: map[string]string{"config.yaml": header + "authentication:\n  anonymous:\n    enabled: false\n  webhook:\n    enabled: true\n  x509:\n    clientCAFile: /etc/kubernetes/pki/ca.crt\nauthorization:\n  mode: Webhook\ncgroupDriver: systemd\nclusterDNS:\n- 10.96.0.10\nclusterDomain: cluster.local\nrotateCertificates: true\nstaticPodPath: /etc/kubernetes/manifests\ncpuManagerReconcilePeriod: 0s\nsyncFrequency: 0s\n"}},
		{name: "kubeadm-1.27-containerd", args: []string{"--kubeconfig=/etc/kubernetes/kubelet.conf", "--config=config.yaml",
			"--container-runtime=remote", "--container-runtime-endpoint=unix:///run/containerd/containerd.sock", "--pod-infra-container-image=registry.k8s.io/pause:3.9", "--node-ip=10.0.0.5"},
			files: map[string]string{"config.yaml": header + "cgroupDriver: systemd\nclusterDNS:\n- 10.96.0.10\nclusterDomain: cluster.local\nauthorization:\n  mode: Webhook\nauthentication:\n  anonymous:\n    enabled: false\n  webhook:\n    enabled: true\n"}},
		{name: "kubeadm-1.30-dropins", args: []string{"--kubeconfig=/etc/kubernetes/kubelet.conf", "--config=config.yaml", "--config-dir=kubelet.conf.d", "--max-pods=90", "--eviction-hard=memory.available<500Mi"},
			files: map[string]string{"config.yaml": header + "cgroupDriver: systemd\nmaxPods: 120\nevictionHard:\n  nodefs.available: 10%\nsystemReserved:\n  cpu: 500m\n",
				"kubelet.conf.d/10-reserved.conf": header + "kubeReserved:\n  memory: 512Mi\n", "kubelet.conf.d/20-logging.conf": header + "logging:\n  verbosity: 2\n"}},
		{name: "kops-style", args: []string{"--anonymous-auth=false", "--authentication-token-webhook=true", "--authorization-mode=Webhook", "--cgroup-driver=systemd",
			"--cgroup-root=/", "--client-ca-file=/srv/kubernetes/ca.crt", "--cloud-provider=external", "--cluster-dns=100.64.0.10", "--cluster-domain=cluster.local",
			"--enable-debugging-handlers=true", "--eviction-hard=memory.available<100Mi,nodefs.available<10%,nodefs.inodesFree<5%,imagefs.available<10%,imagefs.inodesFree<5%",
			"--feature-gates=AllAlpha=false", "--hostname-override=ip-172-20-1-1.ec2.internal", "--kubeconfig=/var/lib/kubelet/kubeconfig", "--node-labels=node.kubernetes.io/instancegroup=nodes",
			"--pod-infra-container-image=registry.k8s.io/pause:3.9", "--pod-manifest-path=/etc/kubernetes/manifests", "--register-schedulable=true", "--v=2",
			"--cni-bin-dir=/opt/cni/bin/", "--cni-conf-dir=/etc/cni/net.d/", "--tls-cert-file=/srv/kubernetes/kubelet-server.crt", "--tls-private-key-file=/srv/kubernetes/kubelet-server.key"}},
		{name: "eks-bootstrap", args: []string{"--config=kubelet-config.json", "--kubeconfig=/var/lib/kubelet/kubeconfig", "--container-runtime-endpoint=unix:///run/containerd/containerd.sock",
			"--image-credential-provider-config=/etc/eks/image-credential-provider/config.json", "--image-credential-provider-bin-dir=/etc/eks/image-credential-provider",
			"--node-ip=192.168.1.10", "--pod-infra-container-image=602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/pause:3.5", "--v=2", "--hostname-override=ip-192-168-1-10",
			"--cloud-provider=external", "--max-pods=29", "--node-labels=eks.amazonaws.com/nodegroup=ng-1"},
			files: map[string]string{"kubelet-config.json": `{"kind":"KubeletConfiguration","apiVersion":"kubelet.config.k8s.io/v1beta1","address":"0.0.0.0","authentication":{"anonymous":{"enabled":false},"webhook":{"cacheTTL":"2m0s","enabled":true},"x509":{"clientCAFile":"/etc/kubernetes/pki/ca.crt"}},"authorization":{"mode":"Webhook","webhook":{"cacheAuthorizedTTL":"5m0s","cacheUnauthorizedTTL":"30s"}},"clusterDomain":"cluster.local","hairpinMode":"hairpin-veth","readOnlyPort":0,"cgroupDriver":"systemd","cgroupRoot":"/","featureGates":{"RotateKubeletServerCertificate":true},"protectKernelDefaults":true,"serializeImagePulls":false,"serverTLSBootstrap":true,"tlsCipherSuites":["TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256","TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"],"clusterDNS":["10.100.0.10"],"evictionHard":{"memory.available":"100Mi","nodefs.available":"10%","nodefs.inodesFree":"5%"},"kubeReserved":{"cpu":"70m","ephemeral-storage":"1Gi","memory":"442Mi"},"systemReservedCgroup":"/system","kubeReservedCgroup":"/runtime"}` + "\n"}},
		{name: "kubespray-style", args: []string{"--v=2", "--node-ip=10.10.1.3", "--hostname-override=node3", "--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf",
			"--kubeconfig=/etc/kubernetes/kubelet.conf", "--config=kubelet-config.yaml", "--container-runtime-endpoint=unix:///var/run/containerd/containerd.sock",
			"--runtime-cgroups=/system.slice/containerd.service"},
			files: map[string]string{"kubelet-config.yaml": header + "nodeStatusUpdateFrequency: \"10s\"\nfailSwapOn: True\nauthentication:\n  anonymous:\n    enabled: false\n  webhook:\n    enabled: True\n  x509:\n    clientCAFile: /etc/kubernetes/ssl/ca.crt\nauthorization:\n  mode: Webhook\nstaticPodPath: /etc/kubernetes/manifests\ncgroupDriver: systemd\ncontainerLogMaxFiles: 5\ncontainerLogMaxSize: 10Mi\nmaxPods: 110\npodPidsLimit: -1\naddress: 10.10.1.3\nreadOnlyPort: 0\nhealthzPort: 10248\nhealthzBindAddress: 127.0.0.1\nkubeletCgroups: /system.slice/kubelet.service\nclusterDomain: cluster.local\nprotectKernelDefaults: true\nrotateCertificates: true\nclusterDNS:\n- 169.254.25.10\nkubeReserved:\n  cpu: 200m\n  memory: 512Mi\nresolvConf: \"/run/systemd/resolve/resolv.conf\"\neventRecordQPS: 5\nshutdownGracePeriod: 60s\nshutdownGracePeriodCriticalPods: 20s\n"}},
		{name: "k3s-style-args", args: []string{"--address=0.0.0.0", "--anonymous-auth=false", "--authentication-token-webhook=true", "--authorization-mode=Webhook",
			"--cgroup-driver=cgroupfs", "--client-ca-file=/var/lib/rancher/k3s/agent/client-ca.crt", "--cloud-provider=external", "--cluster-dns=10.43.0.10",
			"--cluster-domain=cluster.local", "--container-runtime-endpoint=unix:///run/k3s/containerd/containerd.sock", "--containerd=/run/k3s/containerd/containerd.sock",
			"--eviction-hard=imagefs.available<5%,nodefs.available<5%", "--eviction-minimum-reclaim=imagefs.available=10%,nodefs.available=10%", "--fail-swap-on=false",
			"--healthz-bind-address=127.0.0.1", "--hostname-override=k3s-node", "--kubeconfig=/var/lib/rancher/k3s/agent/kubelet.kubeconfig", "--node-labels=",
			"--pod-manifest-path=/var/lib/rancher/k3s/agent/pod-manifests", "--read-only-port=0", "--resolv-conf=/etc/resolv.conf", "--serialize-image-pulls=false",
			"--tls-cert-file=/var/lib/rancher/k3s/agent/serving-kubelet.crt", "--tls-private-key-file=/var/lib/rancher/k3s/agent/serving-kubelet.key"}},
		{name: "repeated-and-underscores", args: []string{"--max-pods=50", "--max_pods=60", "--eviction-hard=memory.available<1Gi", "--eviction-hard=nodefs.available<7%",
			"--feature-gates=AllAlpha=false", "--feature-gates=AllBeta=false", "--system-reserved=cpu=1", "--system-reserved=memory=2Gi", "--cluster_dns=10.0.0.10", "--v", "3",
			"--register-node=true", "--fail-swap-on", "--kubeconfig=/etc/kubernetes/kubelet.conf"}},
		{name: "config-overridden-by-flags", args: []string{"--config=config.yaml", "--max-pods=200", "--eviction-hard=imagefs.available<20%", "--kube-reserved=cpu=1",
			"--feature-gates=AllAlpha=false", "--read-only-port=10255", "--kubeconfig=/etc/kubernetes/kubelet.conf"},
			files: map[string]string{"config.yaml": header + "maxPods: 100\nevictionHard:\n  memory.available: 200Mi\n  nodefs.available: 5%\nkubeReserved:\n  memory: 1Gi\nfeatureGates:\n  AllBeta: false\nreadOnlyPort: 0\n"}},
		{name: "flags-only-minimal", args: []string{"--kubeconfig=/etc/kubernetes/kubelet.conf"}},
		// Feature gates later kubelets no longer have, as legacy nodes set them.
		{name: "kops-1.22-removed-gates", args: []string{"--anonymous-auth=false", "--authentication-token-webhook=true", "--authorization-mode=Webhook",
			"--cgroup-driver=systemd", "--cloud-provider=external", "--cluster-dns=100.64.0.10", "--cluster-domain=cluster.local",
			"--feature-gates=CSIMigrationAWS=true,InTreePluginAWSUnregister=true,CSIMigration=true", "--kubeconfig=/var/lib/kubelet/kubeconfig",
			"--pod-manifest-path=/etc/kubernetes/manifests", "--register-schedulable=true", "--v=2"}},
		{name: "aks-1.24-removed-gates", args: []string{"--address=0.0.0.0", "--anonymous-auth=false", "--authentication-token-webhook=true",
			"--authorization-mode=Webhook", "--azure-container-registry-config=/etc/kubernetes/azure.json", "--cgroups-per-qos=true",
			"--client-ca-file=/etc/kubernetes/certs/ca.crt", "--cloud-config=/etc/kubernetes/azure.json", "--cloud-provider=external",
			"--cluster-dns=10.0.0.10", "--cluster-domain=cluster.local", "--enforce-node-allocatable=pods", "--event-qps=0",
			"--eviction-hard=memory.available<750Mi,nodefs.available<10%,nodefs.inodesFree<5%", "--feature-gates=CSIMigration=true,CSIMigrationAzureDisk=true,RotateKubeletServerCertificate=true,DynamicKubeletConfig=false",
			"--image-gc-high-threshold=85", "--image-gc-low-threshold=80", "--kube-reserved=cpu=100m,memory=1638Mi", "--kubeconfig=/var/lib/kubelet/kubeconfig",
			"--max-pods=110", "--node-status-update-frequency=10s", "--pod-max-pids=-1", "--protect-kernel-defaults=true", "--read-only-port=0",
			"--resolv-conf=/run/systemd/resolve/resolv.conf", "--rotate-certificates=true", "--streaming-connection-idle-timeout=4h",
			"--tls-cert-file=/etc/kubernetes/certs/kubeletserver.crt", "--tls-cipher-suites=TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
			"--tls-private-key-file=/etc/kubernetes/certs/kubeletserver.key"}},
		{name: "openshift-3.11-removed-gates", args: []string{"--kubeconfig=/etc/origin/node/node.kubeconfig", "--config=node-config.yaml",
			"--feature-gates=RotateKubeletClientCertificate=true,RotateKubeletServerCertificate=true", "--pod-manifest-path=/etc/origin/node/pods",
			"--node-labels=node.openshift.io/role=compute", "--cgroup-driver=systemd", "--v=2"},
			files: map[string]string{"node-config.yaml": header + "featureGates:\n  ExpandPersistentVolumes: true\n  DynamicKubeletConfig: false\n  PodPriority: true\nmaxPods: 250\npodsPerCore: 10\n"}},
		{name: "dualstack-1.29-removed-gates", args: []string{"--kubeconfig=/etc/kubernetes/kubelet.conf", "--config=config.yaml",
			"--feature-gates=CloudDualStackNodeIPs=true", "--node-ip=10.0.0.7,fd00::7", "--cloud-provider=external"},
			files: map[string]string{"config.yaml": header + "cgroupDriver: systemd\nfeatureGates:\n  KubeletPodResources: true\n  InTreePluginAWSUnregister: false\n"}},
		// A value only a flag can express: kubeadm-flags.env with an empty --cgroup-driver.
		{name: "kubeadm-flags-env-empty-cgroup-driver", args: []string{"--kubeconfig=/etc/kubernetes/kubelet.conf", "--config=config.yaml",
			"--container-runtime-endpoint=unix:///run/containerd/containerd.sock", "--cgroup-driver="},
			files: map[string]string{"config.yaml": header + "cgroupDriver: systemd\nclusterDNS:\n- 10.96.0.10\nclusterDomain: cluster.local\n"}},
		{name: "flags-only-empty-cgroup-driver", args: []string{"--kubeconfig=/etc/kubernetes/kubelet.conf", "--cgroup-driver=", "--max-pods=64"}},
		{name: "flags-only-secure", args: []string{"--kubeconfig=/etc/kubernetes/kubelet.conf", "--anonymous-auth=false", "--authorization-mode=Webhook",
			"--authentication-token-webhook", "--read-only-port=0", "--eviction-hard=memory.available<100Mi,nodefs.available<10%,imagefs.available<15%,nodefs.inodesFree<5%",
			"--protect-kernel-defaults=true", "--tls-min-version=VersionTLS12", "--rotate-server-certificates"}},
	}
}

// sample is a value every supported kubelet parses for a flag.
func sample(f schema.Flag) string {
	switch f.Name {
	case "authorization-mode":
		return "Webhook"
	case "cgroup-driver":
		return "systemd"
	case "cpu-manager-policy":
		return "static"
	case "topology-manager-policy":
		return "best-effort"
	case "topology-manager-scope":
		return "pod"
	case "memory-manager-policy":
		return "Static"
	case "hairpin-mode":
		return "hairpin-veth"
	case "tls-min-version":
		return "VersionTLS13"
	case "tls-cipher-suites":
		return "TLS_AES_128_GCM_SHA256"
	case "kube-api-content-type":
		return "application/json"
	case "feature-gates":
		return "AllAlpha=false"
	case "logging-format":
		return "text"
	case "container-runtime-endpoint", "image-service-endpoint":
		return "unix:///run/containerd/containerd.sock"
	case "reserved-cpus":
		return "0-1"
	case "enforce-node-allocatable":
		return "pods"
	case "pod-cidr":
		return "10.244.1.0/24"
	case "resolv-conf":
		return "/etc/resolv.conf"
	case "manifest-url":
		return "http://127.0.0.1/manifests"
	}
	switch f.Type {
	case "bool":
		return "true"
	case "int32", "int64", "int":
		return "7"
	case "Level":
		return "3"
	case "duration":
		return "33s"
	case "ip":
		return "10.1.1.1"
	case "stringSlice":
		return "a,b"
	case "mapStringString":
		if strings.Contains(f.GoType, "Langle") {
			return "memory.available<321Mi"
		}
		if strings.Contains(f.Name, "reserved") {
			return "cpu=123m"
		}
		return "a=b"
	case "mapStringBool":
		return "AllAlpha=false"
	case "colonSeparatedMultimapStringString":
		return "X-Header:one"
	case "reserved-memory":
		return "0:memory=1Gi"
	case "[]v1.Taint":
		return "dedicated=x:NoSchedule"
	case "pattern=N,...":
		return "foo=2"
	case "quantity":
		return "1Ki"
	}
	return "/var/lib/kubeletcfg-test/" + f.Name
}

// coverage spreads every config-backed flag of every supported version over
// extra setups, four flags to a setup.
func coverage() []setup {
	seen := map[string]schema.Flag{}
	for _, v := range schema.Versions() {
		for _, f := range v.Flags() {
			if f.Field != "" {
				seen[f.Name] = f
			}
		}
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []setup
	for i := 0; i < len(names); i += 4 {
		s := setup{name: fmt.Sprintf("coverage-%02d", i/4), args: []string{"--kubeconfig=/etc/kubernetes/kubelet.conf"}}
		if (i/4)%2 == 1 {
			s.args = append(s.args, "--config=config.yaml")
			s.files = map[string]string{"config.yaml": header + "maxPods: 42\nclusterDomain: example.local\n"}
		}
		for _, n := range names[i:min(i+4, len(names))] {
			s.args = append(s.args, "--"+n+"="+sample(seen[n]))
		}
		out = append(out, s)
	}
	return out
}

func writeCorpus() error {
	if err := os.RemoveAll(corpusDir); err != nil {
		return err
	}
	for _, s := range append(realistic(), coverage()...) {
		dir := filepath.Join(corpusDir, s.name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := writeArgs(filepath.Join(dir, "args"), s.args); err != nil {
			return err
		}
		if err := testkit.WriteTree(dir, s.files); err != nil {
			return err
		}
	}
	return nil
}
