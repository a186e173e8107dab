package migrate

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubeletcfg/kubeletcfg/effective"
	"github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/schema"
	"github.com/kubeletcfg/kubeletcfg/warning"
)

func TestChecked(t *testing.T) {
	v, err := schema.Resolve("1.31")
	if err != nil {
		t.Fatal(err)
	}
	legacy := []string{"--kubeconfig=/etc/kubernetes/kubelet.conf", "--max-pods=150"}
	opts := func(args ...string) Options { return Options{Setup: node.Given(v, args...)} }
	listDir := func(dir string) []string {
		entries, _ := os.ReadDir(dir)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return names
	}

	t.Run("legacy defaults named, files written", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "out")
		res, err := Checked(opts(legacy...), Checks{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(res.Warnings, func(w warning.Warning) bool { return w.Code == warning.FailsCheck }) {
			t.Errorf("no warning of a legacy default failing a CIS check: %v", res.Warnings)
		}
		if got := listDir(dir); !slices.Equal(got, Files) {
			t.Errorf("wrote %q, want %q", got, Files)
		}
		if _, err := Checked(opts(legacy...), Checks{Dir: dir}); err == nil || !strings.Contains(err.Error(), "already exists") {
			t.Errorf("a second migration into %s: err = %v", dir, err)
		}
	})

	t.Run("secure", func(t *testing.T) {
		res, err := Checked(opts(legacy...), Checks{Secure: true})
		if err != nil {
			t.Fatal(err)
		}
		auth, _ := res.Config["authentication"].(map[string]any)
		anon, _ := auth["anonymous"].(map[string]any)
		if anon["enabled"] != false {
			t.Errorf("--secure left authentication %v", res.Config["authentication"])
		}
		if slices.ContainsFunc(res.Warnings, func(w warning.Warning) bool { return w.Code == warning.FailsCheck }) {
			t.Errorf("the secure migration still says what --secure would write: %v", res.Warnings)
		}
		if slices.ContainsFunc(res.Warnings, func(w warning.Warning) bool {
			return w.Code == warning.LegacyDefault && w.Field == "authentication.anonymous.enabled"
		}) {
			t.Errorf("the secure migration still warns of the legacy default it replaced: %v", res.Warnings)
		}
	})

	t.Run("refused: nothing written", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "out")
		res, err := Checked(opts("--max-pods=-5"), Checks{Dir: dir})
		var r *effective.Refused
		if res == nil || !errors.As(err, &r) {
			t.Fatalf("Checked = %v, %v; want the result and the kubelet's refusal", res, err)
		}
		if got := listDir(dir); len(got) != 0 {
			t.Errorf("a refused migration wrote %q", got)
		}
		// Shown, not written: the result comes without an error.
		if res, err := Checked(opts("--max-pods=-5"), Checks{}); err != nil || res.Refused == nil {
			t.Errorf("shown: %v, %v; want the result and its verdict", res, err)
		}
	})

	t.Run("the old setup's error comes without a result", func(t *testing.T) {
		res, err := Checked(opts("--no-such-flag"), Checks{})
		if res != nil || err == nil || !strings.Contains(err.Error(), "no-such-flag") {
			t.Errorf("Checked = %v, %v", res, err)
		}
	})
}
