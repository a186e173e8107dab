package kubeadm

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzSplitDocuments: kubeletcfg cuts YAML files into documents as
// apimachinery's YAMLReader, which kubeadm uses, does.
func FuzzSplitDocuments(f *testing.F) {
	for _, s := range []string{"a: 1\n---\nb: 2\n", "---\n---\n", "--- # x\r\na: 1", "---x\n", "\n\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		want, wantErr := yamlReader(in)
		docs, err := splitDocuments([]byte(in))
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("%q: err %v, YAMLReader's %v", in, err, wantErr)
		}
		var got []string
		for _, d := range docs {
			got = append(got, string(d.Data))
		}
		if err == nil && !cmp.Equal(want, got) {
			t.Fatalf("%q: %q, YAMLReader %q", in, got, want)
		}
	})
}

// FuzzFlagsEnv: whatever FormatFlagsEnv writes, kubeadm's parser reads back
// as the same flags, with nothing to warn about.
func FuzzFlagsEnv(f *testing.F) {
	f.Add("node-ip", "10.0.0.1", "v", "2")
	f.Add("a", "", "b", "x=y")
	f.Fuzz(func(t *testing.T, n1, v1, n2, v2 string) {
		flags := []string{"--" + n1 + "=" + v1, "--" + n2 + "=" + v2}
		out, err := FormatFlagsEnv(flags)
		if err != nil {
			return
		}
		r, _ := ResolveRelease("1.34")
		env, err := ParseFlagsEnv(out, "f", r)
		if err != nil {
			t.Fatalf("%q: %v", out, err)
		}
		var back []string
		for _, a := range env.Args {
			back = append(back, a.String())
		}
		// kubeadm sorts by name, then value.
		sorted := flags
		if n2 < n1 || (n1 == n2 && v2 < v1) {
			sorted = []string{flags[1], flags[0]}
		}
		if !cmp.Equal(back, sorted) {
			t.Fatalf("%q read back as %q", out, back)
		}
	})
}
