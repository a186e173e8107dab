package flags

import (
	"fmt"
	"reflect"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/kubelet/config/v1beta1"

	"github.com/kubeletcfg/kubeletcfg/config"
)

// Apply sets the config fields of the command line's flags onto cfg, in order,
// as the kubelet does when it re-parses its flags over the loaded
// configuration: the first occurrence of a map or list flag replaces the whole
// value, later ones add to it; --feature-gates keeps the gates of cfg that the
// flags do not name. It returns the JSON paths it set, in order.
func (c *CommandLine) Apply(cfg *v1beta1.KubeletConfiguration) ([]string, error) {
	originalGates := cfg.FeatureGates
	started := map[string]bool{}
	var set []string
	for _, o := range c.Occurrences {
		if o.Flag.Field == "" {
			continue
		}
		p, err := parse(o.Flag, o.Value)
		if err != nil {
			return set, fmt.Errorf("--%s=%s: %w", o.Flag.Name, o.Value, err)
		}
		if p.keep {
			continue
		}
		field, ok := config.SettableField(cfg, o.Flag.Field)
		if !ok {
			return set, fmt.Errorf("--%s: kubeletcfg knows no field %q", o.Flag.Name, o.Flag.Field)
		}
		if err := assign(field, p.v, !started[o.Flag.Name]); err != nil {
			return set, fmt.Errorf("--%s=%s: %w", o.Flag.Name, o.Value, err)
		}
		started[o.Flag.Name] = true
		set = append(set, o.Flag.Field)
	}
	if started["feature-gates"] {
		for k, v := range originalGates {
			if _, ok := cfg.FeatureGates[k]; !ok {
				cfg.FeatureGates[k] = v
			}
		}
	}
	return set, nil
}

var (
	durationType    = reflect.TypeOf(metav1.Duration{})
	timeOrMetaType  = reflect.TypeOf(logsapi.TimeOrMetaDuration{})
	quantityValType = reflect.TypeOf(resource.QuantityValue{})
)

// assign stores a parsed value into a field of the v1beta1 type. first
// replaces maps and lists; otherwise they are added to.
func assign(f reflect.Value, val any, first bool) error {
	if f.Kind() == reflect.Pointer {
		if f.IsNil() {
			f.Set(reflect.New(f.Type().Elem()))
		}
		f = f.Elem()
	}
	switch x := val.(type) {
	case bool:
		f.SetBool(x)
	case int64:
		if f.CanInt() {
			f.SetInt(x)
		} else {
			f.SetUint(uint64(x))
		}
	case uint64:
		f.SetUint(x)
	case float64:
		f.SetFloat(x)
	case string:
		f.SetString(x)
	case time.Duration:
		switch f.Type() {
		case durationType:
			f.Set(reflect.ValueOf(metav1.Duration{Duration: x}))
		case timeOrMetaType:
			// The kubelet's flag writes the inner duration only: how the
			// value is printed (string or number) stays as it was.
			f.FieldByName("Duration").Set(reflect.ValueOf(metav1.Duration{Duration: x}))
		default:
			f.SetInt(int64(x))
		}
	case []string:
		if first || f.IsNil() {
			f.Set(reflect.MakeSlice(f.Type(), 0, len(x)))
		}
		f.Set(reflect.AppendSlice(f, reflect.ValueOf(x)))
	case map[string]string:
		setMap(f, reflect.ValueOf(x), first)
	case map[string]bool:
		setMap(f, reflect.ValueOf(x), first)
	case map[string][]string:
		if first || f.IsNil() {
			f.Set(reflect.MakeMap(f.Type()))
		}
		for k, vs := range x {
			cur, _ := f.Interface().(map[string][]string)
			cur[k] = append(cur[k], vs...)
		}
	case []v1beta1.MemoryReservation:
		if first || f.IsNil() {
			f.Set(reflect.ValueOf([]v1beta1.MemoryReservation{}))
		}
		f.Set(reflect.AppendSlice(f, reflect.ValueOf(x)))
	case []corev1.Taint:
		f.Set(reflect.ValueOf(x))
	case []vmoduleItem:
		items := make(logsapi.VModuleConfiguration, 0, len(x))
		for _, it := range x {
			items = append(items, logsapi.VModuleItem{FilePattern: it.pattern, Verbosity: logsapi.VerbosityLevel(it.level)})
		}
		f.Set(reflect.ValueOf(items))
	case resource.Quantity:
		if f.Type() == quantityValType {
			f.Set(reflect.ValueOf(resource.QuantityValue{Quantity: x}))
		} else {
			f.Set(reflect.ValueOf(x))
		}
	default:
		return fmt.Errorf("kubeletcfg cannot set a %T into %s", val, f.Type())
	}
	return nil
}

func setMap(f, m reflect.Value, first bool) {
	if first || f.IsNil() {
		f.Set(reflect.MakeMap(f.Type()))
	}
	for _, k := range m.MapKeys() {
		f.SetMapIndex(k.Convert(f.Type().Key()), m.MapIndex(k).Convert(f.Type().Elem()))
	}
}
