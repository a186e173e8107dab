package effective

import (
	"bytes"
	"encoding/json"
)

// jsonTree is a JSON document decoded once, so that a series of merge
// patches goes onto it in memory instead of being parsed and printed again
// for each drop-in. Numbers keep their text (json.Number): "1.0" stays "1.0",
// and decoding it into an integer field later fails as it does in the kubelet.
type jsonTree = map[string]any

// decodeTree decodes a JSON object keeping numbers as written.
func decodeTree(js []byte) (jsonTree, error) {
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	var t jsonTree
	if err := dec.Decode(&t); err != nil {
		return nil, err
	}
	if t == nil {
		t = jsonTree{} // "null"
	}
	return t, nil
}

// mergeInto applies the RFC 7386 merge patch onto doc in place, as
// gopkg.in/evanphx/json-patch.v4's MergePatch — the kubelet's — does,
// quirks included: a null deletes, a value that replaces a non-object has
// its nulls pruned, and a non-object that replaces an object keeps them.
func mergeInto(doc, patch jsonTree) {
	for k, v := range patch {
		if v == nil {
			delete(doc, k)
			continue
		}
		cur, ok := doc[k]
		if !ok || cur == nil {
			doc[k] = pruneNulls(v)
			continue
		}
		doc[k] = mergeValue(cur, v)
	}
}

func mergeValue(cur, patch any) any {
	c, ok := cur.(jsonTree)
	if !ok {
		return pruneNulls(patch)
	}
	p, ok := patch.(jsonTree)
	if !ok {
		return patch
	}
	mergeInto(c, p)
	return c
}

// pruneNulls drops the null members of objects, in arrays too; null array
// elements stay.
func pruneNulls(v any) any {
	switch x := v.(type) {
	case jsonTree:
		for k, e := range x {
			if e == nil {
				delete(x, k)
			} else {
				pruneNulls(e)
			}
		}
	case []any:
		for _, e := range x {
			if e != nil {
				pruneNulls(e)
			}
		}
	}
	return v
}
