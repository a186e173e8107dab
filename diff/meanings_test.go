package diff

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

func preflightOf(t *testing.T, from, to, config string, args ...string) map[string]Finding {
	t.Helper()
	f := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(f, []byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"+config), 0o644); err != nil {
		t.Fatal(err)
	}
	a, _ := schema.Resolve(from)
	b, _ := schema.Resolve(to)
	fs, err := Preflight(PreflightOptions{Setup: node.Given(a, append([]string{"--config=" + f}, args...)...), To: b})
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]Finding{}
	for _, fd := range fs {
		if _, dup := m[fd.Subject]; dup {
			t.Errorf("two findings about %s", fd.Subject)
		}
		m[fd.Subject] = fd
	}
	return m
}

// diff --to-version reports each meaning change that touches the node.
func TestPreflightMeanings(t *testing.T) {
	got := preflightOf(t, "1.36", "1.37", "eventRecordQPS: 0\n")
	if f := got["eventRecordQPS"]; f.Severity != "change" || !strings.Contains(f.Message, "default of 5 events per second") || !strings.Contains(f.Message, "kubelet 1.37: eventRecordQPS 0 means no limit") {
		t.Errorf("eventRecordQPS 0: %+v", f)
	}
	if _, ok := preflightOf(t, "1.36", "1.37", "eventRecordQPS: 20\n")["eventRecordQPS"]; ok {
		t.Error("eventRecordQPS 20 means the same to both")
	}
	got = preflightOf(t, "1.34", "1.35", "")
	if f := got["restart-readiness"]; !strings.Contains(f.Message, "kubelet 1.35: a kubelet restart keeps containers' readiness") {
		t.Errorf("restart readiness: %+v", f)
	}
	if f := got["failCgroupV1"]; !strings.Contains(f.Message, "refuses to start on a cgroup v1 host") {
		t.Errorf("failCgroupV1: %+v", f)
	}
	if f := got["cgroupDriver"]; !strings.Contains(f.Message, "/configz shows the driver it runs") {
		t.Errorf("cgroupDriver: %+v", f)
	}
	// The gate turned back on: restarts flip readiness on 1.35 too.
	got = preflightOf(t, "1.35", "1.37", "featureGates:\n  ChangeContainerStatusOnKubeletRestart: true\n")
	if _, ok := got["restart-readiness"]; ok {
		t.Errorf("with the gate on, a restart flips readiness on both: %+v", got["restart-readiness"])
	}
	// A field set for 1.35's gate default, read by 1.34: refused.
	got = preflightOf(t, "1.35", "1.34", "crashLoopBackOff:\n  maxContainerRestartPeriod: 2m\n")
	if f := got["crashLoopBackOff.maxContainerRestartPeriod"]; !strings.Contains(f.Message, "is refused: gate KubeletCrashLoopBackOffMax is off") {
		t.Errorf("crashLoopBackOff: %+v", f)
	}
}

// A credential provider directory (read from 1.34) is refused by 1.33.
func TestPreflightCredentialProvider(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "credprov.d")
	bin := filepath.Join(dir, "bin")
	os.MkdirAll(conf, 0o755)
	os.MkdirAll(bin, 0o755)
	os.WriteFile(filepath.Join(bin, "ecr"), []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(filepath.Join(conf, "ecr.yaml"), []byte("apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfig\nproviders:\n- name: ecr\n  matchImages: [\"*.dkr.ecr.*.amazonaws.com\"]\n  defaultCacheDuration: 12h\n  apiVersion: credentialprovider.kubelet.k8s.io/v1\n"), 0o644)
	args := []string{"--image-credential-provider-config=" + conf, "--image-credential-provider-bin-dir=" + bin}
	if f, ok := preflightOf(t, "1.37", "1.36", "", args...)["--image-credential-provider-config"]; ok {
		t.Errorf("1.36 reads the directory: %+v", f)
	}
	f := preflightOf(t, "1.37", "1.33", "", args...)["--image-credential-provider-config"]
	if f.Severity != "blocker" || !strings.Contains(f.Message, "kubelet 1.33 exits at start") || !strings.Contains(f.Message, "reads one file") {
		t.Errorf("1.33: %+v", f)
	}
}
