package effective

import (
	"os"
	"path/filepath"

	"github.com/kubeletcfg/kubeletcfg/credprovider"
	"github.com/kubeletcfg/kubeletcfg/nodefile"
	"github.com/kubeletcfg/kubeletcfg/warning"
)

// CredentialProvider is the kubelet's credential provider configuration
// (--image-credential-provider-config and -bin-dir), read and checked as
// the kubelet does once its runtime answers.
type CredentialProvider struct {
	// Config and BinDir are the flags' values (node paths).
	Config string `json:"config"`
	BinDir string `json:"binDir"`
	// Read is the configuration as merged (nil when not read).
	Read *credprovider.Config `json:"read,omitempty"`
	// Problems each make the kubelet exit at start, after it connected to
	// its runtime (the first one it meets stops it).
	Problems []credprovider.Problem `json:"problems,omitempty"`
}

// readCredentialProvider reads the setup's credential provider
// configuration, when its command line names one. The error is
// kubeletcfg's (a file it refuses to read, a link out of the root).
func (r *Result) readCredentialProvider(st stack) error {
	var cfg, bin string
	for _, o := range r.Flags {
		switch o.Flag.Name {
		case "image-credential-provider-config":
			cfg = o.Value
		case "image-credential-provider-bin-dir":
			bin = o.Value
		}
	}
	if cfg == "" && bin == "" {
		return nil
	}
	abs := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		dir := st.Dir
		if dir == "" {
			if st.Root != "" {
				dir = "/"
			} else {
				dir, _ = os.Getwd()
			}
		}
		return filepath.Join(dir, p)
	}
	root, err := nodefile.OpenRoot(st.Root)
	if err != nil {
		return err
	}
	defer root.Close()
	cp := &CredentialProvider{Config: abs(cfg), BinDir: abs(bin)}
	read, probs, err := credprovider.Check(root, cp.Config, cp.BinDir, r.Version, r.Config.FeatureGates)
	if err != nil {
		return err
	}
	cp.Read, cp.Problems = read, probs
	r.CredentialProvider = cp
	for _, p := range probs {
		r.Warnings = append(r.Warnings, warning.Warning{Code: warning.StartRefused, File: p.File, Line: p.Line, Field: p.Field,
			Message: "credential provider: " + p.Message + " (the kubelet exits at start, once its runtime answers)"})
	}
	return nil
}
