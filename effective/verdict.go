package effective

import (
	"fmt"
	"strings"

	"github.com/kubeletcfg/kubeletcfg/validate"
)

// Refused is a kubelet version's refusal to start with a setup: the reasons
// it gives (or, for a panic, what makes it panic).
type Refused struct {
	Version string
	// Reasons are in the kubelet's words, each followed, when it is about a
	// field, by where the field's value came from (file:line, a flag and
	// where it was written).
	Reasons []string
	// Problems are the reasons of a verdict (Result.Verdict), structured;
	// a refusal met while layering has none.
	Problems []Problem
	Err      error // the error the refusal was made of, if one
}

// Problem is what the kubelet says about one field, and where the field's
// value came from.
type Problem struct {
	Field   string
	Message string
	// Origin is where the value came from; a default has Kind "default"
	// (or "flags-default"), an unknown one an empty Kind.
	Origin Origin
}

func (r *Refused) Error() string { return strings.Join(r.Reasons, "; ") }
func (r *Refused) Unwrap() error { return r.Err }

// Verdict is what the kubelet makes of the effective configuration once it
// has layered it (on the host Input.Host describes; a cgroup v2 host by
// default): nil when it starts, else its refusal. The kubelet validates the
// configuration (every error at once), then, when that passes, parses what
// only its start-up parses and stops at the first error; each reason names
// the field and where its value came from.
func (r *Result) Verdict() *Refused {
	what := "failed to validate kubelet configuration"
	errs := validate.ConfigOnHost(r.Config, r.Version, r.host)
	if len(errs) == 0 {
		what = "failed to run Kubelet"
		errs = validate.Startup(r.Config, r.Version)
	}
	if len(errs) == 0 {
		return nil
	}
	out := &Refused{Version: r.Version.Minor}
	for _, e := range errs {
		p := Problem{Field: e.Field, Message: e.Message}
		reason := what + ": " + e.Message
		if o, ok := r.originOf(e.Field); ok {
			p.Origin = o
			if o.Kind != "default" {
				reason += fmt.Sprintf(" (%s from %s)", e.Field, o)
			}
		}
		out.Reasons = append(out.Reasons, reason)
		out.Problems = append(out.Problems, p)
	}
	return out
}

// originOf finds where the value of a field path came from: the field, a
// key of a map field, or the nearest field above it.
func (r *Result) originOf(path string) (Origin, bool) {
	for p := path; p != ""; {
		if o, ok := r.Origins[p]; ok {
			if keys, ok := r.KeyOrigins[p]; ok {
				if ko, ok := keys[strings.TrimPrefix(path, p+".")]; ok {
					return ko, true
				}
			}
			return o, true
		}
		i := strings.LastIndexAny(p, ".[")
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return Origin{}, false
}
