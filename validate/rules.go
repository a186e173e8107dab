package validate

import (
	"path/filepath"
	"time"
	"unicode"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/cpuset"

	"github.com/kubeletcfg/kubeletcfg/schema"
)

// rule is one check of ValidateKubeletConfiguration.
type rule struct {
	name  string
	since string // first minor with the rule; "" for every supported one
	until string // first minor without it (dropped or reworded); "" if still there
	check func(c *checker)
}

func (r rule) appliesTo(v *schema.Version) bool {
	return (r.since == "" || v.AtLeast(r.since)) && (r.until == "" || !v.AtLeast(r.until))
}

// Gates the rules consult, by the name the kubelet registers them under.
const (
	gateCustomCPUCFSQuotaPeriod        = "CustomCPUCFSQuotaPeriod"
	gateImageMaximumGCAge              = "ImageMaximumGCAge"
	gateDefaultPodSysctls              = "DefaultPodSysctls"
	gateRotateKubeletServerCertificate = "RotateKubeletServerCertificate"
	gateGracefulNodeShutdown           = "GracefulNodeShutdown"
	gateGracefulShutdownByPriority     = "GracefulNodeShutdownBasedOnPodPriority"
	gateNodeSwap                       = "NodeSwap"
	gateCrashLoopBackOffMax            = "KubeletCrashLoopBackOffMax"
	gateEnsureSecretPulledImages       = "KubeletEnsureSecretPulledImages"
	gateKubeletTracing                 = "KubeletTracing"
	gateMemoryQoS                      = "MemoryQoS"
	gateNodeLogQuery                   = "NodeLogQuery"
	gateLoggingAlphaOptions            = "LoggingAlphaOptions"
	gateLoggingBetaOptions             = "LoggingBetaOptions"
)

var defaultCFSQuotaPeriod = metav1.Duration{Duration: 100 * time.Millisecond}

// previousDefaultMemoryThrottlingFactor is accepted with MemoryQoS off (1.37+).
const previousDefaultMemoryThrottlingFactor = 0.9

// rules lists the checks in the order ValidateKubeletConfiguration makes them.
var rules = []rule{
	{name: "nodeLeaseDurationSeconds", check: func(c *checker) {
		if c.cfg.NodeLeaseDurationSeconds <= 0 {
			c.invalid("nodeLeaseDurationSeconds", "nodeLeaseDurationSeconds must be greater than 0")
		}
	}},
	{name: "enforceNodeAllocatable needs cgroupsPerQOS", until: "1.31", check: func(c *checker) {
		if !boolean(c.cfg.CgroupsPerQOS) && len(c.cfg.EnforceNodeAllocatable) > 0 {
			c.invalid("enforceNodeAllocatable", "enforceNodeAllocatable (--enforce-node-allocatable) is not supported unless cgroupsPerQOS (--cgroups-per-qos) is set to true")
		}
	}},
	{name: "systemCgroups needs cgroupRoot", check: func(c *checker) {
		if c.cfg.SystemCgroups != "" && c.cfg.CgroupRoot == "" {
			c.invalid("systemCgroups", "systemCgroups (--system-cgroups) was specified and cgroupRoot (--cgroup-root) was not specified")
		}
	}},
	{name: "eventBurst", check: func(c *checker) {
		if c.cfg.EventBurst < 0 {
			c.invalid("eventBurst", "eventBurst (--event-burst) %v must not be a negative number", c.cfg.EventBurst)
		}
	}},
	{name: "eventRecordQPS", check: func(c *checker) {
		if v := i32(c.cfg.EventRecordQPS); v < 0 {
			c.invalid("eventRecordQPS", "eventRecordQPS (--event-qps) %v must not be a negative number", v)
		}
	}},
	{name: "healthzPort", check: func(c *checker) {
		if v := i32(c.cfg.HealthzPort); v != 0 && !portValid(v) {
			c.invalid("healthzPort", "healthzPort (--healthz-port) %v must be between 1 and 65535, inclusive", v)
		}
	}},
	{name: "cpuCFSQuotaPeriod", check: func(c *checker) {
		period := duration(c.cfg.CPUCFSQuotaPeriod)
		if !c.enabled(gateCustomCPUCFSQuotaPeriod) && period != defaultCFSQuotaPeriod {
			c.invalid("cpuCFSQuotaPeriod", "cpuCFSQuotaPeriod (--cpu-cfs-quota-period) %v requires feature gate CustomCPUCFSQuotaPeriod", period)
		}
		if c.enabled(gateCustomCPUCFSQuotaPeriod) && !inRange(int64(period.Duration), int64(time.Millisecond), int64(time.Second)) {
			c.invalid("cpuCFSQuotaPeriod", "cpuCFSQuotaPeriod (--cpu-cfs-quota-period) %v must be between 1ms and 1sec, inclusive", period)
		}
	}},
	{name: "imageGC thresholds", check: func(c *checker) {
		high, low := i32(c.cfg.ImageGCHighThresholdPercent), i32(c.cfg.ImageGCLowThresholdPercent)
		if !inRange(int64(high), 0, 100) {
			c.invalid("imageGCHighThresholdPercent", "imageGCHighThresholdPercent (--image-gc-high-threshold) %v must be between 0 and 100, inclusive", high)
		}
		if !inRange(int64(low), 0, 100) {
			c.invalid("imageGCLowThresholdPercent", "imageGCLowThresholdPercent (--image-gc-low-threshold) %v must be between 0 and 100, inclusive", low)
		}
		if low >= high {
			c.invalid("imageGCLowThresholdPercent", "imageGCLowThresholdPercent (--image-gc-low-threshold) %v must be less than imageGCHighThresholdPercent (--image-gc-high-threshold) %v", low, high)
		}
	}},
	{name: "imageMaximumGCAge gate (old wording)", since: "1.29", until: "1.30", check: func(c *checker) {
		if c.cfg.ImageMaximumGCAge.Duration != 0 && !c.enabled(gateImageMaximumGCAge) {
			c.invalid("imageMaximumGCAge", "ImageMaximumGCAge feature gate is required for Kubelet configuration option ImageMaximumGCAge")
		}
	}},
	{name: "imageMaximumGCAge gate", since: "1.30", check: func(c *checker) {
		if c.cfg.ImageMaximumGCAge.Duration != 0 && !c.enabled(gateImageMaximumGCAge) {
			c.invalid("imageMaximumGCAge", "ImageMaximumGCAge feature gate is required for Kubelet configuration option imageMaximumGCAge")
		}
	}},
	{name: "defaultPodSysctls", since: "1.37", check: checkDefaultPodSysctls},
	{name: "imageMinimumGCAge not negative", since: "1.36", check: func(c *checker) {
		if d := c.cfg.ImageMinimumGCAge.Duration; d < 0 {
			c.invalid("imageMinimumGCAge", "imageMinimumGCAge %v must not be negative", d)
		}
	}},
	{name: "imageMaximumGCAge", since: "1.29", check: func(c *checker) {
		maxAge, minAge := c.cfg.ImageMaximumGCAge.Duration, c.cfg.ImageMinimumGCAge.Duration
		if maxAge < 0 {
			c.invalid("imageMaximumGCAge", "imageMaximumGCAge %v must not be negative", maxAge)
		}
		if maxAge > 0 && maxAge <= minAge {
			c.invalid("imageMaximumGCAge", "imageMaximumGCAge %v must be greater than imageMinimumGCAge %v", maxAge, minAge)
		}
	}},
	{name: "iptables bits", check: func(c *checker) {
		if v := i32(c.cfg.IPTablesDropBit); !inRange(int64(v), 0, 31) {
			c.invalid("iptablesDropBit", "iptablesDropBit (--iptables-drop-bit) %v must be between 0 and 31, inclusive", v)
		}
		if v := i32(c.cfg.IPTablesMasqueradeBit); !inRange(int64(v), 0, 31) {
			c.invalid("iptablesMasqueradeBit", "iptablesMasqueradeBit (--iptables-masquerade-bit) %v must be between 0 and 31, inclusive", v)
		}
	}},
	{name: "client and pod limits", check: func(c *checker) {
		cfg := c.cfg
		if cfg.KubeAPIBurst < 0 {
			c.invalid("kubeAPIBurst", "kubeAPIBurst (--kube-api-burst) %v must not be a negative number", cfg.KubeAPIBurst)
		}
		if v := i32(cfg.KubeAPIQPS); v < 0 {
			c.invalid("kubeAPIQPS", "kubeAPIQPS (--kube-api-qps) %v must not be a negative number", v)
		}
		if v := i32(cfg.NodeStatusMaxImages); v < -1 {
			c.invalid("nodeStatusMaxImages", "nodeStatusMaxImages (--node-status-max-images) %v must be -1 or greater", v)
		}
		if cfg.MaxOpenFiles < 0 {
			c.invalid("maxOpenFiles", "maxOpenFiles (--max-open-files) %v must not be a negative number", cfg.MaxOpenFiles)
		}
		if cfg.MaxPods < 0 {
			c.invalid("maxPods", "maxPods (--max-pods) %v must not be a negative number", cfg.MaxPods)
		}
		if v := i32(cfg.OOMScoreAdj); !inRange(int64(v), -1000, 1000) {
			c.invalid("oomScoreAdj", "oomScoreAdj (--oom-score-adj) %v must be between -1000 and 1000, inclusive", v)
		}
		if cfg.PodsPerCore < 0 {
			c.invalid("podsPerCore", "podsPerCore (--pods-per-core) %v must not be a negative number", cfg.PodsPerCore)
		}
	}},
	{name: "ports", check: func(c *checker) {
		if !portValid(c.cfg.Port) {
			c.invalid("port", "port (--port) %v must be between 1 and 65535, inclusive", c.cfg.Port)
		}
		if v := c.cfg.ReadOnlyPort; v != 0 && !portValid(v) {
			c.invalid("readOnlyPort", "readOnlyPort (--read-only-port) %v must be between 0 and 65535, inclusive", v)
		}
	}},
	{name: "registry limits", check: func(c *checker) {
		if c.cfg.RegistryBurst < 0 {
			c.invalid("registryBurst", "registryBurst (--registry-burst) %v must not be a negative number", c.cfg.RegistryBurst)
		}
		if v := i32(c.cfg.RegistryPullQPS); v < 0 {
			c.invalid("registryPullQPS", "registryPullQPS (--registry-qps) %v must not be a negative number", v)
		}
	}},
	{name: "maxParallelImagePulls", check: func(c *checker) {
		p := c.cfg.MaxParallelImagePulls
		if p != nil && *p < 1 {
			c.invalid("maxParallelImagePulls", "maxParallelImagePulls %v must be a positive number", *p)
		}
		if boolean(c.cfg.SerializeImagePulls) && p != nil && *p > 1 {
			c.invalid("maxParallelImagePulls", "maxParallelImagePulls cannot be larger than 1 unless SerializeImagePulls (--serialize-image-pulls) is set to false")
		}
	}},
	{name: "serverTLSBootstrap", check: func(c *checker) {
		if c.cfg.ServerTLSBootstrap && !c.enabled(gateRotateKubeletServerCertificate) {
			c.invalid("serverTLSBootstrap", "serverTLSBootstrap %v requires feature gate RotateKubeletServerCertificate", c.cfg.ServerTLSBootstrap)
		}
	}},
	{name: "runOnce", since: "1.32", check: func(c *checker) {
		if c.cfg.RunOnce {
			c.invalid("runOnce", "runOnce (--runOnce) %v, Runonce mode has been deprecated and should not be set", c.cfg.RunOnce)
		}
	}},
	{name: "registerWithTaints", check: checkTaints},
	{name: "topologyManager", check: func(c *checker) {
		policies := []string{"none", "best-effort", "restricted", "single-numa-node"}
		if !contains(policies, c.cfg.TopologyManagerPolicy) {
			c.invalid("topologyManagerPolicy", "topologyManagerPolicy (--topology-manager-policy) %q must be one of: %q", c.cfg.TopologyManagerPolicy, policies)
		}
		if s := c.cfg.TopologyManagerScope; s != "container" && s != "pod" {
			c.invalid("topologyManagerScope", "topologyManagerScope (--topology-manager-scope) %q must be one of: %q, or %q", s, "container", "pod")
		}
	}},
	{name: "graceful node shutdown", check: checkGracefulShutdown},
	{name: "memorySwap (UnlimitedSwap era)", until: "1.30", check: func(c *checker) {
		checkSwap(c, []string{"", "LimitedSwap", "UnlimitedSwap"}, `memorySwap.swapBehavior %q must be one of: "", %q, or %q`, "LimitedSwap", "UnlimitedSwap")
	}},
	{name: "memorySwap", since: "1.30", check: func(c *checker) {
		checkSwap(c, []string{"", "NoSwap", "LimitedSwap"}, `memorySwap.swapBehavior %q must be one of: "", %q or %q`, "LimitedSwap", "NoSwap")
	}},
	{name: "crashLoopBackOff", since: "1.32", check: checkCrashLoopBackOff},
	{name: "enforceNodeAllocatable", check: checkEnforceNodeAllocatable},
	{name: "hairpinMode", check: func(c *checker) {
		switch c.cfg.HairpinMode {
		case "none", "hairpin-veth", "promiscuous-bridge":
		default:
			c.invalid("hairpinMode", "option %q specified for hairpinMode (--hairpin-mode). Valid options are %q, %q or %q",
				c.cfg.HairpinMode, "none", "hairpin-veth", "promiscuous-bridge")
		}
	}},
	{name: "image pull credential verification", since: "1.33", check: checkImagePullCredentials},
	{name: "reservedSystemCPUs", check: func(c *checker) {
		cpus := c.cfg.ReservedSystemCPUs
		if cpus == "" {
			return
		}
		if c.cfg.SystemReservedCgroup != "" || c.cfg.KubeReservedCgroup != "" {
			c.invalid("reservedSystemCPUs", "can't use reservedSystemCPUs (--reserved-cpus) with systemReservedCgroup (--system-reserved-cgroup) or kubeReservedCgroup (--kube-reserved-cgroup)")
		}
		if _, err := cpuset.Parse(cpus); err != nil {
			c.invalid("reservedSystemCPUs", "unable to parse reservedSystemCPUs (--reserved-cpus) %v, error: %v", cpus, err)
		}
	}},
	{name: "reservedMemory", check: checkReservedMemory},
	{name: "linux", since: "1.31", check: checkLinux},
	{name: "showHiddenMetricsForVersion", check: checkShowHiddenMetrics},
	{name: "logging", check: checkLogging},
	{name: "tracing (KubeletTracing gate)", until: "1.34", check: func(c *checker) {
		if c.enabled(gateKubeletTracing) {
			checkTracing(c)
		} else if c.cfg.Tracing != nil {
			c.invalid("tracing", "tracing should not be configured if KubeletTracing feature flag is disabled.")
		}
	}},
	{name: "tracing", since: "1.34", check: checkTracing},
	{name: "memoryThrottlingFactor required", until: "1.37", check: func(c *checker) {
		if c.enabled(gateMemoryQoS) && c.cfg.MemoryThrottlingFactor == nil {
			c.invalid("memoryThrottlingFactor", "memoryThrottlingFactor is required when MemoryQoS feature flag is enabled")
		}
	}},
	{name: "memoryThrottlingFactor needs MemoryQoS", since: "1.37", check: func(c *checker) {
		f := c.cfg.MemoryThrottlingFactor
		if !c.enabled(gateMemoryQoS) && f != nil && *f != previousDefaultMemoryThrottlingFactor {
			c.invalid("memoryThrottlingFactor", "memoryThrottlingFactor must not be set when MemoryQoS feature gate is disabled")
		}
	}},
	{name: "memoryThrottlingFactor range", check: func(c *checker) {
		if f := c.cfg.MemoryThrottlingFactor; f != nil && (*f <= 0 || *f > 1.0) {
			c.invalid("memoryThrottlingFactor", "memoryThrottlingFactor %v must be greater than 0 and less than or equal to 1.0", *f)
		}
	}},
	{name: "memoryReservationPolicy", since: "1.36", check: func(c *checker) {
		p := string(c.cfg.MemoryReservationPolicy)
		if !c.enabled(gateMemoryQoS) && p == "TieredReservation" {
			c.invalid("memoryReservationPolicy", "memoryReservationPolicy %q requires MemoryQoS feature gate to be enabled", p)
		}
		if p != "None" && p != "TieredReservation" {
			c.invalid("memoryReservationPolicy", "option %q specified for memoryReservationPolicy. Valid options are %q or %q", p, "None", "TieredReservation")
		}
	}},
	{name: "containerRuntimeEndpoint", check: func(c *checker) {
		if c.cfg.ContainerRuntimeEndpoint == "" {
			c.invalid("containerRuntimeEndpoint", "the containerRuntimeEndpoint was not specified or empty")
		}
	}},
	{name: "enableSystemLogQuery gate (old wording)", until: "1.35", check: func(c *checker) {
		if boolean(c.cfg.EnableSystemLogQuery) && !c.enabled(gateNodeLogQuery) {
			c.invalid("enableSystemLogQuery", "NodeLogQuery feature gate is required for enableSystemLogHandler")
		}
	}},
	{name: "enableSystemLogQuery gate", since: "1.35", check: func(c *checker) {
		if boolean(c.cfg.EnableSystemLogQuery) && !c.enabled(gateNodeLogQuery) {
			c.invalid("enableSystemLogQuery", "NodeLogQuery feature gate is required for enableSystemLogQuery")
		}
	}},
	{name: "enableSystemLogQuery needs handler", check: func(c *checker) {
		if boolean(c.cfg.EnableSystemLogQuery) && !boolean(c.cfg.EnableSystemLogHandler) {
			c.invalid("enableSystemLogQuery", "enableSystemLogHandler is required for enableSystemLogQuery")
		}
	}},
	{name: "container log rotation", since: "1.30", check: func(c *checker) {
		if i32(c.cfg.ContainerLogMaxWorkers) < 1 {
			c.invalid("containerLogMaxWorkers", "containerLogMaxWorkers must be greater than or equal to 1")
		}
		if duration(c.cfg.ContainerLogMonitorInterval).Seconds() < 3 {
			c.invalid("containerLogMonitorInterval", "containerLogMonitorInterval must be a positive time duration greater than or equal to 3s")
		}
	}},
	{name: "containerLogMaxFiles", since: "1.33", check: func(c *checker) {
		if i32(c.cfg.ContainerLogMaxFiles) <= 1 {
			c.invalid("containerLogMaxFiles", "containerLogMaxFiles must be greater than 1")
		}
	}},
	{name: "podLogsDir", since: "1.30", check: checkPodLogsDir},
}

func contains(list []string, s string) bool {
	for _, item := range list {
		if item == s {
			return true
		}
	}
	return false
}

func checkGracefulShutdown(c *checker) {
	period, critical := c.cfg.ShutdownGracePeriod, c.cfg.ShutdownGracePeriodCriticalPods
	tooShort := func(d time.Duration) bool { return d < 0 || (d > 0 && d < time.Second) }
	gate := c.enabled(gateGracefulNodeShutdown)
	if gate {
		if critical.Duration > period.Duration {
			c.invalid("shutdownGracePeriodCriticalPods", "shutdownGracePeriodCriticalPods %v must be <= shutdownGracePeriod %v", critical, period)
		}
		if tooShort(period.Duration) {
			c.invalid("shutdownGracePeriod", "shutdownGracePeriod %v must be either zero or otherwise >= 1 sec", period)
		}
		if tooShort(critical.Duration) {
			c.invalid("shutdownGracePeriodCriticalPods", "shutdownGracePeriodCriticalPods %v must be either zero or otherwise >= 1 sec", critical)
		}
	}
	if (period.Duration > 0 || critical.Duration > 0) && !gate {
		c.invalid("shutdownGracePeriod", "specifying shutdownGracePeriod or shutdownGracePeriodCriticalPods requires feature gate GracefulNodeShutdown")
	}
	byPriority := len(c.cfg.ShutdownGracePeriodByPodPriority) != 0
	if c.enabled(gateGracefulShutdownByPriority) {
		if byPriority && (period.Duration > 0 || critical.Duration > 0) {
			c.invalid("shutdownGracePeriodByPodPriority", "Cannot specify both shutdownGracePeriodByPodPriority and shutdownGracePeriod at the same time")
		}
	} else if byPriority {
		c.invalid("shutdownGracePeriodByPodPriority", "Specifying shutdownGracePeriodByPodPriority requires feature gate GracefulNodeShutdownBasedOnPodPriority")
	}
}

func checkSwap(c *checker, valid []string, format string, a, b string) {
	behavior := c.cfg.MemorySwap.SwapBehavior
	if c.enabled(gateNodeSwap) {
		if !contains(valid, behavior) {
			c.invalid("memorySwap.swapBehavior", format, behavior, a, b)
		}
	} else if c.cfg.MemorySwap != (v1beta1.MemorySwapConfiguration{}) {
		c.invalid("memorySwap.swapBehavior", "memorySwap.swapBehavior cannot be set when NodeSwap feature flag is disabled")
	}
}

func checkCrashLoopBackOff(c *checker) {
	maxPeriod := c.cfg.CrashLoopBackOff.MaxContainerRestartPeriod
	const fieldPath = "crashLoopBackOff.maxContainerRestartPeriod"
	if c.enabled(gateCrashLoopBackOffMax) {
		if maxPeriod == nil {
			c.invalid(fieldPath, "FeatureGate KubeletCrashLoopBackOffMax is enabled, CrashLoopBackOff.MaxContainerRestartPeriod must be set")
		}
		if maxPeriod != nil && !inRange(maxPeriod.Duration.Milliseconds(), 1000, 300000) {
			c.invalid(fieldPath, "CrashLoopBackOff.MaxContainerRestartPeriod (got: %v seconds) must be set between 1s and 300s", maxPeriod.Seconds())
		}
	} else if maxPeriod != nil {
		c.invalid(fieldPath, "FeatureGate KubeletCrashLoopBackOffMax not enabled, CrashLoopBackOff.MaxContainerRestartPeriod must not be set")
	}
}

func checkPodLogsDir(c *checker) {
	dir := c.cfg.PodLogsDir
	if dir == "" {
		c.invalid("podLogsDir", "podLogsDir was not specified")
	}
	if !filepath.IsAbs(dir) {
		c.invalid("podLogsDir", "pod logs path %q must be absolute path", dir)
	}
	if filepath.ToSlash(filepath.Clean(dir)) != filepath.ToSlash(dir) {
		c.invalid("podLogsDir", "pod logs path %q must be normalized", dir)
	}
	for _, r := range dir {
		if r > unicode.MaxASCII {
			c.invalid("podLogsDir", "pod logs path %q mut contains ASCII characters only", dir)
			break
		}
	}
}
