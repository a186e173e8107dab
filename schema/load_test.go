package schema

import "testing"

// BenchmarkLoad measures reading one version's data, what every command pays.
func BenchmarkLoad(b *testing.B) {
	raw, err := files.ReadFile("data/v" + Newest().Minor + ".json")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		v := &Version{Minor: Newest().Minor}
		if err := v.load(); err != nil {
			b.Fatal(err)
		}
	}
}
