package schema

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// TestDecodeDataAsEncodingJSON holds the data reader to encoding/json's
// reading of every embedded version.
func TestDecodeDataAsEncodingJSON(t *testing.T) {
	for _, v := range Versions() {
		raw, err := files.ReadFile("data/v" + v.Minor + ".json")
		if err != nil {
			t.Fatal(err)
		}
		var want, got data
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatal(err)
		}
		if err := decodeData(raw, &got); err != nil {
			t.Fatalf("%s: %v", v.Minor, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the data reader and encoding/json differ", v.Minor)
		}
		var wantFlags []Flag
		if err := json.Unmarshal(want.Flags, &wantFlags); err != nil {
			t.Fatal(err)
		}
		gotFlags, err := decodeFlags(got.Flags)
		if err != nil {
			t.Fatalf("%s flags: %v", v.Minor, err)
		}
		if len(wantFlags) == 0 || !reflect.DeepEqual(gotFlags, wantFlags) {
			t.Errorf("%s: the flags read differ from encoding/json's (%d, %d)", v.Minor, len(gotFlags), len(wantFlags))
		}
	}
}

// TestDecodeDataRefusesBrokenDocuments: what the reader cannot read is an
// error, never a partial table.
func TestDecodeDataRefusesBrokenDocuments(t *testing.T) {
	for _, doc := range []string{
		``,
		`{"fields": [{"path": "a"}`,
		`{"fields": [{"path": 1}]}`,
		`{"fields": [], "defaults": {"a": tru}}`,
		`{"pathFields": ["a" "b"]}`,
		`{"defaults": {}} x`,
		`{"behaviour": {"a": "b\u00"}}`,
		`{"defaults": 1.2.3}`,
	} {
		var d data
		if err := decodeData([]byte(doc), &d); err == nil {
			t.Errorf("%q: read without an error", doc)
		}
	}
	var d data
	if err := decodeData([]byte(`{"behaviour": {"a\"b": "c\\d\u00e9"}, "defaults": {"x": [1, -2.5e3, null, "\"]"]}}`), &d); err != nil {
		t.Fatal(err)
	}
	if d.Behaviour["a\"b"] != "c\\d\u00e9" || string(d.Defaults) != `{"x": [1, -2.5e3, null, "\"]"]}` {
		t.Errorf("escapes: %q, raw %s", d.Behaviour, d.Defaults)
	}
}

// Every release's data is embedded as a string of its own, the file's bytes
// (make schema writes the list).
func TestEmbeddedDataIsEveryRelease(t *testing.T) {
	if len(embeddedData) != len(Versions()) {
		t.Errorf("%d data files embedded as strings, %d releases (run make schema)", len(embeddedData), len(Versions()))
	}
	for _, v := range Versions() {
		s, ok := embeddedData[v.Minor]
		raw, err := files.ReadFile("data/v" + v.Minor + ".json")
		if !ok || err != nil || *s != string(raw) {
			t.Errorf("%s: embedded %v, file %v", v.Minor, ok, err)
		}
	}
}

// plain looks at eight bytes at a time: it says what a look at each byte
// says, wherever the backslash, control character or non-ASCII byte is.
func TestPlainAsEachByte(t *testing.T) {
	each := func(s string) bool {
		for i := 0; i < len(s); i++ {
			if s[i] == '\\' || s[i] < 0x20 {
				return false
			}
		}
		return true
	}
	for n := 0; n <= 19; n++ {
		for pos := 0; pos < n; pos++ {
			for _, c := range []byte{0, 0x1f, 0x20, '\\', '[', '\\' + 0x80, 0x9f, 0xa0, 0xff, '"'} {
				for _, fill := range []byte{'a', 0xc3, 0x7f, 0x5b} {
					b := bytes.Repeat([]byte{fill}, n)
					b[pos] = c
					if got, want := plain(string(b)), each(string(b)); got != want {
						t.Errorf("%q: plain %v, each byte %v", b, got, want)
					}
				}
			}
		}
	}
}
