// Package printer is every command's -o: the formats a command offers are
// declared once, when its flag is made (Flag), and its result is printed
// once (Output.Print): -o json as a versioned shape (jsonshape) whose
// top-level nil lists are [], -o yaml as that shape in YAML where the
// command offers it, anything else by the command's own words.
package printer

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"

	"github.com/kubeletcfg/kubeletcfg/internal/jsonshape"
)

// Format is a value of -o.
type Format string

// The formats.
const (
	Text Format = "text"
	JSON Format = "json"
	YAML Format = "yaml"
)

// Output is a command's -o flag: the formats it offers and the one chosen.
type Output struct {
	chosen  Format
	offered []Format
}

// Flag adds -o/--output to fs, offering formats; the first is the default.
func Flag(fs *pflag.FlagSet, formats ...Format) *Output {
	if len(formats) == 0 {
		panic("printer.Flag: no format")
	}
	o := &Output{chosen: formats[0], offered: formats}
	fs.VarP(o, "output", "o", "output format: "+o.list())
	return o
}

// Of is cmd's -o, or nil when it has none.
func Of(cmd *cobra.Command) *Output {
	if cmd == nil {
		return nil
	}
	f := cmd.Flags().Lookup("output")
	if f == nil {
		return nil
	}
	o, _ := f.Value.(*Output)
	return o
}

func (o *Output) list() string {
	names := make([]string, len(o.offered))
	for i, f := range o.offered {
		names[i] = string(f)
	}
	return strings.Join(names, ", ")
}

// String is the chosen format (pflag.Value).
func (o *Output) String() string { return string(o.chosen) }

// Type names the flag's value in help (pflag.Value).
func (o *Output) Type() string { return "format" }

// Set chooses a format the command offers (pflag.Value).
func (o *Output) Set(s string) error {
	if !slices.Contains(o.offered, Format(s)) {
		return &UnknownFormatError{Format: s, Offered: o.list()}
	}
	o.chosen = Format(s)
	return nil
}

// Format is the chosen format.
func (o *Output) Format() Format { return o.chosen }

// JSON says whether -o json was chosen.
func (o *Output) JSON() bool { return o != nil && o.chosen == JSON }

// Print prints v in the chosen format: JSON as jsonshape, anything else
// (text, or a YAML of the command's own) by calling human.
func (o *Output) Print(w io.Writer, v any, human func() error) error {
	if o.JSON() {
		return WriteJSON(w, v)
	}
	return human()
}

// WriteJSON writes v as a versioned shape (jsonshape), its top-level nil
// lists as [].
func WriteJSON(w io.Writer, v any) error {
	out, err := Shape(v)
	if err != nil {
		return err
	}
	_, err = w.Write(out)
	return err
}

// Shape is what WriteJSON writes of v (for a writer that streams part of
// it: fleet's nodes).
func Shape(v any) ([]byte, error) { return jsonshape.Marshal(emptyLists(v)) }

// WriteYAML writes v's shape (WriteJSON's) as YAML, "version" included.
func WriteYAML(w io.Writer, v any) error {
	out, err := Shape(v)
	if err != nil {
		return err
	}
	if out, err = yaml.JSONToYAML(out); err != nil {
		return err
	}
	_, err = w.Write(out)
	return err
}

// UnknownFormatError is -o given a format the command does not offer.
type UnknownFormatError struct {
	Format  string
	Offered string
}

func (e *UnknownFormatError) Error() string {
	return fmt.Sprintf("-o: unknown format %s (%s)", e.Format, e.Offered)
}

// FlagError is a root command's flag error function (SetFlagErrorFunc):
// an unknown -o format is said as UnknownFormatError says it, without
// pflag's wrapping; any other error is left as it is.
func FlagError(_ *cobra.Command, err error) error {
	var u *UnknownFormatError
	if errors.As(err, &u) {
		return u
	}
	return err
}

// emptyLists is v with its top-level nil slices (a struct's exported
// fields, a map's values) made empty, so that they print as [] and never
// as null. v itself is not changed; a type that marshals itself is left.
func emptyLists(v any) any {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() || marshalsItself(rv.Type()) {
		return v
	}
	switch rv.Kind() {
	case reflect.Pointer:
		if rv.IsNil() || rv.Elem().Kind() != reflect.Struct || marshalsItself(rv.Elem().Type()) {
			return v
		}
		cp := reflect.New(rv.Elem().Type())
		cp.Elem().Set(rv.Elem())
		emptyFields(cp.Elem())
		return cp.Interface()
	case reflect.Struct:
		cp := reflect.New(rv.Type()).Elem()
		cp.Set(rv)
		emptyFields(cp)
		return cp.Interface()
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String || rv.IsNil() {
			return v
		}
		cp := reflect.MakeMapWithSize(rv.Type(), rv.Len())
		for it := rv.MapRange(); it.Next(); {
			val := it.Value()
			if e := val; e.Kind() == reflect.Interface && !e.IsNil() {
				e = e.Elem()
				if isNilList(e) {
					val = reflect.MakeSlice(e.Type(), 0, 0)
				}
			} else if isNilList(e) {
				val = reflect.MakeSlice(e.Type(), 0, 0)
			}
			cp.SetMapIndex(it.Key(), val)
		}
		return cp.Interface()
	}
	return v
}

// emptyFields makes s's exported nil slice fields empty, an embedded
// struct's included (their fields are s's in JSON).
func emptyFields(s reflect.Value) {
	for i := range s.NumField() {
		f, sf := s.Field(i), s.Type().Field(i)
		switch {
		case sf.Anonymous && f.Kind() == reflect.Struct && !marshalsItself(f.Type()):
			emptyFields(f)
		case f.CanSet() && isNilList(f):
			f.Set(reflect.MakeSlice(f.Type(), 0, 0))
		}
	}
}

// isNilList says whether v is a nil slice that JSON prints as a list (not
// []byte, a string in JSON; not a type that marshals itself).
func isNilList(v reflect.Value) bool {
	return v.Kind() == reflect.Slice && v.IsNil() && v.Type().Elem().Kind() != reflect.Uint8 && !marshalsItself(v.Type())
}

var marshaler = reflect.TypeFor[interface{ MarshalJSON() ([]byte, error) }]()

func marshalsItself(t reflect.Type) bool {
	return t.Implements(marshaler) || reflect.PointerTo(t).Implements(marshaler)
}
