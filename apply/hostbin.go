package apply

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// binDir is where, in kubeletcfg's state directory, the binary a host runs
// for an apply it did not start itself (the guard of an apply in a pod) is
// kept.
const binDir = "bin"

// InstallBinary copies the kubeletcfg binary exe (the running one:
// /proc/self/exe) into the state directory's bin/, as
// kubeletcfg-SHA256PREFIX, root's and 0755 in a directory only root may
// enter, and returns its path: what the host runs as the guard of an apply
// that runs in a pod. A copy already there is used when its content hashes
// alike; the copy is hashed again once in place.
func InstallBinary(stateDirPath, exe string) (string, error) {
	dir, err := stateDir(stateDirPath)
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, binDir)
	if err := os.Mkdir(bin, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", err
	}
	st, err := os.Lstat(bin)
	if err != nil {
		return "", err
	}
	if !st.IsDir() {
		return "", fmt.Errorf("%s is a %s: %w", bin, kind(st.Mode()), ErrUntrusted)
	}
	if err := owned(st); err != nil {
		return "", fmt.Errorf("%s: %w", bin, err)
	}
	want, err := hashFile(exe)
	if err != nil {
		return "", fmt.Errorf("kubeletcfg's binary: %w", err)
	}
	target := filepath.Join(bin, "kubeletcfg-"+want[:16])
	if got, err := hashNoFollow(target); err == nil && got == want {
		return target, nil
	}
	in, err := os.Open(exe)
	if err != nil {
		return "", err
	}
	defer in.Close()
	tmp, err := os.CreateTemp(bin, ".kubeletcfg-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, in); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Chmod(0o755); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	if err := os.Rename(tmp.Name(), target); err != nil {
		return "", err
	}
	if err := syncDir(bin); err != nil {
		return "", err
	}
	if got, err := hashNoFollow(target); err != nil || got != want {
		return "", fmt.Errorf("%s does not hash to the binary copied (%s, %v): %w", target, got, err, ErrUntrusted)
	}
	return target, nil
}

func hashFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// hashNoFollow hashes a regular file root owns and nobody else may write,
// never through a link.
func hashNoFollow(path string) (string, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("%s is a %s: %w", path, kind(st.Mode()), ErrUntrusted)
	}
	if err := owned(st); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
