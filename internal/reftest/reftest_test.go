package reftest

import (
	"testing"

	"github.com/kubeletcfg/kubeletcfg/schema"
)

// TestEveryVersionHasReferences: each corpus has the kubelet's references
// for every version it covers, the newest supported one always, so that a
// version added to schema/releases.txt fails here until make schema has
// judged it.
func TestEveryVersionHasReferences(t *testing.T) {
	for _, c := range []Corpus{Validate, Effective, Migrate} {
		vs := c.Versions()
		if len(vs) == 0 || vs[len(vs)-1] != schema.Newest() {
			t.Errorf("%s covers %v, not the newest supported version %s", c.Name, vs, schema.Newest().Minor)
		}
		for _, v := range vs {
			if refs := c.Load(t, v); len(refs) == 0 {
				t.Errorf("%s: no reference of kubelet %s", c.Name, v.Minor)
			}
		}
	}
	if got := len(Validate.Versions()); got != len(schema.Versions()) {
		t.Errorf("the validation corpus covers %d versions, the schema has %d", got, len(schema.Versions()))
	}
}
