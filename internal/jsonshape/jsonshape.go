// Package jsonshape versions the JSON kubeletcfg writes for programs (every
// command's -o json, migrate's migration.json): each document is an object
// whose first key, "version", names its shape. A shape changes only with
// its version, and the README's Changelog says how.
package jsonshape

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Version is the version of the shapes.
const Version = 1

// Marshal is v's JSON, indented, with "version" first. v must encode as an
// object; one that has a "version" key already (a type that carries the
// shape's version itself) must have it first, and be Version.
func Marshal(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		return nil, fmt.Errorf("jsonshape: %T is not a JSON object", v)
	}
	head := fmt.Sprintf(`{"version":%d`, Version)
	if own, ok := keys["version"]; ok {
		if string(own) != fmt.Sprint(Version) || !bytes.HasPrefix(raw, []byte(head)) {
			return nil, fmt.Errorf("jsonshape: %T has a version of its own, %s, not first or not %d", v, own, Version)
		}
	} else {
		if len(keys) > 0 {
			head += ","
		}
		raw = append([]byte(head), bytes.TrimSpace(raw)[1:]...)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, raw, "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}
