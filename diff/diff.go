// Package diff compares two effective kubelet configurations field by field
// and says what each change takes: a restart, a drain and a state file
// removal, a node re-registration, a look at the security posture, a matching
// container runtime.
package diff

import (
	"encoding/json"
	"reflect"
	"sort"
	"strings"

	"k8s.io/kubelet/config/v1beta1"

	"github.com/kubeletcfg/kubeletcfg/config"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

// Class is what a change takes.
type Class string

const (
	Restart      Class = "restart"       // a kubelet restart, nothing more
	DrainState   Class = "drain"         // drain the node and remove a state file, or the kubelet refuses to start
	Registration Class = "registration"  // takes effect only when the node registers
	Security     Class = "security"      // changes the security posture
	Runtime      Class = "runtime-match" // must match the container runtime
)

// Change is one field whose effective value differs.
type Change struct {
	Path    string  `json:"path"`
	Old     any     `json:"old"`
	New     any     `json:"new"`
	Classes []Class `json:"classes"`
	// StateFile is the file to remove (after a drain) for a DrainState change.
	StateFile string `json:"stateFile,omitempty"`
}

// Compute lists the fields whose values differ between two effective
// configurations of kubelet v, in path order. Both are compared as the
// kubelet holds them (defaults applied, durations and quantities as the
// kubelet prints them), so an explicit default equals an absent field.
func Compute(old, new *v1beta1.KubeletConfiguration, v *schema.Version) ([]Change, error) {
	a, err := config.ToMap(old, v)
	if err != nil {
		return nil, err
	}
	b, err := config.ToMap(new, v)
	if err != nil {
		return nil, err
	}
	return CompareMaps(a, b, v), nil
}

// CompareMaps is Compute for configurations already rendered by
// config.ToMap, for callers that compare one configuration with many.
func CompareMaps(old, new map[string]any, v *schema.Version) []Change {
	var out []Change
	walk(old, new, "", v, &out)
	sortChanges(out)
	return out
}

func sortChanges(c []Change) {
	sort.Slice(c, func(i, j int) bool { return c[i].Path < c[j].Path })
}

func walk(a, b map[string]any, prefix string, v *schema.Version, out *[]Change) {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	for k := range keys {
		path := k
		if prefix != "" {
			path = prefix + "." + k
		}
		av, bv := a[k], b[k]
		am, aok := av.(map[string]any)
		bm, bok := bv.(map[string]any)
		if f, _ := v.Field(path); f.Type == "object" && (aok || av == nil) && (bok || bv == nil) {
			walk(orEmpty(am), orEmpty(bm), path, v, out)
			continue
		}
		if reflect.DeepEqual(normalize(av), normalize(bv)) {
			continue
		}
		// Compared as they are, shown redacted (the header values of
		// staticPodURLHeader are tokens).
		*out = append(*out, classify(Change{Path: path, Old: config.RedactValue(path, av), New: config.RedactValue(path, bv)}))
	}
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// normalize treats an empty map or list like an absent one.
func normalize(x any) any {
	switch y := x.(type) {
	case map[string]any:
		if len(y) == 0 {
			return nil
		}
	case []any:
		if len(y) == 0 {
			return nil
		}
	}
	return x
}

// stateFiles are the checkpoints the kubelet refuses to start with when the
// policy that wrote them changed.
var stateFiles = map[string]string{
	"cpuManagerPolicy":        "cpu_manager_state",
	"cpuManagerPolicyOptions": "cpu_manager_state",
	"memoryManagerPolicy":     "memory_manager_state",
	"reservedMemory":          "memory_manager_state",
	"reservedSystemCPUs":      "cpu_manager_state",
}

func classify(c Change) Change {
	if f, ok := stateFiles[c.Path]; ok {
		c.Classes = append(c.Classes, DrainState)
		c.StateFile = f
	}
	if strings.HasPrefix(c.Path, "topologyManager") {
		c.Classes = append(c.Classes, DrainState)
	}
	switch {
	case c.Path == "registerWithTaints" || c.Path == "registerNode" || c.Path == "providerID":
		c.Classes = append(c.Classes, Registration)
	case strings.HasPrefix(c.Path, "authentication.") || strings.HasPrefix(c.Path, "authorization.") ||
		c.Path == "readOnlyPort" || strings.HasPrefix(c.Path, "tls") || c.Path == "serverTLSBootstrap" ||
		c.Path == "protectKernelDefaults" || c.Path == "enableDebuggingHandlers" || c.Path == "address" ||
		c.Path == "rotateCertificates" || c.Path == "allowedUnsafeSysctls":
		c.Classes = append(c.Classes, Security)
	case c.Path == "cgroupDriver" || c.Path == "containerRuntimeEndpoint" || c.Path == "imageServiceEndpoint":
		c.Classes = append(c.Classes, Runtime)
	}
	if len(c.Classes) == 0 {
		c.Classes = []Class{Restart}
	}
	return c
}

// Value renders a value for people.
func Value(x any) string {
	if x == nil {
		return "(unset)"
	}
	b, _ := json.Marshal(x)
	return string(b)
}
