package node

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubeletcfg/kubeletcfg/schema"
)

// noUnit is a node tree with no kubelet.service: reading its command line
// fails, so a setup that needs none must not read it.
func noUnit(t *testing.T) string {
	return t.TempDir()
}

func TestReadSetupCommandLine(t *testing.T) {
	kubeadmArgs := []string{
		"--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf", "--kubeconfig=/etc/kubernetes/kubelet.conf",
		"--config=/var/lib/kubelet/config.yaml",
		"--container-runtime-endpoint=unix:///var/run/containerd/containerd.sock", "--pod-infra-container-image=registry.k8s.io/pause:3.9", "--node-ip=10.0.0.21",
		"--max-pods=150", "--node-labels=node.kubernetes.io/pool=general", "--eviction-hard=memory.available<500Mi",
	}
	for _, tc := range []struct {
		name     string
		src      Source
		args     []string
		fromNode bool
		files    []string
		// source is where the argument --max-pods=150 was written, when
		// the command line has it.
		source string
		note   string
	}{
		{
			name: "after --",
			src:  Source{Root: noUnit(t), Args: []string{"--max-pods=7"}},
			args: []string{"--max-pods=7"},
		},
		{
			name: "a bare -- is an empty command line",
			src:  Source{Root: noUnit(t), Dashed: true},
			args: nil, // and the node's missing unit is not read
		},
		{
			name: "words after -- win over --from",
			src:  Source{Root: sample, Args: []string{"--max-pods=7"}, From: []string{"/etc/default/kubelet"}},
			args: []string{"--max-pods=7"},
		},
		{
			name:     "the node's kubelet.service, its drop-ins and env files under --root",
			src:      Source{Root: sample},
			args:     kubeadmArgs,
			fromNode: true,
			files: []string{"/usr/lib/systemd/system/kubelet.service", "/etc/systemd/system/kubelet.service.d/10-kubeadm.conf",
				"/var/lib/kubelet/kubeadm-flags.env", "/etc/default/kubelet"},
			source: "/etc/default/kubelet:1 ($KUBELET_EXTRA_ARGS)",
			note:   "note: the kubelet's command line from /usr/lib/systemd/system/kubelet.service, ",
		},
		{
			name: "--from files in command-line order",
			src:  Source{Root: sample, From: []string{"/etc/default/kubelet", "/var/lib/kubelet/kubeadm-flags.env"}},
			args: []string{
				"--max-pods=150", "--node-labels=node.kubernetes.io/pool=general", "--eviction-hard=memory.available<500Mi",
				"--container-runtime-endpoint=unix:///var/run/containerd/containerd.sock", "--pod-infra-container-image=registry.k8s.io/pause:3.9", "--node-ip=10.0.0.21",
			},
			fromNode: true,
			files:    []string{"/etc/default/kubelet", "/var/lib/kubelet/kubeadm-flags.env"},
			source:   "/etc/default/kubelet:1 ($KUBELET_EXTRA_ARGS)",
			note:     "note: the kubelet's command line from /etc/default/kubelet, /var/lib/kubelet/kubeadm-flags.env\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var notes bytes.Buffer
			src := tc.src
			src.KubeletVersion, src.Notes = "1.31", &notes
			s, err := ReadSetup(src)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.args, s.Args); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
			if s.Version.Minor != "1.31" || s.Root != tc.src.Root || s.FromNode != tc.fromNode {
				t.Errorf("version %s, root %q, from the node %v; want 1.31, %q, %v", s.Version.Minor, s.Root, s.FromNode, tc.src.Root, tc.fromNode)
			}
			if diff := cmp.Diff(tc.files, s.Files); diff != "" {
				t.Errorf("files read (-want +got):\n%s", diff)
			}
			if !strings.HasPrefix(notes.String(), tc.note) || (tc.note == "") != (notes.Len() == 0) {
				t.Errorf("notes = %q, want them to start with %q", notes.String(), tc.note)
			}
			env := s.Environ()
			if !tc.fromNode {
				// Given directly, the command line runs in kubeletcfg's own
				// environment, and no argument has a file to point at.
				if _, ok := env("PATH"); !ok || s.Sources != nil {
					t.Errorf("a command line given directly has sources %q and an environment of its own", s.Sources)
				}
				return
			}
			i := slices.Index(s.Args, "--max-pods=150")
			if i < 0 || s.Sources[i] != tc.source {
				t.Errorf("--max-pods=150 at %d: sources %q, want %q", i, s.Sources, tc.source)
			}
			if len(s.Origins) != len(s.Args) {
				t.Errorf("%d origins for %d args", len(s.Origins), len(s.Args))
			}
			if v, ok := env("KUBELET_EXTRA_ARGS"); !ok || !strings.Contains(v, "--max-pods=150") {
				t.Errorf("the kubelet's environment: KUBELET_EXTRA_ARGS = %q, %v", v, ok)
			}
			if _, ok := env("PATH"); ok {
				t.Error("the kubelet's environment read from the node has kubeletcfg's own PATH")
			}
		})
	}
}

func TestReadSetupCommandLineErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  Source
		want string
	}{
		{"no kubelet.service under --root", Source{Root: noUnit(t)}, "reading the kubelet's command line (or give it after --)"},
		{"a --from file missing", Source{Root: sample, From: []string{"/etc/default/missing"}}, "/etc/default/missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := tc.src
			src.KubeletVersion = "1.31"
			s, err := ReadSetup(src)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ReadSetup = %v, %v; want an error with %q", s, err, tc.want)
			}
		})
	}
}

// dpkgRoot is a node tree whose package database lists the kubelet at
// version (none when "").
func dpkgRoot(t *testing.T, version string) string {
	root := t.TempDir()
	status := "Package: containerd\nVersion: 1.7.24~ds1-1\n\n"
	if version != "" {
		status += "Package: kubelet\nStatus: install ok installed\nVersion: " + version + "\n\n"
	}
	if err := os.MkdirAll(filepath.Join(root, "var/lib/dpkg"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "var/lib/dpkg/status"), []byte(status), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

// kubeletOnPath puts a program named kubelet on PATH that prints out.
func kubeletOnPath(t *testing.T, out string) {
	dir := t.TempDir()
	script := "#!/bin/sh\nprintf '%s\\n' '" + out + "'\n"
	if err := os.WriteFile(filepath.Join(dir, "kubelet"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
}

func TestResolveVersion(t *testing.T) {
	newest := schema.Newest().Minor
	aFile := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(aFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		src     Source
		kubelet string // what the kubelet on PATH prints; "" for no kubelet on PATH
		want    string // the minor version, or
		wantErr string
		note    string
	}{
		{name: "--kubelet-version wins over the node's", src: Source{Root: dpkgRoot(t, "1.30.4-1.1"), KubeletVersion: "v1.33.1", VersionSet: true}, want: "1.33"},
		{name: "--kubelet-version without a root", src: Source{KubeletVersion: "1.29"}, want: "1.29"},
		{name: "--kubelet-version \"\" is refused", src: Source{Root: dpkgRoot(t, "1.30.4-1.1"), VersionSet: true}, wantErr: `--kubelet-version ""`},
		{name: "--kubelet-version a version not supported", src: Source{KubeletVersion: "1.12"}, wantErr: "1.12"},
		{name: "the image's dpkg database", src: Source{Root: dpkgRoot(t, "1.30.4-1.1")}, want: "1.30"},
		{name: "the image's kubelet package too old", src: Source{Root: dpkgRoot(t, "1.20.1-00")}, wantErr: "the node's kubelet is 1.20.1"},
		{name: "an image without a kubelet package: the newest, said", src: Source{Root: dpkgRoot(t, "")}, want: newest,
			note: "dpkg lists no kubelet package); using kubelet " + newest + " (set --kubelet-version)"},
		{name: "an image without a dpkg database: the newest, said", src: Source{Root: sample}, want: newest, note: "no dpkg database"},
		{name: "--root missing", src: Source{Root: "/nonexistent/kubeletcfg"}, wantErr: "--root /nonexistent/kubeletcfg: no such file or directory"},
		{name: "--root a file", src: Source{Root: aFile}, wantErr: "not a directory"},
		{name: "the live node's kubelet --version", src: Source{}, kubelet: "Kubernetes v1.32.3", want: "1.32"},
		{name: "the live node's kubelet says no version", src: Source{}, kubelet: "no idea", wantErr: "(set --kubelet-version)"},
		{name: "the live node without a kubelet: the newest, said", src: Source{}, want: newest, note: "no kubelet binary found; using kubelet " + newest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.src.Root == "" {
				if tc.kubelet != "" {
					kubeletOnPath(t, tc.kubelet)
				} else {
					t.Setenv("PATH", t.TempDir())
				}
			}
			var notes bytes.Buffer
			src := tc.src
			src.Notes = &notes
			v, err := ResolveVersion(src)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ResolveVersion = %v, %v; want an error with %q", v, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if v.Minor != tc.want {
				t.Errorf("version %s, want %s", v.Minor, tc.want)
			}
			if !strings.Contains(notes.String(), tc.note) || (tc.note == "") != (notes.Len() == 0) {
				t.Errorf("notes = %q, want %q in them", notes.String(), tc.note)
			}
			// ReadSetup takes the same version.
			src.Dashed = true
			if s, err := ReadSetup(src); err != nil || s.Version != v {
				t.Errorf("ReadSetup: %v, %v; want version %s", s, err, v.Minor)
			}
		})
	}
}
