package validate

import "github.com/kubeletcfg/kubeletcfg/schema"

// change is a difference between kubelet versions that a check depends on,
// other than a rule that comes or goes (rules says those, with since/until).
type change int

const (
	cgroupV1Unsupported       change = iota // failCgroupV1 says v1 is "unsupported", not "in maintenance mode"
	singleProcessOOMKillOnV1                // singleProcessOOMKill false refused on cgroup v1
	userNamespacesIDsPerPod                 // userNamespaces.idsPerPod checked
	hiddenMetricsOnlyPrevious               // showHiddenMetricsForVersion: the new wording
	enforcePerKeyChecks                     // enforceNodeAllocatable keys checked one by one
	enforceCompressibleKeys                 // enforceNodeAllocatable's *-compressible keys
	gatesNeedDependencies                   // enabled gates need their dependencies
	imageNameAsWritten                      // image names kept as written, not normalized
	flushFrequencyPositive                  // logging.flushFrequency must be > 0
	textSplitStreamGated                    // logging.options.text needs LoggingAlphaOptions
	fieldErrorPlainInt                      // apimachinery prints an int64 value plainly
	tlsCurvePreferences                     // tlsCurvePreferences parsed at start-up
	containerfsSignals                      // containerfs.* eviction signals
	containerLogMaxFilesOne                 // containerLogMaxFiles may be 1 at start-up
)

// since is the first kubelet minor with each change.
var since = map[change]string{
	cgroupV1Unsupported:       "1.35",
	singleProcessOOMKillOnV1:  "1.32",
	userNamespacesIDsPerPod:   "1.33",
	hiddenMetricsOnlyPrevious: "1.36",
	enforcePerKeyChecks:       "1.31",
	enforceCompressibleKeys:   "1.32",
	gatesNeedDependencies:     "1.35",
	imageNameAsWritten:        "1.36",
	flushFrequencyPositive:    "1.35",
	textSplitStreamGated:      "1.30",
	fieldErrorPlainInt:        "1.34",
	tlsCurvePreferences:       "1.36",
	containerfsSignals:        "1.29",
	containerLogMaxFilesOne:   "1.33",
}

// has reports whether kubelet v has the change.
func has(v *schema.Version, ch change) bool {
	return v.AtLeast(since[ch])
}
