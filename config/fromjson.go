package config

import (
	"encoding"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"sync"
	"unicode/utf8"

	"k8s.io/kubelet/config/v1beta1"
)

// A configuration is decoded from JSON several times a run (the config
// file, the drop-ins merged, the defaults, pruning), and the first decoding
// of a type as large as KubeletConfiguration costs encoding/json more than
// the rest (its fields, and theirs, read by reflection). setJSON sets a
// value from one already read into Go values (maps, lists, strings, numbers
// as int, json.Number (the text) or float64 (one encoding/json prints: a
// whole one below 2^53 prints as digits), booleans, nils) as encoding/json
// would from its JSON, or says false where it is not sure — a key that
// names no field exactly (encoding/json would match it in any case), a
// number that does not fit, a type mismatch (an error: encoding/json says
// it, in its words), a null for a type with its own decoding — and the
// caller decodes the JSON as before. A type with its own decoding (a
// duration, a quantity) is given its value's JSON. Tests hold it to
// encoding/json.

// DecodeValue is encoding/json's decoding into a KubeletConfiguration of the
// JSON object v stands for (read into Go values, numbers as setJSON takes
// them), or false where setJSON is not sure: decode the JSON then.
func DecodeValue(v any) (*v1beta1.KubeletConfiguration, bool) { return decodeValue(v) }

func decodeValue(v any) (*v1beta1.KubeletConfiguration, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	cfg := &v1beta1.KubeletConfiguration{}
	if !setJSON(reflect.ValueOf(cfg).Elem(), m) {
		return nil, false
	}
	return cfg, true
}

var (
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// traits are what encoding/json asks of a type before it decodes or
// encodes a value of it: whether it (or a pointer to it) decodes or prints
// itself.
type traits struct {
	unmarshalsJSON, unmarshalsText, marshals bool
}

// traitsByType caches traitsOf: asking a type for its methods walks them
// all, and the decoders ask for every value.
var traitsByType sync.Map

func traitsOf(t reflect.Type) traits {
	if tr, ok := traitsByType.Load(t); ok {
		return tr.(traits)
	}
	p := reflect.PointerTo(t)
	tr := traits{
		unmarshalsJSON: p.Implements(jsonUnmarshalerType),
		unmarshalsText: p.Implements(textUnmarshalerType),
		marshals:       t.Implements(jsonMarshaler) || p.Implements(jsonMarshaler) || t.Implements(textMarshaler) || p.Implements(textMarshaler),
	}
	traitsByType.Store(t, tr)
	return tr
}

// setJSON sets dst (addressable, zero) from v.
func setJSON(dst reflect.Value, v any) bool {
	t := dst.Type()
	tr := traitsOf(t)
	if tr.unmarshalsJSON {
		if v == nil {
			return false
		}
		raw, err := json.Marshal(v)
		if err != nil {
			return false
		}
		return dst.Addr().Interface().(json.Unmarshaler).UnmarshalJSON(raw) == nil
	}
	if t.Kind() != reflect.Pointer && tr.unmarshalsText {
		return false
	}
	if v == nil {
		switch t.Kind() {
		case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface:
			dst.SetZero()
		}
		return true // other kinds: left as they are
	}
	switch t.Kind() {
	case reflect.Pointer:
		p := reflect.New(t.Elem())
		if !setJSON(p.Elem(), v) {
			return false
		}
		dst.Set(p)
		return true
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		plan, ok := planOf(t)
		if !ok {
			return false
		}
		for key, val := range m {
			f := fieldNamed(plan, key)
			if f == nil {
				return false // maybe a field in another case: encoding/json's
			}
			fv, ok := settableField(dst, f.index)
			if !ok || !setJSON(fv, val) {
				return false
			}
		}
		return true
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok || t.Key().Kind() != reflect.String || traitsOf(t.Key()).unmarshalsText {
			return false
		}
		out := reflect.MakeMapWithSize(t, len(m))
		for key, val := range m {
			if !utf8.ValidString(key) {
				return false // encoding/json's round trip makes it U+FFFD
			}
			e := reflect.New(t.Elem()).Elem()
			if !setJSON(e, val) {
				return false
			}
			out.SetMapIndex(reflect.ValueOf(key).Convert(t.Key()), e)
		}
		dst.Set(out)
		return true
	case reflect.Slice:
		list, ok := v.([]any)
		if !ok || t.Elem().Kind() == reflect.Uint8 {
			return false
		}
		out := reflect.MakeSlice(t, len(list), len(list))
		for i, val := range list {
			if !setJSON(out.Index(i), val) {
				return false
			}
		}
		dst.Set(out)
		return true
	case reflect.String:
		s, ok := v.(string)
		if !ok || !utf8.ValidString(s) {
			return false // not UTF-8: encoding/json's round trip makes it U+FFFD
		}
		dst.SetString(s)
		return true
	case reflect.Bool:
		b, ok := v.(bool)
		if ok {
			dst.SetBool(b)
		}
		return ok
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		i, ok := integer(v)
		if !ok || dst.OverflowInt(i) {
			return false
		}
		dst.SetInt(i)
		return true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		i, ok := integer(v)
		if !ok || i < 0 || negative(v) || dst.OverflowUint(uint64(i)) {
			return false
		}
		dst.SetUint(uint64(i))
		return true
	case reflect.Float64:
		switch x := v.(type) {
		case float64:
			dst.SetFloat(x)
			return true
		case int:
			dst.SetFloat(float64(x))
			return float64(x) == float64(int64(float64(x))) && math.Abs(float64(x)) < 1<<53
		case json.Number:
			f, err := strconv.ParseFloat(string(x), 64)
			if err != nil {
				return false
			}
			dst.SetFloat(f)
			return true
		}
	}
	return false
}

// integer is v as the integer encoding/json would read from its JSON text,
// when that text is plain digits (what it prints for a whole float64 below
// 2^53, an int, a json.Number of digits).
func integer(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case float64:
		if x != math.Trunc(x) || math.Abs(x) >= 1<<53 {
			return 0, false
		}
		return int64(x), true
	case json.Number:
		i, err := strconv.ParseInt(string(x), 10, 64)
		return i, err == nil
	}
	return 0, false
}

// negative says whether v's JSON text starts with a minus (a negative zero
// too, which encoding/json refuses for an unsigned integer).
func negative(v any) bool {
	switch x := v.(type) {
	case float64:
		return math.Signbit(x)
	case json.Number:
		return len(x) > 0 && x[0] == '-'
	}
	return false
}

func fieldNamed(plan []planField, name string) *planField {
	for i := range plan {
		if plan[i].name == name {
			return &plan[i]
		}
	}
	return nil
}

// settableField follows index through embedded structs, allocating
// embedded pointers (there are none in the plans: planOf refuses them).
func settableField(v reflect.Value, index []int) (reflect.Value, bool) {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			return reflect.Value{}, false
		}
		v = v.Field(x)
	}
	return v, v.CanSet()
}
