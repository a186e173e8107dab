package audit

import (
	"encoding/json"
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/kubeletcfg/kubeletcfg/config"
	"github.com/kubeletcfg/kubeletcfg/filecheck"
	"github.com/kubeletcfg/kubeletcfg/nodefile"
)

// Fixes lists every fix of the results that did not pass, in report order.
func (r *Report) Fixes() []Fix {
	var out []Fix
	for _, res := range r.Results {
		if res.Status != Pass {
			out = append(out, res.Fixes...)
		}
	}
	return out
}

// ApplyFixes sets each fix's field in a configuration held as a JSON map
// (nested by the dots of the field path); a map value is merged key by key.
func ApplyFixes(cfg map[string]any, fixes []Fix) {
	for _, f := range fixes {
		parts := strings.Split(f.Field, ".")
		m := cfg
		for _, p := range parts[:len(parts)-1] {
			next, ok := m[p].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[p] = next
			}
			m = next
		}
		last := parts[len(parts)-1]
		val := jsonValue(f.Value)
		if add, ok := val.(map[string]any); ok {
			if have, ok := m[last].(map[string]any); ok {
				for k, v := range add {
					have[k] = v
				}
				continue
			}
		}
		m[last] = val
	}
}

// jsonValue turns a Go value into what encoding/json decodes it to.
func jsonValue(x any) any {
	b, err := json.Marshal(x)
	if err != nil {
		return x
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return x
	}
	return out
}

// FixedConfig is the node's --config file with every fix applied, checked
// for the kubelet version, with notes on the fixes that only take effect once
// a flag or a drop-in that overrides the file is changed too.
func (r *Report) FixedConfig() ([]byte, []string, error) {
	if r.ConfigFile == "" {
		return nil, nil, fmt.Errorf("the kubelet runs without a --config file: kubeletcfg migrate --secure writes one")
	}
	p := nodePathIn(r.root, r.ConfigFile)
	data, err := nodefile.ReadFileIn(r.root, p, nodefile.Config)
	if err != nil {
		return nil, nil, err
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", p, err)
	}
	cfg := map[string]any{}
	if err := json.Unmarshal(js, &cfg); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", p, err)
	}
	fixes := r.Fixes()
	ApplyFixes(cfg, fixes)
	cfg["apiVersion"], cfg["kind"] = config.APIVersion, config.Kind
	out, err := yaml.Marshal(cfg)
	if err != nil {
		return nil, nil, err
	}
	if v := filecheck.Bytes(out, filecheck.Options{File: p + " (fixed)", Version: r.version, AllowUnknownFields: true}); !v.Valid {
		var msgs []string
		for _, e := range v.Errors {
			msgs = append(msgs, e.String())
		}
		return nil, nil, fmt.Errorf("the fixed config is not valid for kubelet %s: %s", r.version.Minor, strings.Join(msgs, "; "))
	}
	var notes []string
	for _, f := range fixes {
		switch o := r.origins[f.Field]; o.Kind {
		case "flag":
			notes = append(notes, fmt.Sprintf("%s: flag --%s overrides the file; remove it (%s)", f.Field, flagFor(r.version, f.Field), o))
		case "dropin":
			notes = append(notes, fmt.Sprintf("%s: the drop-in %s overrides the file; change it there", f.Field, o))
		}
	}
	return out, notes, nil
}
