package schema

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"
)

// Each version's start-up words (its table's) are data/startup.json's for
// that version, and every version has some.
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
		want := all[v.Minor]
		if len(want.Words) == 0 || len(want.Exits) == 0 {
			t.Errorf("%s: no start-up words in the file", v.Minor)
		}
		if !reflect.DeepEqual(v.StartupWords(), want.Words) || !reflect.DeepEqual(v.ExitMessages(), want.Exits) {
			t.Errorf("%s: the words differ from the file's (run make schema)", v.Minor)
		}
	}
}
