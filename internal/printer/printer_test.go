package printer

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func TestFlag(t *testing.T) {
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	o := Flag(fs, Text, JSON)
	if o.Format() != Text || o.JSON() {
		t.Fatalf("default %s", o.Format())
	}
	err := fs.Parse([]string{"-o", "yaml"})
	var u *UnknownFormatError
	if !errors.As(err, &u) || FlagError(nil, err).Error() != "-o: unknown format yaml (text, json)" {
		t.Fatalf("-o yaml: %v", err)
	}
	if err := fs.Parse([]string{"--output", "json"}); err != nil || !o.JSON() {
		t.Fatalf("-o json: %v %s", err, o.Format())
	}
	if other := errors.New("x"); FlagError(nil, other) != other {
		t.Error("another flag error changed")
	}
	cmd := &cobra.Command{}
	if Of(cmd) != nil {
		t.Error("Of: a command without -o")
	}
	o2 := Flag(cmd.Flags(), YAML, JSON)
	if Of(cmd) != o2 || !strings.Contains(cmd.Flags().Lookup("output").Usage, "yaml, json") {
		t.Error("Of or usage")
	}
}

type Inner struct {
	Notes []string `json:"notes"`
}

type doc struct {
	Inner
	List  []int             `json:"list"`
	Skip  []string          `json:"skip,omitempty"`
	Bytes []byte            `json:"bytes"`
	Ptr   *int              `json:"ptr"`
	Deep  struct{ L []int } `json:"deep"`
	hid   []int
}

func TestWriteJSONEmptyLists(t *testing.T) {
	d := &doc{}
	for name, v := range map[string]any{"pointer": d, "value": *d} {
		var b bytes.Buffer
		if err := WriteJSON(&b, v); err != nil {
			t.Fatal(err)
		}
		want := `{"version":1,"notes":[],"list":[],"bytes":null,"ptr":null,"deep":{"L":null}}`
		if got := strings.Join(strings.Fields(b.String()), ""); got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
	if d.List != nil || d.Notes != nil {
		t.Error("WriteJSON changed its argument")
	}
	var b bytes.Buffer
	var nilList []string
	if err := WriteJSON(&b, map[string]any{"a": nilList, "b": 1, "c": nil}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(strings.Fields(b.String()), ""); got != `{"version":1,"a":[],"b":1,"c":null}` {
		t.Errorf("map: %s", got)
	}
	b.Reset()
	if err := WriteYAML(&b, map[string][]int{"x": nil}); err != nil || b.String() != "version: 1\nx: []\n" {
		t.Errorf("yaml: %q %v", b.String(), err)
	}
}

func TestPrint(t *testing.T) {
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	o := Flag(fs, Text, JSON)
	called := false
	var b bytes.Buffer
	if err := o.Print(&b, struct{}{}, func() error { called = true; return nil }); err != nil || !called || b.Len() != 0 {
		t.Errorf("text: %v %v %q", err, called, b.String())
	}
	_ = fs.Set("output", "json")
	called = false
	if err := o.Print(&b, struct{}{}, func() error { called = true; return nil }); err != nil || called || b.String() != "{\n  \"version\": 1\n}\n" {
		t.Errorf("json: %v %v %q", err, called, b.String())
	}
}
