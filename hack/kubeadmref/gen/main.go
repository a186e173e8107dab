//go:build kubeadmref

// Command kubeadmref runs kubeadm's own code (one release of
// k8s.io/kubernetes, see prepare.sh) on kubeletcfg's kubeadm corpus and prints
// what kubeadm does, for kubeletcfg's tests to compare with its model:
//
//	kubeadmref render CORPUS_DIR > reference.json   (re-runs itself in a private mount namespace)
//	kubeadmref env ENV_DIR                         (kubeadm-flags.env files through kubeadm's parser)
//
// A render case is a directory: configmap.yaml (the kubelet-config
// ConfigMap's kubelet value), and optionally cluster.yaml (the kubeadm-config
// ClusterConfiguration), resolved (the word active: systemd-resolved is
// active), patches/ (the --patches directory), instance-config.yaml and
// kubeadm-flags.env (in /var/lib/kubelet), crisocket (what kubeadm 1.37
// detects). Each case runs the kubelet-config phase's WriteKubeletConfigFiles
// (WriteConfigToDisk up to 1.31) with /var/lib/kubelet on a tmpfs of a
// private mount namespace, and a systemctl on PATH that answers is-active.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/yaml"
)

const kubeletDir = "/var/lib/kubelet"

type caseResult struct {
	Config         map[string]any `json:"config,omitempty"`
	Error          string         `json:"error,omitempty"`
	InstanceConfig string         `json:"instanceConfig,omitempty"`
	FlagsEnv       string         `json:"flagsEnv,omitempty"`
	Backup         string         `json:"backup,omitempty"`
}

type envResult struct {
	Args  []string `json:"args"`
	Error bool     `json:"error,omitempty"`
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: kubeadmref render CORPUS_DIR | env ENV_DIR")
		os.Exit(2)
	}
	var out any
	var err error
	// kubeadm prints progress on stdout: the result goes to the real one.
	stdout := os.Stdout
	os.Stdout = os.Stderr
	switch os.Args[1] {
	case "render":
		if os.Getenv("KUBEADMREF_NS") == "" {
			reexec(stdout)
			return
		}
		out, err = renderAll(os.Args[2])
	case "env":
		out, err = envAll(os.Args[2])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "kubeadmref:", err)
		os.Exit(1)
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", " ")
	if err := enc.Encode(map[string]any{"release": release, "cases": out}); err != nil {
		os.Exit(1)
	}
}

// reexec runs this command again in a private mount namespace, where
// /var/lib is a tmpfs: kubeadm writes /var/lib/kubelet there, nowhere else.
func reexec(stdout *os.File) {
	cmd := exec.Command("unshare", "--mount", "--propagation", "private", os.Args[0], os.Args[1], os.Args[2])
	cmd.Env = append(os.Environ(), "KUBEADMREF_NS=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "kubeadmref:", err)
		os.Exit(1)
	}
}

func renderAll(dir string) (map[string]caseResult, error) {
	if err := syscall.Mount("tmpfs", "/var/lib", "tmpfs", 0, "size=64m"); err != nil {
		return nil, fmt.Errorf("tmpfs on /var/lib: %w", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := map[string]caseResult{}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		abs, _ := filepath.Abs(filepath.Join(dir, e.Name()))
		out[e.Name()] = renderCase(abs)
	}
	return out, nil
}

func renderCase(dir string) (res caseResult) {
	defer func() {
		if r := recover(); r != nil {
			res = caseResult{Error: fmt.Sprintf("panic: %v", r)}
		}
	}()
	fail := func(err error) caseResult { return caseResult{Error: firstLine(err.Error())} }
	if err := os.RemoveAll(kubeletDir); err != nil {
		return fail(err)
	}
	if err := os.MkdirAll(kubeletDir, 0o700); err != nil {
		return fail(err)
	}
	// WriteKubeletConfigFiles backs the old file up first.
	if err := os.WriteFile(filepath.Join(kubeletDir, "config.yaml"), []byte("# the old file\n"), 0o644); err != nil {
		return fail(err)
	}
	for _, f := range []string{"instance-config.yaml", "kubeadm-flags.env"} {
		if data, err := os.ReadFile(filepath.Join(dir, f)); err == nil {
			if err := os.WriteFile(filepath.Join(kubeletDir, f), data, 0o644); err != nil {
				return fail(err)
			}
		}
	}
	tmp, err := os.MkdirTemp("", "kubeadmref")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(tmp)
	if err := fakeSystemctl(tmp, dir); err != nil {
		return fail(err)
	}
	client, err := clusterClient(dir)
	if err != nil {
		return fail(err)
	}
	cfg, err := fetch(client)
	if err != nil {
		return fail(err)
	}
	if s, err := os.ReadFile(filepath.Join(dir, "crisocket")); err == nil {
		cfg.NodeRegistration.CRISocket = strings.TrimSpace(string(s))
	}
	patches := ""
	if fi, err := os.Stat(filepath.Join(dir, "patches")); err == nil && fi.IsDir() {
		patches = filepath.Join(dir, "patches")
	}
	kubeConfigDir := filepath.Join(tmp, "etc-kubernetes")
	if err := writeConfigFiles(cfg, kubeletDir, kubeConfigDir, patches, io.Discard); err != nil {
		return fail(err)
	}
	data, err := os.ReadFile(filepath.Join(kubeletDir, "config.yaml"))
	if err != nil {
		return fail(err)
	}
	if err := yaml.Unmarshal(data, &res.Config); err != nil {
		return fail(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "instance-config.yaml")); err != nil {
		if b, err := os.ReadFile(filepath.Join(kubeletDir, "instance-config.yaml")); err == nil {
			res.InstanceConfig = string(b)
		}
	}
	if orig, err := os.ReadFile(filepath.Join(dir, "kubeadm-flags.env")); err == nil {
		if b, err := os.ReadFile(filepath.Join(kubeletDir, "kubeadm-flags.env")); err == nil && string(b) != string(orig) {
			res.FlagsEnv = string(b)
		}
	}
	if names, err := os.ReadDir(filepath.Join(kubeConfigDir, "tmp")); err == nil && len(names) > 0 {
		res.Backup = backupPattern(names[0].Name())
	}
	return res
}

// backupPattern replaces the digits of a backup directory's name.
func backupPattern(name string) string {
	var b strings.Builder
	last := false
	for _, r := range name {
		d := r >= '0' && r <= '9'
		if d && !last {
			b.WriteString("N")
		} else if !d {
			b.WriteRune(r)
		}
		last = d
	}
	return b.String()
}

// fakeSystemctl puts on PATH a systemctl that says whether systemd-resolved
// is active, as the case's resolved file says: kubeadm asks `systemctl
// is-active systemd-resolved`.
func fakeSystemctl(tmp, dir string) error {
	state := "inactive"
	if b, err := os.ReadFile(filepath.Join(dir, "resolved")); err == nil && strings.TrimSpace(string(b)) == "active" {
		state = "active"
	}
	bin := filepath.Join(tmp, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return err
	}
	script := "#!/bin/sh\n[ \"$1\" = is-active ] && [ \"$2\" = systemd-resolved ] && { echo " + state + "; exit 0; }\necho unknown\nexit 3\n"
	if err := os.WriteFile(filepath.Join(bin, "systemctl"), []byte(script), 0o755); err != nil {
		return err
	}
	return os.Setenv("PATH", bin)
}

// clusterClient is a clientset that holds the case's two kubeadm ConfigMaps.
func clusterClient(dir string) (*fake.Clientset, error) {
	kubelet, err := os.ReadFile(filepath.Join(dir, "configmap.yaml"))
	if err != nil {
		return nil, err
	}
	cluster := map[string]any{"apiVersion": "kubeadm.k8s.io/v1beta4", "kind": "ClusterConfiguration"}
	if b, err := os.ReadFile(filepath.Join(dir, "cluster.yaml")); err == nil {
		cluster = map[string]any{}
		if err := yaml.Unmarshal(b, &cluster); err != nil {
			return nil, err
		}
	}
	cluster["kubernetesVersion"] = release
	cc, err := yaml.Marshal(cluster)
	if err != nil {
		return nil, err
	}
	return fake.NewSimpleClientset(
		&v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kubeadm-config", Namespace: "kube-system"}, Data: map[string]string{"ClusterConfiguration": string(cc)}},
		&v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kubelet-config", Namespace: "kube-system"}, Data: map[string]string{"kubelet": string(kubelet)}},
	), nil
}

func envAll(dir string) (map[string]envResult, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := map[string]envResult{}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		args, err := parseEnv(filepath.Join(dir, e.Name()))
		r := envResult{Args: []string{}}
		if err != nil {
			r.Error = true
		} else {
			for _, a := range args {
				r.Args = append(r.Args, "--"+a.Name+"="+a.Value)
			}
		}
		out[e.Name()] = r
	}
	return out, nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// arg is a flag as kubeadm keeps it.
type arg struct{ Name, Value string }
