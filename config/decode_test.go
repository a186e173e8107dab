package config

import (
	"os"
	"strings"
	"testing"

	"github.com/kubeletcfg/kubeletcfg/schema"
)

const header = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"

func mustVersion(t testing.TB, minor string) *schema.Version {
	t.Helper()
	v, err := schema.Resolve(minor)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestDecodeProblems(t *testing.T) {
	cases := []struct {
		name, minor, doc string
		allowUnknown     bool
		want             []string // substrings of the problems, in order, each "line:col: field: text"
		wantWarnings     int
	}{
		{name: "clean", minor: "1.37", doc: header + "maxPods: 100\n"},
		{name: "typo", minor: "1.37", doc: header + "evictionHrad:\n  memory.available: 1Gi\n",
			want: []string{`f.yaml:3:1: evictionHrad: unknown field "evictionHrad" (did you mean "evictionHard"?)`}},
		{name: "wrong case", minor: "1.37", doc: header + "MaxPods: 10\n",
			want: []string{`f.yaml:3:1: MaxPods: unknown field "MaxPods" (did you mean "maxPods"?)`}},
		{name: "nested typo", minor: "1.37", doc: header + "authentication:\n  webhook:\n    enabld: true\n",
			want: []string{`f.yaml:5:5: authentication.webhook.enabld: unknown field "enabld" (did you mean "enabled"?)`}},
		{name: "unknown allowed", minor: "1.37", doc: header + "fooBar: 1\n", allowUnknown: true, wantWarnings: 1},
		{name: "duplicate", minor: "1.37", doc: header + "maxPods: 1\nmaxPods: 2\n",
			want: []string{`f.yaml:4:1: maxPods: duplicate key (first at line 3)`}},
		{name: "duplicate map key", minor: "1.37", doc: header + "evictionHard:\n  memory.available: 1Gi\n  memory.available: 2Gi\n",
			want: []string{`f.yaml:5:3: evictionHard.memory.available: duplicate key (first at line 4)`}},
		{name: "field newer than version", minor: "1.28", doc: header + "mergeDefaultEvictionSettings: true\n",
			want: []string{`mergeDefaultEvictionSettings: field "mergeDefaultEvictionSettings" is not known to kubelet 1.28 (kubelets from 1.33 on have it)`}},
		{name: "list element", minor: "1.37", doc: header + "registerWithTaints:\n- key: a\n  efect: NoSchedule\n",
			want: []string{`f.yaml:5:3: registerWithTaints[0].efect: unknown field "efect" (did you mean "effect"?)`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := Decode([]byte(tc.doc), DecodeOptions{File: "f.yaml", Version: mustVersion(t, tc.minor), AllowUnknownFields: tc.allowUnknown})
			if err != nil {
				t.Fatal(err)
			}
			errs := doc.Errors()
			if len(errs) != len(tc.want) {
				t.Fatalf("got %d errors %v, want %d", len(errs), errs, len(tc.want))
			}
			for i, w := range tc.want {
				if !strings.Contains(errs[i].Error(), w) {
					t.Errorf("error %d = %q, want it to contain %q", i, errs[i].Error(), w)
				}
			}
			if got := len(doc.Warnings()); got != tc.wantWarnings {
				t.Errorf("got %d warnings, want %d", got, tc.wantWarnings)
			}
		})
	}
}

func TestDecodeFatal(t *testing.T) {
	cases := []struct{ name, doc, want string }{
		{"empty", "", "f.yaml: the file is empty"},
		{"not yaml", header + "maxPods: [1\n", "f.yaml"},
		{"list", "- a\n- b\n", "not a mapping"},
		{"no kind", "apiVersion: kubelet.config.k8s.io/v1beta1\n", "kind missing"},
		{"wrong apiVersion", "apiVersion: kubelet.config.k8s.io/v1\nkind: KubeletConfiguration\n", `f.yaml:1:13: apiVersion: is "kubelet.config.k8s.io/v1"`},
		{"type", header + "maxPods: many\n", "f.yaml:3:1: maxPods: cannot unmarshal string"},
		{"nested type", header + "authentication:\n  anonymous:\n    enabled: 3\n", "authentication.anonymous.enabled: cannot unmarshal number"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode([]byte(tc.doc), DecodeOptions{File: "f.yaml", Version: mustVersion(t, "1.37")})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
			if !IsProblem(err) {
				t.Errorf("err %T is not a Problem", err)
			}
		})
	}
}

func TestDecodeDropsFieldsTheVersionLacks(t *testing.T) {
	doc, err := Decode([]byte(header+"mergeDefaultEvictionSettings: true\nmaxPods: 7\n"), DecodeOptions{Version: mustVersion(t, "1.30"), AllowUnknownFields: true})
	if err != nil {
		t.Fatal(err)
	}
	if doc.Config.MergeDefaultEvictionSettings != nil {
		t.Errorf("kubelet 1.30 has no mergeDefaultEvictionSettings, but it was decoded")
	}
	if doc.Config.MaxPods != 7 {
		t.Errorf("maxPods = %d, want 7", doc.Config.MaxPods)
	}
}

func TestYAML11Booleans(t *testing.T) {
	// The kubelet reads YAML 1.1: "yes" is true.
	doc, err := Decode([]byte(header+"failSwapOn: no\nenableServer: yes\n"), DecodeOptions{Version: mustVersion(t, "1.37")})
	if err != nil {
		t.Fatal(err)
	}
	if *doc.Config.FailSwapOn || !*doc.Config.EnableServer {
		t.Errorf("failSwapOn=%v enableServer=%v, want false and true", *doc.Config.FailSwapOn, *doc.Config.EnableServer)
	}
}

func BenchmarkDecodeAndDefault(b *testing.B) {
	data, err := os.ReadFile("../testdata/nodes/kubeadm-1.31/var/lib/kubelet/config.yaml")
	if err != nil {
		b.Fatal(err)
	}
	v := mustVersion(b, "1.37")
	b.ReportAllocs()
	for b.Loop() {
		// decodeDoc: Decode would hand out the document it remembers.
		doc, _, err := decodeDoc(data, DecodeOptions{File: "config.yaml", Version: v})
		if err != nil {
			b.Fatal(err)
		}
		Default(doc.Config, v)
	}
}

func TestSchemaPath(t *testing.T) {
	for in, want := range map[string]string{
		"maxPods":                    "maxPods",
		"registerWithTaints[0].key":  "registerWithTaints[].key",
		"a[12].b[3]":                 "a[].b[]",
		"evictionHard[memory.x].y":   "evictionHard[memory.x].y",
		"reservedMemory[1].limits[]": "reservedMemory[].limits[]",
	} {
		if got := SchemaPath(in); got != want {
			t.Errorf("SchemaPath(%q) = %q, want %q", in, got, want)
		}
	}
}
