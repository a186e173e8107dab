// Package explain describes KubeletConfiguration fields for a kubelet version.
package explain

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kubeletcfg/kubeletcfg/schema"
)

// Field describes the field at a JSON path in version v.
func Field(path string, v *schema.Version) (string, error) {
	f, ok := v.Field(path)
	if !ok {
		return "", unknown(path, v)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "FIELD:    %s\n", f.Path)
	fmt.Fprintf(&b, "TYPE:     %s\n", typeText(f))
	fmt.Fprintf(&b, "DEFAULT:  %s (kubelet %s, --config file)\n", defaultText(v.Defaults(), f.Path), v.Minor)
	if base := defaultText(v.FlagsBaseline(), f.Path); base != defaultText(v.Defaults(), f.Path) {
		fmt.Fprintf(&b, "          %s without --config (flags-only baseline)\n", base)
	}
	fmt.Fprintf(&b, "SINCE:    kubelet %s", schema.FieldAddedIn(f.Path))
	if schema.FieldAddedIn(f.Path) == schema.Supported()[0] {
		b.WriteString(" or earlier")
	}
	b.WriteString("\n")
	if fl, ok := v.FlagForField(f.Path); ok {
		state := ""
		if fl.Deprecated != "" {
			state = " (deprecated: " + fl.Deprecated + ")"
		}
		fmt.Fprintf(&b, "FLAG:     --%s%s\n", fl.Name, state)
	} else if fl, minor := flagInOtherVersion(f.Path); fl != "" {
		fmt.Fprintf(&b, "FLAG:     --%s (until kubelet %s)\n", fl, minor)
	}
	if doc := v.Doc(f.Path); doc != "" {
		fmt.Fprintf(&b, "\n%s\n", wrap(doc, 80))
	}
	return b.String(), nil
}

func unknown(path string, v *schema.Version) error {
	if added := schema.FieldAddedIn(path); added != "" {
		return fmt.Errorf("kubelet %s has no field %q (kubelets from %s on have it)", v.Minor, path, added)
	}
	var best string
	for _, f := range v.Fields() {
		if strings.EqualFold(f.Path, path) {
			best = f.Path
			break
		}
		if strings.HasSuffix(strings.ToLower(f.Path), "."+strings.ToLower(path)) && best == "" {
			best = f.Path
		}
	}
	if best != "" {
		return fmt.Errorf("kubelet %s has no field %q (did you mean %q?)", v.Minor, path, best)
	}
	return fmt.Errorf("kubelet %s has no field %q", v.Minor, path)
}

func typeText(f schema.Field) string {
	t := f.Type
	if f.Pointer {
		t += " (optional: unset and zero differ)"
	}
	return t
}

// defaultText finds the value at path in a JSON configuration.
func defaultText(raw json.RawMessage, path string) string {
	var cur any
	if err := json.Unmarshal(raw, &cur); err != nil {
		return "?"
	}
	for _, part := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok || strings.HasSuffix(part, "[]") {
			return "none"
		}
		if cur, ok = m[part]; !ok {
			return "none"
		}
	}
	out, _ := json.Marshal(cur)
	return string(out)
}

// flagInOtherVersion finds a flag that set the field in some supported version.
func flagInOtherVersion(path string) (string, string) {
	vs := schema.Versions()
	for i := len(vs) - 1; i >= 0; i-- {
		v := vs[i]
		if fl, ok := v.FlagForField(path); ok {
			return fl.Name, v.Minor
		}
	}
	return "", ""
}

func wrap(s string, width int) string {
	var b strings.Builder
	n := 0
	for _, w := range strings.Fields(s) {
		if n > 0 && n+1+len(w) > width {
			b.WriteString("\n")
			n = 0
		} else if n > 0 {
			b.WriteString(" ")
			n++
		}
		b.WriteString(w)
		n += len(w)
	}
	return b.String()
}
