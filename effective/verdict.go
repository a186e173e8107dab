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
	Reasons []string
	Err     error // the error the refusal was made of, if one
}

func (r *Refused) Error() string { return strings.Join(r.Reasons, "; ") }
func (r *Refused) Unwrap() error { return r.Err }

// Verdict is what the kubelet makes of the effective configuration once it
// has layered it on a cgroup v2 host: nil when it starts, else its refusal.
func (r *Result) Verdict() *Refused { return r.VerdictOnHost(validate.Host{}) }

// VerdictOnHost is Verdict on a host with the given traits. The kubelet
// validates the configuration (every error at once), then, when that
// passes, parses what only its start-up parses and stops at the first
// error; each reason names the field and where its value came from.
func (r *Result) VerdictOnHost(host validate.Host) *Refused {
	what := "failed to validate kubelet configuration"
	errs := validate.ConfigOnHost(r.Config, r.Version, host)
	if len(errs) == 0 {
		what = "failed to run Kubelet"
		errs = validate.Startup(r.Config, r.Version)
	}
	if len(errs) == 0 {
		return nil
	}
	out := &Refused{Version: r.Version.Minor}
	for _, e := range errs {
		reason := what + ": " + e.Message
		if o, ok := r.originOf(e.Field); ok && o.Kind != "default" {
			reason += fmt.Sprintf(" (%s from %s)", e.Field, o)
		}
		out.Reasons = append(out.Reasons, reason)
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
