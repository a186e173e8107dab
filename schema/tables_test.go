package schema

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"
)

// Every release's table is its data file as encoding/json reads it, flags
// included (make schema writes the tables from the files; the start-up
// words: TestStartupWordsPerVersion).
func TestTablesAsData(t *testing.T) {
	for _, v := range Versions() {
		tab := tableOf(v.Minor)
		if tab == nil {
			t.Errorf("%s: no table (run make schema)", v.Minor)
			continue
		}
		raw, err := os.ReadFile("data/v" + v.Minor + ".json")
		if err != nil {
			t.Fatal(err)
		}
		var want data
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatal(err)
		}
		if got := tab.data(); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the table and the data file differ (run make schema)", v.Minor)
		}
		if len(want.Fields) == 0 || len(want.Flags) == 0 || len(want.FeatureGates) == 0 {
			t.Errorf("%s: a table without fields, flags or gates", v.Minor)
		}
	}
	if tableOf("1.0") != nil {
		t.Error("a table for a release not in releases.txt")
	}
}
