package config

import (
	"encoding"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"sync"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ToMap printed a configuration as JSON and read it back as a map, several
// times a run (every diff, the merge of drop-ins, audit's values): jsonOf
// walks the value instead and gives what that round trip gives — float64
// numbers, strings, booleans, nils, maps and lists. A type with its own JSON
// (a quantity) is printed and read back alone. Where it does not know
// encoding/json's answer for sure (floats, interfaces, text that is not
// UTF-8, float32s, fields whose JSON names collide, ",string") it says false, and the
// round trip answers. Tests hold the two equal.

func jsonOf(v reflect.Value) (any, bool) {
	t := v.Type()
	if t == durationType {
		return v.Interface().(metav1.Duration).Duration.String(), true
	}
	if custom(t) {
		// As encoding/json calls it: through a pointer where the value
		// has an address (a field), on the value where not (a map's).
		x := v.Interface()
		if v.CanAddr() {
			x = v.Addr().Interface()
		}
		b, err := json.Marshal(x)
		if err != nil {
			return nil, false
		}
		var out any
		return out, json.Unmarshal(b, &out) == nil
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return nil, true
		}
		return jsonOf(v.Elem())
	case reflect.Struct:
		plan, ok := planOf(t)
		if !ok {
			return nil, false
		}
		out := make(map[string]any, len(plan))
		for _, f := range plan {
			fv, ok := fieldOf(v, f.index)
			if !ok || (f.omitEmpty && emptyValue(fv)) {
				continue
			}
			x, ok := jsonOf(fv)
			if !ok {
				return nil, false
			}
			out[f.name] = x
		}
		return out, true
	case reflect.Map:
		if t.Key().Kind() != reflect.String || custom(t.Key()) {
			return nil, false
		}
		if v.IsNil() {
			return nil, true
		}
		out := make(map[string]any, v.Len())
		it := v.MapRange()
		for it.Next() {
			k := it.Key().String()
			if !utf8.ValidString(k) {
				return nil, false
			}
			x, ok := jsonOf(it.Value())
			if !ok {
				return nil, false
			}
			out[k] = x
		}
		return out, true
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return nil, false // base64
		}
		if v.IsNil() {
			return nil, true
		}
		out := make([]any, v.Len())
		for i := range out {
			x, ok := jsonOf(v.Index(i))
			if !ok {
				return nil, false
			}
			out[i] = x
		}
		return out, true
	case reflect.String:
		s := v.String()
		return s, utf8.ValidString(s)
	case reflect.Bool:
		return v.Bool(), true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		// encoding/json prints the integer, and reads it back as the
		// float64 nearest to it: what the conversion gives.
		return float64(v.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return float64(v.Uint()), true
	case reflect.Float64:
		// Printed in its shortest form, which reads back as itself; not
		// finite, encoding/json refuses it.
		f := v.Float()
		return f, !math.IsInf(f, 0) && !math.IsNaN(f)
	}
	return nil, false
}

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// custom says t (or *t) prints itself as JSON or text.
func custom(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		return false // its element is asked
	}
	return traitsOf(t).marshals
}

// fieldOf follows index through embedded structs; false when an embedded
// pointer on the way is nil (encoding/json leaves those fields out).
func fieldOf(v reflect.Value, index []int) (reflect.Value, bool) {
	for i, x := range index {
		if i > 0 {
			if v.Kind() == reflect.Pointer {
				if v.IsNil() {
					return reflect.Value{}, false
				}
				v = v.Elem()
			}
		}
		v = v.Field(x)
	}
	return v, true
}

func emptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

type planField struct {
	name      string
	index     []int
	omitEmpty bool
}

var plans sync.Map // reflect.Type → []planField, or nil when it has no plan

// planOf lists the JSON fields of struct type t as encoding/json does for
// the plain cases: exported fields by their tag's name, untagged embedded
// structs' fields promoted. false for what it leaves to encoding/json:
// ",string", two fields of one name, embedded pointers or non-structs.
func planOf(t reflect.Type) ([]planField, bool) {
	if p, ok := plans.Load(t); ok {
		return p.([]planField), p.([]planField) != nil
	}
	var out []planField
	ok := addFields(t, nil, &out)
	if ok {
		seen := map[string]bool{}
		for _, f := range out {
			if seen[f.name] {
				ok = false
				break
			}
			seen[f.name] = true
		}
	}
	if !ok {
		out = nil
	}
	plans.Store(t, out)
	return out, ok
}

func addFields(t reflect.Type, prefix []int, out *[]planField) bool {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		index := append(append([]int(nil), prefix...), i)
		if f.Anonymous && name == "" {
			if f.Type.Kind() != reflect.Struct {
				return false
			}
			if !addFields(f.Type, index, out) {
				return false
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if !validTagName(name) {
			return false
		}
		omit := false
		for _, o := range strings.Split(opts, ",") {
			switch o {
			case "omitempty":
				omit = true
			case "", "inline":
			default:
				return false // ",string", ",omitzero", ...
			}
		}
		*out = append(*out, planField{name: name, index: index, omitEmpty: omit})
	}
	return true
}

// validTagName: a name encoding/json takes as written (letters, digits and
// a few marks); anything else is left to it.
func validTagName(s string) bool {
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return s != ""
}
