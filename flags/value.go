package flags

import (
	"encoding/csv"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/kubelet/config/v1beta1"

	"github.com/kubeletcfg/kubeletcfg/schema"
)

// parsed is a flag value read with the syntax of the kubelet's value type.
// keep reports a value the kubelet's Set ignores (an empty IP).
type parsed struct {
	v    any
	keep bool
}

// parse reads s as the kubelet's value type for f would, with its messages.
func parse(f schema.Flag, s string) (parsed, error) {
	switch f.Type {
	case "bool":
		b, err := strconv.ParseBool(s)
		return parsed{v: b}, err
	case "int32":
		n, err := strconv.ParseInt(s, 0, 32)
		return parsed{v: n}, err
	case "int64", "int":
		n, err := strconv.ParseInt(s, 0, 64)
		return parsed{v: n}, err
	case "float64", "float32":
		n, err := strconv.ParseFloat(s, 64)
		return parsed{v: n}, err
	case "duration":
		d, err := time.ParseDuration(s)
		return parsed{v: d}, err
	case "ip":
		if s == "" {
			return parsed{keep: true}, nil
		}
		if !validIP(s) {
			return parsed{}, fmt.Errorf("%q is not a valid IP address", s)
		}
		return parsed{v: s}, nil
	case "stringSlice":
		if s == "" {
			return parsed{v: []string{}}, nil
		}
		rec, err := csv.NewReader(strings.NewReader(s)).Read()
		return parsed{v: rec}, err
	case "mapStringString":
		sep := "="
		if strings.Contains(f.GoType, "Langle") {
			sep = "<"
		}
		m, err := pairs(s, sep)
		return parsed{v: m}, err
	case "mapStringBool":
		m := map[string]bool{}
		for _, p := range strings.Split(s, ",") {
			if p == "" {
				continue
			}
			k, val, ok := strings.Cut(p, "=")
			if !ok {
				return parsed{}, fmt.Errorf("malformed pair, expect string=bool")
			}
			b, err := strconv.ParseBool(strings.TrimSpace(val))
			if err != nil {
				return parsed{}, fmt.Errorf("invalid value of %s=%s, err: %v", strings.TrimSpace(k), strings.TrimSpace(val), err)
			}
			m[strings.TrimSpace(k)] = b
		}
		return parsed{v: m}, nil
	case "colonSeparatedMultimapStringString":
		m := map[string][]string{}
		for _, p := range strings.Split(s, ",") {
			if p == "" {
				continue
			}
			k, val, ok := strings.Cut(p, ":")
			if !ok {
				return parsed{}, fmt.Errorf("malformed pair, expect string:string")
			}
			k = strings.TrimSpace(k)
			m[k] = append(m[k], strings.TrimSpace(val))
		}
		return parsed{v: m}, nil
	case "reserved-memory":
		if s == "" {
			return parsed{keep: true}, nil
		}
		r, err := reservedMemory(s)
		return parsed{v: r}, err
	case "[]v1.Taint":
		if s == "" {
			return parsed{v: []corev1.Taint(nil)}, nil
		}
		t, err := taints(s)
		return parsed{v: t}, err
	case "Level":
		n, err := strconv.ParseUint(s, 10, 32)
		return parsed{v: n}, err
	case "pattern=N,...":
		vm, err := vmodule(s)
		return parsed{v: vm}, err
	case "quantity":
		q, err := resource.ParseQuantity(s)
		return parsed{v: q}, err
	}
	return parsed{v: s}, nil
}

func checkSyntax(f schema.Flag, s string) error {
	_, err := parse(f, s)
	return err
}

func validIP(s string) bool {
	// The kubelet accepts IPv4 with leading zeros (ParseIPSloppy).
	if _, err := netip.ParseAddr(s); err == nil {
		return true
	}
	parts := strings.Split(s, ".")
	if len(parts) != 4 {
		return false
	}
	for _, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || n > 255 || len(p) > 3 {
			return false
		}
	}
	return true
}

func pairs(s, sep string) (map[string]string, error) {
	m := map[string]string{}
	for _, p := range strings.Split(s, ",") {
		if p == "" {
			continue
		}
		k, v, ok := strings.Cut(p, sep)
		if !ok {
			return nil, fmt.Errorf("malformed pair, expect string%sstring", sep)
		}
		m[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return m, nil
}

func reservedMemory(s string) ([]v1beta1.MemoryReservation, error) {
	var out []v1beta1.MemoryReservation
	for _, res := range strings.Split(s, ";") {
		node, types, ok := strings.Cut(res, ":")
		if !ok || strings.Count(res, ":") != 1 {
			return nil, fmt.Errorf("the reserved memory has incorrect format, expected numaNodeID:type=quantity[,type=quantity...], got %s", res)
		}
		id, err := strconv.Atoi(node)
		if err != nil {
			return nil, fmt.Errorf("failed to convert the NUMA node ID, expected integer, got %s", node)
		}
		r := v1beta1.MemoryReservation{NumaNode: int32(id), Limits: corev1.ResourceList{}}
		for _, t := range strings.Split(types, ",") {
			parts := strings.Split(t, "=")
			if len(parts) != 2 {
				return nil, fmt.Errorf("the reserved limit has incorrect value, expected type=quantity, got %s", t)
			}
			name := corev1.ResourceName(parts[0])
			if name != corev1.ResourceMemory && !strings.HasPrefix(parts[0], corev1.ResourceHugePagesPrefix) {
				return nil, fmt.Errorf("memory type conversion error, unknown type: %q", name)
			}
			q, err := resource.ParseQuantity(parts[1])
			if err != nil {
				return nil, fmt.Errorf("failed to parse the quantity: %s", parts[1])
			}
			r.Limits[name] = q
		}
		out = append(out, r)
	}
	return out, nil
}

func taints(s string) ([]corev1.Taint, error) {
	var out []corev1.Taint
	seen := map[string]bool{}
	for _, spec := range strings.Split(s, ",") {
		if strings.HasSuffix(spec, "-") {
			continue // a removal: meaningless when registering
		}
		t, err := taint(spec)
		if err != nil {
			return nil, err
		}
		id := t.Key + ":" + string(t.Effect)
		if seen[id] {
			return nil, fmt.Errorf("duplicated taints with the same key and effect: %v", t)
		}
		seen[id] = true
		out = append(out, t)
	}
	return out, nil
}

func taint(spec string) (corev1.Taint, error) {
	var t corev1.Taint
	parts := strings.Split(spec, ":")
	switch len(parts) {
	case 2:
		t.Effect = corev1.TaintEffect(parts[1])
		if t.Effect != corev1.TaintEffectNoSchedule && t.Effect != corev1.TaintEffectPreferNoSchedule && t.Effect != corev1.TaintEffectNoExecute {
			return t, fmt.Errorf("invalid taint effect: %v, unsupported taint effect", t.Effect)
		}
		kv := strings.Split(parts[0], "=")
		if len(kv) > 2 {
			return t, fmt.Errorf("invalid taint spec: %v", spec)
		}
		t.Key = kv[0]
		if len(kv) == 2 {
			t.Value = kv[1]
			if errs := validation.IsValidLabelValue(t.Value); len(errs) > 0 {
				return t, fmt.Errorf("invalid taint spec: %v, %s", spec, strings.Join(errs, "; "))
			}
		}
	default:
		return t, fmt.Errorf("unknown taint spec: %v", spec)
	}
	if errs := validation.IsQualifiedName(t.Key); len(errs) > 0 {
		return t, fmt.Errorf("invalid taint spec: %v, %s", spec, strings.Join(errs, "; "))
	}
	return t, nil
}

type vmoduleItem struct {
	pattern string
	level   uint64
}

func vmodule(s string) ([]vmoduleItem, error) {
	var out []vmoduleItem
	if s == "" {
		return out, nil
	}
	for _, p := range strings.Split(s, ",") {
		pat, lvl, ok := strings.Cut(p, "=")
		if !ok {
			return nil, fmt.Errorf("%q does not have the pattern=N format", p)
		}
		n, err := strconv.ParseUint(lvl, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("parsing verbosity in %q: %v", p, err)
		}
		out = append(out, vmoduleItem{pattern: pat, level: n})
	}
	return out, nil
}
