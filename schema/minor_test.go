package schema

import (
	"reflect"
	"testing"

	goversion "github.com/hashicorp/go-version"
)

// TestMinorLessAsGoVersion holds minorLess's reading of plain minors to
// go-version's.
func TestMinorLessAsGoVersion(t *testing.T) {
	minors := []string{"1.28", "1.9", "1.10", "1.37", "2.0", "0.99", "1.05", "1.5", "10.1", "1.100", "1.37.2", "v1.3", "1.3-rc.1"}
	plain := 0
	for _, a := range minors {
		if _, ok := plainMinor(a); ok {
			plain++
		}
		for _, b := range minors {
			if got, want := minorLess(a, b), parseMinor(a).LessThan(parseMinor(b)); got != want {
				t.Errorf("minorLess(%q, %q) = %v, go-version says %v", a, b, got, want)
			}
		}
	}
	if plain != 10 {
		t.Errorf("%d plain minors, want 10", plain)
	}
}

// TestSegmentsAsGoVersion holds Segments to go-version's reading, plain
// numbers or not.
func TestSegmentsAsGoVersion(t *testing.T) {
	for _, s := range []string{"1.31", "1.31.4", "01.031.0004", "1", "1.2.3.4", "1.31.0-rc.1", "1.31+meta", "v1.31", "vv1.2", "1..2", "1.", ".1", "1.a", "", "1.2.3.", "-1.2", "1.-2", "123456789.1", "1234567890.1.2", "1.31.4 ", "1.3 1"} {
		got, err := Segments(s)
		parsed, werr := goversion.NewVersion(s)
		if (err != nil) != (werr != nil) {
			t.Errorf("%q: error %v, go-version's %v", s, err, werr)
			continue
		}
		if werr == nil && !reflect.DeepEqual(got, parsed.Segments()) {
			t.Errorf("%q: %v, go-version %v", s, got, parsed.Segments())
		}
	}
}
