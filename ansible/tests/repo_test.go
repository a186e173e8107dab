package tests

// Checks of the collection's files that need no Ansible (run by go test
// ./...): the changelog in antsibull-changelog's layout (antsibull-changelog
// itself cannot be installed here, so ansible-test sanity runs with
// --skip-test changelog and this test checks the format), every option of
// the module reachable through a variable of the rollout playbook, the
// licence and galaxy.yml.

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

const collection = ".."

func readYAML(t *testing.T, path string, into any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// changelogConfig is the part of changelogs/config.yaml the checks use.
type changelogConfig struct {
	ChangesFile        string     `json:"changes_file"`
	ChangesFormat      string     `json:"changes_format"`
	NotesDir           string     `json:"notesdir"`
	PreludeSectionName string     `json:"prelude_section_name"`
	TrivialSectionName string     `json:"trivial_section_name"`
	Sections           [][]string `json:"sections"`
	Title              string     `json:"title"`
}

// TestChangelogFragments: changelogs/config.yaml as antsibull-changelog
// reads it, every fragment a mapping of its sections to lists of entries
// (release_summary a string), and changelog.yaml's releases in the same
// sections.
func TestChangelogFragments(t *testing.T) {
	var cfg changelogConfig
	readYAML(t, filepath.Join(collection, "changelogs/config.yaml"), &cfg)
	if cfg.ChangesFile != "changelog.yaml" || cfg.ChangesFormat != "combined" || cfg.NotesDir != "fragments" || cfg.PreludeSectionName != "release_summary" {
		t.Errorf("changelogs/config.yaml: want changes_file changelog.yaml, changes_format combined, notesdir fragments, prelude_section_name release_summary: %+v", cfg)
	}
	sections := map[string]bool{cfg.PreludeSectionName: true, cfg.TrivialSectionName: cfg.TrivialSectionName != ""}
	for _, s := range cfg.Sections {
		if len(s) != 2 || s[0] == "" || s[1] == "" {
			t.Errorf("changelogs/config.yaml: a section is [key, title]: %v", s)
			continue
		}
		sections[s[0]] = true
	}
	for _, want := range []string{"major_changes", "minor_changes", "breaking_changes", "deprecated_features", "removed_features", "security_fixes", "bugfixes", "known_issues"} {
		if !sections[want] {
			t.Errorf("changelogs/config.yaml lacks the section %s", want)
		}
	}
	checkEntries := func(where string, doc map[string]any) {
		if len(doc) == 0 {
			t.Errorf("%s: no section", where)
		}
		for k, v := range doc {
			if !sections[k] {
				t.Errorf("%s: %q is not a section of changelogs/config.yaml", where, k)
				continue
			}
			if k == cfg.PreludeSectionName {
				if s, ok := v.(string); !ok || strings.TrimSpace(s) == "" {
					t.Errorf("%s: %s is one string", where, k)
				}
				continue
			}
			list, ok := v.([]any)
			if !ok || len(list) == 0 {
				t.Errorf("%s: %s is a list of entries", where, k)
				continue
			}
			for _, e := range list {
				s, ok := e.(string)
				if !ok || strings.TrimSpace(s) == "" {
					t.Errorf("%s: %s: an entry is a non-empty string: %v", where, k, e)
					continue
				}
				// antsibull-changelog's rules of thumb, which its lint
				// enforces: a sentence per entry naming what it is about.
				if !regexp.MustCompile(`^[a-z0-9_. ]+ - |^[A-Z]`).MatchString(s) || !strings.HasSuffix(strings.TrimSpace(s), ".") {
					t.Errorf("%s: %s: entry %q: start with what it is about and ' - ' (or a capital) and end with a full stop", where, k, s)
				}
			}
		}
	}
	frags, _ := filepath.Glob(filepath.Join(collection, "changelogs/fragments/*"))
	if len(frags) == 0 {
		t.Error("no changelog fragment in changelogs/fragments/")
	}
	for _, f := range frags {
		if ext := filepath.Ext(f); ext != ".yml" && ext != ".yaml" {
			t.Errorf("%s: a fragment ends in .yml or .yaml", f)
			continue
		}
		var doc map[string]any
		readYAML(t, f, &doc)
		checkEntries(f, doc)
	}
	var log struct {
		Ancestor any `json:"ancestor"`
		Releases map[string]struct {
			Changes     map[string]any `json:"changes"`
			Fragments   []string       `json:"fragments"`
			ReleaseDate string         `json:"release_date"`
			Modules     []any          `json:"modules"`
			Plugins     map[string]any `json:"plugins"`
			Objects     map[string]any `json:"objects"`
		} `json:"releases"`
	}
	readYAML(t, filepath.Join(collection, "changelogs/changelog.yaml"), &log)
	for v, rel := range log.Releases {
		if !regexp.MustCompile(`^\d+\.\d+\.\d+$`).MatchString(v) || !regexp.MustCompile(`^\d{4}-\d\d-\d\d$`).MatchString(rel.ReleaseDate) {
			t.Errorf("changelog.yaml: release %q dated %q", v, rel.ReleaseDate)
		}
		checkEntries("changelog.yaml release "+v, rel.Changes)
	}
}

// moduleOptions is the option names of kubelet_config, from its
// DOCUMENTATION (ansible-test sanity checks it against argument_spec).
func moduleOptions(t *testing.T) []string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(collection, "plugins/modules/kubelet_config.py"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)DOCUMENTATION = r"""(.*?)"""`).FindSubmatch(src)
	if m == nil {
		t.Fatal("no DOCUMENTATION in kubelet_config.py")
	}
	var doc struct {
		Options map[string]any `json:"options"`
	}
	if err := yaml.Unmarshal(m[1], &doc); err != nil {
		t.Fatal(err)
	}
	var out []string
	for k := range doc.Options {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestRolloutReachesEveryOption: every option of the module is set in the
// rollout playbook from a variable, and every such variable is documented
// in the playbook's header and in the README's table of variables.
func TestRolloutReachesEveryOption(t *testing.T) {
	var plays []map[string]any
	readYAML(t, filepath.Join(collection, "playbooks/rollout.yml"), &plays)
	header, _ := os.ReadFile(filepath.Join(collection, "playbooks/rollout.yml"))
	readme, _ := os.ReadFile(filepath.Join(collection, "README.md"))
	set := map[string][]string{} // option -> the expressions that set it
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case []any:
			for _, x := range v {
				walk(x)
			}
		case map[string]any:
			for k, x := range v {
				switch k {
				case "group/kubeletcfg.kubelet.kubelet", "kubeletcfg.kubelet.kubelet_config":
					if args, ok := x.(map[string]any); ok {
						for o, e := range args {
							set[o] = append(set[o], fmt.Sprint(e))
						}
					}
				}
				walk(x)
			}
		}
	}
	for _, p := range plays {
		walk(map[string]any(p))
	}
	varRe := regexp.MustCompile(`\bkubelet(?:cfg)?_[a-z_]+\b`)
	for _, o := range moduleOptions(t) {
		exprs := set[o]
		if len(exprs) == 0 {
			t.Errorf("option %s: not set by the rollout playbook", o)
			continue
		}
		var vars []string
		for _, e := range exprs {
			if !strings.Contains(e, "{{") {
				t.Errorf("option %s: set to %q, not from a variable", o, e)
			}
			for _, v := range varRe.FindAllString(e, -1) {
				if !slices.Contains(vars, v) {
					vars = append(vars, v)
				}
			}
		}
		if len(vars) == 0 {
			t.Errorf("option %s: %q names no kubelet_* variable", o, exprs)
		}
		for _, v := range vars {
			if !bytes.Contains(header, []byte("#   "+v)) && !regexp.MustCompile(`(?m)^#\s+.*\b`+v+`\b`).Match(header) {
				t.Errorf("variable %s (option %s) is not in the playbook's header", v, o)
			}
			if !bytes.Contains(readme, []byte("`"+v+"`")) {
				t.Errorf("variable %s (option %s) is not in the README", v, o)
			}
		}
	}
}

// TestLicenceAndGalaxy: the repository and the collection (what galaxy
// builds) carry the same Apache-2.0 LICENSE, and galaxy.yml names it and
// where to read, report and find the project.
func TestLicenceAndGalaxy(t *testing.T) {
	top, err := os.ReadFile(filepath.Join(collection, "../LICENSE"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(top, []byte("Apache License")) || !bytes.Contains(top, []byte("Version 2.0, January 2004")) {
		t.Error("LICENSE is not the Apache License 2.0")
	}
	if inner, err := os.ReadFile(filepath.Join(collection, "LICENSE")); err != nil || !bytes.Equal(inner, top) {
		t.Errorf("ansible/LICENSE is not the repository's LICENSE: %v", err)
	}
	var g map[string]any
	readYAML(t, filepath.Join(collection, "galaxy.yml"), &g)
	for _, k := range []string{"documentation", "issues", "homepage", "repository"} {
		if s, _ := g[k].(string); !strings.HasPrefix(s, "https://") {
			t.Errorf("galaxy.yml: %s is %v, want a URL", k, g[k])
		}
	}
	if l, _ := g["license"].([]any); len(l) != 1 || l[0] != "Apache-2.0" {
		t.Errorf("galaxy.yml: license %v", g["license"])
	}
	var rt map[string]any
	readYAML(t, filepath.Join(collection, "meta/runtime.yml"), &rt)
	if rt["requires_ansible"] != ">=2.14.0" {
		t.Errorf("meta/runtime.yml: requires_ansible %v", rt["requires_ansible"])
	}
}
