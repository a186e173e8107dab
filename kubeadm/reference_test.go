package kubeadm

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubeletcfg/kubeletcfg/nodefile"
)

// The references are what kubeadm's own code wrote for each corpus case
// (hack/kubeadmref, `make kubeadm-reference`): the kubelet-config phase of
// `kubeadm upgrade node` run on the case's ConfigMaps, patches and files.
const corpusDir = "../testdata/kubeadm/corpus"

type refCase struct {
	Config         map[string]any `json:"config"`
	Error          string         `json:"error"`
	InstanceConfig string         `json:"instanceConfig"`
	FlagsEnv       string         `json:"flagsEnv"`
	Backup         string         `json:"backup"`
}

type reference struct {
	Release string             `json:"release"`
	Cases   map[string]refCase `json:"cases"`
}

type envReference struct {
	Release string `json:"release"`
	Cases   map[string]struct {
		Args  []string `json:"args"`
		Error bool     `json:"error"`
	} `json:"cases"`
}

// refusedByKubeletcfg are the cases where kubeadm writes a file and
// kubeletcfg refuses to predict one, on purpose.
var refusedByKubeletcfg = map[string]string{
	"cm-other-kind": "kubeadm writes its defaults alone for a ConfigMap value that is not a KubeletConfiguration",
}

func loadReferences(t *testing.T, pattern string) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join("../testdata/kubeadm", pattern))
	if len(files) == 0 {
		t.Fatalf("no reference %s: run make kubeadm-reference", pattern)
	}
	return files
}

func TestRenderMatchesKubeadm(t *testing.T) {
	for _, file := range loadReferences(t, "reference-v*.json") {
		var ref reference
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, &ref); err != nil {
			t.Fatal(err)
		}
		rel, err := ResolveRelease(ref.Release)
		if err != nil {
			t.Fatal(err)
		}
		names := sortedKeys(ref.Cases)
		dirs, _ := os.ReadDir(corpusDir)
		if len(dirs) != len(names) {
			t.Errorf("%s: %d cases, the corpus has %d: run make kubeadm-reference", file, len(names), len(dirs))
		}
		for _, name := range names {
			want := ref.Cases[name]
			t.Run(ref.Release+"/"+name, func(t *testing.T) {
				got, err := renderCase(t, filepath.Join(corpusDir, name), rel)
				if why, ok := refusedByKubeletcfg[name]; ok {
					if err == nil || want.Error != "" {
						t.Fatalf("want kubeletcfg to refuse (%s) where kubeadm writes a file; got err %v, kubeadm's error %q", why, err, want.Error)
					}
					return
				}
				if want.Error != "" {
					if err == nil {
						t.Fatalf("kubeadm %s fails (%s); kubeletcfg predicts a file", ref.Release, want.Error)
					}
					t.Logf("kubeadm: %s\nkubeletcfg: %v", want.Error, err)
					return
				}
				if err != nil {
					t.Fatalf("kubeadm %s writes a file; kubeletcfg: %v", ref.Release, err)
				}
				if d := cmp.Diff(want.Config, got.Config); d != "" {
					t.Errorf("config.yaml (-kubeadm +kubeletcfg):\n%s", d)
				}
				for p := range leaves(got.Config) {
					if _, ok := got.Origins[p]; !ok {
						t.Errorf("%s has no origin", p)
					}
				}
				created := ""
				if got.InstanceConfig != nil {
					created = got.InstanceConfig.Created
				}
				if created != want.InstanceConfig {
					t.Errorf("instance-config.yaml created: kubeadm %q, kubeletcfg %q", want.InstanceConfig, created)
				}
				env := ""
				for _, c := range got.FlagsEnv {
					env = c.After
				}
				if env != want.FlagsEnv && rel.PostUpgradeUnwanted == nil {
					t.Errorf("kubeadm-flags.env rewritten: kubeadm %q, kubeletcfg %q", want.FlagsEnv, env)
				}
				if want.Backup != "" && want.Backup != backupPattern(rel) {
					t.Errorf("backup directory: kubeadm %q, kubeletcfg %q", want.Backup, backupPattern(rel))
				}
			})
		}
	}
}

func backupPattern(r *Release) string {
	if r.Backup == BackupTimestamp {
		return "kubeadm-kubelet-config-N-N-N-N-N-N"
	}
	return "kubeadm-kubelet-configN"
}

// renderCase lays a corpus case out as a node and renders it.
func renderCase(t *testing.T, dir string, rel *Release) (*Result, error) {
	t.Helper()
	root := t.TempDir()
	kdir := filepath.Join(root, "var/lib/kubelet")
	if err := os.MkdirAll(kdir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{InstanceConfigName, "kubeadm-flags.env"} {
		if data, err := os.ReadFile(filepath.Join(dir, f)); err == nil {
			if err := os.WriteFile(filepath.Join(kdir, f), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	in := Input{Release: rel, Resolved: No}
	if _, err := os.Stat(filepath.Join(dir, "patches")); err == nil {
		copyTree(t, filepath.Join(dir, "patches"), filepath.Join(root, "etc/kubernetes/patches"))
		in.PatchesDir = "/etc/kubernetes/patches"
	}
	if b, err := os.ReadFile(filepath.Join(dir, "resolved")); err == nil && strings.TrimSpace(string(b)) == "active" {
		in.Resolved = Yes
	}
	if b, err := os.ReadFile(filepath.Join(dir, "crisocket")); err == nil {
		in.CRISocket = strings.TrimSpace(string(b))
	}
	cm, err := os.ReadFile(filepath.Join(dir, "configmap.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	in.ConfigMap = Text{Data: cm, File: "configmap.yaml"}
	if b, err := os.ReadFile(filepath.Join(dir, "cluster.yaml")); err == nil {
		c, err := ParseCluster(Text{Data: b, File: "cluster.yaml"}, rel)
		if err != nil {
			return nil, err
		}
		in.Cluster = c
	}
	r, err := nodefile.OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	in.Root = r
	return Render(in)
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestParseFlagsEnvMatchesKubeadm(t *testing.T) {
	for _, file := range loadReferences(t, "env-v*.json") {
		var ref envReference
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, &ref); err != nil {
			t.Fatal(err)
		}
		rel, err := ResolveRelease(ref.Release)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range sortedKeys(ref.Cases) {
			want := ref.Cases[name]
			t.Run(ref.Release+"/"+name, func(t *testing.T) {
				data, err := os.ReadFile(filepath.Join("../testdata/kubeadm/envfiles", name))
				if err != nil {
					t.Fatal(err)
				}
				env, err := ParseFlagsEnv(data, name, rel)
				if want.Error {
					if err == nil {
						t.Fatalf("kubeadm %s fails on it; kubeletcfg reads %v", ref.Release, env.Args)
					}
					return
				}
				if err != nil {
					t.Fatalf("kubeadm %s reads %q; kubeletcfg: %v", ref.Release, want.Args, err)
				}
				got := []string{}
				for _, a := range env.Args {
					got = append(got, a.String())
				}
				if d := cmp.Diff(want.Args, got); d != "" {
					t.Errorf("(-kubeadm +kubeletcfg):\n%s", d)
				}
				// What FormatFlagsEnv writes from those flags, kubeadm reads
				// back as they are.
				if len(got) > 0 {
					if out, err := FormatFlagsEnv(got); err == nil {
						back, err := ParseFlagsEnv(out, name, rel)
						var again []string
						if err == nil {
							for _, a := range back.Args {
								again = append(again, a.String())
							}
						}
						if err != nil || !cmp.Equal(again, got) {
							t.Errorf("written %q, read back %q (%v)", out, again, err)
						}
					}
				}
			})
		}
	}
}
