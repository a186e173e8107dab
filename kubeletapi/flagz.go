package kubeletapi

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/kubeletcfg/kubeletcfg/schema"
)

// Flags is the kubelet's command line as /flagz serves it: every flag of its
// initial flag set with its value. A config-backed flag shows the command
// line over the flags-only baseline, never the config file's value; a flag
// left at (or given) its default cannot be told from one not given; a
// classified flag reads CLASSIFIED. So it tells the command line — the
// flags away from their defaults, the --config and --config-dir paths — and
// never the effective configuration (that is /configz).
type Flags struct {
	Values map[string]string `json:"values"`
	// Form is how it was served: "config.k8s.io/v1beta1 Flagz" or
	// "text/plain".
	Form string `json:"form"`
}

// Classified is the value /flagz shows for a flag it hides.
const Classified = "CLASSIFIED"

// Flag is a flag the kubelet runs with away from its default.
type Flag struct {
	Name    string `json:"name"`
	Value   string `json:"value"`
	Default string `json:"default"`
	// Unknown says kubeletcfg's schema of the kubelet's version has no such
	// flag.
	Unknown bool `json:"unknown,omitempty"`
}

// Flagz reads the kubelet's /flagz (served from 1.33 under ComponentFlagz:
// beta and on by default from 1.36), the structured Flagz where served.
// An answer that claims another node (--hostname-override) is refused.
func (c *Client) Flagz(ctx context.Context, n Node) (*Flags, error) {
	a, err := c.structured(ctx, n, "/flagz", flagzAccept, maxFlagz)
	if err != nil {
		return nil, err
	}
	var f *Flags
	if isJSON(a.contentType) {
		f, err = parseFlagzJSON(a.body)
	} else {
		f, err = parseFlagzText(a.body)
	}
	if err != nil {
		return nil, c.bad(n, "/flagz", a, "%v", err)
	}
	if h := strings.ToLower(strings.TrimSpace(f.Values["hostname-override"])); n.Name != "" && h != "" && h != Classified && h != n.Name {
		return nil, &Error{Node: n.Name, Path: "/flagz", Via: c.via, URL: a.url, Reason: OtherNode, Status: 200,
			Message: fmt.Sprintf("the kubelet runs with --hostname-override=%s: it is node %q, not %q", snippet([]byte(h)), snippet([]byte(h)), n.Name)}
	}
	return f, nil
}

var flagName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

func checkFlags(values map[string]string) error {
	if len(values) == 0 {
		return fmt.Errorf("no flags in it")
	}
	if len(values) > maxFlags {
		return fmt.Errorf("%d flags, more than a kubelet has (%d at most)", len(values), maxFlags)
	}
	for name := range values {
		if !flagName.MatchString(name) {
			return fmt.Errorf("%q is not a flag name", snippet([]byte(name)))
		}
	}
	return nil
}

func parseFlagzJSON(body []byte) (*Flags, error) {
	var obj struct {
		Kind       string `json:"kind"`
		APIVersion string `json:"apiVersion"`
		Metadata   struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Flags map[string]string `json:"flags"`
	}
	if err := json.Unmarshal(body, &obj); err != nil {
		return nil, fmt.Errorf("not a Flagz object: %v", err)
	}
	if obj.Kind != "Flagz" || !strings.HasPrefix(obj.APIVersion, "config.k8s.io/") {
		return nil, fmt.Errorf("not a Flagz object: kind %q, apiVersion %q", snippet([]byte(obj.Kind)), snippet([]byte(obj.APIVersion)))
	}
	if obj.Metadata.Name != "kubelet" {
		return nil, fmt.Errorf("the flags of %q, not of the kubelet", snippet([]byte(obj.Metadata.Name)))
	}
	if err := checkFlags(obj.Flags); err != nil {
		return nil, err
	}
	return &Flags{Values: obj.Flags, Form: obj.APIVersion + " Flagz"}, nil
}

// separators are those the text form puts between a flag's name and its
// value (one per kubelet process, picked at random), longest first where
// one starts another.
var separators = []string{": ", ":", "=", " "}

// parseFlagzText reads the text form: "kubelet flagz", a warning, then one
// "name<sep>value" line per flag.
func parseFlagzText(body []byte) (*Flags, error) {
	lines := strings.Split(strings.TrimRight(string(body), "\n"), "\n")
	i := 0
	for i < len(lines) && strings.TrimSpace(lines[i]) == "" {
		i++
	}
	if i == len(lines) || strings.TrimSpace(lines[i]) != "kubelet flagz" {
		return nil, fmt.Errorf("not the kubelet's flagz: it does not start with \"kubelet flagz\": %s", snippet(body))
	}
	i++
	if i < len(lines) && strings.HasPrefix(lines[i], "Warning:") {
		i++
	}
	lines = lines[i:]
	if len(lines) > maxFlags {
		return nil, fmt.Errorf("%d lines, more than a kubelet has flags (%d at most)", len(lines), maxFlags)
	}
	for _, sep := range separators {
		values := map[string]string{}
		ok := true
		for _, l := range lines {
			name, value, found := strings.Cut(l, sep)
			if !found || !flagName.MatchString(name) {
				ok = false
				break
			}
			values[name] = value
		}
		if ok {
			if err := checkFlags(values); err != nil {
				return nil, err
			}
			return &Flags{Values: values, Form: "text/plain"}, nil
		}
	}
	for n, l := range lines {
		named := false
		for _, sep := range separators {
			if name, _, found := strings.Cut(l, sep); found && flagName.MatchString(name) {
				named = true
			}
		}
		if !named {
			return nil, fmt.Errorf("line %d of the flags: %q is not a name and a value", n+1, snippet([]byte(l)))
		}
	}
	return nil, fmt.Errorf("the flags' lines do not share one separator between name and value")
}

// NonDefault lists, by name, the flags whose value differs from kubelet v's
// default: the command line as far as /flagz tells it. A classified flag is
// not listed (see ClassifiedFlags).
func (f *Flags) NonDefault(v *schema.Version) []Flag {
	var out []Flag
	for name, value := range f.Values {
		if value == Classified {
			continue
		}
		def, ok := v.Flag(name)
		if ok && def.Default == value {
			continue
		}
		out = append(out, Flag{Name: name, Value: value, Default: def.Default, Unknown: !ok})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// ClassifiedFlags lists the flags whose values the kubelet hides.
func (f *Flags) ClassifiedFlags() []string {
	var out []string
	for name, value := range f.Values {
		if value == Classified {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// ConfigPaths are the --config and --config-dir the kubelet runs with ("" for
// none).
func (f *Flags) ConfigPaths() (config, configDir string) {
	return f.Values["config"], f.Values["config-dir"]
}
