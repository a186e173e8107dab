package schema

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The table of kubelet paths against the kubelet's own source of every
// supported release, from the module cache (make schema downloads them): a
// path is served from Since on, installed under its Gate; auth.go names it
// with its subresource, under KubeletFineGrainedAuthz where FineGrained.
func TestKubeletPathsMatchTheSource(t *testing.T) {
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	cache := strings.TrimSpace(string(out))
	checked := 0
	for _, v := range Versions() {
		dir := filepath.Join(cache, "k8s.io", "kubernetes@"+v.Release, "pkg", "kubelet", "server")
		auth, err1 := os.ReadFile(filepath.Join(dir, "auth.go"))
		server, err2 := os.ReadFile(filepath.Join(dir, "server.go"))
		if err1 != nil || err2 != nil {
			t.Logf("kubelet %s: source not in the module cache (go mod download k8s.io/kubernetes@%s): not checked", v.Minor, v.Release)
			continue
		}
		checked++
		// The fine-grained block: the switch under the gate.
		fine := ""
		if i := strings.Index(string(auth), "features.KubeletFineGrainedAuthz"); i >= 0 {
			rest := string(auth[i:])
			fine = rest[:strings.Index(rest, "\n\t}\n")]
		}
		for _, p := range KubeletPaths {
			pkg := strings.TrimPrefix(p.Path, "/")
			served := true
			if p.Since != "" && !v.AtLeast(p.Since) {
				served = false
			}
			install := regexp.MustCompile(pkg + `\.Install\(`)
			if p.Gate != "" {
				if got := install.Match(server); got != served {
					t.Errorf("kubelet %s: server.go installs %s: %t, the table says %t", v.Minor, p.Path, got, served)
				}
				if served && !strings.Contains(string(server), "zpagesfeatures."+p.Gate) {
					t.Errorf("kubelet %s: %s not installed under %s", v.Minor, p.Path, p.Gate)
				}
			}
			if !served {
				continue
			}
			// auth.go: isSubpath(requestPath, <pkg>...Path) followed by the subresource.
			re := regexp.MustCompile(`isSubpath\(requestPath, (?:` + pkg + `\.Default\w+Path|` + pkg + `Path)\):\s*\n\s*subresources = append\(subresources, "(\w+)"\)`)
			if p.FineGrained {
				if _, hasGate := v.Gate(FineGrainedAuthzGate); !hasGate {
					// No gate: everything but the listed paths is nodes/proxy.
					if fine != "" || strings.Contains(string(auth), `"`+p.Subresource+`"`) {
						t.Errorf("kubelet %s has no %s gate, yet auth.go names %s", v.Minor, FineGrainedAuthzGate, p.Subresource)
					}
					continue
				}
				m := re.FindStringSubmatch(fine)
				if m == nil || m[1] != p.Subresource {
					t.Errorf("kubelet %s: auth.go's %s block authorizes %s as %v, the table says %s", v.Minor, FineGrainedAuthzGate, p.Path, m, p.Subresource)
				}
				continue
			}
			m := re.FindStringSubmatch(string(auth))
			if m == nil || m[1] != p.Subresource || strings.Contains(fine, pkg) {
				t.Errorf("kubelet %s: auth.go authorizes %s as %v, the table says %s", v.Minor, p.Path, m, p.Subresource)
			}
		}
	}
	if checked == 0 {
		t.Skip("no kubelet source in the module cache")
	}
}

func TestKubeletPathAccess(t *testing.T) {
	for _, tc := range []struct {
		minor, path string
		set         map[string]bool
		served      bool
		needs       string
	}{
		{"1.31", "/configz", nil, true, "get nodes/proxy"},
		{"1.32", "/configz", nil, true, "get nodes/proxy"},
		{"1.32", "/configz", map[string]bool{"KubeletFineGrainedAuthz": true}, true, "get nodes/configz (or nodes/proxy)"},
		{"1.33", "/configz", nil, true, "get nodes/configz (or nodes/proxy)"},
		{"1.33", "/healthz", map[string]bool{"KubeletFineGrainedAuthz": false}, true, "get nodes/proxy"},
		{"1.37", "/healthz", nil, true, "get nodes/healthz (or nodes/proxy)"},
		{"1.32", "/flagz", nil, false, "get nodes/configz"},
		{"1.35", "/flagz", nil, false, "get nodes/configz"},
		{"1.35", "/flagz", map[string]bool{"ComponentFlagz": true}, true, "get nodes/configz"},
		{"1.35", "/statusz", map[string]bool{"AllAlpha": true}, true, "get nodes/statusz"},
		{"1.36", "/flagz", nil, true, "get nodes/configz"},
		{"1.37", "/statusz", nil, true, "get nodes/statusz"},
		{"1.37", "/statusz", map[string]bool{"ComponentStatusz": false}, false, "get nodes/statusz"},
	} {
		v, err := Resolve(tc.minor)
		if err != nil {
			t.Fatal(err)
		}
		a, err := v.KubeletPathAccess(tc.path, tc.set)
		if err != nil {
			t.Fatal(err)
		}
		if a.Served != tc.served || a.Needs() != tc.needs {
			t.Errorf("kubelet %s %s %v: served %t (%s), needs %q; want %t, %q", tc.minor, tc.path, tc.set, a.Served, a.NotServed, a.Needs(), tc.served, tc.needs)
		}
		if !a.Served && a.NotServed == "" {
			t.Errorf("kubelet %s %s: not served, no reason", tc.minor, tc.path)
		}
	}
	v, _ := Resolve("1.31")
	a, _ := v.KubeletPathAccess("/configz", nil)
	if !a.OnlyProxy() || !strings.Contains(a.Why, "kubelet 1.31 has no KubeletFineGrainedAuthz gate") {
		t.Errorf("1.31 /configz: %+v", a)
	}
	v, _ = Resolve("1.35")
	a, _ = v.KubeletPathAccess("/flagz", nil)
	if !strings.Contains(a.NotServed, "ComponentFlagz on: alpha in 1.35, off by default") {
		t.Errorf("1.35 /flagz: %q", a.NotServed)
	}
	if _, err := v.KubeletPathAccess("/pods", nil); err == nil {
		t.Error("/pods: no error")
	}
}
