package kubeadm

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"

	"k8s.io/kubelet/config/v1beta1"
	kjson "sigs.k8s.io/json"
)

// kubeadm applies a "+strategic" kubeletconfiguration patch (and
// instance-config.yaml) as a strategic merge patch with the v1beta1
// KubeletConfiguration as its schema. No field of that type, nor of any type
// it holds, carries a patchStrategy or patchMergeKey tag, so the strategy of
// every field is the default: maps merge key by key, lists are replaced. What
// remains of the strategic merge are its directives ($patch, $retainKeys,
// $setElementOrder/, $deleteFromPrimitiveList/), the schema lookups that
// refuse a map or list under a key the type does not have, and the places
// where kubeadm's code panics on a hostile patch (said here as an error).
// strategicMerge is that patch, as apimachinery's strategicpatch applies it
// (TestStrategicMergeMatchesApimachinery holds the two equal).
func strategicMerge(doc, patch []byte) (out []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, kubeadmPanics(p)
		}
	}()
	original, err := jsonObject(doc)
	if err != nil {
		return nil, err
	}
	p, err := jsonObject(patch)
	if err != nil {
		return nil, err
	}
	merged, err := smpMap(original, p, smpSchema{kubeletConfigType})
	if err != nil {
		return nil, err
	}
	return json.Marshal(merged)
}

var kubeletConfigType = reflect.TypeOf(v1beta1.KubeletConfiguration{})

// kubeadmPanics is an input on which kubeadm's code panics (the Go runtime's
// own panic here, on a map or list compared or hashed, or why).
func kubeadmPanics(why any) error { return fmt.Errorf("kubeadm panics on this patch (%v)", why) }

const (
	smpDirective       = "$patch"
	smpRetainKeys      = "$retainKeys"
	smpSetElementOrder = "$setElementOrder"
	smpDeleteFromList  = "$deleteFromPrimitiveList"
)

var (
	errBadJSONDoc         = errors.New("invalid JSON document")
	errNoListOfLists      = errors.New("lists of lists are not supported")
	errBadDeleteFromList  = errors.New("invalid patch format of primitive list")
	errBadRetainKeys      = errors.New("invalid patch format of retainKeys")
	errBadSetElementOrder = errors.New("invalid patch format of setElementOrder list")
	listType              = reflect.TypeOf([]any(nil))
	mapType               = reflect.TypeOf(map[string]any(nil))
)

func jsonObject(b []byte) (map[string]any, error) {
	if b == nil {
		b = []byte("{}")
	}
	m := map[string]any{}
	// As apimachinery reads it: integers as int64, keys as written.
	if err := kjson.UnmarshalCaseSensitivePreserveInts(b, &m); err != nil {
		return nil, errBadJSONDoc
	}
	return m, nil
}

func badArgType(expected reflect.Type, actual any) error {
	return fmt.Errorf("expected a %s, but received a %s", expected, reflect.TypeOf(actual))
}

// smpSchema is the Go type a level of the document is decoded into.
type smpSchema struct{ t reflect.Type }

func (s smpSchema) name() string { return s.t.Kind().String() }

// field is the type of the field key names (as encoding/json matches keys:
// exactly, else without regard to case).
func (s smpSchema) field(key string) (smpSchema, error) {
	t := s.t
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return smpSchema{}, fmt.Errorf("merging an object in json but data type is not struct, instead is: %s", t.Kind())
	}
	var found *jsonField
	fields := jsonFields(t)
	for i := range fields {
		if fields[i].name == key {
			found = &fields[i]
			break
		}
		if found == nil && strings.EqualFold(fields[i].name, key) {
			found = &fields[i]
		}
	}
	if found == nil {
		return smpSchema{}, fmt.Errorf("unable to find api field in struct %s for the json field %q", t.Name(), key)
	}
	return smpSchema{found.typ}, nil
}

// elem is the element type of the list field key names.
func (s smpSchema) elem(key string) (smpSchema, error) {
	f, err := s.field(key)
	if err != nil {
		return smpSchema{}, err
	}
	t := f.t
	switch t.Kind() {
	case reflect.Array, reflect.Slice:
		t = t.Elem()
		if t.Kind() == reflect.Array || t.Kind() == reflect.Slice {
			return smpSchema{}, errors.New("unexpected slice of slice")
		}
	case reflect.Pointer:
		t = t.Elem()
		if t.Kind() == reflect.Array || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
	default:
		// The parent's kind, as the lookup says it.
		return smpSchema{}, fmt.Errorf("expected slice or array type, but got: %s", s.t.Kind())
	}
	return smpSchema{t}, nil
}

type jsonField struct {
	name  string
	depth int
	typ   reflect.Type // the field's own type (a pointer stays one)
}

var jsonFieldsOf sync.Map // reflect.Type → []jsonField

// jsonFields are the fields encoding/json decodes t's keys into, in field
// order: exported fields by their json name (or Go name), the fields of
// embedded structs without a name promoted unless a shallower field has
// their name.
func jsonFields(t reflect.Type) []jsonField {
	if f, ok := jsonFieldsOf.Load(t); ok {
		return f.([]jsonField)
	}
	var all []jsonField
	var walk func(t reflect.Type, depth int)
	walk = func(t reflect.Type, depth int) {
		for i := 0; i < t.NumField(); i++ {
			sf := t.Field(i)
			if sf.PkgPath != "" {
				continue
			}
			tag := sf.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			ft := sf.Type
			if ft.Name() == "" && ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if name == "" && sf.Anonymous && ft.Kind() == reflect.Struct {
				walk(ft, depth+1)
				continue
			}
			if name == "" {
				name = sf.Name
			}
			all = append(all, jsonField{name: name, depth: depth, typ: sf.Type})
		}
	}
	walk(t, 0)
	shallowest := map[string]int{}
	for _, f := range all {
		if d, ok := shallowest[f.name]; !ok || f.depth < d {
			shallowest[f.name] = f.depth
		}
	}
	var out []jsonField
	for _, f := range all {
		if f.depth == shallowest[f.name] {
			out = append(out, f)
		}
	}
	jsonFieldsOf.Store(t, out)
	return out
}

// smpMap lays patch over original (both changed).
func smpMap(original, patch map[string]any, s smpSchema) (map[string]any, error) {
	if d, ok := patch[smpDirective]; ok {
		switch d {
		case "replace":
			delete(patch, smpDirective)
			return patch, nil
		case "delete":
			return map[string]any{}, nil
		}
		return nil, fmt.Errorf("unknown patch type: %s in map: %v", d, patch)
	}
	if original == nil {
		original = map[string]any{}
	}
	if err := retainKeys(original, patch); err != nil {
		return nil, err
	}
	if err := setElementOrders(original, patch, s); err != nil {
		return nil, err
	}
	for _, k := range sortedKeys(patch) {
		v := patch[k]
		deleteList := false
		if strings.HasPrefix(k, smpDeleteFromList) {
			key, err := directiveKey(k, smpDeleteFromList, errBadDeleteFromList)
			if err != nil {
				return nil, err
			}
			deleteList = true
			if key != "" { // an empty one leaves the directive's key as it is
				k = key
			}
		}
		if v == nil {
			delete(original, k)
			continue
		}
		cur, ok := original[k]
		if !ok || reflect.TypeOf(cur) != reflect.TypeOf(v) {
			if !deleteList {
				replaceWith(original, k, v)
			}
			continue
		}
		var err error
		switch cur := cur.(type) {
		case map[string]any:
			var sub smpSchema
			if sub, err = s.field(k); err == nil {
				original[k], err = smpMap(cur, v.(map[string]any), sub)
			}
		case []any:
			var sub smpSchema
			if sub, err = s.elem(k); err == nil {
				if deleteList {
					original[k], err = deleteFromList(cur, v.([]any), sub)
				} else {
					original[k] = v // a list is replaced, the patch's as written
				}
			}
		default:
			original[k] = v
		}
		if err != nil {
			return nil, err
		}
	}
	return original, nil
}

// replaceWith sets original[k] to the patch's value without its nulls and
// without the maps that hold a directive (dropped, or the key with them).
func replaceWith(original map[string]any, k string, v any) {
	dropNulls(v)
	if v, keep := withoutDirectives(v); keep {
		original[k] = v
	} else {
		delete(original, k)
	}
}

func dropNulls(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if e == nil {
				delete(v, k)
			} else {
				dropNulls(e)
			}
		}
	case []any:
		for _, e := range v {
			dropNulls(e)
		}
	}
}

func withoutDirectives(v any) (any, bool) {
	switch v := v.(type) {
	case map[string]any:
		if _, ok := v[smpDirective]; ok {
			return nil, false
		}
		for k, e := range v {
			if e, keep := withoutDirectives(e); keep {
				v[k] = e
			} else {
				delete(v, k)
			}
		}
		return v, true
	case []any:
		var out []any
		if v != nil {
			out = []any{}
		}
		for _, e := range v {
			if e, keep := withoutDirectives(e); keep {
				out = append(out, e)
			}
		}
		return out, true
	}
	return v, true
}

func directiveKey(k, prefix string, bad error) (string, error) {
	head, rest, ok := strings.Cut(k, "/")
	if !ok || head != prefix {
		return "", bad
	}
	return rest, nil
}

// retainKeys applies $retainKeys: the keys of original it does not list go,
// and every key the patch sets must be listed.
func retainKeys(original, patch map[string]any) error {
	rk, ok := patch[smpRetainKeys]
	if !ok {
		return nil
	}
	delete(patch, smpRetainKeys)
	list, ok := rk.([]any)
	if !ok {
		return errBadRetainKeys
	}
	keep := map[any]bool{}
	for _, k := range list {
		keep[k] = true
	}
	for k, v := range patch {
		if v == nil || strings.HasPrefix(k, smpDeleteFromList) || strings.HasPrefix(k, smpSetElementOrder) {
			continue
		}
		if !keep[k] {
			return errBadRetainKeys
		}
	}
	for k := range original {
		if !keep[k] {
			delete(original, k)
		}
	}
	return nil
}

// setElementOrders applies each $setElementOrder/<key> with its list: the
// list becomes the patch's (or stays the original's), ordered as the
// directive says; both leave the patch.
func setElementOrders(original, patch map[string]any, s smpSchema) error {
	for _, key := range sortedKeys(patch) {
		if !strings.HasPrefix(key, smpSetElementOrder) {
			continue
		}
		orderV := patch[key]
		delete(patch, key)
		order, ok := orderV.([]any)
		if !ok {
			return badArgType(listType, orderV)
		}
		k, err := directiveKey(key, smpSetElementOrder, errBadSetElementOrder)
		if err != nil {
			return err
		}
		origV, inOriginal := original[k]
		patchV, inPatch := patch[k]
		var origList, patchList []any
		if inOriginal {
			if origList, ok = origV.([]any); !ok {
				return badArgType(listType, origV)
			}
		}
		if inPatch {
			if patchList, ok = patchV.([]any); !ok {
				return badArgType(listType, patchV)
			}
		}
		if _, err := s.elem(k); err != nil {
			return err
		}
		if err := orderMatches(patchList, order); err != nil {
			return err
		}
		var merged []any
		switch {
		case inOriginal && !inPatch:
			merged = origList
		case !inOriginal && inPatch:
			v, _ := withoutDirectives(patchList)
			merged = v.([]any)
		case inOriginal && inPatch:
			merged = patchList
		default:
			continue
		}
		inOrder, serverOnly := partitionBy(merged, order)
		kind, err := elementKind(origList, patchList)
		if err != nil {
			return err
		}
		if inOrder, err = sortByOrder(inOrder, order, kind); err != nil {
			return err
		}
		if serverOnly, err = sortByOrder(serverOnly, origList, kind); err != nil {
			return err
		}
		original[k] = interleave(serverOnly, inOrder, origList, kind)
		delete(patch, k)
	}
	return nil
}

// orderMatches checks that the patch's list (its directives left out) is
// in the directive's order.
func orderMatches(patchList, order []any) error {
	if len(order) == 0 || len(patchList) == 0 {
		return nil
	}
	i, j := 0, 0
	for i < len(patchList) && j < len(order) {
		if m, ok := patchList[i].(map[string]any); ok {
			if _, ok := m[smpDirective]; ok {
				i++
				continue
			}
		}
		if patchList[i] == order[j] {
			i++
		}
		j++
	}
	if i < len(patchList) && j >= len(order) {
		return fmt.Errorf("The order in patch list:\n%v\n doesn't match %s list:\n%v\n", patchList, smpSetElementOrder, order)
	}
	return nil
}

// partitionBy splits list into the items by is about and the others.
func partitionBy(list, by []any) (in, others []any) {
	in, others = make([]any, 0, len(list)), make([]any, 0, len(list))
	set := map[any]bool{}
	for _, v := range by {
		set[v] = true
	}
	for _, v := range list {
		if set[v] {
			in = append(in, v)
		} else {
			others = append(others, v)
		}
	}
	return in, others
}

// elementKind is the kind of the lists' items, which must all be of one
// type and not lists.
func elementKind(lists ...[]any) (reflect.Kind, error) {
	var t reflect.Type
	for _, l := range lists {
		for _, v := range l {
			vt := reflect.TypeOf(v)
			if t == nil {
				if vt == nil {
					return 0, kubeadmPanics("a list whose first item is null")
				}
				t = vt
				if t.Kind() == reflect.Slice {
					return 0, errNoListOfLists
				}
			} else if vt != t {
				return 0, fmt.Errorf("list element types are not identical: %v", fmt.Sprint(lists))
			}
		}
	}
	if t == nil {
		return 0, errors.New("no elements in any of the given slices")
	}
	return t.Kind(), nil
}

// key is what an item is found by in an order: itself, or for a map the
// value of its merge key, which no field has (the empty key).
func key(v any, kind reflect.Kind) any {
	if kind != reflect.Map {
		return v
	}
	m, _ := v.(map[string]any)
	return m[""]
}

func indexIn(order []any, v any, kind reflect.Kind) int {
	for i, o := range order {
		if key(v, kind) == key(o, kind) {
			return i
		}
	}
	return -1
}

// sortByOrder sorts list stably by the items' places in order (an item
// not there compares as less, both ways).
func sortByOrder(list, order []any, kind reflect.Kind) ([]any, error) {
	var toDelete []any
	if kind == reflect.Map {
		for _, l := range [][]any{list, order} {
			for _, v := range l {
				m, ok := v.(map[string]any)
				if !ok {
					return nil, badArgType(mapType, v)
				}
				if _, ok := m[""]; !ok {
					return nil, fmt.Errorf("map: %v does not contain declared merge key: %s", m, "")
				}
			}
		}
		var kept []any
		for _, v := range list {
			if v.(map[string]any)[smpDirective] == "delete" {
				toDelete = append(toDelete, v)
			} else {
				kept = append(kept, v)
			}
		}
		list = kept
	}
	sort.SliceStable(list, func(i, j int) bool {
		if a := indexIn(order, list[i], kind); a >= 0 {
			if b := indexIn(order, list[j], kind); b >= 0 {
				return a < b
			}
		}
		return true
	})
	return append(list, toDelete...), nil
}

// interleave merges left into right, each keeping its order, an item of
// left going before the first item of right that comes after it in order.
func interleave(left, right, order []any, kind reflect.Kind) []any {
	out := make([]any, len(left)+len(right))
	i, j := 0, 0
	for k := range out {
		switch {
		case i >= len(left):
			out[k] = right[j]
			j++
		case j >= len(right):
			out[k] = left[i]
			i++
		default:
			a, b := indexIn(order, left[i], kind), indexIn(order, right[j], kind)
			if a >= 0 && b >= 0 && a < b {
				out[k] = left[i]
				i++
			} else {
				out[k] = right[j]
				j++
			}
		}
	}
	return out
}

// deleteFromList applies $deleteFromPrimitiveList/<key>: its items leave
// the list (only a list of scalars: a list of maps has no merge key).
func deleteFromList(list, del []any, elem smpSchema) ([]any, error) {
	if len(list) == 0 && len(del) == 0 {
		return list, nil
	}
	kind, err := elementKind(list, del)
	if err != nil {
		return nil, err
	}
	if kind == reflect.Map {
		return nil, fmt.Errorf("cannot merge lists without merge key for %s", elem.name())
	}
	gone := map[any]bool{}
	for _, v := range del {
		gone[v] = true
	}
	out := make([]any, 0, len(list))
	for _, v := range list {
		if !gone[v] {
			out = append(out, v)
		}
	}
	return out, nil
}
