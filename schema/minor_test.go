package schema

import "testing"

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
