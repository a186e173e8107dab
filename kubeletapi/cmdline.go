package kubeletapi

import (
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubeletcfg/kubeletcfg/flags"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

// FlagDiff is a flag whose running value (/flagz) is not what a command line
// gives it.
type FlagDiff struct {
	Name string `json:"name"`
	// Running is the value the kubelet runs with; Given what the command
	// line gives (the default where it gives none), and Source where it was
	// written ("" when not given).
	Running string `json:"running"`
	Given   string `json:"given"`
	Source  string `json:"source,omitempty"`
	// Unset says the command line does not give the flag.
	Unset bool `json:"unset,omitempty"`
}

// CompareCommandLine compares the flags a kubelet runs with (its /flagz)
// with a command line for kubelet v (args, with where each word was
// written in sources, which may be shorter). Values are compared as the
// kubelet prints them (5m and 5m0s, a,b and [a,b], maps in any order are
// the same); a flag given its default value matches one not given, as
// /flagz cannot tell them apart; classified values are not compared, and
// are listed apart.
func CompareCommandLine(v *schema.Version, args, sources []string, running *Flags) ([]FlagDiff, []string, error) {
	cl, err := flags.Parse(args, v)
	if err != nil {
		return nil, nil, err
	}
	given := map[string]string{}
	from := map[string]string{}
	for _, o := range cl.Occurrences {
		name := o.Flag.Name
		if prev, ok := given[name]; ok && isMap(o.Flag.Type) {
			given[name] = prev + "," + o.Value // map flags merge
		} else {
			given[name] = o.Value
		}
		if o.Index >= 0 && o.Index < len(sources) {
			from[name] = sources[o.Index]
		}
	}
	names := map[string]bool{}
	for n := range given {
		names[n] = true
	}
	for _, f := range running.NonDefault(v) {
		names[f.Name] = true
	}
	for _, n := range running.ClassifiedFlags() {
		names[n] = true
	}
	var diffs []FlagDiff
	var classified []string
	for name := range names {
		if name == "version" {
			continue
		}
		run, ok := running.Values[name]
		f, known := v.Flag(name)
		if !ok {
			run = f.Default // /flagz lists every flag; a missing one is at its default
		}
		if run == Classified {
			classified = append(classified, name)
			continue
		}
		g, isGiven := given[name]
		if !isGiven {
			g = f.Default
		}
		if known && Normalize(f, run) == Normalize(f, g) {
			continue
		}
		if !known && run == g {
			continue
		}
		diffs = append(diffs, FlagDiff{Name: name, Running: run, Given: g, Source: from[name], Unset: !isGiven})
	}
	sort.Slice(diffs, func(i, j int) bool { return diffs[i].Name < diffs[j].Name })
	sort.Strings(classified)
	return diffs, classified, nil
}

func isMap(typ string) bool {
	return strings.HasPrefix(typ, "map") || strings.Contains(typ, "Multimap")
}

// Normalize writes a flag's value as the kubelet's flag prints it, as far as
// its type allows; a value that does not parse is kept as written.
func Normalize(f schema.Flag, value string) string {
	value = strings.TrimSpace(value)
	switch f.Type {
	case "bool":
		if b, err := strconv.ParseBool(value); err == nil {
			return strconv.FormatBool(b)
		}
	case "duration":
		if d, err := time.ParseDuration(value); err == nil {
			return d.String()
		}
	case "int32", "int64", "Level":
		if n, err := strconv.ParseInt(value, 10, 64); err == nil {
			return strconv.FormatInt(n, 10)
		}
	case "quantity":
		if q, err := resource.ParseQuantity(value); err == nil {
			return q.String()
		}
	case "ip":
		if ip := net.ParseIP(value); ip != nil {
			return ip.String()
		}
	case "stringSlice":
		return strings.Join(list(strings.TrimSuffix(strings.TrimPrefix(value, "["), "]"), false), ",")
	}
	if isMap(f.Type) {
		items := list(value, true)
		if f.Type == "mapStringBool" {
			for i, it := range items {
				if k, b, ok := strings.Cut(it, "="); ok {
					if on, err := strconv.ParseBool(strings.TrimSpace(b)); err == nil {
						items[i] = strings.TrimSpace(k) + "=" + strconv.FormatBool(on)
					}
				}
			}
			sort.Strings(items)
		}
		return strings.Join(items, ",")
	}
	return value
}

// list splits a comma-separated value, trimmed, empty items out; sorted
// when asked (maps print their keys in order).
func list(value string, sorted bool) []string {
	var out []string
	for _, it := range strings.Split(value, ",") {
		if it = strings.TrimSpace(it); it != "" {
			out = append(out, it)
		}
	}
	if sorted {
		sort.Strings(out)
	}
	return out
}
