package validate

import "fmt"

// The enforceNodeAllocatable keys (pkg/kubelet/types).
const (
	enforcePods                       = "pods"
	enforceSystemReserved             = "system-reserved"
	enforceSystemReservedCompressible = "system-reserved-compressible"
	enforceKubeReserved               = "kube-reserved"
	enforceKubeReservedCompressible   = "kube-reserved-compressible"
	enforceNone                       = "none"
)

// checkEnforceNodeAllocatable validates enforceNodeAllocatable. The rule grew
// over the versions: 1.31 refuses duplicates and wants cgroupsPerQOS per key,
// 1.32 adds the *-compressible keys.
func checkEnforceNodeAllocatable(c *checker) {
	keys := c.cfg.EnforceNodeAllocatable
	perKeyChecks := has(c.v, enforcePerKeyChecks)
	compressible := has(c.v, enforceCompressibleKeys)

	if compressible {
		has := map[string]bool{}
		for _, k := range keys {
			has[k] = true
		}
		for _, pair := range [][2]string{
			{enforceSystemReserved, enforceSystemReservedCompressible},
			{enforceKubeReserved, enforceKubeReservedCompressible},
		} {
			if has[pair[0]] && has[pair[1]] {
				c.invalid("enforceNodeAllocatable", "both %q and %q cannot be specified together in enforceNodeAllocatable (--enforce-node-allocatable)", pair[0], pair[1])
			}
		}
	}

	seen := map[string]bool{}
	for i, key := range keys {
		fieldPath := fmt.Sprintf("enforceNodeAllocatable[%d]", i)
		if perKeyChecks {
			if seen[key] {
				c.invalid(fieldPath, "duplicated enforcements %q in enforceNodeAllocatable (--enforce-node-allocatable)", key)
				continue
			}
			seen[key] = true
		}
		switch {
		case key == enforcePods:
		case key == enforceSystemReserved || (compressible && key == enforceSystemReservedCompressible):
			if c.cfg.SystemReservedCgroup == "" {
				if compressible {
					c.invalid(fieldPath, "systemReservedCgroup (--system-reserved-cgroup) must be specified when %q or %q included in enforceNodeAllocatable (--enforce-node-allocatable)", enforceSystemReserved, enforceSystemReservedCompressible)
				} else {
					c.invalid(fieldPath, "systemReservedCgroup (--system-reserved-cgroup) must be specified when %q contained in enforceNodeAllocatable (--enforce-node-allocatable)", enforceSystemReserved)
				}
			}
		case key == enforceKubeReserved || (compressible && key == enforceKubeReservedCompressible):
			if c.cfg.KubeReservedCgroup == "" {
				if compressible {
					c.invalid(fieldPath, "kubeReservedCgroup (--kube-reserved-cgroup) must be specified when %q or %q included in enforceNodeAllocatable (--enforce-node-allocatable)", enforceKubeReserved, enforceKubeReservedCompressible)
				} else {
					c.invalid(fieldPath, "kubeReservedCgroup (--kube-reserved-cgroup) must be specified when %q contained in enforceNodeAllocatable (--enforce-node-allocatable)", enforceKubeReserved)
				}
			}
		case key == enforceNone:
			if len(keys) > 1 {
				c.invalid(fieldPath, "enforceNodeAllocatable (--enforce-node-allocatable) may not contain additional enforcements when %q is specified", enforceNone)
			}
			continue
		default:
			if compressible {
				c.invalid(fieldPath, "option %q specified for enforceNodeAllocatable (--enforce-node-allocatable). Valid options are %q, %q, %q, %q, %q or %q",
					key, enforcePods, enforceSystemReserved, enforceSystemReservedCompressible, enforceKubeReserved, enforceKubeReservedCompressible, enforceNone)
			} else {
				c.invalid(fieldPath, "option %q specified for enforceNodeAllocatable (--enforce-node-allocatable). Valid options are %q, %q, %q, or %q",
					key, enforcePods, enforceSystemReserved, enforceKubeReserved, enforceNone)
			}
			continue
		}
		if perKeyChecks && !boolean(c.cfg.CgroupsPerQOS) {
			c.invalid(fieldPath, "cgroupsPerQOS (--cgroups-per-qos) must be set to true when %q contained in enforceNodeAllocatable (--enforce-node-allocatable)", key)
		}
	}
}
