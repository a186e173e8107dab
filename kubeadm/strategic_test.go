package kubeadm

import (
	"encoding/json"
	"math/rand"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/kubelet/config/v1beta1"
)

// apimachinery's strategic merge as kubeadm calls it: the oracle. Its map
// walks are in Go's random order, so a patch whose keys interact (a list
// and its $deleteFromPrimitiveList) has more than one outcome: each run is
// one of them.
func oracleOutcomes(doc, patch []byte, runs int) map[string]bool {
	out := map[string]bool{}
	for range runs {
		out[oracleOnce(doc, patch)] = true
	}
	return out
}

func oracleOnce(doc, patch []byte) (res string) {
	defer func() {
		if p := recover(); p != nil {
			res = "panic"
		}
	}()
	b, err := strategicpatch.StrategicMergePatch(doc, patch, v1beta1.KubeletConfiguration{})
	if err != nil {
		return "error: " + err.Error()
	}
	return string(b)
}

func ours(doc, patch []byte) string {
	b, err := strategicMerge(doc, patch)
	switch {
	case err != nil && strings.HasPrefix(err.Error(), "kubeadm panics"):
		return "panic"
	case err != nil:
		return "error: " + err.Error()
	}
	return string(b)
}

func TestStrategicMergeCases(t *testing.T) {
	doc := `{"apiVersion":"kubelet.config.k8s.io/v1beta1","kind":"KubeletConfiguration","maxPods":110,` +
		`"evictionHard":{"memory.available":"100Mi","nodefs.available":"10%"},"clusterDNS":["10.96.0.10","10.96.0.11"],` +
		`"authentication":{"anonymous":{"enabled":false},"webhook":{"enabled":true,"cacheTTL":"2m0s"}},` +
		`"registerWithTaints":[{"key":"a","effect":"NoSchedule"}],"featureGates":{"A":true},"shutdownGracePeriod":"30s"}`
	for _, c := range []struct{ name, patch, want string }{
		{"fields set, maps merged", `{"maxPods":120,"evictionHard":{"imagefs.available":"15%"}}`, ""},
		{"null removes", `{"evictionHard":{"nodefs.available":null},"maxPods":null}`, ""},
		{"a list is replaced", `{"clusterDNS":["10.96.0.12"]}`, ""},
		{"a replaced list keeps its directives", `{"registerWithTaints":[{"$patch":"delete","key":"a"}]}`, ""},
		{"a new key loses nulls and directives", `{"tracing":{"endpoint":null,"x":{"$patch":"delete"},"samplingRatePerMillion":5}}`, ""},
		{"keys matched without case", `{"EvictionHard":{"memory.available":"200Mi"}}`, ""},
		{"$patch replace", `{"evictionHard":{"$patch":"replace","memory.available":"1Gi"}}`, ""},
		{"$patch delete", `{"authentication":{"$patch":"delete"}}`, ""},
		{"$patch unknown", `{"authentication":{"$patch":"merge"}}`, "error: unknown patch type: merge in map: map[$patch:merge]"},
		{"$retainKeys", `{"authentication":{"$retainKeys":["webhook"],"webhook":{"enabled":false}}}`, ""},
		{"$retainKeys missing a key", `{"authentication":{"$retainKeys":["x"],"webhook":{"enabled":false}}}`, "error: invalid patch format of retainKeys"},
		{"$setElementOrder", `{"$setElementOrder/clusterDNS":["10.96.0.11","10.96.0.10"]}`, ""},
		{"$setElementOrder with the list", `{"$setElementOrder/clusterDNS":["b","a"],"clusterDNS":["a","b"]}`, ""},
		{"$setElementOrder of no field", `{"$setElementOrder/nope":["a"]}`, `error: unable to find api field in struct KubeletConfiguration for the json field "nope"`},
		{"$setElementOrder of a list of maps", `{"$setElementOrder/registerWithTaints":[{"key":"a"}]}`, "panic"},
		{"$deleteFromPrimitiveList", `{"$deleteFromPrimitiveList/clusterDNS":["10.96.0.10"]}`, ""},
		{"$deleteFromPrimitiveList of maps", `{"$deleteFromPrimitiveList/registerWithTaints":[{"key":"a"}]}`, "error: cannot merge lists without merge key for struct"},
		{"$deleteFromPrimitiveList starting with null", `{"$deleteFromPrimitiveList/clusterDNS":[null]}`, ""},
		{"a map under a key of no field", `{"authentication":{"nope":{"a":1}},"x":1}`, ""},
		{"a map into a map field's value", `{"featureGates":{"A":{"b":1}}}`, ""},
		{"a map over a string field", `{"shutdownGracePeriod":{"a":1}}`, ""},
		{"not an object", `[1]`, "error: invalid JSON document"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := ours([]byte(doc), []byte(c.patch))
			want := oracleOutcomes([]byte(doc), []byte(c.patch), 8)
			if !want[got] {
				t.Errorf("ours:\n%s\napimachinery:\n%v", got, keys(want))
			}
			if c.want != "" && got != c.want {
				t.Errorf("got %s, want %s", got, c.want)
			}
		})
	}
	// A map under a field whose value is a map in both: looked up as a
	// struct field of the map's value type.
	if got, want := ours([]byte(`{"featureGates":{"A":{"x":1}}}`), []byte(`{"featureGates":{"A":{"y":{"z":1}}}}`)),
		"error: merging an object in json but data type is not struct, instead is: map"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestStrategicMergeMatchesApimachinery lays random patches over random
// documents, both built from the configuration's own keys (maps, lists,
// pointers, durations, unknown keys, keys in other case) and every
// directive, and holds the outcome to one of apimachinery's.
func TestStrategicMergeMatchesApimachinery(t *testing.T) {
	n := 20000
	if testing.Short() {
		n = 2000
	}
	r := rand.New(rand.NewSource(1))
	g := &smpGen{r: r}
	errs, panics := 0, 0
	for i := range n {
		doc, _ := json.Marshal(g.object(0, false))
		patch, _ := json.Marshal(g.object(0, true))
		got := ours(doc, patch)
		want := oracleOutcomes(doc, patch, 4)
		if !want[got] {
			// Some outcomes are rare draws of Go's map order: ask more.
			want = oracleOutcomes(doc, patch, 64)
		}
		if !want[got] {
			t.Fatalf("case %d:\ndoc   %s\npatch %s\nours  %s\napimachinery %v", i, doc, patch, got, keys(want))
		}
		switch {
		case got == "panic":
			panics++
		case strings.HasPrefix(got, "error: "):
			errs++
		}
	}
	t.Logf("%d cases: %d errors, %d panics of kubeadm's", n, errs, panics)
	if errs == 0 || panics == 0 || errs+panics > n/2 {
		t.Errorf("the generator should give some errors and panics, not mostly: %d errors, %d panics", errs, panics)
	}
}

type smpGen struct{ r *rand.Rand }

var smpKeys = []string{"maxPods", "evictionHard", "featureGates", "clusterDNS", "authentication", "anonymous", "webhook",
	"enabled", "cacheTTL", "registerWithTaints", "key", "effect", "tracing", "endpoint", "logging", "options", "json",
	"shutdownGracePeriod", "Duration", "apiVersion", "kind", "allowedUnsafeSysctls", "EvictionHard", "MAXPODS", "nope",
	"memory.available", "", "systemReserved", "crashLoopBackOff", "maxContainerRestartPeriod", "reservedMemory", "limits"}

func (g *smpGen) key(patch bool) string {
	k := smpKeys[g.r.Intn(len(smpKeys))]
	if !patch || g.r.Intn(5) > 0 {
		return k
	}
	switch g.r.Intn(6) {
	case 0:
		return "$patch"
	case 1:
		return "$retainKeys"
	case 2:
		return "$setElementOrder/" + k
	case 3:
		return "$deleteFromPrimitiveList/" + k
	case 4:
		return "$setElementOrder" + k
	}
	return "$deleteFromPrimitiveList"
}

func (g *smpGen) object(depth int, patch bool) map[string]any {
	m := map[string]any{}
	for range g.r.Intn(5) {
		k := g.key(patch)
		switch {
		case k == "$patch":
			m[k] = []any{"replace", "delete", "merge", 1.0}[g.r.Intn(4)]
		case k == "$retainKeys" || strings.HasPrefix(k, "$"):
			m[k] = g.value(depth+1, patch, true)
		default:
			m[k] = g.value(depth+1, patch, false)
		}
	}
	return m
}

func (g *smpGen) value(depth int, patch, listy bool) any {
	n := 6
	if depth > 3 {
		n = 4
	}
	k := g.r.Intn(n)
	if listy && g.r.Intn(3) > 0 {
		k = 4
	}
	switch k {
	case 0:
		return nil
	case 1:
		return []any{"a", "b", "10.96.0.10", "memory.available", "key"}[g.r.Intn(5)]
	case 2:
		return float64(g.r.Intn(3)) / 2 // 0, 0.5, 1: an int64 and a float64 to apimachinery
	case 3:
		return g.r.Intn(2) == 0
	case 4:
		var l []any
		kind := g.r.Intn(4)
		for range g.r.Intn(4) {
			switch {
			case kind == 0:
				l = append(l, []any{"a", "b", "c", "key"}[g.r.Intn(4)])
			case kind == 1:
				l = append(l, float64(g.r.Intn(3)))
			case kind == 2 && depth <= 3:
				l = append(l, g.object(depth+1, patch))
			default:
				l = append(l, g.value(depth+1, patch, false))
			}
		}
		if l == nil {
			l = []any{}
		}
		return l
	}
	return g.object(depth+1, patch)
}

func FuzzStrategicMerge(f *testing.F) {
	f.Add(`{"maxPods":1,"clusterDNS":["a","b"]}`, `{"$setElementOrder/clusterDNS":["b","a"]}`)
	f.Add(`{"evictionHard":{"a":"1"}}`, `{"evictionHard":{"$patch":"replace"}}`)
	f.Fuzz(func(t *testing.T, doc, patch string) {
		got := ours([]byte(doc), []byte(patch))
		if want := oracleOutcomes([]byte(doc), []byte(patch), 64); !want[got] {
			t.Fatalf("doc %s patch %s: ours %s, apimachinery %v", doc, patch, got, keys(want))
		}
	})
}
