package config

import (
	"reflect"
	"testing"

	"github.com/kubeletcfg/kubeletcfg/schema"
)

func FuzzDecode(f *testing.F) {
	for _, seed := range []string{
		header + "maxPods: 10\n",
		header + "evictionHard:\n  memory.available: 1Gi\n",
		header + "registerWithTaints:\n- key: a\n  effect: NoSchedule\n",
		header + "a: &x {b: 1}\nc: *x\n<<: *x\n",
		header + "<<: {maxPodz: 4}\n",
		header + "maxPods: 5\n<<: {maxPods: 7}\n",
		header + "<<: [{maxPods: 1}, {maxPods: 2, <<: {podPidsLimit: 3}}]\n",
		header + "x: &m {evictionHard: {memory.available: 1Gi}}\n<<: *m\nevictionHard:\n  <<: {nodefs.available: 5%}\n",
		header + "'<<': {maxPods: 4}\n!!merge <<: {maxPods: 4}\n",
		`{"apiVersion":"kubelet.config.k8s.io/v1beta1","kind":"KubeletConfiguration","logging":{"format":"json"}}`,
		"- 1\n",
		header + "maxPods: 0x10\nfailSwapOn: yes\nclusterDNS: [1.2.3.4, 2001-12-14]\nstaticPodURLHeader: {a: ['1', \"2\"]}\n",
		"",
	} {
		f.Add([]byte(seed))
	}
	v := schema.Newest()
	f.Fuzz(func(t *testing.T, data []byte) {
		// The JSON made from kubeletcfg's parse is the kubelet's reader's.
		checkKubeletJSON(t, data, new(int))
		// The tree parsed by parseBlock is go-yaml v3's.
		checkParseBlock(t, data, new(int))
		doc, err := Decode(data, DecodeOptions{File: "fuzz.yaml", Version: v})
		if err != nil {
			if !IsProblem(err) {
				t.Fatalf("error is not a Problem: %v", err)
			}
			return
		}
		// Anything that decodes must default and render without panicking,
		// and rendering must be stable.
		eff := Default(doc.Config, v)
		// The walk of a configuration gives what its JSON round trip gives.
		if got, ok := jsonOf(reflect.ValueOf(eff).Elem()); ok {
			if want, err := toMap(eff, true); err != nil || !reflect.DeepEqual(got, any(want)) {
				t.Fatalf("walked %v, round trip %v (%v)", got, want, err)
			}
		}
		a, err := JSON(eff, v)
		if err != nil {
			t.Fatal(err)
		}
		b, err := JSON(Default(eff, v), v)
		if err != nil {
			t.Fatal(err)
		}
		if string(a) != string(b) {
			t.Fatalf("defaulting is not idempotent:\n%s\n%s", a, b)
		}
	})
}
