package units

import (
	"slices"
	"strings"

	"github.com/kubeletcfg/kubeletcfg/warning"
)

// serviceConfig is what a unit and its drop-ins configure, in the parts
// that decide the service's command line and environment. Assignments are
// applied in order: main unit file, then drop-ins.
type serviceConfig struct {
	Type       string
	Exec       []command         // ExecStart=
	Env        map[string]envVar // Environment=
	EnvFiles   []envFileRef      // EnvironmentFile=
	Unset      []string          // UnsetEnvironment=
	PassEnv    []string          // PassEnvironment=
	SearchPath []string          // ExecSearchPath=
	Warnings   []warning.Warning
}

func newServiceConfig() *serviceConfig {
	return &serviceConfig{Env: map[string]envVar{}}
}

// serviceTypes are the values of Type=.
var serviceTypes = []string{"simple", "exec", "forking", "oneshot", "dbus", "notify", "notify-reload", "idle"}

// apply applies one assignment. An error is a setting that makes systemd
// refuse the unit.
func (s *serviceConfig) apply(a assignment, sp *specifiers) error {
	if a.Section != "Service" {
		return nil
	}
	warn := func(format string, args ...any) {
		s.Warnings = append(s.Warnings, warnAt(a.File, a.Line, a.Key+"=: "+format, args...))
	}
	switch a.Key {
	case "ExecStart":
		return s.applyExecStart(a, sp, warn)
	case "Environment":
		s.applyEnvironment(a, sp, warn)
	case "EnvironmentFile":
		s.applyEnvironmentFile(a, sp, warn)
	case "UnsetEnvironment":
		s.Unset = resetOrAppend(s.Unset, a.Value, func() []string { return parseUnsetValue(a.Value, sp, warn) })
	case "PassEnvironment":
		s.PassEnv = resetOrAppend(s.PassEnv, a.Value, func() []string { return parsePassValue(a.Value, sp, warn) })
	case "ExecSearchPath":
		s.SearchPath = resetOrAppend(s.SearchPath, a.Value, func() []string { return parseSearchPath(a.Value, sp, warn) })
	case "Type":
		s.applyType(a, warn)
	}
	return nil
}

// resetOrAppend implements list settings: an empty value resets the list,
// anything else appends to it.
func resetOrAppend(list []string, value string, parse func() []string) []string {
	if value == "" {
		return nil
	}
	return append(list, parse()...)
}

func (s *serviceConfig) applyExecStart(a assignment, sp *specifiers, warn func(string, ...any)) error {
	if a.Value == "" {
		s.Exec = nil
		return nil
	}
	res, err := parseExecValue(a.Value, sp)
	if err != nil {
		return &Error{File: a.File, Line: a.Line, Msg: "ExecStart=", Err: err}
	}
	for _, n := range res.notes {
		warn("%s", n)
	}
	for _, d := range res.dropped {
		warn("%s", d)
	}
	for _, c := range res.cmds {
		c.File, c.Line = a.File, a.Line
		s.Exec = append(s.Exec, c)
	}
	return nil
}

func (s *serviceConfig) applyEnvironment(a assignment, sp *specifiers, warn func(string, ...any)) {
	if a.Value == "" {
		s.Env = map[string]envVar{}
		return
	}
	for _, kv := range parseEnvironmentValue(a.Value, sp, warn) {
		name, value, _ := strings.Cut(kv, "=")
		s.Env[name] = envVar{Value: value, Src: Source{File: a.File, Line: a.Line}}
	}
}

func (s *serviceConfig) applyEnvironmentFile(a assignment, sp *specifiers, warn func(string, ...any)) {
	if a.Value == "" {
		s.EnvFiles = nil
		return
	}
	ref, err := parseEnvFileValue(a.Value, sp)
	if err != nil {
		warn("%v", err)
		return
	}
	ref.File, ref.Line = a.File, a.Line
	s.EnvFiles = append(s.EnvFiles, ref)
}

func (s *serviceConfig) applyType(a assignment, warn func(string, ...any)) {
	switch {
	case a.Value == "":
		s.Type = ""
	case slices.Contains(serviceTypes, a.Value):
		s.Type = a.Value
	default:
		warn("failed to parse service type, ignoring: %s", a.Value)
	}
}

// parsePassValue parses PassEnvironment=: variable names, unquoted.
func parsePassValue(value string, sp *specifiers, warn func(string, ...any)) []string {
	var out []string
	for p := value; ; {
		w, rest, found, err := extractWord(p, exUnquote)
		if err != nil {
			warn("trailing garbage, ignoring: %s", p)
			return out
		}
		if !found {
			return out
		}
		p = rest
		if w, err = sp.expand(w); err != nil || !validEnvName(w) {
			warn("invalid environment name, ignoring: %s", w)
			continue
		}
		out = append(out, w)
	}
}

// parseSearchPath parses ExecSearchPath=: absolute paths separated by ":".
func parseSearchPath(value string, sp *specifiers, warn func(string, ...any)) []string {
	var out []string
	for _, p := range strings.Split(value, ":") {
		if p == "" {
			continue
		}
		resolved, err := sp.expand(p)
		if err != nil || !strings.HasPrefix(resolved, "/") || hasDotDot(resolved) {
			warn("invalid path, ignoring: %s", p)
			return out
		}
		out = append(out, simplifyPath(resolved))
	}
	return out
}

// mainCommand checks the service as systemd does before starting it and
// returns its one ExecStart= command.
func (s *serviceConfig) mainCommand(unit, unitFile string) (command, error) {
	switch {
	case len(s.Exec) == 0:
		return command{}, errorAt(unitFile, 0, "%s has no ExecStart= command; systemd refuses to start it", unit)
	case len(s.Exec) == 1:
		return s.Exec[0], nil
	case s.Type != "oneshot":
		return command{}, s.tooManyCommands(unit)
	}
	c := s.Exec[1]
	return command{}, errorAt(c.File, c.Line, "%s is Type=oneshot with %d ExecStart= commands; cannot tell which one runs the kubelet", unit, len(s.Exec))
}

func (s *serviceConfig) tooManyCommands(unit string) error {
	var at []string
	for _, c := range s.Exec {
		at = append(at, location(c.File, c.Line))
	}
	c := s.Exec[1]
	return errorAt(c.File, c.Line,
		"%s has more than one ExecStart= command (%s), which systemd only allows for Type=oneshot services and so refuses to start it; "+
			"a drop-in that replaces the command must first reset the list with an empty \"ExecStart=\" line",
		unit, strings.Join(at, ", "))
}
