package audit

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"sigs.k8s.io/yaml"

	"github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

// stigFile is a file of a node tree in testdata/stig/cases.yaml.
type stigFile struct {
	Data   string `json:"data"`
	Mode   uint32 `json:"mode"`
	UID    int    `json:"uid"`
	Dir    bool   `json:"dir"`
	Absent bool   `json:"absent"`
	From   string `json:"from"` // "base": the base's content
}

type stigCase struct {
	Name   string              `json:"name"`
	Root   bool                `json:"root"`
	Files  map[string]stigFile `json:"files"`
	Config json.RawMessage     `json:"config"`
	Expect map[string]Status   `json:"expect"`
}

type stigCases struct {
	Version string              `json:"version"`
	Base    map[string]stigFile `json:"base"`
	Cases   []stigCase          `json:"cases"`
}

// tree is the case's node: the base, its files replaced, its config merged.
func (c stigCase) tree(t *testing.T, base map[string]stigFile) nodeTree {
	t.Helper()
	files := map[string]stigFile{}
	for p, f := range base {
		files[p] = f
	}
	for p, f := range c.Files {
		if f.Absent {
			delete(files, p)
			continue
		}
		if f.From == "base" {
			f.Data = base[p].Data
		}
		files[p] = f
	}
	if len(c.Config) > 0 {
		const cfg = "/var/lib/kubelet/config.yaml"
		f := files[cfg]
		js, err := yaml.YAMLToJSON([]byte(f.Data))
		if err != nil {
			t.Fatal(err)
		}
		merged, err := jsonpatch.MergePatch(js, c.Config)
		if err != nil {
			t.Fatal(err)
		}
		out, err := yaml.JSONToYAML(merged)
		if err != nil {
			t.Fatal(err)
		}
		f.Data = string(out)
		files[cfg] = f
	}
	n := nodeTree{}
	for p, f := range files {
		n[p] = file{data: f.Data, mode: fs.FileMode(f.Mode), uid: f.UID, dir: f.Dir}
	}
	return n
}

// The STIG profile against node trees written from the STIG's check text
// (testdata/stig/cases.yaml), not from the code.
func TestSTIGOnNodesFromTheRuleText(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "stig", "cases.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cs stigCases
	if err := yaml.UnmarshalStrict(raw, &cs); err != nil {
		t.Fatal(err)
	}
	v, err := schema.Resolve(cs.Version)
	if err != nil {
		t.Fatal(err)
	}
	if m := cs.Base["/etc/systemd/system/kubelet.service"].Mode; m != 0o644 {
		t.Fatalf("modes are read as octal: 0644 read as %o", m)
	}
	judged := map[string]map[Status]bool{}
	for _, c := range cs.Cases {
		t.Run(c.Name, func(t *testing.T) {
			if c.Root && !isRoot() {
				t.Skip("needs root to own files")
			}
			root := c.tree(t, cs.Base).write(t)
			setup, err := node.ReadSetupAs(v, node.Source{Root: root})
			if err != nil {
				t.Fatal(err)
			}
			rep, err := Run(Options{Setup: setup, Benchmark: "stig", Sections: []string{SectionSTIG}})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Benchmark != "stig" || len(rep.Notes) == 0 || !strings.Contains(strings.Join(rep.Notes, " "), "2025-05-16") {
				t.Errorf("benchmark %s, notes %q", rep.Benchmark, rep.Notes)
			}
			for _, r := range rep.Results {
				if !strings.HasPrefix(r.ID, "V-") {
					t.Errorf("%s in the STIG profile", r.ID)
				}
				if r.Status == Fail && r.Remediation == "" {
					t.Errorf("%s fails without a remediation", r.ID)
				}
				if r.Status == Pass && r.Remediation != "" {
					t.Errorf("%s passes with a remediation %q", r.ID, r.Remediation)
				}
			}
			ids := make([]string, 0, len(c.Expect))
			for id := range c.Expect {
				ids = append(ids, id)
			}
			sort.Strings(ids)
			for _, id := range ids {
				want := c.Expect[id]
				r := result(t, rep, id)
				if r.Status != want {
					t.Errorf("%s: %s, the rule's text says %s\n  value %s (%s)\n  found %s\n  fix %s", id, r.Status, want, r.Value, r.Origin, r.Detail, r.Remediation)
				}
				if judged[id] == nil {
					judged[id] = map[Status]bool{}
				}
				judged[id][want] = true
			}
		})
	}
	// Every rule of the profile is covered, each finding with a case.
	for _, c := range stigChecks {
		if len(judged[c.id]) == 0 {
			t.Errorf("%s: no case", c.id)
		}
		if !judged[c.id][Fail] && c.id != "V-242399" && isRoot() {
			t.Errorf("%s: no case it fails", c.id)
		}
	}
}

// Details the cases do not spell out: a drop-in's value says it counts as
// the config file's; V-242397's fix on a kubeadm worker goes through
// --persist; V-242392 names the mode the kubelet runs with.
func TestSTIGWording(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "stig", "cases.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cs stigCases
	if err := yaml.UnmarshalStrict(raw, &cs); err != nil {
		t.Fatal(err)
	}
	v, _ := schema.Resolve(cs.Version)
	find := func(name string) stigCase {
		for _, c := range cs.Cases {
			if c.Name == name {
				return c
			}
		}
		t.Fatalf("no case %q", name)
		return stigCase{}
	}
	audit := func(c stigCase) *Report {
		root := c.tree(t, cs.Base).write(t)
		setup, err := node.ReadSetupAs(v, node.Source{Root: root})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Run(Options{Setup: setup, Benchmark: "stig"})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	rep := audit(find("kernel protection and timeout in a drop-in"))
	if r := result(t, rep, "V-242434"); !strings.Contains(r.Origin, "50-stig.conf") || !strings.Contains(r.Detail, "counts as the config file's") {
		t.Errorf("V-242434 from a drop-in: %+v", r)
	}
	rep = audit(find("kubeadm's staticPodPath on a worker"))
	if r := result(t, rep, "V-242397"); !strings.Contains(r.Remediation, "--persist") || !strings.Contains(r.Remediation, "kubeadm") {
		t.Errorf("V-242397 on a kubeadm worker: %q", r.Remediation)
	}
	rep = audit(find("staticPodPath on a control-plane node"))
	if r := result(t, rep, "V-242397"); !strings.Contains(r.Detail, "kube-apiserver.yaml") {
		t.Errorf("V-242397 on a control plane: %+v", r)
	}
	rep = audit(find("authorization mode only in the config file"))
	if r := result(t, rep, "V-242392"); !strings.Contains(r.Detail, "runs with Webhook") || !strings.Contains(r.Remediation, "--authorization-mode=Webhook") {
		t.Errorf("V-242392: %+v", r)
	}
	rep = audit(find("timeout option"))
	if r := result(t, rep, "V-245541"); !strings.Contains(r.Remediation, "remove --streaming-connection-idle-timeout from /etc/default/kubelet:1") {
		t.Errorf("V-245541: %q", r.Remediation)
	}
	// The operational rules come with the STIG too; the CIS checks do not.
	for _, r := range rep.Results {
		if strings.HasPrefix(r.ID, "4.") {
			t.Errorf("CIS %s in the STIG profile", r.ID)
		}
	}
	if result(t, rep, "ops.heartbeat").ID == "" {
		t.Error("no operational rules")
	}
}
