package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubeletcfg/kubeletcfg/internal/jsonshape"
)

// moduleReads feeds the collection's module_utils (no Ansible needed) what
// kubeletcfg apply -o json printed, and returns what it made of it: the
// outcome's keys and the error, or the exception it raised.
const moduleReads = `
import json, sys
sys.path.insert(0, sys.argv[1])
import kubeletcfg as k

class Module(object):
    def __init__(self, out):
        self.out = out
    def run_command(self, argv, environ_update=None):
        return 1, self.out, "kubeletcfg: plan: refused\n"
    def get_bin_path(self, *args, **kwargs):
        return "/bin/sh"

try:
    r = k.Kubeletcfg(Module(sys.stdin.read()), "/bin/sh").apply(["kubeletcfg", "apply", "-o", "json"])
    outcome, error = (r[1], r[2]) if isinstance(r, tuple) else (r.outcome, r.error)
    print(json.dumps({"keys": sorted(outcome or {}), "error": error}))
except k.KubeletcfgError as e:
    print(json.dumps({"raised": str(e)}))
`

// TestModuleReadsJSONVersions: the module reads kubeletcfg's versioned JSON
// (an outcome and an error document, as jsonshape writes them) and an
// unversioned one of an older binary, and refuses a version it does not know.
func TestModuleReadsJSONVersions(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3: the Ansible module's tests need it")
	}
	outcome := map[string]any{"changes": []any{}, "configFile": "/var/lib/kubelet/config.yaml", "applied": false,
		"rolledBack": false, "kubeletVersion": "1.37", "writes": []any{}}
	doc := func(v any) string {
		b, err := jsonshape.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	plain := func(v any) string {
		b, _ := json.Marshal(v)
		return string(b)
	}
	utils, _ := filepath.Abs("../plugins/module_utils")
	read := func(out string) map[string]any {
		t.Helper()
		cmd := exec.Command(python, "-c", moduleReads, utils)
		cmd.Stdin, cmd.Stderr = strings.NewReader(out), os.Stderr
		b, err := cmd.Output()
		if err != nil {
			t.Fatalf("python: %v", err)
		}
		var got map[string]any
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%v: %s", err, b)
		}
		return got
	}
	for name, out := range map[string]string{
		"versioned":         doc(outcome) + doc(map[string]string{"error": "boom"}),
		"before versioning": plain(outcome) + plain(map[string]string{"error": "boom"}),
	} {
		got := read(out)
		if got["error"] != "boom" || len(got["keys"].([]any)) < len(outcome) || got["raised"] != nil {
			t.Errorf("%s: the module made %v of it", name, got)
		}
	}
	outcome["version"] = 2
	if got := read(plain(outcome)); !strings.Contains(fmt.Sprint(got["raised"]), "JSON version 2") {
		t.Errorf("a JSON version the module does not know: %v", got)
	}
}
