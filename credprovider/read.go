// Package credprovider reads the kubelet's credential provider
// configuration (--image-credential-provider-config) as a layer of the
// node's setup: the file, or (from 1.34) every *.json, *.yaml and *.yml
// file of a directory in name order, merged; decoded strictly and validated
// with the rules of the kubelet's version, and checked against the plugin
// directory (--image-credential-provider-bin-dir) as the kubelet checks it
// once its runtime answers — where a problem makes it exit. What differs
// between versions comes from the schema's traits.
package credprovider

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubeletcfg/kubeletcfg/nodefile"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

// File is the kind of file a credential provider configuration is.
var File = nodefile.Kind{What: "credential provider configuration", Limit: 1 << 20}

// maxFiles bounds the files of a configuration directory (kubeletcfg's
// limit).
const maxFiles = 256

const group = "kubelet.config.k8s.io"

// Config is the merged configuration.
type Config struct {
	// Path is --image-credential-provider-config as given.
	Path string `json:"path"`
	// Files are the files read, in the kubelet's order (node paths).
	Files     []string   `json:"files"`
	Providers []Provider `json:"providers"`
}

// Provider is one entry of providers, with where it was written.
type Provider struct {
	Fields
	// File and Line: where the entry starts.
	File string `json:"file"`
	Line int    `json:"line,omitempty"`
	// Index is the entry's index in its file.
	Index int `json:"-"`
}

// Fields are a provider's settings, as written.
type Fields struct {
	Name                 string           `json:"name"`
	MatchImages          []string         `json:"matchImages"`
	DefaultCacheDuration *metav1.Duration `json:"defaultCacheDuration"`
	APIVersion           string           `json:"apiVersion"`
	Args                 []string         `json:"args,omitempty"`
	Env                  []EnvVar         `json:"env,omitempty"`
	TokenAttributes      *TokenAttributes `json:"tokenAttributes,omitempty"`
}

// EnvVar is one variable of a plugin's environment.
type EnvVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// TokenAttributes are a provider's service account token settings.
type TokenAttributes struct {
	ServiceAccountTokenAudience          string   `json:"serviceAccountTokenAudience"`
	CacheType                            string   `json:"cacheType"`
	RequireServiceAccount                *bool    `json:"requireServiceAccount"`
	RequiredServiceAccountAnnotationKeys []string `json:"requiredServiceAccountAnnotationKeys,omitempty"`
	OptionalServiceAccountAnnotationKeys []string `json:"optionalServiceAccountAnnotationKeys,omitempty"`
}

// Problem is something the kubelet refuses (and exits on).
type Problem struct {
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	Field   string `json:"field,omitempty"` // providers[0].name
	Message string `json:"message"`
}

func (p Problem) String() string {
	var b strings.Builder
	if p.File != "" {
		b.WriteString(p.File)
		if p.Line > 0 {
			fmt.Fprintf(&b, ":%d", p.Line)
		}
		b.WriteString(": ")
	}
	if p.Field != "" {
		b.WriteString(p.Field + ": ")
	}
	b.WriteString(p.Message)
	return b.String()
}

// Read reads the configuration at node path p as kubelet v reads it. The
// problems are the kubelet's refusals; the error is kubeletcfg's (a file
// over its limit or not regular, a link that leaves the root, too many
// files).
func Read(root *nodefile.Root, p string, v *schema.Version) (*Config, []Problem, error) {
	c := &Config{Path: p}
	if p == "" {
		return c, []Problem{{Message: "credential provider config path is empty"}}, nil
	}
	if err := leavesRoot(root, p); err != nil {
		return nil, nil, err
	}
	_, fi, err := root.Stat(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return c, []Problem{{File: p, Message: fmt.Sprintf("unable to access path %q: no such file or directory", p)}}, nil
		}
		return nil, nil, err
	}
	files := []string{p}
	if fi.IsDir() {
		if !v.CredentialProviderDir() {
			return c, []Problem{{File: p, Message: fmt.Sprintf("%s is a directory: kubelet %s reads one file (a directory from 1.34)", p, v.Minor)}}, nil
		}
		if files, err = configFiles(root, p); err != nil {
			return nil, nil, err
		}
		if len(files) == 0 {
			return c, []Problem{{File: p, Message: fmt.Sprintf("no configuration files found in directory %q", p)}}, nil
		}
	}
	var probs []Problem
	for _, f := range files {
		data, err := root.ReadFile(f, File)
		if err != nil {
			var nr *nodefile.NotRegularError
			if errors.As(err, &nr) && nr.Mode.IsDir() {
				probs = append(probs, Problem{File: f, Message: fmt.Sprintf("unable to read file %q: is a directory", f)})
				continue
			}
			return nil, nil, err
		}
		c.Files = append(c.Files, f)
		ps, pp := decode(f, data, v)
		c.Providers = append(c.Providers, ps...)
		probs = append(probs, pp...)
	}
	if len(probs) == 0 && v.CredentialProviderDir() {
		// From 1.34 the files are merged and a name given twice is refused
		// while reading.
		seen := map[string]Provider{}
		for _, pr := range c.Providers {
			if first, ok := seen[pr.Name]; ok {
				probs = append(probs, Problem{File: pr.File, Line: pr.Line, Field: fmt.Sprintf("providers[%d].name", pr.Index),
					Message: fmt.Sprintf("duplicate provider name %q found in configuration file(s) (first at %s:%d)", pr.Name, first.File, first.Line)})
				break
			}
			seen[pr.Name] = pr
		}
	}
	return c, probs, nil
}

// configFiles lists a configuration directory as the kubelet does: entries
// that are not directories (a link is not) named *.json, *.yaml or *.yml,
// in name order.
func configFiles(root *nodefile.Root, dir string) ([]string, error) {
	res, err := root.Resolve(dir)
	if err != nil {
		return nil, err
	}
	names, err := root.ReadDir(res)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range names {
		switch path.Ext(n) {
		case ".json", ".yaml", ".yml":
		default:
			continue
		}
		fi, err := root.Lstat(path.Join(res, n))
		if err != nil || fi.IsDir() {
			continue
		}
		full := path.Join(dir, n)
		if err := leavesRoot(root, full); err != nil {
			return nil, err
		}
		out = append(out, full)
		if len(out) > maxFiles {
			return nil, fmt.Errorf("%s: more than %d configuration files (kubeletcfg's limit)", dir, maxFiles)
		}
	}
	sort.Strings(out)
	return out, nil
}

// leavesRoot refuses a path whose last component is a symbolic link that
// climbs out of the root ("../../.."): on the node it would name another
// file than in the image. A link to an absolute path is the image's own
// path and is followed inside the root.
func leavesRoot(root *nodefile.Root, p string) error {
	if root.Live {
		return nil
	}
	parent, err := root.Resolve(path.Dir(path.Clean("/" + p)))
	if err != nil {
		return nil // the reader names what is missing
	}
	full := path.Join(parent, path.Base(p))
	fi, err := root.Lstat(full)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return nil
	}
	target, err := root.Readlink(full)
	if err != nil {
		return err
	}
	if path.IsAbs(target) {
		return nil
	}
	depth := strings.Count(strings.Trim(parent, "/"), "/") + 1
	if parent == "/" {
		depth = 0
	}
	for _, c := range strings.Split(target, "/") {
		switch c {
		case "..":
			if depth--; depth < 0 {
				return fmt.Errorf("%s is a symbolic link to %s, which leaves --root: refused", p, target)
			}
		case "", ".":
		default:
			depth++
		}
	}
	return nil
}

// decode reads one file as the kubelet's strict decoder does: YAML or JSON,
// duplicate and unknown fields refused (field names match case), the
// apiVersion and kind of a CredentialProviderConfig the version knows.
func decode(file string, data []byte, v *schema.Version) ([]Provider, []Problem) {
	bad := func(format string, args ...any) []Problem {
		return []Problem{{File: file, Message: fmt.Sprintf(format, args...)}}
	}
	strict := v.CredentialProviderRule("strict-decoding")
	toJSON := yaml.YAMLToJSON
	if strict {
		toJSON = yaml.YAMLToJSONStrict
	}
	js, err := toJSON(data)
	if err != nil {
		return nil, bad("error decoding config %q: %v", file, err)
	}
	var tree any
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	if err := dec.Decode(&tree); err != nil {
		return nil, bad("error decoding config %q: %v", file, err)
	}
	top, ok := tree.(map[string]any)
	if !ok {
		return nil, bad("error decoding config %q: not a YAML or JSON object", file)
	}
	apiVersion, _ := top["apiVersion"].(string)
	kind, _ := top["kind"].(string)
	switch {
	case kind == "":
		return nil, bad("error decoding config %q: Object 'Kind' is missing", file)
	case apiVersion == "":
		return nil, bad("error decoding config %q: Object 'apiVersion' is missing", file)
	}
	allowed, known := v.CredentialProviderFields(apiVersion)
	switch {
	case !strings.HasPrefix(apiVersion, group+"/"):
		return nil, bad("error decoding config %q: no kind %q is registered for version %q", file, kind, apiVersion)
	case kind != "CredentialProviderConfig" && known && kind == "KubeletConfiguration":
		return nil, bad("error decoding config %q: failed to decode %q (wrong Kind)", file, kind)
	case kind != "CredentialProviderConfig" || !known:
		return nil, bad("error decoding config %q: no kind %q is registered for version %q (kubelet %s reads %s)", file, kind, apiVersion, v.Minor, strings.Join(v.CredentialProviderAPIVersions(), ", "))
	}
	fields := map[string]bool{"apiVersion": true, "kind": true}
	for _, f := range allowed {
		fields[f] = true
	}
	lines := positions(data)
	var probs []Problem
	unknown(top, "", "", fields, func(p, shown string) {
		if strict {
			probs = append(probs, Problem{File: file, Line: lines[p], Field: shown, Message: fmt.Sprintf("strict decoding error: unknown field %q", shown)})
		}
	})
	if !strict {
		// Before 1.32 the kubelet drops what its types lack (field names
		// match case): so does this decoding, before Go's, which folds case.
		prune(top, "", fields)
		if js, err = json.Marshal(top); err != nil {
			return nil, bad("error decoding config %q: %v", file, err)
		}
	}
	var cfg struct {
		Providers []Fields `json:"providers"`
	}
	if err := json.Unmarshal(js, &cfg); err != nil {
		probs = append(probs, Problem{File: file, Message: fmt.Sprintf("error decoding config %q: %v", file, err)})
	}
	if len(probs) > 0 {
		return nil, probs
	}
	out := make([]Provider, len(cfg.Providers))
	for i, f := range cfg.Providers {
		out[i] = Provider{Fields: f, File: file, Index: i, Line: lines[fmt.Sprintf("providers[%d]", i)]}
	}
	return out, nil
}

// unknown walks a decoded document and reports each key the type lacks,
// by its path with indexes (providers[0].foo).
func unknown(x any, schemaPath, shown string, fields map[string]bool, report func(string, string)) {
	switch t := x.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			sp, sh := join(schemaPath, k), join(shown, k)
			if !fields[sp] {
				report(sh, sh)
				continue
			}
			unknown(t[k], sp, sh, fields, report)
		}
	case []any:
		for i, e := range t {
			unknown(e, schemaPath+"[]", fmt.Sprintf("%s[%d]", shown, i), fields, report)
		}
	}
}

// prune removes from a decoded document the keys the type lacks.
func prune(x any, schemaPath string, fields map[string]bool) {
	switch t := x.(type) {
	case map[string]any:
		for k, val := range t {
			sp := join(schemaPath, k)
			if !fields[sp] {
				delete(t, k)
				continue
			}
			prune(val, sp, fields)
		}
	case []any:
		for _, e := range t {
			prune(e, schemaPath+"[]", fields)
		}
	}
}

func join(prefix, k string) string {
	if prefix == "" {
		return k
	}
	return prefix + "." + k
}

// positions maps paths with indexes (providers[0], providers[0].name) to
// their lines in a YAML (or JSON) text.
func positions(data []byte) map[string]int {
	out := map[string]int{}
	var doc yamlv3.Node
	if yamlv3.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return out
	}
	var walk func(n *yamlv3.Node, p string)
	walk = func(n *yamlv3.Node, p string) {
		switch n.Kind {
		case yamlv3.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := join(p, n.Content[i].Value)
				if _, ok := out[k]; !ok {
					out[k] = n.Content[i].Line
				}
				walk(n.Content[i+1], k)
			}
		case yamlv3.SequenceNode:
			for i, c := range n.Content {
				k := fmt.Sprintf("%s[%d]", p, i)
				out[k] = c.Line
				walk(c, k)
			}
		}
	}
	walk(doc.Content[0], "")
	return out
}
