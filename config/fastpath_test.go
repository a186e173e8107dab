package config

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"k8s.io/kubelet/config/v1beta1"

	"github.com/kubeletcfg/kubeletcfg/schema"
)

// TestShortDecodeAsGeneral holds the short way of decoding a document whose
// keys are all fields of the version (encoding/json, no pruning) to the
// general one (the kubelet's case-sensitive decoding, then the version's
// fields kept), on every YAML file of testdata and documents written to
// part the two, for every version.
func TestShortDecodeAsGeneral(t *testing.T) {
	var docs [][]byte
	err := filepath.WalkDir("../testdata", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if ext := filepath.Ext(p); !d.IsDir() && (ext == ".yaml" || ext == ".conf") {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if len(data) <= 16<<10 {
				docs = append(docs, data)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, extra := range []string{
		"maxPods: 9007199254740993\npodPidsLimit: 9223372036854775807\n",
		"MaxPods: 5\nmaxPods: 6\n",
		"maxpods: 5\n",
		"maxPods: 1.0\n",
		"maxPods: 1e2\n",
		"maxPods: \"7\"\n",
		"evictionHard: {}\nfeatureGates: {}\nclusterDNS: []\n",
		"evictionHard:\n  Memory.Available: 1Gi\n",
		"registerWithTaints:\n- key: a\n  effect: NoSchedule\n  Value: b\n",
		"reservedMemory:\n- numaNode: 0\n  limits:\n    memory: 1000Mi\n",
		"logging:\n  format: json\n  options:\n    json:\n      infoBufferSize: 1Mi\n",
		"authentication:\n  webhook:\n    Enabled: true\n",
		"base: &b\n  maxPods: 3\n<<: *b\n",
		"<<: {maxPods: 4}\nmaxPods: 5\n",
		"tracing:\n  endpoint: x\n  samplingRatePerMillion: 10\n",
		"crashLoopBackOff:\n  maxContainerRestartPeriod: 10s\n",
		"syncFrequency: 1x\n",
		"enableServer: yes\nfailSwapOn: off\n",
		"staticPodURLHeader:\n  A: [b, c]\n",
		"systemReserved: null\nkubeReserved: ~\n",
	} {
		docs = append(docs, []byte(header+extra))
	}
	for _, v := range schema.Versions() {
		for _, data := range docs {
			opts := DecodeOptions{File: "f.yaml", Version: v}
			short, _, serr := decodeDoc(data, opts)
			opts.slow = true
			general, _, gerr := decodeDoc(data, opts)
			if (serr == nil) != (gerr == nil) || (serr != nil && serr.Error() != gerr.Error()) {
				t.Errorf("%s, %.60q: short way %v, general %v", v, data, serr, gerr)
				continue
			}
			if serr == nil && !reflect.DeepEqual(short, general) {
				t.Errorf("%s, %.60q: the short way decodes\n%+v\nthe general\n%+v", v, data, short.Config, general.Config)
			}
		}
	}
}

// TestConfigurationHasNoInterfaceField: the short way relies on it (an
// interface field is where the kubelet's decoding keeps integers apart).
func TestConfigurationHasNoInterfaceField(t *testing.T) {
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type, path string) []string
	walk = func(t reflect.Type, path string) []string {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() == reflect.Interface {
			return []string{path}
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return nil
		}
		seen[t] = true
		var out []string
		for i := 0; i < t.NumField(); i++ {
			if f := t.Field(i); f.IsExported() {
				out = append(out, walk(f.Type, path+"."+strings.Split(f.Tag.Get("json"), ",")[0])...)
			}
		}
		return out
	}
	if found := walk(reflect.TypeOf(v1beta1.KubeletConfiguration{}), ""); len(found) > 0 {
		t.Errorf("fields of an interface type: %v", found)
	}
}
