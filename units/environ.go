package units

import (
	"fmt"
	"strings"
)

// parseEnvironmentValue parses the value of one Environment= assignment as
// systemd's config_parse_environ() does: words split at blanks, quotes
// group ("A=1 2" or A="1 2"), C escapes are decoded, specifiers resolved;
// "$" has no special meaning. Each word must be NAME=VALUE. A bad word is
// skipped; bad quoting or escaping drops the rest of the line. It returns
// the valid assignments in order.
func parseEnvironmentValue(value string, sp *specifiers, warn func(string, ...any)) []string {
	return parseWords(value, sp, warn, "invalid syntax, ignoring: %s", validEnvAssignment,
		"invalid environment assignment, ignoring: %s")
}

// parseUnsetValue parses the value of one UnsetEnvironment= assignment:
// variable names, or NAME=VALUE assignments to remove only when they match
// exactly.
func parseUnsetValue(value string, sp *specifiers, warn func(string, ...any)) []string {
	return parseWords(value, sp, warn, "trailing garbage in UnsetEnvironment=, ignoring: %s",
		func(w string) bool { return validEnvName(w) || validEnvAssignment(w) },
		"invalid environment name or assignment in UnsetEnvironment=, ignoring: %s")
}

// parseWords splits a value into words (quotes group, C escapes decoded,
// specifiers resolved) and keeps the valid ones, warning, as systemd logs,
// about the rest.
func parseWords(value string, sp *specifiers, warn func(string, ...any), garbage string, valid func(string) bool, invalid string) []string {
	var out []string
	for p := value; ; {
		w, rest, found, err := extractWord(p, exUnquote|exCUnescape)
		if err != nil {
			warn(garbage, p)
			return out
		}
		if !found {
			return out
		}
		p = rest
		resolved, err := sp.expand(w)
		if err != nil {
			warn("failed to resolve specifiers in %s, ignoring: %v", w, err)
			continue
		}
		if !valid(resolved) {
			warn(invalid, resolved)
			continue
		}
		out = append(out, resolved)
	}
}

// unsetEnv removes from env what UnsetEnvironment= lists: a name removes
// the variable, NAME=VALUE removes it only if it has that value.
func unsetEnv(env map[string]envVar, unset []string) {
	for _, u := range unset {
		name, value, isAssignment := strings.Cut(u, "=")
		if v, ok := env[name]; ok && (!isAssignment || v.Value == value) {
			delete(env, name)
		}
	}
}

// envFileRef is one EnvironmentFile= entry.
type envFileRef struct {
	Pattern  string // absolute path, may hold glob characters
	Optional bool   // "-" prefix: a missing or unreadable file is skipped
	File     string // where it was written
	Line     int
}

// parseEnvFileValue parses the value of one EnvironmentFile= assignment:
// the whole value, specifiers resolved, is one path with an optional "-"
// prefix; it is not unquoted. A path that is not absolute and normalized
// is ignored.
func parseEnvFileValue(value string, sp *specifiers) (envFileRef, error) {
	resolved, err := sp.expand(value)
	if err != nil {
		return envFileRef{}, fmt.Errorf("failed to resolve specifiers in %q, ignoring: %w", value, err)
	}
	ref := envFileRef{Pattern: resolved}
	if strings.HasPrefix(resolved, "-") {
		ref.Optional, ref.Pattern = true, resolved[1:]
	}
	switch {
	case !strings.HasPrefix(ref.Pattern, "/"):
		return envFileRef{}, fmt.Errorf("path %q is not absolute, ignoring", ref.Pattern)
	case !utf8Valid(ref.Pattern) || !pathValid(ref.Pattern):
		return envFileRef{}, fmt.Errorf("path %q is not valid, ignoring", ref.Pattern)
	case hasDotDot(ref.Pattern):
		return envFileRef{}, fmt.Errorf("path %q contains \"..\", ignoring", ref.Pattern)
	}
	ref.Pattern = simplifyPath(ref.Pattern)
	return ref, nil
}

func hasDotDot(p string) bool {
	for _, c := range strings.Split(p, "/") {
		if c == ".." {
			return true
		}
	}
	return false
}
