package migrate

import (
	"errors"
	"io/fs"

	"github.com/kubeletcfg/kubeletcfg/kubeadm"
	"github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/nodefile"
	"github.com/kubeletcfg/kubeletcfg/warning"
)

// kubeadmPatch is, on a node kubeadm set up whose config file is kubeadm's,
// the kubeadm patch that keeps the migrated values at the next kubeadm
// upgrade node (which rewrites config.yaml from its ConfigMap): what
// apply --from-migrate --persist patch writes, for the operator to place in
// the patches directory kubeadm upgrade is run with.
func (r *Result) kubeadmPatch(s *node.Setup, configPath string) error {
	if s == nil || !kubeadm.OwnsConfig(configPath) {
		return nil
	}
	root, err := nodefile.OpenRoot(s.Root)
	if err != nil {
		return err
	}
	defer root.Close()
	if !kubeadm.Detect(root).Kubeadm {
		return nil
	}
	current, err := root.ReadFile(kubeadm.ConfigFile, nodefile.Config)
	if errors.Is(err, fs.ErrNotExist) {
		current = []byte("{}")
	} else if err != nil {
		return err
	}
	doc, err := r.ConfigYAML()
	if err != nil {
		return err
	}
	res, err := kubeadm.CheckChange(kubeadm.ChangeOptions{Current: current, Desired: doc, CurrentFile: kubeadm.ConfigFile,
		NewFile: "the migrated config.yaml", Version: r.version, Persist: kubeadm.PersistPatch})
	if err != nil {
		return err
	}
	r.KubeadmPatch = res.Patch
	if res.Patch != nil {
		r.Warnings = append(r.Warnings, warning.At(warning.Other, kubeadm.ConfigFile, 0,
			"kubeadm set this node up: the next kubeadm upgrade node rewrites the file and would undo the migration; %s keeps the moved values (place it in the directory kubeadm upgrade is given with --patches, or apply --from-migrate --persist patch)", kubeadm.PatchFileName))
	}
	return nil
}
