package validate

import (
	"fmt"
	"math"
	"net/url"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// maxInt32 bounds a logging verbosity (klog takes an int32).
const maxInt32 = math.MaxInt32

// checkLogging is component-base logs/api/v1 Validate as the kubelet calls it
// (with the configuration's feature gates), for the formats the kubelet
// registers: "text", and "json" behind LoggingBetaOptions.
func checkLogging(c *checker) {
	cfg := &c.cfg.Logging
	path := field.NewPath("logging")
	var errs field.ErrorList

	if has(c.v, flushFrequencyPositive) && cfg.FlushFrequency.Duration.Duration <= 0 {
		errs = append(errs, field.Invalid(path.Child("flushFrequency"), cfg.FlushFrequency, "Must be greater than zero"))
	}
	switch cfg.Format {
	case "text":
	case "json":
		if !c.enabled(gateLoggingBetaOptions) {
			errs = append(errs, field.Forbidden(path.Child("format"), fmt.Sprintf("Log format %s is disabled, see %s feature", cfg.Format, gateLoggingBetaOptions)))
		}
	default:
		errs = append(errs, field.Invalid(path.Child("format"), cfg.Format, "Unsupported log format"))
	}
	if uint64(cfg.Verbosity) > maxInt32 {
		errs = append(errs, c.verbosityError(path.Child("verbosity"), uint32(cfg.Verbosity)))
	}
	vmodule := path.Child("vmodule")
	if len(cfg.VModule) > 0 && cfg.Format != "" && cfg.Format != "text" {
		errs = append(errs, field.Forbidden(vmodule, "Only supported for text log format"))
	}
	for i, item := range cfg.VModule {
		if item.FilePattern == "" {
			errs = append(errs, field.Required(vmodule.Index(i), "File pattern must not be empty"))
		}
		if strings.ContainsAny(item.FilePattern, "=,") {
			errs = append(errs, field.Invalid(vmodule.Index(i), item.FilePattern, "File pattern must not contain equal sign or comma"))
		}
		if uint64(item.Verbosity) > maxInt32 {
			errs = append(errs, c.verbosityError(vmodule.Index(i), uint32(item.Verbosity)))
		}
	}

	options := path.Child("options")
	alphaOptions := c.enabled(gateLoggingAlphaOptions)
	disabled := fmt.Sprintf("Feature %s is disabled", gateLoggingAlphaOptions)
	if json := options.Child("json"); !alphaOptions {
		if cfg.Options.JSON.SplitStream {
			errs = append(errs, field.Forbidden(json.Child("splitStream"), disabled))
		}
		if cfg.Options.JSON.InfoBufferSize.Value() != 0 {
			errs = append(errs, field.Forbidden(json.Child("infoBufferSize"), disabled))
		}
	}
	if text := options.Child("text"); has(c.v, textSplitStreamGated) && !alphaOptions {
		if cfg.Options.Text.SplitStream {
			errs = append(errs, field.Forbidden(text.Child("splitStream"), disabled))
		}
		if cfg.Options.Text.InfoBufferSize.Value() != 0 {
			errs = append(errs, field.Forbidden(text.Child("infoBufferSize"), disabled))
		}
	}
	c.addFieldErrors(errs)
}

// verbosityError reports a verbosity klog cannot take. The value is printed
// as a Go literal (0x…) before 1.34 and as JSON from 1.34 on, following the
// apimachinery field error formatting of each release.
func (c *checker) verbosityError(p *field.Path, v uint32) *field.Error {
	detail := fmt.Sprintf("Must be <= %d", maxInt32)
	if has(c.v, fieldErrorPlainInt) {
		return field.Invalid(p, int64(v), detail)
	}
	return field.Invalid(p, goLiteral(fmt.Sprintf("%#v", v)), detail)
}

// goLiteral is a bad value that field errors print verbatim.
type goLiteral string

func (g goLiteral) String() string { return string(g) }

// MarshalJSON fails so that field errors fall back to String.
func (g goLiteral) MarshalJSON() ([]byte, error) {
	return nil, fmt.Errorf("not JSON")
}

// checkTracing is component-base tracing/api/v1 ValidateTracingConfiguration.
func checkTracing(c *checker) {
	t := c.cfg.Tracing
	if t == nil {
		return
	}
	path := field.NewPath("tracing")
	var errs field.ErrorList
	if t.SamplingRatePerMillion != nil {
		rate, p := *t.SamplingRatePerMillion, path.Child("samplingRatePerMillion")
		if rate < 0 {
			errs = append(errs, field.Invalid(p, rate, "sampling rate must be positive"))
		}
		if rate > 1000000 {
			errs = append(errs, field.Invalid(p, rate, "sampling rate per million must be less than or equal to one million"))
		}
	}
	if t.Endpoint != nil {
		errs = append(errs, tracingEndpointErrors(*t.Endpoint, path.Child("endpoint"))...)
	}
	c.addFieldErrors(errs)
}

// tracingEndpointErrors accepts what gRPC dials: an address with scheme dns
// (the default), unix or unix-abstract.
func tracingEndpointErrors(endpoint string, p *field.Path) field.ErrorList {
	if !strings.Contains(endpoint, "//") {
		endpoint = "dns://" + endpoint
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return field.ErrorList{field.Invalid(p, endpoint, err.Error())}
	}
	switch u.Scheme {
	case "dns", "unix", "unix-abstract":
		return nil
	}
	return field.ErrorList{field.Invalid(p, endpoint,
		fmt.Sprintf("unsupported scheme: %v.  Options are none, dns, unix, or unix-abstract.  See https://github.com/grpc/grpc/blob/master/doc/naming.md", u.Scheme))}
}
