package main

import (
	"slices"
	"testing"

	"github.com/spf13/pflag"
)

// --from's value behaves as pflag's StringArray: values taken whole
// (commas kept), repeated ones appended, the same type, value and help.
func TestStringArrayAsPflags(t *testing.T) {
	for _, sets := range [][]string{nil, {"a"}, {"a,b", "c"}, {"", `x "y"`, "z"}} {
		var ours, theirs []string
		a, b := pflag.NewFlagSet("a", pflag.ContinueOnError), pflag.NewFlagSet("b", pflag.ContinueOnError)
		a.Var((*stringArray)(&ours), "from", "usage")
		a.Lookup("from").DefValue = ""
		b.StringArrayVar(&theirs, "from", nil, "usage")
		if a.FlagUsages() != b.FlagUsages() {
			t.Errorf("help %q, pflag's %q", a.FlagUsages(), b.FlagUsages())
		}
		for _, v := range sets {
			a.Set("from", v)
			b.Set("from", v)
		}
		fa, fb := a.Lookup("from"), b.Lookup("from")
		if !slices.Equal(ours, theirs) || (ours == nil) != (theirs == nil) || fa.Value.String() != fb.Value.String() ||
			fa.Value.Type() != fb.Value.Type() || fa.Changed != fb.Changed {
			t.Errorf("after %q: %q %q %q, pflag's %q %q %q", sets, ours, fa.Value, fa.DefValue, theirs, fb.Value, fb.DefValue)
		}
		if got, want := fa.Value.(pflag.SliceValue).GetSlice(), fb.Value.(pflag.SliceValue).GetSlice(); !slices.Equal(got, want) {
			t.Errorf("GetSlice %q, pflag's %q", got, want)
		}
	}
}
