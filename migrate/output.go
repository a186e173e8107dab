package migrate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/kubeletcfg/kubeletcfg/config"
	"github.com/kubeletcfg/kubeletcfg/internal/jsonshape"
	"github.com/kubeletcfg/kubeletcfg/kubeadm"
)

// Files are what WriteDir writes.
var Files = []string{"config.yaml", "kubelet-flags.env", "migration.json", "report.txt"}

// WriteDir writes the migration into dir: the config file, the remaining
// flags as an environment file kubeadm reads as its kubeadm-flags.env (one
// KUBELET_KUBEADM_ARGS assignment), the machine-readable result and a report
// for people. It never replaces a file: if any of them exists, it writes
// nothing and says which.
func (r *Result) WriteDir(dir string) error {
	for _, name := range Files {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			return fmt.Errorf("%s already exists: kubeletcfg does not overwrite a migration (choose another --output-dir)", filepath.Join(dir, name))
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	env, err := r.envFile()
	if err != nil {
		return err
	}
	doc, err := r.ConfigYAML()
	if err != nil {
		return err
	}
	js, err := jsonshape.Marshal(r)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	contents := map[string][]byte{
		"config.yaml":       doc,
		"kubelet-flags.env": env,
		"migration.json":    js,
		"report.txt":        []byte(r.Report()),
	}
	files := Files
	if r.KubeadmPatch != nil {
		files = append(append([]string(nil), Files...), kubeadm.PatchFileName)
		contents[kubeadm.PatchFileName] = r.KubeadmPatch
		if _, err := os.Lstat(filepath.Join(dir, kubeadm.PatchFileName)); err == nil {
			return fmt.Errorf("%s already exists: kubeletcfg does not overwrite a migration (choose another --output-dir)", filepath.Join(dir, kubeadm.PatchFileName))
		}
	}
	var written []string
	for _, name := range files {
		path := filepath.Join(dir, name)
		if err := writeNew(path, contents[name]); err != nil {
			for _, w := range written { // no half-written migration
				os.Remove(w)
			}
			return err
		}
		written = append(written, path)
	}
	return nil
}

// writeNew creates path (O_EXCL: a file that appeared meanwhile is not
// replaced either) and removes it again if the write fails.
func writeNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	if err := f.Sync(); werr == nil {
		werr = err
	}
	if err := f.Close(); werr == nil {
		werr = err
	}
	if werr != nil {
		os.Remove(path)
		return fmt.Errorf("%s: %w", path, werr)
	}
	return nil
}

// ConfigYAML is the config file, with a short header.
func (r *Result) ConfigYAML() ([]byte, error) {
	body := map[string]any{}
	for k, v := range r.Config {
		if k != "apiVersion" && k != "kind" {
			body[k] = v
		}
	}
	out, err := config.YAML(body)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# KubeletConfiguration for kubelet %s, migrated by kubeletcfg from legacy flags.\n", r.KubeletVersion)
	fmt.Fprintf(&b, "# Only values that differ from kubelet %s's defaults are set.\n", r.KubeletVersion)
	fmt.Fprintf(&b, "apiVersion: %s\nkind: %s\n", r.Config["apiVersion"], r.Config["kind"])
	if len(body) > 0 {
		b.Write(out)
	}
	return []byte(b.String()), nil
}

// envFile holds the remaining flags as kubeadm's kubeadm-flags.env does,
// in the one form kubeadm's parser reads back as written: a single
// KUBELET_KUBEADM_ARGS assignment, every flag --name=value, nothing else.
func (r *Result) envFile() ([]byte, error) {
	return kubeadm.FormatFlagsEnv(r.Flags)
}

// Report is the migration for people.
func (r *Result) Report() string {
	var b strings.Builder
	fmt.Fprintf(&b, "kubeletcfg migrate, kubelet %s\n\n", r.KubeletVersion)
	fmt.Fprintf(&b, "Remaining flags (no config field):\n  %s\n", strings.Join(r.Flags, "\n  "))
	if len(r.Removed) > 0 {
		b.WriteString("\nRemoved (kubelet " + r.KubeletVersion + " does not have them):\n")
		for _, rm := range r.Removed {
			fmt.Fprintf(&b, "  %s: %s\n", rm.What(), rm.Reason)
		}
	}
	if len(r.Warnings) > 0 {
		b.WriteString("\nWarnings:\n")
		for _, w := range r.Warnings {
			fmt.Fprintf(&b, "  %s\n", w)
		}
	}
	return b.String()
}
