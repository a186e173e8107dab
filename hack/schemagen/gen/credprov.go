//go:build schemagen

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/kubernetes/pkg/credentialprovider/plugin"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	kubeletconfigv1 "k8s.io/kubernetes/pkg/kubelet/apis/config/v1"
	kubeletconfigv1alpha1 "k8s.io/kubernetes/pkg/kubelet/apis/config/v1alpha1"
	kubeletconfigv1beta1 "k8s.io/kubernetes/pkg/kubelet/apis/config/v1beta1"
)

// The kubelet's credential provider configuration (--image-credential-
// provider-config), judged by the release's own code:
//
//	schemagen credprov CORPUS_DIR > credprov.json
//	schemagen credprovcase CASE_DIR   (one case; run in a fresh process)
//
// A case directory holds "args": the config path, then the bin dir (both
// relative to the case; a line may be empty), and optionally "gates"
// (NAME=true|false lines). The verdict is what RegisterCredentialProviderPlugins
// — the call the kubelet makes once its runtime answers, exiting on an
// error — returns, or its panic.

// CredVerdict is the kubelet's verdict on one case. Panic: the kubelet
// died (a panic, or klog.Fatal) rather than returned an error.
type CredVerdict struct {
	OK    bool   `json:"ok"`
	Panic bool   `json:"panic,omitempty"`
	Error string `json:"error,omitempty"`
}

func credprov(dir string) (map[string]CredVerdict, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	out := map[string]CredVerdict{}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		cdir := filepath.Join(dir, e.Name())
		v, err := runCredSubprocess(self, cdir)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", cdir, err)
		}
		v.Error = strings.ReplaceAll(v.Error, cdir, "CASE")
		out[e.Name()] = v
	}
	return out, nil
}

// runCredSubprocess runs one case in a fresh process. A process that exits
// without a verdict died as the kubelet would (klog.Fatal: exit 255): that
// is the verdict, with its last words.
func runCredSubprocess(self, dir string) (CredVerdict, error) {
	cmd := exec.Command(self, "credprovcase", dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	data, err := cmd.Output()
	if err != nil && len(bytes.TrimSpace(data)) == 0 {
		lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		return CredVerdict{Panic: true, Error: lines[len(lines)-1]}, nil
	}
	var v CredVerdict
	if err := json.Unmarshal(data, &v); err != nil {
		return v, err
	}
	return v, nil
}

func runCredCase(dir string) (v CredVerdict) {
	defer func() {
		if r := recover(); r != nil {
			v = CredVerdict{Panic: true, Error: fmt.Sprint(r)}
		}
	}()
	args, err := os.ReadFile(filepath.Join(dir, "args"))
	if err != nil {
		return CredVerdict{Error: "case: " + err.Error()}
	}
	lines := strings.Split(string(args), "\n")
	for len(lines) < 2 {
		lines = append(lines, "")
	}
	path := func(s string) string {
		if s = strings.TrimSpace(s); s == "" {
			return ""
		}
		return filepath.Join(dir, s)
	}
	if g, err := os.ReadFile(filepath.Join(dir, "gates")); err == nil {
		set := map[string]bool{}
		for _, l := range strings.Fields(string(g)) {
			k, val, _ := strings.Cut(l, "=")
			set[k] = val == "true"
		}
		if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(set); err != nil {
			return CredVerdict{Error: "gates: " + err.Error()}
		}
	}
	// The signature grew two getters in 1.33: pass what the kubelet passes
	// for a config that needs none (nil).
	fn := reflect.ValueOf(plugin.RegisterCredentialProviderPlugins)
	in := []reflect.Value{reflect.ValueOf(path(lines[0])), reflect.ValueOf(path(lines[1]))}
	for i := 2; i < fn.Type().NumIn(); i++ {
		in = append(in, reflect.Zero(fn.Type().In(i)))
	}
	if res := fn.Call(in); !res[0].IsNil() {
		return CredVerdict{Error: res[0].Interface().(error).Error()}
	}
	return CredVerdict{OK: true}
}

// credprovBehaviour: the release's traits for reading the configuration.
//
//   - credentialProviderFields.APIVERSION: the JSON paths of the
//     CredentialProviderConfig of each apiVersion the kubelet decodes.
//   - credentialProviderDir: "merge" when a directory is read.
//   - credentialProviderRules: the validation rules the release has beyond
//     the first ones, each found by a probe configuration that breaks only
//     that rule ("duplicate-name": two providers of one name are refused
//     rather than killing the kubelet; "token-attributes",
//     "token-cache-type", "strict-decoding": unknown and duplicate fields
//     refused rather than dropped; "executable-plugin": the plugin must be
//     an executable file, not only there).
func credprovBehaviour() (map[string]string, error) {
	b := map[string]string{}
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{kubeletconfig.AddToScheme, kubeletconfigv1alpha1.AddToScheme, kubeletconfigv1beta1.AddToScheme, kubeletconfigv1.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	for gvk, t := range scheme.AllKnownTypes() {
		if gvk.Kind != "CredentialProviderConfig" || gvk.Version == runtime.APIVersionInternal {
			continue
		}
		var paths []string
		for _, f := range fields(t, "") {
			paths = append(paths, f.Path)
		}
		sort.Strings(paths)
		b["credentialProviderFields."+gvk.GroupVersion().String()] = strings.Join(paths, ",")
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	probe := func(name string, files map[string]string, args string) (CredVerdict, error) {
		dir, err := os.MkdirTemp("", "credprobe-"+name)
		if err != nil {
			return CredVerdict{}, err
		}
		defer os.RemoveAll(dir)
		files["args"] = args
		files["bin/p"] = "#!/bin/sh\n"
		files["bin/q"] = "#!/bin/sh\n"
		for p, data := range files {
			full := filepath.Join(dir, p)
			os.MkdirAll(filepath.Dir(full), 0o755)
			if err := os.WriteFile(full, []byte(data), 0o755); err != nil {
				return CredVerdict{}, err
			}
		}
		return runCredSubprocess(self, dir)
	}
	const head = "apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfig\nproviders:\n"
	const p = "- name: p\n  matchImages: [\"*.example.com\"]\n  defaultCacheDuration: 1m\n  apiVersion: credentialprovider.kubelet.k8s.io/v1\n"
	v, err := probe("dir", map[string]string{"conf/a.yaml": head + p}, "conf\nbin\n")
	if err != nil {
		return nil, err
	}
	if v.OK {
		b["credentialProviderDir"] = "merge"
	}
	var rules []string
	v, err = probe("dup", map[string]string{"c.yaml": head + p + p}, "c.yaml\nbin\n")
	if err != nil {
		return nil, err
	}
	// Refused by reading (1.34+) or validation (1.33); before, the second
	// registration panics.
	if !v.OK && !v.Panic {
		rules = append(rules, "duplicate-name")
	}
	token := p + "  tokenAttributes:\n    serviceAccountTokenAudience: \"\"\n    requireServiceAccount: true\n"
	v, err = probe("token", map[string]string{"c.yaml": head + token}, "c.yaml\nbin\n")
	if err != nil {
		return nil, err
	}
	if strings.Contains(v.Error, "serviceAccountTokenAudience") && !strings.Contains(v.Error, "unknown field") {
		rules = append(rules, "token-attributes")
	}
	if strings.Contains(v.Error, "cacheType") {
		rules = append(rules, "token-cache-type")
	}
	// Strict decoding (1.32+): an unknown field refused, not dropped.
	v, err = probe("strict", map[string]string{"c.yaml": head + p + "  timeout: 5s\n"}, "c.yaml\nbin\n")
	if err != nil {
		return nil, err
	}
	if strings.Contains(v.Error, "unknown field") {
		rules = append(rules, "strict-decoding")
	}
	// The plugin must be an executable file (exec.LookPath, 1.30+), not
	// only there (os.Stat).
	v, err = probe("exec", map[string]string{"c.yaml": head + strings.Replace(p, "name: p", "name: x", 1), "bin/x/keep": ""}, "c.yaml\nbin\n")
	if err != nil {
		return nil, err
	}
	if !v.OK {
		rules = append(rules, "executable-plugin")
	}
	b["credentialProviderRules"] = strings.Join(rules, ",")
	return b, nil
}
