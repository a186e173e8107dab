package schema

import "testing"

// BenchmarkLoad measures reading one version's tables, what every command
// pays.
func BenchmarkLoad(b *testing.B) {
	for b.Loop() {
		v := &Version{Minor: Newest().Minor}
		if err := v.load(); err != nil {
			b.Fatal(err)
		}
		v.flagList()
	}
}
