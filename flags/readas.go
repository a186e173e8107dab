package flags

import (
	"fmt"
	"strings"

	"github.com/kubeletcfg/kubeletcfg/schema"
)

// Lost is a flag of a command line that a kubelet version does not have
// (an older kubelet had it), with its value when that was written apart.
type Lost struct {
	Word  string // "--flag", "--flag=value" or "--flag value"
	Name  string // the flag's name, normalized
	Index int    // the position of the flag's word
}

// ReadAs reads a command line as kubelet v would once the flags it no
// longer has are taken out: kept are the positions of the words that stay,
// lost the flags taken out. A flag no kubelet ever had is a mistake, not a
// removal: that is an error.
func ReadAs(args []string, v *schema.Version) (kept []int, lost []Lost, err error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "--") {
			kept = append(kept, i)
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		name = strings.ReplaceAll(name, "_", "-")
		if _, ok := v.Flag(name); ok {
			kept = append(kept, i)
			continue
		}
		if !knownSomewhere(name) {
			_, err := Parse([]string{a}, v)
			return nil, nil, fmt.Errorf("no kubelet has the flag in %q: %w", a, err)
		}
		l := Lost{Word: a, Name: name, Index: i}
		// "--flag value": the value goes with it unless the flag was boolean.
		if !hasValue && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") && !BoolSomewhere(name) {
			l.Word += " " + args[i+1]
			i++
		}
		lost = append(lost, l)
	}
	return kept, lost, nil
}

// knownSomewhere reports whether a supported or an older kubelet had the flag.
func knownSomewhere(name string) bool {
	for _, v := range schema.Versions() {
		if _, ok := v.Flag(name); ok {
			return true
		}
	}
	_, ok := schema.Legacy(name)
	return ok
}

// BoolSomewhere reports whether the flag was boolean where a kubelet had it.
func BoolSomewhere(name string) bool {
	for _, v := range schema.Versions() {
		if f, ok := v.Flag(name); ok {
			return f.Type == "bool"
		}
	}
	old, ok := schema.Legacy(name)
	return ok && old.Type == "bool"
}
