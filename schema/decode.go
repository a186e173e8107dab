package schema

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
	"unsafe"
)

// The embedded data is read by every command, and encoding/json takes ~1.5
// ms (reflection, ~1,800 allocations) for a version's 90 kB: a third of what
// a command may spend beyond the start of the process. This reader knows
// the data's shape and reads it in one pass, its strings sharing one copy
// of the file. schema's tests hold it equal to encoding/json's decoding of
// every embedded file.

// reader walks one JSON document. s is the document as a string (the
// strings read are its substrings), b the same bytes (raw values are its
// slices; nothing may write to them).
type reader struct {
	s string
	b []byte
	i int
}

// newReader reads raw, which nothing may change after: its strings share
// raw's memory (a version's data is the binary's own read-only string, the
// other embedded files copies of their own, and every reader of the tables
// only reads).
func newReader(raw []byte) *reader {
	if len(raw) == 0 {
		return &reader{b: raw}
	}
	return &reader{s: unsafe.String(unsafe.SliceData(raw), len(raw)), b: raw}
}

func (r *reader) err(what string) error {
	return fmt.Errorf("offset %d: %s", r.i, what)
}

func (r *reader) ws() {
	for r.i < len(r.s) {
		switch r.s[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

// peek skips white space and returns the next byte (0 at the end).
func (r *reader) peek() byte {
	r.ws()
	if r.i >= len(r.s) {
		return 0
	}
	return r.s[r.i]
}

func (r *reader) expect(c byte) error {
	if r.peek() != c {
		return r.err(fmt.Sprintf("expected %q", c))
	}
	r.i++
	return nil
}

// object calls member for each key, the reader at its value, which member
// must consume.
func (r *reader) object(member func(key string) error) error {
	var key string
	return r.members(func() (err error) {
		key, err = r.str()
		return err
	}, func() error { return member(key) })
}

// members reads an object: name reads each key, value its value.
func (r *reader) members(name, value func() error) error {
	if err := r.expect('{'); err != nil {
		return err
	}
	if r.peek() == '}' {
		r.i++
		return nil
	}
	for {
		if err := name(); err != nil {
			return err
		}
		if err := r.expect(':'); err != nil {
			return err
		}
		if err := value(); err != nil {
			return err
		}
		switch r.peek() {
		case ',':
			r.i++
		case '}':
			r.i++
			return nil
		default:
			return r.err("expected , or }")
		}
	}
}

// array calls elem for each element, the reader at it.
func (r *reader) array(elem func() error) error {
	if err := r.expect('['); err != nil {
		return err
	}
	if r.peek() == ']' {
		r.i++
		return nil
	}
	for {
		if err := elem(); err != nil {
			return err
		}
		switch r.peek() {
		case ',':
			r.i++
		case ']':
			r.i++
			return nil
		default:
			return r.err("expected , or ]")
		}
	}
}

func (r *reader) str() (string, error) {
	if err := r.expect('"'); err != nil {
		return "", err
	}
	start := r.i
	n := strings.IndexByte(r.s[start:], '"')
	if n < 0 {
		return "", r.err("unterminated string")
	}
	if plain(r.s[start : start+n]) {
		r.i = start + n + 1
		return r.s[start : start+n], nil
	}
	// Escapes are rare in the data: encoding/json reads such a string.
	for r.i < len(r.s) && r.s[r.i] != '"' {
		if r.s[r.i] == '\\' {
			r.i++
		}
		r.i++
	}
	if r.i >= len(r.s) {
		return "", r.err("unterminated string")
	}
	r.i++
	var out string
	if err := json.Unmarshal(r.b[start-1:r.i], &out); err != nil {
		return "", r.err(err.Error())
	}
	return out, nil
}

// skipStr skips a string whose text is not wanted: only its end is looked
// for (a quote no backslash escapes).
func (r *reader) skipStr() error {
	if err := r.expect('"'); err != nil {
		return err
	}
	for {
		n := strings.IndexByte(r.s[r.i:], '"')
		if n < 0 {
			return r.err("unterminated string")
		}
		end := r.i + n
		r.i = end + 1
		escapes := 0
		for k := end - 1; k >= 0 && r.s[k] == '\\'; k-- {
			escapes++
		}
		if escapes%2 == 0 {
			return nil
		}
	}
}

// plain says s has no escape and no control character. Eight bytes are
// looked at together: a byte below 0x20 or a backslash in a word sets the
// high bit of its byte in the mask.
func plain(s string) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(s[i:]), 8))
		bs := w ^ (ones * '\\') // zero bytes where w has a backslash
		if ((w-ones*0x20)&^w|(bs-ones)&^bs)&highs != 0 {
			return false
		}
	}
	for ; i < len(s); i++ {
		if s[i] == '\\' || s[i] < 0x20 {
			return false
		}
	}
	return true
}

func (r *reader) boolean() (bool, error) {
	r.ws()
	switch {
	case len(r.s)-r.i >= 4 && r.s[r.i:r.i+4] == "true":
		r.i += 4
		return true, nil
	case len(r.s)-r.i >= 5 && r.s[r.i:r.i+5] == "false":
		r.i += 5
		return false, nil
	}
	return false, r.err("expected true or false")
}

func (r *reader) strings() ([]string, error) {
	var out []string
	return out, r.array(func() error {
		s, err := r.str()
		out = append(out, s)
		return err
	})
}

// raw skips one value and returns its bytes, as json.RawMessage holds them.
func (r *reader) raw() (json.RawMessage, error) {
	r.ws()
	start := r.i
	if err := r.skip(); err != nil {
		return nil, err
	}
	return json.RawMessage(r.b[start:r.i:r.i]), nil
}

func (r *reader) skip() error {
	switch c := r.peek(); {
	case c == '{':
		return r.members(r.skipStr, r.skip)
	case c == '[':
		return r.array(r.skip)
	case c == '"':
		return r.skipStr()
	case c == 't' || c == 'f':
		_, err := r.boolean()
		return err
	case c == 'n':
		if len(r.s)-r.i >= 4 && r.s[r.i:r.i+4] == "null" {
			r.i += 4
			return nil
		}
	case c == '-' || c >= '0' && c <= '9':
		start := r.i
		for r.i < len(r.s) && (r.s[r.i] >= '0' && r.s[r.i] <= '9' || r.s[r.i] == '-' || r.s[r.i] == '+' || r.s[r.i] == '.' || r.s[r.i] == 'e' || r.s[r.i] == 'E') {
			r.i++
		}
		if !json.Valid(r.b[start:r.i]) {
			return r.err("bad number")
		}
		return nil
	}
	return r.err("unexpected value")
}

// end checks nothing follows the document.
func (r *reader) end() error {
	if r.peek() != 0 {
		return r.err("data after the document")
	}
	return nil
}

// decodeData reads a version's data file.
func decodeData(raw []byte, d *data) error {
	r := newReader(raw)
	err := r.object(func(key string) error {
		var err error
		switch key {
		case "fields":
			return r.array(func() error {
				var f Field
				err := r.object(func(k string) error {
					var err error
					switch k {
					case "path":
						f.Path, err = r.str()
					case "type":
						f.Type, err = r.str()
					case "pointer":
						f.Pointer, err = r.boolean()
					default:
						err = r.skip()
					}
					return err
				})
				d.Fields = append(d.Fields, f)
				return err
			})
		case "defaults":
			d.Defaults, err = r.raw()
		case "flagsBaseline":
			d.FlagsBaseline, err = r.raw()
		case "gatedDefaults":
			return r.array(func() error {
				var g GatedDefault
				err := r.object(func(k string) error {
					var err error
					switch k {
					case "gate":
						g.Gate, err = r.str()
					case "enabled":
						g.Enabled, err = r.boolean()
					case "values":
						g.Values, err = r.raw()
					default:
						err = r.skip()
					}
					return err
				})
				d.GatedDefaults = append(d.GatedDefaults, g)
				return err
			})
		case "featureGates":
			return r.array(func() error {
				var g Gate
				err := r.object(func(k string) error {
					var err error
					switch k {
					case "name":
						g.Name, err = r.str()
					case "default":
						g.Default, err = r.boolean()
					case "stage":
						g.Stage, err = r.str()
					case "locked":
						g.Locked, err = r.boolean()
					case "dependsOn":
						g.DependsOn, err = r.strings()
					default:
						err = r.skip()
					}
					return err
				})
				d.FeatureGates = append(d.FeatureGates, g)
				return err
			})
		case "flags":
			d.Flags, err = r.raw()
		case "behaviour":
			d.Behaviour = map[string]string{}
			return r.object(func(k string) error {
				v, err := r.str()
				d.Behaviour[k] = v
				return err
			})
		case "pathFields":
			d.PathFields, err = r.strings()
		case "registerResets":
			d.RegisterResets = map[string]json.RawMessage{}
			return r.object(func(k string) error {
				v, err := r.raw()
				d.RegisterResets[k] = v
				return err
			})
		default:
			err = r.skip()
		}
		return err
	})
	if err != nil {
		return err
	}
	return r.end()
}

// decodeFlags reads the flags of a version's data.
func decodeFlags(raw []byte) ([]Flag, error) {
	r := newReader(raw)
	var out []Flag
	err := r.array(func() error {
		var f Flag
		err := r.object(func(k string) error {
			var err error
			switch k {
			case "name":
				f.Name, err = r.str()
			case "shorthand":
				f.Shorthand, err = r.str()
			case "type":
				f.Type, err = r.str()
			case "goType":
				f.GoType, err = r.str()
			case "default":
				f.Default, err = r.str()
			case "noOptDefVal":
				f.NoOptDefVal, err = r.str()
			case "deprecated":
				f.Deprecated, err = r.str()
			case "hidden":
				f.Hidden, err = r.boolean()
			case "field":
				f.Field, err = r.str()
			default:
				err = r.skip()
			}
			return err
		})
		out = append(out, f)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, r.end()
}
