package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Header values of staticPodURLHeader are tokens: what kubeletcfg prints,
// text or JSON, shows the header's name and never its value.
func TestStaticPodURLHeaderValuesNeverPrinted(t *testing.T) {
	dir := t.TempDir()
	head := "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nstaticPodURL: https://pods.example/\n"
	cfg, next := filepath.Join(dir, "config.yaml"), filepath.Join(dir, "new.yaml")
	os.WriteFile(cfg, []byte(head+"staticPodURLHeader:\n  Authorization: [\"Bearer old-s3cret\"]\n"), 0o600)
	os.WriteFile(next, []byte(head+"staticPodURLHeader:\n  Authorization: [\"Bearer new-s3cret\"]\n"), 0o600)
	host, _ := os.Hostname()
	for _, args := range [][]string{
		{"effective", "--kubelet-version", "1.37", "--", "--config=" + cfg},
		{"effective", "--kubelet-version", "1.37", "-o", "json", "--", "--config=" + cfg},
		{"effective", "--kubelet-version", "1.37", "--show-origin", "--", "--config=" + cfg},
		{"diff", "--kubelet-version", "1.37", next, "--against", cfg},
		{"diff", "--kubelet-version", "1.37", "-o", "json", next, "--against", cfg},
		{"apply", "--node", host, "--kubelet-version", "1.37", "-f", next, "--dry-run", "--", "--config=" + cfg},
		{"apply", "--node", host, "--kubelet-version", "1.37", "-f", next, "--dry-run", "-o", "json", "--", "--config=" + cfg},
	} {
		_, out, errOut := runCLI(t, args...)
		if strings.Contains(out+errOut, "s3cret") {
			t.Errorf("kubeletcfg %s prints the header's value:\n%s%s", strings.Join(args[:len(args)-1], " "), out, errOut)
		}
		if !strings.Contains(out, "Authorization") {
			t.Errorf("kubeletcfg %s does not name the header:\n%s%s", strings.Join(args, " "), out, errOut)
		}
	}
}
