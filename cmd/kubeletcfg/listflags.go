package main

import (
	"bytes"
	"encoding/csv"
	"strings"

	"github.com/spf13/pflag"
)

// stringArrayVar and stringSliceVar are pflag's StringArrayVar and
// StringSliceVar with a nil default, whose empty default is not printed as
// CSV when the flag is defined: pflag's does it through a 4 KiB writer, for
// each such flag of every command built at each run.
func stringArrayVar(fs *pflag.FlagSet, p *[]string, name, usage string) {
	*p = nil
	fs.Var((*stringArray)(p), name, usage)
	fs.Lookup(name).DefValue = "" // no default in the help, as pflag's empty list
}

func stringSliceVar(fs *pflag.FlagSet, p *[]string, name, usage string) {
	*p = nil
	fs.Var(&stringSlice{p: p}, name, usage)
	fs.Lookup(name).DefValue = ""
}

// stringArray is pflag's StringArray flag (each value taken whole, the
// first replacing the default, the next appended).
type stringArray []string

func (s *stringArray) Set(v string) error {
	if *s == nil {
		*s = []string{}
	}
	*s = append(*s, v)
	return nil
}

func (s *stringArray) Type() string { return "stringArray" }

// Append, Replace and GetSlice make it a pflag.SliceValue, as pflag's is.
func (s *stringArray) Append(v string) error    { return s.Set(v) }
func (s *stringArray) Replace(v []string) error { *s = append([]string{}, v...); return nil }
func (s *stringArray) GetSlice() []string       { return *s }

func (s *stringArray) String() string { return listString(*s) }

// listString is how pflag prints a list flag's value: as a CSV line in
// brackets.
func listString(l []string) string {
	if len(l) == 0 {
		return "[]"
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(l)
	w.Flush()
	return "[" + strings.TrimSuffix(b.String(), "\n") + "]"
}

// stringSlice is pflag's StringSlice flag: each value read as a CSV line,
// the first replacing the default, the next appended.
type stringSlice struct {
	p       *[]string
	changed bool
}

func (s *stringSlice) Set(v string) error {
	l := []string{}
	if v != "" {
		var err error
		if l, err = csv.NewReader(strings.NewReader(v)).Read(); err != nil {
			return err
		}
	}
	if !s.changed {
		*s.p = l
	} else {
		*s.p = append(*s.p, l...)
	}
	s.changed = true
	return nil
}

func (s *stringSlice) Type() string   { return "stringSlice" }
func (s *stringSlice) String() string { return listString(*s.p) }

// Append, Replace and GetSlice make it a pflag.SliceValue, as pflag's is.
func (s *stringSlice) Append(v string) error { *s.p = append(*s.p, v); return nil }
func (s *stringSlice) Replace(v []string) error {
	*s.p = append([]string{}, v...)
	return nil
}
func (s *stringSlice) GetSlice() []string { return *s.p }
