// Package config reads KubeletConfiguration documents strictly, with the
// position of every key, and applies a kubelet version's defaults to them.
package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	yamlv3 "go.yaml.in/yaml/v3"
	"k8s.io/kubelet/config/v1beta1"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/kubeletcfg/kubeletcfg/nodefile"
	"github.com/kubeletcfg/kubeletcfg/schema"
	"github.com/kubeletcfg/kubeletcfg/warning"
)

const (
	APIVersion = "kubelet.config.k8s.io/v1beta1"
	Kind       = "KubeletConfiguration"
	// MaxFileSize bounds what Decode reads: real files are a few KiB, and
	// decoding costs about a hundred times the file's size in memory.
	MaxFileSize = int(nodefile.MaxConfigSize)
)

// Problem is something wrong (or, as a warning, suspicious) in a document.
type Problem struct {
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
	Warning bool   `json:"-"`
	// Code says what kind of problem it is, as the warning package's codes
	// do ("unknown-field", "duplicate-key"...); "" when it has none.
	Code string `json:"code,omitempty"`
	// FirstLine is, for a key set twice, the line that set it first.
	FirstLine int `json:"-"`
}

func (p Problem) Error() string {
	return warning.Warning{File: p.File, Line: p.Line, Column: p.Column, Field: p.Field, Message: p.Message}.String()
}

// AsWarning is the problem as a warning (code warning.Other when it has none).
func (p Problem) AsWarning() warning.Warning {
	code := p.Code
	if code == "" {
		code = warning.Other
	}
	return warning.Warning{Code: code, File: p.File, Line: p.Line, Column: p.Column, Field: p.Field, Message: p.Message}
}

// Position is where a key stands in its file.
type Position struct {
	Line, Column int
}

// Document is a decoded KubeletConfiguration file.
type Document struct {
	File   string
	Config *v1beta1.KubeletConfiguration
	// JSON is the document as the kubelet converts it (YAML 1.1 rules, the last
	// of duplicate keys winning), before decoding into the typed config.
	JSON []byte
	// Keys holds the position of every key, by JSON path ("evictionHard",
	// "authentication.webhook.enabled", "registerWithTaints[0].key").
	Keys map[string]Position
	// Problems are the errors and warnings found; the document decoded anyway.
	Problems []Problem
	// value is what JSON was printed from, where Decode had it (nil else).
	value any
}

// TypeMeta is the apiVersion and kind of the document as encoding/json
// reads them from JSON into a struct of those two strings (keys matched
// without regard to case, a null leaving ""), with its error.
func (d *Document) TypeMeta() (apiVersion, kind string, err error) {
	if m, ok := d.value.(map[string]any); ok {
		if a, k, ok := plainTypeMeta(m); ok {
			return a, k, nil
		}
	}
	var tm struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	err = json.Unmarshal(d.JSON, &tm)
	return tm.APIVersion, tm.Kind, err
}

// JSONTree is the document's JSON as encoding/json decodes it into a map
// with UseNumber (numbers as json.Number, with the text JSON has), made
// from the value JSON was printed from, a fresh copy at each call; false
// where Decode did not keep that value or it is not an object.
func (d *Document) JSONTree() (map[string]any, bool) {
	m, ok := d.value.(map[string]any)
	if !ok {
		return nil, false
	}
	out, ok := numbered(m)
	if !ok {
		return nil, false
	}
	return out.(map[string]any), true
}

// numbered copies a value of the kind jsonValue makes with its numbers as
// json.Number, printed as encoding/json prints them.
func numbered(v any) (any, bool) {
	switch x := v.(type) {
	case nil, bool, string:
		return x, true
	case int:
		return json.Number(strconv.Itoa(x)), true
	case uint64:
		return json.Number(strconv.FormatUint(x, 10)), true
	case float64:
		b, err := json.Marshal(x)
		if err != nil {
			return nil, false
		}
		return json.Number(b), true
	case map[string]any, []any:
		return copyTree(x, numbered)
	}
	return nil, false
}

// copyTree copies a map or list of JSON-like values, each element through
// leaf (which copies maps and lists by calling copyTree again); false when
// leaf refuses an element.
func copyTree(v any, leaf func(any) (any, bool)) (any, bool) {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			c, ok := leaf(e)
			if !ok {
				return nil, false
			}
			out[k] = c
		}
		return out, true
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			c, ok := leaf(e)
			if !ok {
				return nil, false
			}
			out[i] = c
		}
		return out, true
	}
	return nil, false
}

// plainTypeMeta reads apiVersion and kind from m where encoding/json could
// not read them otherwise: each absent, null or a string, and no other key
// that matches either without regard to case.
func plainTypeMeta(m map[string]any) (apiVersion, kind string, ok bool) {
	for k := range m {
		if (k != "apiVersion" && strings.EqualFold(k, "apiVersion")) || (k != "kind" && strings.EqualFold(k, "kind")) {
			return "", "", false
		}
	}
	str := func(key string) (string, bool) {
		switch x := m[key].(type) {
		case nil:
			return "", true
		case string:
			return x, true
		}
		return "", false
	}
	apiVersion, ok1 := str("apiVersion")
	kind, ok2 := str("kind")
	return apiVersion, kind, ok1 && ok2
}

// Errors returns the problems that are not warnings.
func (d *Document) Errors() []Problem {
	var out []Problem
	for _, p := range d.Problems {
		if !p.Warning {
			out = append(out, p)
		}
	}
	return out
}

// Warnings returns the problems that are warnings.
func (d *Document) Warnings() []warning.Warning {
	var out []warning.Warning
	for _, p := range d.Problems {
		if p.Warning {
			out = append(out, p.AsWarning())
		}
	}
	return out
}

// DecodeOptions tune Decode.
type DecodeOptions struct {
	File    string          // named in every problem
	Version *schema.Version // whose fields are known; the newest when nil
	// AllowUnknownFields reports unknown fields as warnings, not errors.
	AllowUnknownFields bool
	// AnyTypeMeta accepts any apiVersion and kind (the caller checks them).
	AnyTypeMeta bool
	// NoTyped skips decoding into the typed configuration: Document.Config
	// stays nil, and type errors are left to whoever decodes the JSON.
	NoTyped bool
	// slow takes the general way even where the short one would do (for
	// the tests that hold the two equal).
	slow bool
}

// Decode reads a YAML or JSON KubeletConfiguration. A document that cannot be
// read at all (not YAML, not a mapping, a type that does not fit a field) is an
// error; anything else wrong is listed in Document.Problems.
//
// The same document is often read more than once in a run (apply and diff
// lay the same drop-ins under two configurations, validate reads a file
// strictly and then as the kubelet does): a run remembers what it decoded
// (see decoded) and hands out copies the caller may change.
func Decode(data []byte, opts DecodeOptions) (*Document, error) {
	if opts.Version == nil {
		opts.Version = schema.Newest()
	}
	if d, ok := decoded.get(data, opts); ok {
		return d, nil
	}
	d, w, err := decodeDoc(data, opts)
	if err != nil {
		return nil, err
	}
	decoded.put(data, opts, d, w.unknowns)
	return d.copy(), nil
}

func decodeDoc(data []byte, opts DecodeOptions) (*Document, *walker, error) {
	v := opts.Version
	doc := &Document{File: opts.File, Keys: map[string]Position{}}
	fail := func(line, col int, field, format string, args ...any) error {
		return Problem{File: opts.File, Line: line, Column: col, Field: field, Message: fmt.Sprintf(format, args...)}
	}
	if len(data) > MaxFileSize {
		return nil, nil, fail(0, 0, "", "the file is %d bytes; a kubelet configuration is a few KiB, kubeletcfg reads at most %d", len(data), MaxFileSize)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil, fail(0, 0, "", "the file is empty (the kubelet refuses an empty config file)")
	}
	var root yamlv3.Node
	// Plain block YAML: parsed by parseBlock. Else one document (no line
	// starts a second): parsed by go-yaml from the bytes, with no reader
	// and its buffer.
	var block *yamlv3.Node
	isBlock := false
	if !opts.slow {
		block, isBlock = parseBlock(data)
	}
	single := !opts.slow && !bytes.Contains(data, []byte("\n---")) && !bytes.Contains(data, []byte("\n...")) && !bytes.HasPrefix(data, []byte("..."))
	var dec *yamlv3.Decoder
	if isBlock {
		root = *block
	} else if single {
		if err := yamlv3.Unmarshal(data, &root); err != nil {
			return nil, nil, yamlError(opts.File, err)
		}
	} else {
		dec = yamlv3.NewDecoder(bytes.NewReader(data))
		if err := dec.Decode(&root); err != nil {
			if errors.Is(err, io.EOF) {
				return nil, nil, fail(0, 0, "", "the file holds no YAML document")
			}
			return nil, nil, yamlError(opts.File, err)
		}
	}
	if root.Kind != yamlv3.DocumentNode || len(root.Content) == 0 {
		return nil, nil, fail(0, 0, "", "the file holds no YAML document")
	}
	top := root.Content[0]
	if top.Kind != yamlv3.MappingNode {
		return nil, nil, fail(top.Line, top.Column, "", "the document is a %s, not a mapping of KubeletConfiguration fields", nodeKind(top))
	}
	w := walker{doc: doc, v: v, children: childIndex(v), allowUnknown: opts.AllowUnknownFields}
	w.mapping(top, "")
	// The kubelet's YAML reader takes the first document and ignores the
	// rest without a word.
	if dec != nil {
		var next yamlv3.Node
		if err := dec.Decode(&next); !errors.Is(err, io.EOF) && !emptyDocument(&next, err) {
			line := next.Line
			if err != nil {
				line = 0
			}
			w.add(Problem{Line: line, Warning: true, Code: warning.DocumentIgnored,
				Message: "a second YAML document: the kubelet reads only the first and ignores the rest"})
		}
	}

	js, val, ok := kubeletJSON(data, top)
	if !ok || opts.slow {
		val = nil
		var err error
		if js, err = yaml.YAMLToJSON(data); err != nil {
			return nil, nil, yamlError(opts.File, err)
		}
	}
	doc.JSON = js
	if !opts.AnyTypeMeta {
		if err := checkTypeMeta(doc, top); err != nil {
			return nil, nil, err
		}
	}
	if opts.NoTyped {
		doc.value = val
		w.finish()
		return doc, &w, nil
	}
	cfg := &v1beta1.KubeletConfiguration{}
	// Every key the file names is a field of this version, by its exact
	// name: nothing to drop, and encoding/json, whose field matching
	// ignores case, decodes it as the kubelet's case-sensitive decoding
	// does (the configuration has no field of an interface type, where
	// that one keeps integers apart). An error is said as the kubelet's
	// decoding says it, below.
	if w.unknowns == 0 && !opts.slow {
		if fast, ok := decodeValue(val); ok {
			doc.Config = fast
			w.finish()
			return doc, &w, nil
		}
		if json.Unmarshal(js, cfg) == nil {
			doc.Config = cfg
			w.finish()
			return doc, &w, nil
		}
	}
	cfg = &v1beta1.KubeletConfiguration{}
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(js, cfg); err != nil {
		return nil, nil, doc.typeError(err, js, v)
	}
	// Keep only what this kubelet version knows: it drops the rest.
	// Numbers keep their text: an integer beyond 2^53 stays exact.
	var obj map[string]any
	jdec := json.NewDecoder(bytes.NewReader(js))
	jdec.UseNumber()
	if err := jdec.Decode(&obj); err != nil {
		return nil, nil, doc.typeError(err, js, v)
	}
	prune(obj, v)
	pruned, _ := json.Marshal(obj)
	cfg = &v1beta1.KubeletConfiguration{}
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(pruned, cfg); err != nil {
		return nil, nil, doc.typeError(err, pruned, v)
	}
	doc.Config = cfg
	w.finish()
	return doc, &w, nil
}

// finish sorts the problems by line and adds the "and N more" of those not
// reported.
func (w *walker) finish() {
	sort.SliceStable(w.doc.Problems, func(i, j int) bool { return w.doc.Problems[i].Line < w.doc.Problems[j].Line })
	w.summarize()
}

func checkTypeMeta(doc *Document, top *yamlv3.Node) error {
	var missing []string
	for _, want := range [][2]string{{"apiVersion", APIVersion}, {"kind", Kind}} {
		val := lookup(top, want[0])
		switch {
		case val == nil:
			missing = append(missing, want[0])
		case val.Value != want[1]:
			return Problem{File: doc.File, Line: val.Line, Column: val.Column, Field: want[0],
				Message: fmt.Sprintf("is %q, must be %q", val.Value, want[1])}
		}
	}
	if len(missing) > 0 {
		return Problem{File: doc.File, Message: fmt.Sprintf("%s missing: a KubeletConfiguration file must say apiVersion: %s and kind: %s",
			strings.Join(missing, " and "), APIVersion, Kind)}
	}
	return nil
}

func lookup(m *yamlv3.Node, key string) *yamlv3.Node {
	var found *yamlv3.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			found = m.Content[i+1] // the last duplicate wins, as in the kubelet
		}
	}
	return found
}

func (d *Document) typeError(err error, js []byte, v *schema.Version) error {
	msg := err.Error()
	field := ""
	// A duration that does not parse: time.ParseDuration does not say whose.
	if strings.HasPrefix(msg, "time: ") {
		if f, val := badDuration(js, v); f != "" {
			field, msg = f, fmt.Sprintf("%q is not a duration (%s); write it as e.g. 1m30s, with units h, m, s, ms, us, ns", val, strings.TrimPrefix(msg, "time: "))
		}
	}
	// encoding/json style: "json: cannot unmarshal X into Go struct field T.a.b of type Y"
	if i := strings.Index(msg, "Go struct field "); i >= 0 {
		rest := msg[i+len("Go struct field "):]
		if j := strings.Index(rest, " of type "); j >= 0 {
			name := rest[:j]
			if k := strings.Index(name, "."); k >= 0 {
				name = name[k+1:]
			}
			field = name
			what := strings.TrimPrefix(msg[:i], "json: ")
			what = strings.TrimSuffix(strings.TrimSpace(what), " into")
			msg = fmt.Sprintf("%s: want %s", what, rest[j+len(" of type "):])
		}
	}
	p := Problem{File: d.File, Field: field, Message: msg}
	if pos, ok := d.Keys[field]; ok {
		p.Line, p.Column = pos.Line, pos.Column
	}
	return p
}

func yamlError(file string, err error) error {
	msg := err.Error()
	line := 0
	// yaml.v2/v3 errors read "yaml: line N: ...".
	if rest, ok := strings.CutPrefix(strings.TrimPrefix(msg, "error converting YAML to JSON: "), "yaml: line "); ok {
		if i := strings.Index(rest, ":"); i > 0 {
			if n, err := strconv.Atoi(rest[:i]); err == nil {
				line = n
				msg = strings.TrimSpace(rest[i+1:])
			}
		}
	}
	return Problem{File: file, Line: line, Message: "not valid YAML: " + strings.TrimPrefix(msg, "yaml: ")}
}

func nodeKind(n *yamlv3.Node) string {
	switch n.Kind {
	case yamlv3.SequenceNode:
		return "list"
	case yamlv3.ScalarNode:
		return "scalar"
	case yamlv3.AliasNode:
		return "alias"
	}
	return "mapping"
}

// IsProblem reports whether err is a Problem (bad input, as opposed to I/O).
func IsProblem(err error) bool {
	var p Problem
	return errors.As(err, &p)
}

// badDuration finds the first duration field of js whose value does not
// parse, and that value.
func badDuration(js []byte, v *schema.Version) (string, string) {
	var obj map[string]any
	if json.Unmarshal(js, &obj) != nil {
		return "", ""
	}
	for _, f := range v.Fields() {
		if f.Type != "duration" {
			continue
		}
		var cur any = obj
		for _, part := range strings.Split(f.Path, ".") {
			m, ok := cur.(map[string]any)
			if !ok {
				cur = nil
				break
			}
			cur = m[part]
		}
		if s, ok := cur.(string); ok {
			if _, err := time.ParseDuration(s); err != nil {
				return f.Path, s
			}
		}
	}
	return "", ""
}

// emptyDocument reports whether n is a document with nothing in it, as a
// trailing "---" makes.
func emptyDocument(n *yamlv3.Node, err error) bool {
	if err != nil || n.Kind != yamlv3.DocumentNode || len(n.Content) != 1 {
		return false
	}
	c := n.Content[0]
	return c.Kind == yamlv3.ScalarNode && c.ShortTag() == "!!null" && c.Value == ""
}
