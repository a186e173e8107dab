package audit

import (
	"testing"

	"github.com/kubeletcfg/kubeletcfg/config"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

func decodeConfig(t *testing.T, v *schema.Version, doc string) *config.Document {
	t.Helper()
	d, err := config.Decode([]byte(doc), config.DecodeOptions{File: "test.yaml", Version: v})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func ids(rs []Result) map[string]Result {
	out := map[string]Result{}
	for _, r := range rs {
		out[r.ID] = r
	}
	return out
}

func TestBreaks(t *testing.T) {
	v, _ := schema.Resolve("1.33")
	secure := config.Default(decodeConfig(t, v, secureConfig).Config, v)
	open := secure.DeepCopy()
	anon := true
	open.Authentication.Anonymous.Enabled = &anon
	open.ReadOnlyPort = 10255
	open.TLSCipherSuites = nil

	got, err := Breaks(v, secure, open)
	if err != nil {
		t.Fatal(err)
	}
	broken := ids(got)
	for _, id := range []string{"4.2.1", "4.2.4", "4.2.12"} {
		if broken[id].Status != Fail {
			t.Errorf("%s not broken: %+v", id, got)
		}
	}
	if len(broken) != 3 {
		t.Errorf("breaks %d checks, want 3: %+v", len(broken), got)
	}
	// Undoing a failure, or keeping it, breaks nothing.
	if got, _ := Breaks(v, open, secure); len(got) != 0 {
		t.Errorf("fixing breaks %+v", got)
	}
	if got, _ := Breaks(v, open, open); len(got) != 0 {
		t.Errorf("no change breaks %+v", got)
	}
}

// The flags-only defaults a migration writes out fail the legacy checks,
// each with the secure value; a config file's defaults fail none.
func TestLegacy(t *testing.T) {
	for _, minor := range []string{"1.28", "1.31", "1.37"} {
		v, _ := schema.Resolve(minor)
		got, err := Legacy(v, config.FlagsBaseline(v))
		if err != nil {
			t.Fatal(err)
		}
		r := ids(got)
		want := map[string]string{"4.2.1": "authentication.anonymous.enabled", "4.2.2": "authorization.mode", "4.2.4": "readOnlyPort"}
		if len(r) != len(want) {
			t.Errorf("%s: %+v", minor, got)
		}
		for id, field := range want {
			if r[id].Status != Fail || !contains(fixFields(r[id].Fixes), field) {
				t.Errorf("%s %s: %+v", minor, id, r[id])
			}
		}
		if !contains(fixFields(r["4.2.2"].Fixes), "authentication.webhook.enabled") {
			t.Errorf("%s: Webhook authorization without webhook authentication: %+v", minor, r["4.2.2"].Fixes)
		}
		got, _ = Legacy(v, config.Default(decodeConfig(t, v, "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n").Config, v))
		if len(got) != 0 {
			t.Errorf("%s: a config file's defaults fail %+v", minor, got)
		}
	}
}

func TestApplyFixes(t *testing.T) {
	cfg := map[string]any{"authentication": map[string]any{"x509": map[string]any{"clientCAFile": "/ca"}}, "featureGates": map[string]any{"A": true}}
	ApplyFixes(cfg, []Fix{{"authentication.anonymous.enabled", false}, {"readOnlyPort", 0}, {"featureGates", map[string]bool{"B": true}}})
	auth := cfg["authentication"].(map[string]any)
	if auth["x509"].(map[string]any)["clientCAFile"] != "/ca" || auth["anonymous"].(map[string]any)["enabled"] != false {
		t.Errorf("authentication %v", auth)
	}
	if g := cfg["featureGates"].(map[string]any); g["A"] != true || g["B"] != true {
		t.Errorf("featureGates %v", g)
	}
	if cfg["readOnlyPort"] != float64(0) {
		t.Errorf("readOnlyPort %v", cfg["readOnlyPort"])
	}
}
