package schema

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"testing"
)

// Each version's start-up words, decoded alone (found by its key), are the
// whole file's for that version, and every version has some.
func TestStartupWordsPerVersion(t *testing.T) {
	raw, err := os.ReadFile("data/startup.json")
	if err != nil {
		t.Fatal(err)
	}
	var all map[string]StartupData
	if err := json.Unmarshal(raw, &all); err != nil {
		t.Fatal(err)
	}
	for _, v := range Versions() {
		if !bytes.Contains(raw, []byte("\n \""+v.Minor+"\": ")) {
			t.Errorf("%s: its key is not where loadStartup looks (the file's layout changed)", v.Minor)
		}
		want := all[v.Minor]
		if len(want.Words) == 0 || len(want.Exits) == 0 {
			t.Errorf("%s: no start-up words in the file", v.Minor)
		}
		if !reflect.DeepEqual(v.StartupWords(), want.Words) || !reflect.DeepEqual(v.ExitMessages(), want.Exits) {
			t.Errorf("%s: the words decoded alone differ from the file's", v.Minor)
		}
	}
}
