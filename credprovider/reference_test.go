package credprovider

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubeletcfg/kubeletcfg/nodefile"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

// The corpus under testdata/credprov/cases, judged by each kubelet
// release's own RegisterCredentialProviderPlugins through the schema
// generator (make schema writes testdata/credprov/reference-v1.NN.json):
// kubeletcfg must accept what the kubelet accepts and refuse what it
// refuses, for every version.
type verdict struct {
	OK    bool   `json:"ok"`
	Panic bool   `json:"panic"`
	Error string `json:"error"`
}

func TestAgainstTheKubelet(t *testing.T) {
	cases, err := filepath.Abs("../testdata/credprov/cases")
	if err != nil {
		t.Fatal(err)
	}
	root, err := nodefile.OpenRoot("/")
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for _, v := range schema.Versions() {
		data, err := os.ReadFile("../testdata/credprov/reference-v" + v.Minor + ".json")
		if err != nil {
			t.Errorf("kubelet %s: no reference (make schema): %v", v.Minor, err)
			continue
		}
		var ref map[string]verdict
		if err := json.Unmarshal(data, &ref); err != nil {
			t.Fatal(err)
		}
		entries, _ := os.ReadDir(cases)
		if len(ref) != len(entries) {
			t.Errorf("kubelet %s: %d references for %d cases (make schema)", v.Minor, len(ref), len(entries))
		}
		for name, want := range ref {
			t.Run(v.Minor+"/"+name, func(t *testing.T) {
				dir := filepath.Join(cases, name)
				args, err := os.ReadFile(filepath.Join(dir, "args"))
				if err != nil {
					t.Fatal(err)
				}
				lines := append(strings.Split(string(args), "\n"), "", "")
				abs := func(s string) string {
					if s = strings.TrimSpace(s); s == "" {
						return ""
					}
					return filepath.Join(dir, s)
				}
				gates := map[string]bool{}
				if g, err := os.ReadFile(filepath.Join(dir, "gates")); err == nil {
					for _, l := range strings.Fields(string(g)) {
						k, val, _ := strings.Cut(l, "=")
						gates[k] = val == "true"
					}
				}
				if unknown := v.CheckGates(gates); len(unknown) > 0 {
					// The kubelet refuses a gate it does not know before
					// anything else.
					if want.OK {
						t.Fatalf("the kubelet accepts unknown gates %v", unknown)
					}
					return
				}
				_, probs, err := Check(root, abs(lines[0]), abs(lines[1]), v, gates)
				if err != nil {
					t.Fatal(err)
				}
				if got := len(probs) == 0; got != want.OK {
					t.Fatalf("kubeletcfg ok=%t %v; the kubelet: ok=%t %s", got, probs, want.OK, want.Error)
				}
			})
		}
	}
}
