package credprovider

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kubeletcfg/kubeletcfg/nodefile"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

// The provider (plugin) apiVersions the kubelet speaks to its plugins.
var pluginAPIVersions = []string{
	"credentialprovider.kubelet.k8s.io/v1",
	"credentialprovider.kubelet.k8s.io/v1alpha1",
	"credentialprovider.kubelet.k8s.io/v1beta1",
}

const tokenGate = "KubeletServiceAccountTokenForCredentialProviders"

// Validate checks a read configuration with the rules of kubelet v, with
// the feature gates the kubelet runs with (gates as set; defaults from the
// schema).
func Validate(c *Config, v *schema.Version, gates map[string]bool) []Problem {
	var out []Problem
	if len(c.Providers) == 0 {
		p := Problem{Field: "providers", Message: "Required value: at least 1 item in plugins is required"}
		if len(c.Files) > 0 {
			p.File = c.Files[0]
		}
		out = append(out, p)
	}
	add := func(pr Provider, field, msg string) {
		out = append(out, Problem{File: pr.File, Line: pr.Line, Field: fmt.Sprintf("providers[%d].%s", pr.Index, field), Message: msg})
	}
	seen := map[string]bool{}
	for _, pr := range c.Providers {
		if strings.Contains(pr.Name, "/") {
			add(pr, "name", fmt.Sprintf("Invalid value: %q: provider name cannot contain '/'", pr.Name))
		}
		if strings.Contains(pr.Name, " ") {
			add(pr, "name", fmt.Sprintf("Invalid value: %q: provider name cannot contain spaces", pr.Name))
		}
		if pr.Name == "." || pr.Name == ".." {
			add(pr, "name", fmt.Sprintf("Invalid value: %q: provider name cannot be '%s'", pr.Name, pr.Name))
		}
		if seen[pr.Name] {
			if v.CredentialProviderRule("duplicate-name") {
				add(pr, "name", fmt.Sprintf("Duplicate value: %q", pr.Name))
			} else {
				add(pr, "name", fmt.Sprintf("kubelet %s does not refuse the name twice but dies registering it: Credential provider %q was registered twice", v.Minor, pr.Name))
			}
		}
		seen[pr.Name] = true
		switch {
		case pr.APIVersion == "":
			add(pr, "apiVersion", "Required value")
		case !slices.Contains(pluginAPIVersions, pr.APIVersion):
			add(pr, "apiVersion", fmt.Sprintf("Unsupported value: %q: supported values: %q", pr.APIVersion, strings.Join(pluginAPIVersions, `", "`)))
		}
		if len(pr.MatchImages) == 0 {
			add(pr, "matchImages", "Required value: at least 1 item in matchImages is required")
		}
		for _, m := range pr.MatchImages {
			if _, err := url.Parse("https://" + m); err != nil {
				add(pr, "matchImages", fmt.Sprintf("Invalid value: %q: match image is invalid: %v", m, err))
			}
		}
		switch {
		case pr.DefaultCacheDuration == nil:
			add(pr, "defaultCacheDuration", "Required value")
		case pr.DefaultCacheDuration.Duration < 0:
			add(pr, "defaultCacheDuration", "Invalid value: must be greater than or equal to 0")
		}
		if pr.TokenAttributes != nil && v.CredentialProviderRule("token-attributes") {
			out = append(out, validateToken(pr, v, gates)...)
		}
	}
	return out
}

func validateToken(pr Provider, v *schema.Version, gates map[string]bool) []Problem {
	var out []Problem
	t := pr.TokenAttributes
	add := func(field, msg string) {
		out = append(out, Problem{File: pr.File, Line: pr.Line, Field: fmt.Sprintf("providers[%d].tokenAttributes%s", pr.Index, field), Message: msg})
	}
	if !v.GateEnabled(tokenGate, gates) {
		add("", "Forbidden: tokenAttributes is not supported when "+tokenGate+" feature gate is disabled")
	}
	if t.ServiceAccountTokenAudience == "" {
		add(".serviceAccountTokenAudience", "Required value")
	}
	if t.RequireServiceAccount == nil {
		add(".requireServiceAccount", "Required value")
	}
	if pr.APIVersion != pluginAPIVersions[0] {
		add("", "Forbidden: tokenAttributes is only supported for "+pluginAPIVersions[0]+" API version")
	}
	if t.RequireServiceAccount != nil && !*t.RequireServiceAccount && len(t.RequiredServiceAccountAnnotationKeys) > 0 {
		add(".requiredServiceAccountAnnotationKeys", "Forbidden: requireServiceAccount cannot be false when requiredServiceAccountAnnotationKeys is set")
	}
	for _, list := range []struct {
		field string
		keys  []string
	}{{".requiredServiceAccountAnnotationKeys", t.RequiredServiceAccountAnnotationKeys}, {".optionalServiceAccountAnnotationKeys", t.OptionalServiceAccountAnnotationKeys}} {
		seen := map[string]bool{}
		for _, k := range list.keys {
			for _, msg := range validation.IsQualifiedName(strings.ToLower(k)) {
				add(list.field, fmt.Sprintf("Invalid value: %q: %s", k, msg))
			}
			if seen[k] {
				add(list.field, fmt.Sprintf("Duplicate value: %q", k))
			}
			seen[k] = true
		}
	}
	var both []string
	for _, k := range t.RequiredServiceAccountAnnotationKeys {
		if slices.Contains(t.OptionalServiceAccountAnnotationKeys, k) && !slices.Contains(both, k) {
			both = append(both, k)
		}
	}
	if len(both) > 0 {
		slices.Sort(both)
		add("", fmt.Sprintf("Invalid value: %q: annotation keys cannot be both required and optional", both))
	}
	if v.CredentialProviderRule("token-cache-type") {
		switch t.CacheType {
		case "":
			add(".cacheType", "Required value: cacheType is required to be set when tokenAttributes is specified. Supported values are: ServiceAccount, Token")
		case "ServiceAccount", "Token":
		default:
			add(".cacheType", fmt.Sprintf("Unsupported value: %q: supported values: \"ServiceAccount\", \"Token\"", t.CacheType))
		}
	}
	return out
}

// Check is what kubelet v does with --image-credential-provider-config
// (configPath) and --image-credential-provider-bin-dir (binDir) once its
// runtime answers, where each problem makes it exit: nothing when both are
// empty; else the plugin directory must be there, the configuration read
// and valid, and every provider's plugin an executable file in the
// directory. The problems come in the kubelet's order (it stops at the
// first); the error is kubeletcfg's (see Read).
func Check(root *nodefile.Root, configPath, binDir string, v *schema.Version, gates map[string]bool) (*Config, []Problem, error) {
	if configPath == "" && binDir == "" {
		return nil, nil, nil
	}
	var out []Problem
	if binDir == "" {
		out = append(out, Problem{Message: "plugin binary directory  did not exist (--image-credential-provider-bin-dir is empty)"})
	} else if _, _, err := root.Stat(binDir); err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, nil, err
		}
		out = append(out, Problem{File: binDir, Message: fmt.Sprintf("plugin binary directory %s did not exist", binDir)})
	}
	c, probs, err := Read(root, configPath, v)
	if err != nil {
		return nil, nil, err
	}
	out = append(out, probs...)
	if len(probs) > 0 {
		return c, out, nil
	}
	out = append(out, Validate(c, v, gates)...)
	if binDir == "" || len(out) > 0 {
		return c, out, nil
	}
	for _, pr := range c.Providers {
		bin := path.Join(binDir, pr.Name)
		_, fi, err := root.Stat(bin)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			out = append(out, Problem{File: pr.File, Line: pr.Line, Field: fmt.Sprintf("providers[%d].name", pr.Index), Message: fmt.Sprintf("plugin binary executable %s did not exist", bin)})
		case err != nil:
			return nil, nil, err
		case !v.CredentialProviderRule("executable-plugin"):
			// Before 1.30 the plugin need only be there.
		case fi.IsDir():
			out = append(out, Problem{File: pr.File, Line: pr.Line, Field: fmt.Sprintf("providers[%d].name", pr.Index), Message: fmt.Sprintf("error inspecting binary executable %s: is a directory", bin)})
		case fi.Mode()&0o111 == 0:
			out = append(out, Problem{File: pr.File, Line: pr.Line, Field: fmt.Sprintf("providers[%d].name", pr.Index), Message: fmt.Sprintf("error inspecting binary executable %s: permission denied", bin)})
		}
	}
	return c, out, nil
}
