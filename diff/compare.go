package diff

import (
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/kubelet/config/v1beta1"

	"github.com/kubeletcfg/kubeletcfg/audit"
	"github.com/kubeletcfg/kubeletcfg/config"
	"github.com/kubeletcfg/kubeletcfg/effective"
	"github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

// Side is one configuration compared, as a kubelet version runs it.
type Side struct {
	Name   string
	Config *v1beta1.KubeletConfiguration
	// Refused is the kubelet's refusal to start with it, if it would.
	Refused *effective.Refused
}

// FileSide is the config file at path as kubelet v reads it on its own
// (defaults applied). Running, it is what the started kubelet serves.
func FileSide(path string, v *schema.Version, running bool) (Side, error) {
	res, err := effective.Compute(effective.Input{Setup: node.Given(v), ConfigFile: path})
	if err != nil {
		return Side{}, err
	}
	cfg := res.Config
	if running {
		cfg = res.Running()
	}
	return Side{Name: path, Config: cfg, Refused: res.Verdict()}, nil
}

// RunningFileSide is the config file at path as the kubelet of setup s
// (its version; its runtime, when it reads one) serves it once started.
func RunningFileSide(path string, s *node.Setup) (Side, error) {
	res, err := effective.Compute(effective.Input{Setup: s, ConfigFile: path})
	if err != nil {
		return Side{}, err
	}
	return Side{Name: path, Config: res.Running(), Refused: res.Verdict()}, nil
}

// SetupSide is what the kubelet of a node's setup serves once started.
func SetupSide(s *node.Setup) (Side, error) {
	res, err := effective.Compute(effective.Input{Setup: s})
	if err != nil {
		return Side{}, err
	}
	name := "the command line"
	if s.FromNode {
		name = "the node's setup (" + strings.Join(s.Files, ", ") + ")"
	}
	return Side{Name: name, Config: res.Running(), Refused: res.Verdict()}, nil
}

// LiveSide is a running kubelet's /configz, read from, as kubelet v has it.
func LiveSide(raw []byte, from string, v *schema.Version) (Side, error) {
	running := &v1beta1.KubeletConfiguration{}
	if err := json.Unmarshal(raw, running); err != nil {
		return Side{}, fmt.Errorf("%s: %w", from, err)
	}
	running, err := config.Prune(running, v)
	if err != nil {
		return Side{}, err
	}
	return Side{Name: from, Config: running}, nil
}

// Comparison is what changes from Old to New, and the CIS checks that pass
// with Old and fail with New.
type Comparison struct {
	Old, New Side
	Changes  []Change
	Breaks   []audit.Result
	// Restart says what the restart the changes take does to the node's
	// pods, when more than restarting the kubelet: a kubelet that sets
	// containers with a readiness probe not ready until probed again
	// (schema.Version.RestartFlipsReadiness, with New's gates).
	Restart string
}

// Compare compares two sides as kubelet v runs them.
func Compare(old, new Side, v *schema.Version) (*Comparison, error) {
	changes, err := Compute(old.Config, new.Config, v)
	if err != nil {
		return nil, err
	}
	breaks, err := audit.Breaks(v, old.Config, new.Config)
	if err != nil {
		return nil, err
	}
	c := &Comparison{Old: old, New: new, Changes: changes, Breaks: breaks}
	if len(changes) > 0 && new.Config != nil && v.RestartFlipsReadiness(new.Config.FeatureGates) {
		c.Restart = RestartNote(v)
	}
	return c, nil
}

// RestartNote says what a restart of kubelet v does to pods that are Ready.
func RestartNote(v *schema.Version) string {
	return fmt.Sprintf("a restart of kubelet %s can set containers with a readiness or startup probe not ready until probed again (it forgets their probe results): their pods may leave their Services' endpoints for up to a probe period", v.Minor)
}
