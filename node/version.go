// Package node reads a node's kubelet setup: the live node, or an offline
// image of one under a root directory.
package node

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// kubeletPaths are where packages and installers put the kubelet.
var kubeletPaths = []string{"usr/bin/kubelet", "usr/local/bin/kubelet", "opt/bin/kubelet"}

var versionOutput = regexp.MustCompile(`v?(\d+\.\d+(\.\d+)?)`)

// ErrNoKubelet means no kubelet binary was found.
var ErrNoKubelet = errors.New("no kubelet binary found")

// KubeletVersion finds the node's kubelet version ("1.31.4"). On the live
// node (root "") it asks the kubelet on PATH. In an offline image it runs
// nothing (the image's binary is not to be trusted, nor made for this
// machine): it reads the package database (dpkg) instead.
func KubeletVersion(root string) (string, error) {
	if root != "" {
		return packagedVersion(root)
	}
	bin, err := findKubelet(root)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("%s --version: %w", bin, err)
	}
	m := versionOutput.FindSubmatch(out)
	if m == nil {
		return "", fmt.Errorf("%s --version printed no version: %q", bin, out)
	}
	return string(m[1]), nil
}

// packagedVersion reads the kubelet package's version from an image's dpkg
// database.
func packagedVersion(root string) (string, error) {
	status, err := os.ReadFile(filepath.Join(root, "var/lib/dpkg/status"))
	if err != nil {
		return "", fmt.Errorf("%w under %s (no dpkg database to read its version from)", ErrNoKubelet, root)
	}
	for _, stanza := range strings.Split(string(status), "\n\n") {
		if !strings.Contains("\n"+stanza, "\nPackage: kubelet\n") {
			continue
		}
		for _, line := range strings.Split(stanza, "\n") {
			if v, ok := strings.CutPrefix(line, "Version: "); ok {
				if m := versionOutput.FindStringSubmatch(v); m != nil {
					return m[1], nil
				}
			}
		}
	}
	return "", fmt.Errorf("%w under %s (dpkg lists no kubelet package)", ErrNoKubelet, root)
}

func findKubelet(root string) (string, error) {
	if root == "" {
		if p, err := exec.LookPath("kubelet"); err == nil {
			return p, nil
		}
		return "", ErrNoKubelet
	}
	for _, p := range kubeletPaths {
		full := filepath.Join(root, p)
		if st, err := os.Stat(full); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return full, nil
		}
	}
	return "", fmt.Errorf("%w under %s", ErrNoKubelet, root)
}
