// Package node reads a node's kubelet setup: the live node, or an offline
// image of one under a root directory.
package node

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/kubeletcfg/kubeletcfg/nodefile"
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
// database, inside the root and a stanza at a time.
func packagedVersion(root string) (string, error) {
	r, err := nodefile.OpenRoot(root)
	if err != nil {
		return "", err
	}
	defer r.Close()
	f, err := r.Open("/var/lib/dpkg/status", nodefile.DpkgStatus)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%w under %s (no dpkg database to read its version from)", ErrNoKubelet, root)
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	inKubelet := false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			inKubelet = false
		case line == "Package: kubelet":
			inKubelet = true
		case inKubelet && strings.HasPrefix(line, "Version: "):
			if m := versionOutput.FindStringSubmatch(strings.TrimPrefix(line, "Version: ")); m != nil {
				return m[1], nil
			}
		}
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("reading the dpkg database under %s: %w", root, err)
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
