package flags

import (
	"testing"

	"github.com/kubeletcfg/kubeletcfg/schema"
)

// TestParseTwiceGivesEachItsOwn: a command line parsed again is the same,
// and a change a caller makes to its copy reaches no other.
func TestParseTwiceGivesEachItsOwn(t *testing.T) {
	v := schema.Newest()
	args := []string{"--max-pods=5", "--v=2"}
	a, err := Parse(args, v)
	if err != nil {
		t.Fatal(err)
	}
	a.Occurrences[0].Value = "changed"
	b, err := Parse(args, v)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Occurrences) != 2 || b.Occurrences[0].Value != "5" {
		t.Errorf("parsed again: %+v", b.Occurrences)
	}
	// Words are kept apart by their lengths: these two are not the same.
	c, err := Parse([]string{"--v=2", "--max-pods=5"}, v)
	if err != nil || c.Occurrences[0].Flag.Name != "v" {
		t.Errorf("another order: %+v, %v", c, err)
	}
}
