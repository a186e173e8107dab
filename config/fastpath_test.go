package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	yamlv3 "go.yaml.in/yaml/v3"
	"k8s.io/kubelet/config/v1beta1"
	"sigs.k8s.io/yaml"

	"github.com/kubeletcfg/kubeletcfg/schema"
)

// TestShortDecodeAsGeneral holds the short way of decoding a document whose
// keys are all fields of the version (encoding/json, no pruning) to the
// general one (the kubelet's case-sensitive decoding, then the version's
// fields kept), on every YAML file of testdata and documents written to
// part the two, for every version.
func TestShortDecodeAsGeneral(t *testing.T) {
	docs := yamlCorpus(t)
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

// TestKubeletJSONAsYAMLToJSON holds the JSON made from kubeletcfg's parse
// to sigs.k8s.io/yaml's, the kubelet's, wherever it is made.
func TestKubeletJSONAsYAMLToJSON(t *testing.T) {
	docs := yamlCorpus(t)
	made := 0
	for _, data := range docs {
		checkKubeletJSON(t, data, &made)
	}
	if made < len(docs)/2 {
		t.Errorf("the JSON was made from the parse for %d of %d documents only", made, len(docs))
	}
}

func checkKubeletJSON(t *testing.T, data []byte, made *int) {
	var root yamlv3.Node
	if yamlv3.Unmarshal(data, &root) != nil || root.Kind != yamlv3.DocumentNode || len(root.Content) == 0 {
		return
	}
	got, val, ok := kubeletJSON(data, root.Content[0])
	want, err := yaml.YAMLToJSON(data)
	if !ok {
		return
	}
	*made++
	if err != nil {
		t.Errorf("%q: made %s, where the kubelet's reader fails: %v", data, got, err)
		return
	}
	if string(got) != string(want) {
		t.Errorf("%q:\nmade     %s\nkubelet's %s", data, got, want)
	}
	// And the configuration set from its values is encoding/json's of it.
	if cfg, ok := decodeValue(val); ok {
		typed := &v1beta1.KubeletConfiguration{}
		if err := json.Unmarshal(got, typed); err != nil || !reflect.DeepEqual(cfg, typed) {
			t.Errorf("%q: set from the values\n%+v\nencoding/json (%v)\n%+v", data, cfg, err, typed)
		}
	}
}

// yamlCorpus is every YAML file of testdata (up to 16 KiB) and documents
// written to part two readings.
func yamlCorpus(t *testing.T) [][]byte {
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
	for _, extra := range []string{
		"a: yes\nb: No\nc: on\nd: OFF\ne: y\nf: N\ng: ~\nh: null\ni:\nj: Null\nk: yEs\n",
		"a: 0777\nb: 0x1F\nc: 0o17\nd: 0b101\ne: -0b11\nf: 1_000\ng: +5\nh: -0\ni: 9223372036854775808\nj: 18446744073709551616\nk: 1e3\nl: .5\nm: 5.\nn: -1.5e-3\no: 1e999\np: 0.0.0.0\nq: 1:30\nr: 190:20:30\n",
		"a: .inf\n", "a: -.Inf\n", "a: .NaN\n", "a: 2001-12-14\nb: 2001-12-14t21:59:43.10-05:00\nc: 2001-12-14 21:59:43.10\nd: 2001-12-14T21:59:43.10Z\ne: 20011214\n",
		"a: 'yes'\nb: \"0777\"\nc: 'it''s'\nd: \"tab\\there\\u00e9\"\ne: <<\nf: '<<'\n",
		"yes: 1\n", "1: a\n", "'1': a\n", "null: a\n", "~: a\n", "2001-12-14: a\n", "1.5: a\n", "true: a\n", "'true': a\n",
		"a: {b: [1, {c: d}], e: []}\nf: [ ]\ng: {}\n",
		"a: b: c\n", "a:\n  - b\n  -\n  - - c\n", "a: \"multi\n  line\"\nb: plain\n  folded\n",
		"a: |\n  x\n", "a: >-\n  x\n", "a: !!str 1\n", "a: &x 1\nb: *x\n", "<<: {a: 1}\n",
		"a: 1\na: 2\n", "a: x # comment\n# c\nb: y#z\n", "%YAML 1.1\n---\na: 1\n", "a:\t1\n", "a: 1\r\n", "\xef\xbb\xbfa: 1\n",
		"a: <tag>&amp;</tag>\n", "a: \"\\x41\\U0001F600\"\n", "- 1\n- two\n", "--- \na: 1\n...\n", "a: -\nb: '-'\nc: --- \n",
		"a: [1, 2,]\n", "? a\n: b\n", "a: @x\n", "a: `x\n", "a: %x\n", "a: !x\n",
		"a:\n- 1\n- b\nc: 3\n", "a:\n  - 1\n  - 2\nb:\n  c:\n    d: e\n", "- a: 1\n  b: 2\n- c: 3\n", "a:\n- x: 1\n  y: 2\n- z\n",
		"a:   b   \n'c d': e\n\"f\": g\nh: 'it''s'  # c\ni: \"q\" #c\n", "a b: c d\n", "a: http://x:80/y\nb: b#c\nc: b #c\nd: -1\ne: -x\nf: :x\ng: ?x\n",
		"a:\n   b: 1\n  c: 2\n", "a:\n  b: 1\n   c: 2\n", "a: 1\n b: 2\n", "- a\n -b\n", "a:\n-\n", "a: -\n", "a: - b\n", "a: b:\n",
		"a: 'x'y\n", "a: \"x\"y\n", "a: 'x\n", "a: {}\nb: []\nc: {} # x\nd: [] x\n", "a:\n\n  # c\n  b: 1\n# d\nc: 2\n", "a: 1 # x: y\n",
		"a:\n  - b: 1\n    c:\n      - 2\n  - d\n", "'a': 1\n'': 2\n\"\": 3\n", "a: ''\nb: \"\"\n", "a:  \nb: 1\n", "a: # c\n  b: 1\n",
		"  a: 1\n", "a: 1\n  # c\nb: 2\n", "a:\n  b: c\n  d:\n  e: f\n", "- - a\n", "-\n  a: 1\n", "a: 'b' : c\n",
	} {
		docs = append(docs, []byte(header+extra), []byte(extra))
	}
	return docs
}

// TestToMapAsRoundTrip holds the walk of a configuration to the JSON round
// trip it stands for, on every configuration of the corpus (as decoded and
// as defaulted) for four versions, every version's defaults and flags-only
// baseline, and values with their own JSON.
func TestToMapAsRoundTrip(t *testing.T) {
	var cfgs []*v1beta1.KubeletConfiguration
	corpus := yamlCorpus(t)
	for i, v := range schema.Versions() {
		cfgs = append(cfgs, FlagsBaseline(v), Default(&v1beta1.KubeletConfiguration{}, v))
		if i%4 != 0 && v != schema.Newest() {
			continue // the corpus through 1.28, 1.32, 1.36 and 1.37
		}
		for _, data := range corpus {
			doc, _, err := decodeDoc(data, DecodeOptions{Version: v, AllowUnknownFields: true, AnyTypeMeta: true})
			if err != nil || doc.Config == nil {
				continue
			}
			cfgs = append(cfgs, doc.Config, Default(doc.Config, v))
		}
	}
	odd := &v1beta1.KubeletConfiguration{MaxPods: -1, PodPidsLimit: ptr(int64(1) << 60), ClusterDNS: []string{}, EvictionHard: map[string]string{},
		FeatureGates: map[string]bool{"A": true}, StaticPodURLHeader: map[string][]string{"h": nil, "i": {}}, ProviderID: "é\u2028<&>"}
	cfgs = append(cfgs, odd, &v1beta1.KubeletConfiguration{})
	walked := 0
	for i, cfg := range cfgs {
		want, err := toMap(cfg, true)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := jsonOf(reflect.ValueOf(cfg).Elem())
		if !ok {
			continue
		}
		walked++
		if !reflect.DeepEqual(got, any(want)) {
			t.Errorf("configuration %d: walked\n%v\nround trip\n%v", i, got, want)
		}
	}
	if walked < len(cfgs)*9/10 {
		t.Errorf("walked %d of %d configurations only", walked, len(cfgs))
	}
}

func ptr[T any](x T) *T { return &x }

// TestParseBlockAsGoYAML holds parseBlock's tree to go-yaml v3's wherever
// it makes one.
func TestParseBlockAsGoYAML(t *testing.T) {
	docs := yamlCorpus(t)
	made := 0
	for _, data := range docs {
		checkParseBlock(t, data, &made)
	}
	if made < len(docs)/2 {
		t.Errorf("parsed %d of %d documents only", made, len(docs))
	}
}

func checkParseBlock(t *testing.T, data []byte, made *int) {
	got, ok := parseBlock(data)
	if !ok {
		return
	}
	*made++
	var want yamlv3.Node
	if err := yamlv3.Unmarshal(data, &want); err != nil {
		t.Errorf("%q: parsed, where go-yaml v3 fails: %v", data, err)
		return
	}
	if diff := sameTree(got, &want, "doc"); diff != "" {
		t.Errorf("%q: %s", data, diff)
	}
}

func sameTree(a, b *yamlv3.Node, at string) string {
	if a.Kind != b.Kind || a.Style != b.Style || a.Value != b.Value || a.Line != b.Line || a.Column != b.Column ||
		a.Anchor != b.Anchor || a.ShortTag() != b.ShortTag() || len(a.Content) != len(b.Content) {
		return fmt.Sprintf("%s: parsed {kind %d style %d %q %d:%d %s %d} go-yaml {kind %d style %d %q %d:%d %s %d}", at,
			a.Kind, a.Style, a.Value, a.Line, a.Column, a.ShortTag(), len(a.Content), b.Kind, b.Style, b.Value, b.Line, b.Column, b.ShortTag(), len(b.Content))
	}
	for i := range a.Content {
		if d := sameTree(a.Content[i], b.Content[i], fmt.Sprintf("%s/%d", at, i)); d != "" {
			return d
		}
	}
	return ""
}

// TestDecodeValueAsEncodingJSON holds setJSON to encoding/json: on the Go
// values of every document of the corpus (as made from the YAML parse, and
// as read with numbers kept as written), and on every configuration's walk
// (Prune's way), wherever it decodes.
func TestDecodeValueAsEncodingJSON(t *testing.T) {
	decoded, total := 0, 0
	check := func(what string, v any, js []byte) {
		total++
		got, ok := decodeValue(v)
		if !ok {
			return
		}
		decoded++
		want := &v1beta1.KubeletConfiguration{}
		if err := json.Unmarshal(js, want); err != nil {
			t.Errorf("%s: decoded, where encoding/json fails: %v\n%s", what, err, js)
			return
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: decoded\n%+v\nencoding/json\n%+v", what, got, want)
		}
	}
	for _, data := range yamlCorpus(t) {
		var root yamlv3.Node
		if yamlv3.Unmarshal(data, &root) != nil || root.Kind != yamlv3.DocumentNode || len(root.Content) == 0 {
			continue
		}
		if js, v, ok := kubeletJSON(data, root.Content[0]); ok {
			check(fmt.Sprintf("%.60q", data), v, js)
			dec := json.NewDecoder(bytes.NewReader(js))
			dec.UseNumber()
			var n any
			if dec.Decode(&n) == nil {
				check(fmt.Sprintf("%.60q (json.Number)", data), n, js)
			}
		}
	}
	for _, v := range schema.Versions() {
		for _, cfg := range []*v1beta1.KubeletConfiguration{FlagsBaseline(v), Default(&v1beta1.KubeletConfiguration{}, v)} {
			m, err := ToMap(cfg, v)
			if err != nil {
				t.Fatal(err)
			}
			js, _ := json.Marshal(m)
			check("defaults of "+v.Minor, m, js)
		}
	}
	for _, extra := range []string{
		`{"maxPods": 1e2}`, `{"maxPods": 1.5}`, `{"maxPods": 99999999999}`, `{"maxPods": "5"}`, `{"MaxPods": 5}`, `{"syncFrequency": null}`,
		`{"syncFrequency": "1x"}`, `{"evictionHard": null, "clusterDNS": null, "tlsCipherSuites": []}`, `{"enableServer": null}`, `{"podPidsLimit": -1}`,
		`{"memoryThrottlingFactor": 0.8}`, `{"reservedMemory": [{"numaNode": 0, "limits": {"memory": "1Gi"}}]}`, `{"registerWithTaints": [{"key": "a", "timeAdded": "2024-01-01T00:00:00Z"}]}`,
		`{"logging": {"flushFrequency": "5s", "options": {"json": {"infoBufferSize": "1Mi"}}}}`, `{"logging": {"flushFrequency": 5000000000}}`, `{"noSuch": 1}`,
		`{"staticPodURLHeader": {"a": ["b"]}}`, `{"kubeReserved": {"cpu": 1}}`, `{"port": -1}`, `{"apiVersion": "x", "kind": "y"}`,
	} {
		dec := json.NewDecoder(strings.NewReader(extra))
		dec.UseNumber()
		var n any
		if err := dec.Decode(&n); err != nil {
			t.Fatal(err)
		}
		check(extra, n, []byte(extra))
	}
	// Go values whose JSON encoding/json changes on the way (text that is
	// not UTF-8, in a value and in a map's key), and a negative zero.
	for _, v := range []map[string]any{
		{"providerID": "a\xffb"}, {"evictionHard": map[string]any{"memory.available\xff": "1Gi"}},
		{"maxPods": math.Copysign(0, -1)}, {"maxPods": json.Number("-0")},
	} {
		js, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprintf("%q", js), v, js)
	}
	if decoded < total*3/4 {
		t.Errorf("decoded %d of %d only", decoded, total)
	}
}

// A version's defaults decoded as they are embedded where no gated default
// applies are those the merge with the gated ones gives, under the default
// gates and with each gated default's gate turned either way.
func TestDefaultsWithoutGatedAsMerged(t *testing.T) {
	for _, v := range schema.Versions() {
		cases := []map[string]bool{nil}
		for _, gd := range v.GatedDefaults() {
			cases = append(cases, map[string]bool{gd.Gate: true}, map[string]bool{gd.Gate: false})
		}
		for _, gates := range cases {
			want, err := mergedDefaults(v, v.Defaults(), gates)
			if err != nil {
				t.Fatal(err)
			}
			got, err := defaultsFor(v, v.Defaults(), gates)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s, gates %v: the defaults differ from the merged ones", v.Minor, gates)
			}
		}
	}
}

// appendJSON prints what encoding/json prints, for every value jsonValue
// makes: strings with every byte and the characters it escapes, numbers at
// the edges of its forms, keys it orders.
func TestAppendJSONAsMarshal(t *testing.T) {
	var all []byte
	for c := 0; c < 256; c++ {
		all = append(all, byte(c))
	}
	strs := []string{"", "plain", string(all), "a\u2028b\u2029c", "é😀\u00a0", "\xff\xfe", "\xe2\x80", "<a href=\"x\">&amp;</a>", "\x7f\u007f", "tab\tcr\rnl\n"}
	values := []any{nil, true, false, 0, -1, math.MaxInt64, math.MinInt64, uint64(math.MaxUint64),
		0.0, math.Copysign(0, -1), 1.5, -2.25, 1e-6, 9.99e-7, 1e-7, 1.5e-9, 1e20, 1e21, 1.23e21, -1e-300, 5e-324, math.MaxFloat64, 123456789.125, 100.0}
	for _, s := range strs {
		values = append(values, s)
	}
	m := map[string]any{}
	for i, s := range strs {
		m[s] = values[i%len(values)]
	}
	values = append(values, m, []any{}, map[string]any{}, []any{m, strs[2], []any{nil, 1e-8}}, map[string]any{"B": 1, "a": []any{}, "b": map[string]any{"z": nil}})
	for _, v := range values {
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := appendJSON(nil, v)
		if !ok || string(got) != string(want) {
			t.Errorf("%#v:\nmade          %s (%v)\nencoding/json %s", v, got, ok, want)
		}
	}
	for _, v := range []any{math.Inf(1), math.NaN(), []any{math.Inf(-1)}, map[string]any{"x": math.NaN()}, int32(1), []string{"x"}} {
		if _, ok := appendJSON(nil, v); ok {
			t.Errorf("%#v: printed", v)
		}
	}
}
