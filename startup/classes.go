package startup

// The kubelet's start-up refusals, one entry per class, in the order the
// kubelet meets them when it starts (cmd/kubelet/app: the command line, the
// feature gates, the config file and drop-ins, validation, run(), the
// container manager, NewMainKubelet, then the servers it starts). What each
// version says is generated from its source (schema/data/startup.json, `make
// startup-words`); this table names where to find the words and what they
// mean. Not refusals, and so not here: dockershim's cgroup-driver check
// (no supported kubelet has it), logind's InhibitDelayMaxSec and a missing
// staticPodPath (the kubelet starts, degraded: see Degradations).

// Modules the words live in besides k8s.io/kubernetes.
const (
	pflagMod      = "github.com/spf13/pflag"
	componentBase = "k8s.io/component-base"
	criClient     = "k8s.io/cri-client"
	apiserverMod  = "k8s.io/apiserver"
	clientGo      = "k8s.io/client-go"
)

func in(dir string) []Loc { return []Loc{{Dir: dir}} }

var (
	kubeletApp   = in("cmd/kubelet/app")
	kubeletOpts  = in("cmd/kubelet/app/options")
	configfiles  = in("pkg/kubelet/kubeletconfig/configfiles")
	codec        = in("pkg/kubelet/kubeletconfig/util/codec")
	validation   = in("pkg/kubelet/apis/config/validation")
	defaulting   = in("pkg/kubelet/apis/config/v1beta1")
	cm           = in("pkg/kubelet/cm")
	kubeletPkg   = in("pkg/kubelet")
	serverPkg    = in("pkg/kubelet/server")
	bootstrapPkg = in("pkg/kubelet/certificate/bootstrap")
	credPlugin   = in("pkg/credentialprovider/plugin")
	pflag        = []Loc{{Module: pflagMod, Dir: "."}}
	featuregate  = []Loc{{Module: componentBase, Dir: "featuregate"}}
	// The cgroup manager: runc's libcontainer until the cgroups module
	// moved out of it.
	cgroupsManager = []Loc{
		{Module: "github.com/opencontainers/cgroups", Dir: "manager"},
		{Module: "github.com/opencontainers/runc", Dir: "libcontainer/cgroups/manager"},
	}
	// The CRI client: a staging module from 1.31, in the kubelet before.
	criRemote = []Loc{
		{Module: criClient, Dir: "pkg"},
		{Dir: "pkg/kubelet/cri/remote"},
	}
	cpuState    = in("pkg/kubelet/cm/cpumanager/state")
	memoryState = in("pkg/kubelet/cm/memorymanager/state")
)

// Classes is the table. IDs are stable: they are part of kubeletcfg's JSON.
var Classes = []Class{
	// The command line: before anything else is read.
	{
		ID: "flag-unknown", Kind: Refusal, Title: "unknown flag",
		Words: []Probe{
			{Text: "failed to parse kubelet flag: %w", In: kubeletApp, Stage: true},
			{Text: "unknown flag: --%s", In: pflag, Captures: []string{"flag"}},
			{Text: "unknown shorthand flag: ", In: pflag, Captures: []string{"flag", ""}},
		},
		Fix: "remove {flag} from {origin}: kubelet {version} has no such flag",
	},
	{
		// Same words as flag-unknown: the flag is one an older kubelet had.
		ID: "flag-removed", Kind: Refusal, Title: "flag removed from this kubelet version",
		Fix: "remove {flag} from {origin}: it was removed in kubelet {removedIn}{replacement}",
	},
	{
		ID: "flag-invalid", Kind: Refusal, Title: "flag value the kubelet cannot parse",
		Words: []Probe{
			{Text: "invalid argument %q for %q flag: %v", In: pflag, Captures: []string{"value", "flag", ""}},
			{Text: "flag needs an argument: ", In: pflag, Captures: []string{"flag"}},
			{Text: "bad flag syntax: %s", In: pflag, Captures: []string{"flag"}},
		},
		Fix: "correct the value of {flag} at {origin}",
	},
	{
		ID: "unknown-command", Kind: Refusal, Title: "a word on the command line that is not a flag",
		Words: []Probe{
			{Text: "unknown command %+s", In: kubeletApp, Captures: []string{"arg"}},
		},
		Fix: "remove {value} from {origin}, or join it to the flag it belongs to (--flag=value); an unquoted space in an environment variable splits a value into words",
	},
	{
		ID: "node-labels", Kind: Refusal, Title: "--node-labels the kubelet may not set",
		Flag: "node-labels",
		Words: []Probe{
			{Text: "failed to validate kubelet flags: %w", In: kubeletApp, Stage: true},
			{Text: "unknown 'kubernetes.io' or 'k8s.io' labels specified with --node-labels: %v", In: kubeletOpts, Captures: []string{"value"}},
			{Text: "invalid node labels: %s", In: kubeletOpts, Captures: []string{"value"}},
		},
		Fix: "remove the labels {value} from --node-labels at {origin} (a kubelet may set only its own kubernetes.io labels; set others on the Node through the API server)",
	},
	// Feature gates: taken from the command line, then again with the
	// config file's (from 1.35, the config file's also while defaulting:
	// a panic).
	{
		ID: "gate-unknown", Kind: Refusal, Title: "unknown feature gate",
		Words: []Probe{
			{Text: "failed to set feature gates from initial flags-based config: %w", In: kubeletApp, Stage: true},
			{Text: "failed to merge global and in-flight KubeletConfiguration while setting defaults, error: %v", In: defaulting, Stage: true},
			{Text: "unrecognized feature gate: %s", In: featuregate, Captures: []string{"gate"}},
		},
		Fix: "remove the gate {gate} from {origin}: kubelet {version} does not know it{removedGate}",
	},
	{
		ID: "gate-locked", Kind: Refusal, Title: "feature gate locked to its default",
		Words: []Probe{
			{Text: "cannot set feature gate %v to %v, feature is locked to %v", In: featuregate, Captures: []string{"gate", "value", "locked"}},
		},
		Fix: "remove the gate {gate} from {origin}: kubelet {version} locks it to {locked}",
	},
	{
		ID: "gate-dependency", Kind: Refusal, Title: "feature gate whose dependencies are disabled",
		Words: []Probe{
			{Text: "%s is enabled, but depends on features that are disabled: %v", In: featuregate, Captures: []string{"gate", "deps"}},
		},
		Fix: "enable {deps} as well, or disable {gate} at {origin}",
	},
	// The config file and its drop-ins.
	{
		ID: "config-unreadable", Kind: Refusal, Title: "config file unreadable",
		Flag:  "config",
		Files: []string{"--config"},
		Words: []Probe{
			{Text: "failed to load kubelet config file, path: %s, error: %w", In: kubeletApp, Stage: true, Captures: []string{"path", ""}},
			{Text: "failed to read kubelet config file %q, error: %v", In: configfiles, Captures: []string{"path", ""}},
		},
		Fix: "create {value}, or point --config at {origin} to the config file",
	},
	{
		ID: "config-not-kubeletconfiguration", Kind: Refusal, Title: "config file is not a KubeletConfiguration",
		Flag: "config",
		Words: []Probe{
			{Text: "kubelet config file %q was empty", In: configfiles, Captures: []string{"path"}},
			{Text: "failed to decode: %w", In: codec, Captures: []string{""}},
			{Text: "failed lenient decoding: %v", In: codec, Captures: []string{""}},
			{Text: "failed to cast object to KubeletConfiguration, unexpected type: %v", In: codec, Captures: []string{""}},
		},
		Fix: "make {value} a KubeletConfiguration document (apiVersion: kubelet.config.k8s.io/v1beta1, kind: KubeletConfiguration), or point --config at {origin} to one",
	},
	{
		ID: "dropin-invalid", Kind: Refusal, Title: "config drop-in unreadable or not a KubeletConfiguration",
		Flag:  "config-dir",
		Files: []string{"--config-dir"},
		Words: []Probe{
			{Text: "failed to load kubelet dropin file, path: %s, error: %w", In: kubeletApp, Captures: []string{"path", ""}},
			{Text: "failed to load kubelet dropin file, path: %s, no apiVersion/kind", In: kubeletApp, Captures: []string{"path"}},
			{Text: "failed to load kubelet dropin file, path: %s, unknown apiVersion/kind: %v", In: kubeletApp, Captures: []string{"path", ""}},
			{Text: "failed to merge kubelet drop-in config, path: %s, error: %w", In: kubeletApp, Captures: []string{"path", ""}},
			{Text: "failed to walk through kubelet dropin directory %q: %w", In: kubeletApp, Flag: "config-dir", Captures: []string{"path", ""}},
		},
		Fix: "fix or remove the drop-in {value} (a drop-in is a KubeletConfiguration document with apiVersion and kind)",
	},
	{
		ID: "dropin-env-missing", Kind: Refusal, Title: "--config-dir without the environment variable kubelet 1.28 requires",
		Flag: "config-dir",
		Words: []Probe{
			{Text: "specified but environment variable KUBELET_CONFIG_DROPIN_DIR_ALPHA not set", In: kubeletApp, Captures: []string{"value"}},
		},
		Fix: "set KUBELET_CONFIG_DROPIN_DIR_ALPHA in the kubelet's environment (an Environment= line of its unit), or remove --config-dir from {origin}",
	},
	// Validation of the merged configuration.
	{
		ID: "config-invalid", Kind: Refusal, Title: "invalid configuration value",
		Words: []Probe{
			{Text: "failed to validate kubelet configuration, error: %w, path: %s", In: kubeletApp, Captures: []string{"errors", ""}},
		},
		Fix: "correct {field} at {origin}",
	},
	{
		ID: "cgroup-v1", Kind: Refusal, Title: "cgroup v1 host refused (failCgroupV1)", Host: true,
		Field: "failCgroupV1",
		Words: []Probe{
			{Text: "kubelet is configured to not run on a host using cgroup v1", In: validation},
		},
		Fix: "move the host to cgroup v2 (kubelet {version} deprecates cgroup v1), or set failCgroupV1: false{where}",
	},
	{
		ID: "logging-invalid", Kind: Refusal, Title: "invalid logging configuration",
		Field: "logging",
		Words: []Probe{
			{Text: "initialize logging: %v", In: kubeletApp, Captures: []string{"errors"}},
		},
		Fix: "correct {field} at {origin}",
	},
	// run(): values only parsed while starting.
	{
		ID: "value-unparsable", Kind: Refusal, Title: "value the kubelet cannot parse at start",
		Words: []Probe{
			{Text: "--kube-reserved value failed to parse: %w", In: kubeletApp, Field: "kubeReserved", Captures: []string{""}},
			{Text: "--system-reserved value failed to parse: %w", In: kubeletApp, Field: "systemReserved", Captures: []string{""}},
			{Text: "--qos-reserved value failed to parse: %w", In: kubeletApp, Field: "qosReserved", Captures: []string{""}},
			{Text: "topology manager policy options %v require feature gates %q enabled", In: kubeletApp, Field: "topologyManagerPolicyOptions", Captures: []string{"", "gate"}},
			{Text: "unable to parse reserved-cpus list: %s", In: kubeletApp, Field: "reservedSystemCPUs", Captures: []string{""}},
		},
		Fix: "correct {field} at {origin}",
	},
	{
		ID: "reserved-cpus-offline", Kind: Refusal, Title: "reserved CPUs the host does not have", Host: true,
		Field: "reservedSystemCPUs",
		Words: []Probe{
			{Text: "reserved-cpus: %s is not a subset of online-cpus: %s", In: kubeletApp, Captures: []string{"value", "online"}},
		},
		Fix: "reserve CPUs among the host's online CPUs ({online}): correct {field} at {origin}",
	},
	{
		ID: "lock-file", Kind: Refusal, Title: "lock file cannot be taken", Host: true,
		Flag:  "lock-file",
		Files: []string{"--lock-file"},
		Words: []Probe{
			{Text: "unable to acquire file lock on %q: %w", In: kubeletApp, Captures: []string{"path", ""}},
		},
		Fix: "make {value} writable, or correct --lock-file at {origin}",
	},
	{
		ID: "swap-limited-cgroup-v1", Kind: Refusal, Title: "LimitedSwap on a cgroup v1 host", Host: true,
		Field: "memorySwap.swapBehavior",
		Words: []Probe{
			{Text: "swap feature is enabled and LimitedSwap but it is only supported with cgroupv2", In: kubeletApp},
		},
		Fix: "set memorySwap.swapBehavior to NoSwap at {origin}, or move the host to cgroup v2",
	},
	// Credentials and files the configuration names.
	{
		ID: "kubeconfig-missing", Kind: Refusal, Title: "kubeconfig missing or invalid", Host: true,
		Flag:  "kubeconfig",
		Files: []string{"--kubeconfig", "--bootstrap-kubeconfig"},
		Words: []Probe{
			{Text: "invalid kubeconfig: %w", In: kubeletApp, Captures: []string{""}},
			{Text: "unable to load kubeconfig: %v", In: bootstrapPkg, Captures: []string{""}},
			{Text: "unable to load bootstrap kubeconfig: %v", In: bootstrapPkg, Flag: "bootstrap-kubeconfig", Captures: []string{""}},
		},
		Fix: "put the kubeconfig at {value} (kubeadm writes it at join), or correct {flag} at {origin}",
	},
	{
		ID: "client-ca-missing", Kind: Refusal, Title: "client CA file missing or invalid", Host: true,
		Field: "authentication.x509.clientCAFile",
		Files: []string{"authentication.x509.clientCAFile"},
		Words: []Probe{
			{Text: "unable to load client CA file %s: %w", In: []Loc{{Dir: "pkg/kubelet"}, {Dir: "cmd/kubelet/app"}}, Captures: []string{"path", ""}},
		},
		Fix: "put the cluster's CA certificate at {value}, or correct {field} at {origin}",
	},
	{
		ID: "tls-pair-missing", Kind: Refusal, Title: "serving certificate or key missing or invalid", Host: true,
		Field: "tlsCertFile",
		Files: []string{"tlsCertFile", "tlsPrivateKeyFile"},
		Words: []Probe{
			{Text: "failed to load certificate: %w", In: kubeletPkg, Captures: []string{""}},
			{Text: "failed to initialize file based certificate manager: %w", In: kubeletPkg, Captures: []string{""}},
		},
		Fix: "put the certificate and key at {value}, or correct {field} at {origin} (or set neither: the kubelet then makes a self-signed pair in --cert-dir)",
	},
	{
		ID: "runtime-unavailable", Kind: Refusal, Title: "container runtime not answering", Host: true,
		Field: "containerRuntimeEndpoint",
		Words: []Probe{
			{Text: "validate service connection: %w", In: criRemote, Captures: []string{""}},
		},
		Fix: "start the container runtime listening on {value}, or correct {field} at {origin}",
	},
	{
		ID: "credential-provider", Kind: Refusal, Title: "image credential provider configuration refused", Host: true,
		Flag:  "image-credential-provider-config",
		Files: []string{"--image-credential-provider-config", "--image-credential-provider-bin-dir"},
		Words: []Probe{
			{Text: "Failed to register CRI auth plugins", In: in("pkg/kubelet/kuberuntime"), Stage: true},
			{Text: "plugin binary directory %s did not exist", In: credPlugin, Flag: "image-credential-provider-bin-dir", Captures: []string{"path"}},
			{Text: "plugin binary executable %s did not exist", In: credPlugin, Flag: "image-credential-provider-bin-dir", Captures: []string{"path"}},
			{Text: "failed to validate credential provider config: %v", In: credPlugin, Captures: []string{""}},
			{Text: "unable to access path %q: %w", In: credPlugin, Captures: []string{"path", ""}},
			{Text: "unable to read external registry credential provider configuration from %q: %w", In: credPlugin, Captures: []string{"path", ""}},
			{Text: "error decoding config ", In: credPlugin, Captures: []string{"path", ""}},
			{Text: "failed to decode %q (wrong Kind)", In: credPlugin, Captures: []string{""}},
		},
		Fix: "correct the credential provider configuration {value} (named by {flag} at {origin}): {detail}",
	},
	// The container manager.
	{
		ID: "cgroup-driver-systemd", Kind: Refusal, Title: "systemd cgroup driver without systemd", Host: true,
		Field: "cgroupDriver",
		Words: []Probe{
			{Text: "systemd not running on this host, cannot use systemd cgroups manager", In: cgroupsManager},
		},
		Fix: "set cgroupDriver: cgroupfs at {origin} (the host has no systemd as PID 1){criDriver}",
	},
	{
		ID: "swap-on", Kind: Refusal, Title: "swap on with failSwapOn", Host: true,
		Field: "failSwapOn",
		Words: []Probe{
			{Text: "running with swap on is not supported", In: cm},
		},
		Fix: "turn swap off on the host (swapoff -a, and remove it from /etc/fstab), or set failSwapOn: false{where} (and memorySwap.swapBehavior for pods)",
	},
	{
		ID: "reserved-beyond-capacity", Kind: Refusal, Title: "reserved resources beyond the node's capacity", Host: true,
		Field: "kubeReserved",
		Words: []Probe{
			{Text: "invalid Node Allocatable configuration. %s", In: cm, Stage: true, Captures: []string{""}},
			{Text: "Resource %q has a reservation of %v but capacity of %v. Expected capacity >= reservation.", In: cm, Captures: []string{"resource", "value", "capacity"}},
			// Up to 1.29 the second number is the capacity minus the
			// reservation, not the capacity.
			{Text: "Resource %q has an allocatable of %v, capacity of %v", In: cm, Captures: []string{"resource", "value", "shortfall"}},
		},
		Fix: "lower the reservation of {resource} (kubeReserved + systemReserved + evictionHard) below the node's capacity {capacity}: {reservations}",
	},
	{
		ID: "kernel-defaults", Kind: Refusal, Title: "kernel settings differ from the kubelet's (protectKernelDefaults)", Host: true,
		Field: "protectKernelDefaults",
		Words: []Probe{
			{Text: "invalid kernel flag: %v, expected value: %v, actual value: %v", In: cm, Captures: []string{"sysctl", "expected", "actual"}},
		},
		Fix: "set the sysctls the kubelet expects on the host ({sysctls}, e.g. in /etc/sysctl.d/), or set protectKernelDefaults: false{where}",
	},
	{
		ID: "cpu-manager-state", Kind: Refusal, Title: "stale CPU manager checkpoint after a policy change", Host: true,
		Field: "cpuManagerPolicy",
		Words: []Probe{
			{Text: "please drain this node and delete the CPU manager checkpoint file %q before restarting Kubelet", In: cpuState, Captures: []string{"", "path"}},
			{Text: "configured policy %q differs from state checkpoint policy %q", In: cpuState, Captures: []string{"value", "old"}},
		},
		Fix: "drain the node, delete {path}, then start the kubelet (the policy changed from {old} to {value} at {origin}); or put cpuManagerPolicy back to {old}",
	},
	{
		ID: "memory-manager-state", Kind: Refusal, Title: "stale memory manager checkpoint after a policy change", Host: true,
		Field: "memoryManagerPolicy",
		Words: []Probe{
			{Text: "please drain this node and delete the memory manager checkpoint file %q before restarting Kubelet", In: memoryState, Captures: []string{"", "path"}},
			{Text: "[memorymanager] configured policy %q differs from state checkpoint policy %q", In: memoryState, Captures: []string{"value", "old"}},
		},
		Fix: "drain the node, delete {path}, then start the kubelet (the policy changed from {old} to {value} at {origin}); or put memoryManagerPolicy back to {old}",
	},
	// The servers it starts, after it reported itself started: it exits.
	{
		ID: "port-in-use", Kind: Refusal, Title: "kubelet port already in use", Host: true,
		Field: "port",
		Ports: []string{"port", "readOnlyPort"},
		Words: []Probe{
			{Text: "Failed to listen and serve", In: serverPkg, Stage: true},
		},
		Fix: "stop what listens on {address} (another kubelet?), or change {field} at {origin}",
	},
	{
		ID: "podresources-socket", Kind: Refusal, Title: "pod-resources socket cannot be created", Host: true,
		Flag: "root-dir",
		Words: []Probe{
			{Text: "Failed to create listener for podResources endpoint", In: serverPkg},
		},
		Fix: "remove what holds {value} (another kubelet with the same --root-dir?), or change --root-dir at {origin}",
	},
	// Not a refusal: it runs on, never healthy.
	{
		ID: "healthz-port-in-use", Kind: NeverHealthy, Title: "healthz port already in use: runs, never healthy", Host: true,
		Field: "healthzPort",
		Ports: []string{"healthzPort"},
		Words: []Probe{
			{Text: "Failed to start healthz server", In: kubeletApp},
		},
		Fix: "stop what listens on {address}, or change {field} at {origin}",
	},
	// Ended from outside: not the configuration.
	{
		ID: "killed-signal", Kind: Killed, Title: "killed by a signal: not the configuration",
		Fix: "find who sent the signal (not the kubelet's configuration)",
	},
	{
		ID: "killed-oom", Kind: Killed, Title: "killed by the OOM killer: not the configuration",
		Fix: "give the node (or the kubelet's unit) more memory, or find what uses it (not the kubelet's configuration)",
	},
	{
		ID: "stopped", Kind: Killed, Title: "stopped by systemd: not the configuration",
		Fix: "start the unit again (systemctl start {unit}); something stopped it, not the kubelet's configuration",
	},
}

// Degradations are what the kubelet survives: it starts, degraded.
// preflight reports them as warnings.
var Degradations = []Class{
	{
		ID: "static-pod-path-missing", Kind: Degraded, Title: "staticPodPath missing: no static pods until it exists", Host: true,
		Field: "staticPodPath",
		Fix:   "create {value}, or correct {field} at {origin}",
	},
	{
		ID: "logind-inhibit-delay", Kind: Degraded, Title: "logind's InhibitDelayMaxSec below shutdownGracePeriod: graceful shutdown gets less time", Host: true,
		Field: "shutdownGracePeriod",
		Fix:   "set InhibitDelayMaxSec={value} or more in a logind.conf drop-in (/etc/systemd/logind.conf.d/), or lower {field} at {origin}",
	},
}
