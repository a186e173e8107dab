package validate

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
)

// checkTaints: each registerWithTaints entry must be a valid taint without a
// timeAdded. The kubelet prints the taint struct, not why it is invalid.
func checkTaints(c *checker) {
	for i, taint := range c.cfg.RegisterWithTaints {
		fieldPath := fmt.Sprintf("registerWithTaints[%d]", i)
		if !taintValid(taint) {
			c.add(fieldPath, "invalid taint: %v", taint)
		}
		if taint.TimeAdded != nil {
			c.invalid(fieldPath+".timeAdded", "taint.TimeAdded is not nil")
		}
	}
}

// taintValid is what pkg/util/taints CheckTaintValidation accepts.
func taintValid(t corev1.Taint) bool {
	if len(utilvalidation.IsQualifiedName(t.Key)) > 0 {
		return false
	}
	if t.Value != "" && len(utilvalidation.IsValidLabelValue(t.Value)) > 0 {
		return false
	}
	switch t.Effect {
	case "", corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		return true
	}
	return false
}

// checkReservedMemory is validation_reserved_memory.go: per NUMA node, only
// memory and hugepages-* limits, none zero, none twice.
func checkReservedMemory(c *checker) {
	seen := map[int32]map[corev1.ResourceName]bool{}
	for i, reservation := range c.cfg.ReservedMemory {
		node := reservation.NumaNode
		if seen[node] == nil {
			seen[node] = map[corev1.ResourceName]bool{}
		}
		for _, name := range slices.Sorted(maps.Keys(reservation.Limits)) {
			resource := corev1.ResourceName(name)
			quantity := reservation.Limits[resource]
			fieldPath := fmt.Sprintf("reservedMemory[%d].limits.%s", i, name)
			if resource != corev1.ResourceMemory && !strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix) {
				c.invalid(fieldPath, "the limit type %q for NUMA node %d is not supported, only %v is accepted",
					name, node, []corev1.ResourceName{corev1.ResourceMemory, corev1.ResourceHugePagesPrefix + "<HugePageSize>"})
			}
			if quantity.IsZero() {
				c.invalid(fieldPath, "reserved memory may not be zero for NUMA node %d and resource %q", node, name)
			}
			if seen[node][resource] {
				c.invalid(fieldPath, "the reserved memory has a duplicate value for NUMA node %d and resource %q", node, name)
			}
			seen[node][resource] = true
		}
	}
}

// userNsUnitLength is the granularity of user namespace ID ranges.
const userNsUnitLength = 65536

// checkLinux is validation_linux.go: host-related checks, of which the
// kubelet reports only the first that fails.
func checkLinux(c *checker) {
	cfg := c.cfg
	if boolean(cfg.FailCgroupV1) && c.host.CgroupV1 {
		if has(c.v, cgroupV1Unsupported) {
			c.add("failCgroupV1", "kubelet is configured to not run on a host using cgroup v1. cgroup v1 support is unsupported and will be removed in a future release")
		} else {
			c.add("failCgroupV1", "kubelet is configured to not run on a host using cgroup v1. cgroup v1 support is in maintenance mode")
		}
		return
	}
	if has(c.v, singleProcessOOMKillOnV1) && c.host.CgroupV1 && cfg.SingleProcessOOMKill != nil && !*cfg.SingleProcessOOMKill {
		c.invalid("singleProcessOOMKill", "singleProcessOOMKill must not be explicitly set to false when using cgroup v1")
		return
	}
	if has(c.v, userNamespacesIDsPerPod) && cfg.UserNamespaces != nil && cfg.UserNamespaces.IDsPerPod != nil {
		ids := *cfg.UserNamespaces.IDsPerPod
		const fieldPath = "userNamespaces.idsPerPod"
		switch {
		case ids < userNsUnitLength:
			c.invalid(fieldPath, "userNamespaces.idsPerPod must not be less than %d", userNsUnitLength)
		case ids%userNsUnitLength != 0:
			c.invalid(fieldPath, "userNamespaces.idsPerPod must be a multiple of %d", userNsUnitLength)
		case ids > math.MaxUint32:
			c.invalid(fieldPath, "userNamespaces.idsPerPod must not be more than %d", int64(math.MaxUint32))
		}
	}
}

// checkShowHiddenMetrics is component-base metrics' ValidateShowHiddenMetricsVersion:
// only the previous minor of the running kubelet is accepted.
func checkShowHiddenMetrics(c *checker) {
	target := c.cfg.ShowHiddenMetricsForVersion
	if target == "" {
		return
	}
	var major, minor int
	fmt.Sscanf(c.v.Minor, "%d.%d", &major, &minor)
	valid := fmt.Sprintf("%d.%d", major, minor-1)
	if target == valid {
		return
	}
	if has(c.v, hiddenMetricsOnlyPrevious) {
		c.add("showHiddenMetricsForVersion", "invalid showHiddenMetricsForVersion: showHiddenMetricsForVersion: Invalid value: %q: must be omitted or have the value '%v'; only the previous minor version is allowed", target, valid)
		return
	}
	c.add("showHiddenMetricsForVersion", "--show-hidden-metrics-for-version must be omitted or have the value '%v'. Only the previous minor version is allowed", valid)
}

// Sysctl names as pod security accepts them (1.37 defaultPodSysctls).
var sysctlNameRe = lazyRegexp(`^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$`)

const sysctlMaxLength = 253

// checkDefaultPodSysctls (1.37): the DefaultPodSysctls gate, valid names,
// namespaced sysctls only, no sysctl twice (in either separator style).
func checkDefaultPodSysctls(c *checker) {
	sysctls := c.cfg.DefaultPodSysctls
	if len(sysctls) == 0 {
		return
	}
	if !c.enabled(gateDefaultPodSysctls) {
		c.invalid("defaultPodSysctls", "DefaultPodSysctls feature gate is required for Kubelet configuration option defaultPodSysctls")
		return
	}
	seen := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(sysctls)) {
		fieldPath := "defaultPodSysctls." + name
		if len(name) > sysctlMaxLength || !sysctlNameRe().MatchString(name) {
			c.invalid(fieldPath, "%q is not a valid sysctl name for defaultPodSysctls", name)
			continue
		}
		normalized := normalizeSysctl(name)
		if !sysctlNamespaced(normalized) {
			c.invalid(fieldPath, "%q is not known to be namespaced for defaultPodSysctls", name)
		}
		if seen[normalized] {
			c.invalid(fieldPath, "duplicate sysctl %q found in defaultPodSysctls", normalized)
		}
		seen[normalized] = true
	}
}

// normalizeSysctl writes a sysctl with dots as separators: a name whose first
// separator is "/" has its "." and "/" swapped.
func normalizeSysctl(name string) string {
	i := strings.IndexAny(name, "./")
	if i < 0 || name[i] == '.' {
		return name
	}
	return strings.Map(func(r rune) rune {
		switch r {
		case '.':
			return '/'
		case '/':
			return '.'
		}
		return r
	}, name)
}

// Sysctls the kernel namespaces (component-helpers node/util/sysctl).
var (
	namespacedSysctls = map[string]bool{
		"kernel.domainname": true,
		"kernel.sem":        true, "kernel.shmall": true, "kernel.shmmax": true, "kernel.shmmni": true,
		"kernel.shm_rmid_forced": true, "kernel.shm": true,
		"kernel.msgmax": true, "kernel.msgmnb": true, "kernel.msgmni": true, "kernel.msg": true,
	}
	namespacedSysctlPrefixes = []string{"net.", "fs.mqueue.", "user."}
)

// sysctlNamespaced reports whether a normalized sysctl (or, with a "*", the
// prefix before it) belongs to a kernel namespace.
func sysctlNamespaced(name string) bool {
	if i := strings.Index(name, "*"); i >= 0 {
		name = name[:i]
	}
	if namespacedSysctls[name] {
		return true
	}
	for _, p := range namespacedSysctlPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}
