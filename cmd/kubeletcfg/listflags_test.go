package main

import (
	"slices"
	"testing"

	"github.com/spf13/pflag"
)

// The list flags behave as pflag's StringArray and StringSlice: values
// taken whole or read as CSV, repeated ones appended, the same type, value,
// help and errors.
func TestListFlagsAsPflags(t *testing.T) {
	for _, slice := range []bool{false, true} {
		for _, sets := range [][]string{nil, {"a"}, {"a,b", "c"}, {"", `x "y"`, "z"}, {`"a,b",c`, ""}, {`a"b`}} {
			var ours, theirs []string
			a, b := pflag.NewFlagSet("a", pflag.ContinueOnError), pflag.NewFlagSet("b", pflag.ContinueOnError)
			if slice {
				stringSliceVar(a, &ours, "from", "usage")
				b.StringSliceVar(&theirs, "from", nil, "usage")
			} else {
				stringArrayVar(a, &ours, "from", "usage")
				b.StringArrayVar(&theirs, "from", nil, "usage")
			}
			if a.FlagUsages() != b.FlagUsages() {
				t.Errorf("help %q, pflag's %q", a.FlagUsages(), b.FlagUsages())
			}
			for _, v := range sets {
				ea, eb := a.Set("from", v), b.Set("from", v)
				if (ea == nil) != (eb == nil) {
					t.Errorf("slice %v: Set(%q): %v, pflag's %v", slice, v, ea, eb)
				}
			}
			fa, fb := a.Lookup("from"), b.Lookup("from")
			if !slices.Equal(ours, theirs) || (ours == nil) != (theirs == nil) || fa.Value.String() != fb.Value.String() ||
				fa.Value.Type() != fb.Value.Type() || fa.Changed != fb.Changed {
				t.Errorf("slice %v, after %q: %q %q, pflag's %q %q", slice, sets, ours, fa.Value, theirs, fb.Value)
			}
			if got, want := fa.Value.(pflag.SliceValue).GetSlice(), fb.Value.(pflag.SliceValue).GetSlice(); !slices.Equal(got, want) {
				t.Errorf("GetSlice %q, pflag's %q", got, want)
			}
		}
	}
}
