package preflight

import (
	"context"
	"errors"

	"github.com/kubeletcfg/kubeletcfg/credprovider"
	"github.com/kubeletcfg/kubeletcfg/criruntime"
	"github.com/kubeletcfg/kubeletcfg/nodefile"
	"github.com/kubeletcfg/kubeletcfg/why"
)

// CRI is the node's runtime as kubeletcfg reads it (criruntime.Ask: the
// live CRI socket, or containerd's configuration under --root or when
// nothing listens), and the credential provider configuration the kubelet
// validates once that runtime answered.
func CRI(ask criruntime.Asker) Runtime { return criRuntime{ask} }

type criRuntime struct{ ask criruntime.Asker }

func (r criRuntime) Answer(_ context.Context, endpoint string) (*criruntime.Answer, error) {
	if r.ask == nil {
		return nil, nil
	}
	return r.ask(endpoint)
}

// CredentialProvider is the first problem the kubelet meets in the
// credential provider configuration (it exits on it), as effective read
// it for the version.
func (criRuntime) CredentialProvider(l *why.Layers, config, binDir string) error {
	var probs []credprovider.Problem
	if l.Result != nil && l.Result.CredentialProvider != nil {
		probs = l.Result.CredentialProvider.Problems
	} else {
		root, err := nodefile.OpenRoot(l.Setup.Root)
		if err != nil {
			return err
		}
		defer root.Close()
		var gates map[string]bool
		if l.Result != nil {
			gates = l.Result.Config.FeatureGates
		}
		if _, probs, err = credprovider.Check(root, config, binDir, l.Version, gates); err != nil {
			return err
		}
	}
	if len(probs) == 0 {
		return nil
	}
	return errors.New(probs[0].String())
}
