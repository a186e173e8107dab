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
	"time"
)

// kubeletPaths are where packages and installers put the kubelet.
var kubeletPaths = []string{"usr/bin/kubelet", "usr/local/bin/kubelet", "opt/bin/kubelet"}

var versionOutput = regexp.MustCompile(`v?(\d+\.\d+(\.\d+)?)`)

// ErrNoKubelet means no kubelet binary was found.
var ErrNoKubelet = errors.New("no kubelet binary found")

// KubeletVersion asks the node's kubelet binary for its version ("1.31.4").
// With root "" it looks on PATH, else under root.
func KubeletVersion(root string) (string, error) {
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
