package jsonshape

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestMarshal(t *testing.T) {
	out, err := Marshal(map[string]any{"b": []int{1}, "a": "<x>"})
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"version\": 1,\n  \"a\": \"\\u003cx\\u003e\",\n  \"b\": [\n    1\n  ]\n}\n"
	if string(out) != want {
		t.Errorf("Marshal = %q, want %q", out, want)
	}
	if out, err := Marshal(struct{}{}); err != nil || strings.TrimSpace(string(out)) != "{\n  \"version\": 1\n}" {
		t.Errorf("an empty object: %q %v", out, err)
	}
	var back map[string]any
	if out, _ := Marshal(struct {
		X int `json:"x"`
	}{3}); json.Unmarshal(out, &back) != nil || back["version"] != 1.0 || back["x"] != 3.0 {
		t.Errorf("round trip: %v", back)
	}
	type own struct {
		Version int    `json:"version"`
		X       string `json:"x"`
	}
	if out, err := Marshal(own{Version: Version, X: "y"}); err != nil || !strings.HasPrefix(string(out), "{\n  \"version\": 1,\n  \"x\"") {
		t.Errorf("a type with the version first: %q %v", out, err)
	}
	for _, bad := range []any{[]int{1}, "s", map[string]int{"version": 2}, own{Version: 2}, map[string]any{"a": 1, "version": 1}} {
		if _, err := Marshal(bad); err == nil {
			t.Errorf("Marshal(%v): no error", bad)
		}
	}
}
