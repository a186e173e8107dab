// Package filecheck checks a configuration file (and its drop-ins) as a
// kubelet version reads it, for kubeletcfg validate: each file decoded
// strictly, then the kubelet's verdict on the whole (effective's
// Result.Verdict), every error and warning placed on its file:line:column.
package filecheck

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/kubeletcfg/kubeletcfg/config"
	"github.com/kubeletcfg/kubeletcfg/effective"
	"github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/nodefile"
	"github.com/kubeletcfg/kubeletcfg/schema"
	"github.com/kubeletcfg/kubeletcfg/validate"
	"github.com/kubeletcfg/kubeletcfg/warning"
)

// Finding is one error.
type Finding struct {
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
	Code    string `json:"code,omitempty"` // what kind of error, as the warning package's codes say it
}

func (f Finding) String() string {
	return config.Problem{File: f.File, Line: f.Line, Column: f.Column, Field: f.Field, Message: f.Message}.Error()
}

// Report is what the check found in one configuration.
type Report struct {
	Valid          bool              `json:"valid"`
	KubeletVersion string            `json:"kubeletVersion"`
	Errors         []Finding         `json:"errors"`
	Warnings       []warning.Warning `json:"warnings"`
}

// Options select what to check.
type Options struct {
	File string
	// ConfigDir is a --config-dir whose drop-ins are merged over File, as
	// the kubelet version merges them, before validation.
	ConfigDir          string
	Version            *schema.Version
	AllowUnknownFields bool
}

// File reads and checks a --config file. The error is for I/O only (and an
// undecodable file, reported as an invalid Report); everything the kubelet
// would object to is in the Report.
func File(opts Options) (*Report, error) {
	data, err := nodefile.ReadFile(opts.File, nodefile.Config)
	if err != nil {
		return nil, err
	}
	if opts.ConfigDir != "" {
		// A drop-in directory that cannot be read is an I/O error, not a
		// finding about the configuration.
		files, err := effective.List(opts.ConfigDir)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			if _, err := nodefile.ReadFile(f, nodefile.Config); err != nil {
				return nil, err
			}
		}
	}
	return Bytes(data, opts), nil
}

// Bytes checks a configuration held in memory; opts.File names it.
func Bytes(data []byte, opts Options) *Report {
	v := opts.Version
	res := &Report{KubeletVersion: v.Minor, Errors: []Finding{}, Warnings: []warning.Warning{}}
	doc, err := config.Decode(data, config.DecodeOptions{File: opts.File, Version: v, AllowUnknownFields: opts.AllowUnknownFields})
	if err != nil {
		res.Errors = append(res.Errors, fromError(err, opts.File))
		return res
	}
	for _, p := range doc.Problems {
		res.add(p)
	}
	// The kubelet stops at a bad gate; the rest is still worth knowing, so
	// the configuration is judged without the gates it refuses.
	refused := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(doc.Config.FeatureGates)) {
		for _, e := range v.CheckGates(map[string]bool{name: doc.Config.FeatureGates[name]}) {
			if v.DefaultingChecksGates() {
				e += fmt.Sprintf(" (kubelet %s panics on this while loading its config file)", v.Minor)
			} else {
				e += " (the kubelet refuses to start)"
			}
			refused[name] = true
			res.Errors = append(res.Errors, place(doc, validate.Error{Field: "featureGates." + name, Message: e}))
		}
	}
	reported := false
	if opts.ConfigDir != "" {
		var err error
		if reported, err = checkDropins(opts, res); err != nil {
			res.Errors = append(res.Errors, Finding{Message: err.Error(), File: opts.ConfigDir})
			res.Valid = false
			return res
		}
	}
	// The file, and its drop-ins merged over it, as the kubelet version
	// layers them: kubeletcfg's caller stands for the kubelet's environment.
	always := func(string) (string, bool) { return "", true }
	merged, err := effective.Compute(effective.Input{Setup: node.Given(v), ConfigFile: opts.File, ConfigDir: opts.ConfigDir,
		Config: data, ConfigName: opts.File, LookupEnv: always, DropGates: func(name string) bool { return refused[name] }})
	if err != nil {
		if !reported { // else the per-file errors say it
			res.Errors = append(res.Errors, Finding{Message: err.Error(), File: cmp.Or(opts.ConfigDir, opts.File)})
		}
		res.Valid = false
		return res
	}
	perFile := map[warning.Warning]bool{} // reported per file
	for _, w := range merged.FileProblems {
		perFile[w] = true
	}
	for _, w := range merged.Warnings {
		if !perFile[w] {
			res.Warnings = append(res.Warnings, w)
		}
	}
	if r := merged.Verdict(); r != nil {
		for _, p := range r.Problems {
			res.Errors = append(res.Errors, placeOrigin(doc, p))
		}
	}
	sort.SliceStable(res.Errors, func(i, j int) bool { return lineOf(res.Errors[i]) < lineOf(res.Errors[j]) })
	res.Valid = len(res.Errors) == 0
	return res
}

// checkDropins checks every drop-in strictly, each problem placed in its
// file; reported says a drop-in did not decode (the layering then fails on
// it, and the finding says why).
func checkDropins(opts Options, res *Report) (reported bool, err error) {
	files, err := effective.List(opts.ConfigDir)
	if err != nil {
		return false, err
	}
	for _, f := range files {
		data, err := nodefile.ReadFile(f, nodefile.Config)
		if err != nil {
			return false, err
		}
		doc, err := config.Decode(data, config.DecodeOptions{File: f, Version: opts.Version, AllowUnknownFields: opts.AllowUnknownFields})
		if err != nil {
			res.Errors = append(res.Errors, fromError(err, f))
			reported = true
			continue
		}
		for _, p := range doc.Problems {
			if _, lenient := effective.LenientDuplicate(p, opts.Version); lenient {
				continue // a warning of the merge
			}
			res.add(p)
		}
	}
	return reported, nil
}

// add reports a problem of decoding a file as an error or a warning.
func (r *Report) add(p config.Problem) {
	if p.Warning {
		r.Warnings = append(r.Warnings, p.AsWarning())
	} else {
		r.Errors = append(r.Errors, finding(p))
	}
}

// placeOrigin puts a problem on the drop-in that set the field, else on
// the file's line (and column) of the field.
func placeOrigin(doc *config.Document, p effective.Problem) Finding {
	if p.Origin.Kind == "dropin" {
		return Finding{Field: p.Field, Message: p.Message, File: p.Origin.File, Line: p.Origin.Line}
	}
	return place(doc, validate.Error{Field: p.Field, Message: p.Message})
}

func lineOf(f Finding) int {
	if f.Line == 0 {
		return 1 << 30
	}
	return f.Line
}

func place(doc *config.Document, e validate.Error) Finding {
	f := Finding{Field: e.Field, Message: e.Message, File: doc.File}
	if pos, ok := doc.Keys[e.Field]; ok {
		f.Line, f.Column = pos.Line, pos.Column
	}
	return f
}

func fromError(err error, file string) Finding {
	if p, ok := err.(config.Problem); ok {
		return finding(p)
	}
	return Finding{Message: err.Error(), File: file}
}

func finding(p config.Problem) Finding {
	return Finding{Field: p.Field, Message: p.Message, File: p.File, Line: p.Line, Column: p.Column, Code: p.Code}
}

// Summary is the report in one line.
func (r *Report) Summary() string {
	if r.Valid {
		return fmt.Sprintf("valid for kubelet %s (%s)", r.KubeletVersion, count(len(r.Warnings), "warning"))
	}
	return fmt.Sprintf("invalid for kubelet %s: %s, %s", r.KubeletVersion, count(len(r.Errors), "error"), count(len(r.Warnings), "warning"))
}

func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
