package audit

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kubeletcfg/kubeletcfg/flags"
)

// check is one row of the audit.
type check struct {
	id      string
	section string
	// benchmarks lists the benchmarks that have the check; nil for all (and
	// for operational rules).
	benchmarks []string
	// title is the check as the benchmark words it; titles holds the
	// wording of benchmarks that differ.
	title  string
	titles map[string]string
	// field is the config field judged, if one is.
	field string
	// reason says why an operational rule matters, in one sentence.
	reason string
	// onConfig marks checks decided by the configuration alone: the ones
	// the security gate of diff, migrate and apply runs.
	onConfig bool
	// legacy marks the checks whose failure is a flags-only default that
	// migrate writes out (and --secure replaces).
	legacy bool
	rule   func(s *state) outcome
}

// outcome is what a rule decided.
type outcome struct {
	status Status
	value  string // overrides the field's value
	origin string // overrides the field's origin
	detail string
	remedy string // overrides the remediation worded from fixes
	fixes  []Fix
}

// in says whether b has the check: operational rules go with every
// profile, a benchmark's checks with the profiles of their section that list
// them (nil: all of them).
func (c *check) in(b *benchmark) bool {
	if c.section == SectionOps {
		return true
	}
	return c.section == b.section && (c.benchmarks == nil || slices.Contains(c.benchmarks, b.name))
}

func (c *check) titleFor(b *benchmark) string {
	if t, ok := c.titles[b.name]; ok {
		return t
	}
	return c.title
}

func pass() outcome { return outcome{status: Pass} }

func failWith(fixes ...Fix) outcome { return outcome{status: Fail, fixes: fixes} }

// The benchmarks that have a check, by the one that added it.
var (
	fromCIS19  = []string{"cis-1.9", "cis-1.10", "cis-1.11", "cis-1.12", "cis-2.0"}
	fromCIS111 = []string{"cis-1.11", "cis-1.12", "cis-2.0"}
)

// sinceCIS111 words a check as cis-1.11 and every later benchmark do.
func sinceCIS111(title string) map[string]string {
	out := map[string]string{}
	for _, b := range fromCIS111 {
		out[b] = title
	}
	return out
}

// checks is the audit, in report order: the CIS benchmark's 4.1 file checks
// and its 4.2 kubelet checks, the STIG's kubelet rules, then the
// operational rules.
var checks = slices.Concat(fileChecks, kubeletChecks, stigChecks, opsChecks, kubeadmChecks)

var kubeletChecks = []*check{
	{id: "4.2.1", section: SectionCIS, benchmarks: fromCIS19, onConfig: true, legacy: true,
		title: "Ensure that the --anonymous-auth argument is set to false (Automated)",
		field: "authentication.anonymous.enabled",
		rule: func(s *state) outcome {
			if b := s.cfg.Authentication.Anonymous.Enabled; b != nil && !*b {
				return pass()
			}
			return failWith(Fix{"authentication.anonymous.enabled", false})
		}},
	{id: "4.2.2", section: SectionCIS, benchmarks: fromCIS19, onConfig: true, legacy: true,
		title: "Ensure that the --authorization-mode argument is not set to AlwaysAllow (Automated)",
		field: "authorization.mode",
		rule: func(s *state) outcome {
			if s.cfg.Authorization.Mode != "AlwaysAllow" {
				return pass()
			}
			fixes := []Fix{{"authorization.mode", "Webhook"}}
			if b := s.cfg.Authentication.Webhook.Enabled; b == nil || !*b {
				// Webhook authorization of requests whose bearer tokens
				// nobody authenticates leaves only client certificates.
				fixes = append(fixes, Fix{"authentication.webhook.enabled", true})
			}
			return failWith(fixes...)
		}},
	{id: "4.2.3", section: SectionCIS, benchmarks: fromCIS19, onConfig: true,
		title: "Ensure that the --client-ca-file argument is set as appropriate (Automated)",
		field: "authentication.x509.clientCAFile",
		rule: func(s *state) outcome {
			ca := s.cfg.Authentication.X509.ClientCAFile
			if ca == "" {
				return outcome{status: Fail, remedy: s.advise("authentication.x509.clientCAFile", "authentication.x509.clientCAFile to the cluster's CA bundle (kubeadm: /etc/kubernetes/pki/ca.crt)", "")}
			}
			if s.eff != nil {
				if _, _, err := statNode(s.opts.Setup.Root, ca); err != nil {
					return outcome{status: Warn, detail: fmt.Sprintf("%s is not on the node: %v (the kubelet exits at start)", ca, err),
						remedy: "put the cluster's CA bundle at " + ca}
				}
			}
			return pass()
		}},
	{id: "4.2.4", section: SectionCIS, benchmarks: fromCIS19, onConfig: true, legacy: true,
		title:  "Verify that the --read-only-port argument is set to 0 (Manual)",
		titles: sinceCIS111("Verify that if defined, the --read-only-port argument is set to 0 (Manual)"),
		field:  "readOnlyPort",
		rule: func(s *state) outcome {
			if s.cfg.ReadOnlyPort == 0 {
				return pass()
			}
			return failWith(Fix{"readOnlyPort", 0})
		}},
	{id: "4.2.5", section: SectionCIS, benchmarks: fromCIS19, onConfig: true,
		title: "Ensure that the --streaming-connection-idle-timeout argument is not set to 0 (Manual)",
		field: "streamingConnectionIdleTimeout",
		rule: func(s *state) outcome {
			if s.cfg.StreamingConnectionIdleTimeout.Duration != 0 {
				return pass()
			}
			return failWith(Fix{"streamingConnectionIdleTimeout", "4h0m0s"}) // the config-file default
		}},
	{id: "4.2.6", section: SectionCIS, benchmarks: fromCIS19, onConfig: true,
		title: "Ensure that the --make-iptables-util-chains argument is set to true (Automated)",
		field: "makeIPTablesUtilChains",
		rule: func(s *state) outcome {
			if b := s.cfg.MakeIPTablesUtilChains; b != nil && *b {
				return pass()
			}
			return failWith(Fix{"makeIPTablesUtilChains", true})
		}},
	{id: "4.2.7", section: SectionCIS, benchmarks: fromCIS19,
		title: "Ensure that the --hostname-override argument is not set (Manual)",
		rule: func(s *state) outcome {
			occ, ok := s.flag("hostname-override")
			if !ok {
				return outcome{status: Pass, value: "(unset)", origin: "not on the command line"}
			}
			return outcome{status: Fail, value: occ.value, origin: occ.origin,
				remedy: fmt.Sprintf("remove --hostname-override from %s (the node registers under its hostname; TLS and the node authorizer rely on it)", orCommandLine(occ.from))}
		}},
	{id: "4.2.8", section: SectionCIS, benchmarks: fromCIS19, onConfig: true,
		title: "Ensure that the eventRecordQPS argument is set to a level which ensures appropriate event capture (Manual)",
		field: "eventRecordQPS",
		rule: func(s *state) outcome {
			qps := int32(0)
			if s.cfg.EventRecordQPS != nil {
				qps = *s.cfg.EventRecordQPS
			}
			if qps < 0 {
				return failWith(Fix{"eventRecordQPS", 50})
			}
			if qps != 0 {
				return pass()
			}
			// What 0 means is the version's (schema.Meanings).
			if z := s.v.EventRecordQPSZero(); z != "unlimited" && z != "" {
				return outcome{status: Warn, detail: fmt.Sprintf("0: kubelet %s sends events at client-go's default of %s per second, not without limit as the field's description says (no limit from 1.37); the default, 50, captures more", s.v.Minor, z)}
			}
			return outcome{status: Pass, detail: "0: events are not rate-limited"}
		}},
	{id: "4.2.9", section: SectionCIS, benchmarks: fromCIS19, onConfig: true,
		title: "Ensure that the --tls-cert-file and --tls-private-key-file arguments are set as appropriate (Manual)",
		field: "tlsCertFile",
		rule: func(s *state) outcome {
			cert, key := s.cfg.TLSCertFile, s.cfg.TLSPrivateKeyFile
			value := fmt.Sprintf("tlsCertFile: %s, tlsPrivateKeyFile: %s", render(orNil(cert)), render(orNil(key)))
			switch {
			case cert != "" && key != "":
				return outcome{status: Pass, value: value}
			case s.cfg.ServerTLSBootstrap:
				return outcome{status: Pass, value: value, detail: "serverTLSBootstrap: the serving certificate is signed through the API server and written to --cert-dir"}
			}
			return outcome{status: Fail, value: value, detail: "the kubelet serves a self-signed certificate it writes to --cert-dir",
				remedy: s.advise("tlsCertFile", "tlsCertFile and tlsPrivateKeyFile to a serving certificate signed by the cluster, or serverTLSBootstrap: true (with a CSR approver)", "")}
		}},
	{id: "4.2.10", section: SectionCIS, benchmarks: fromCIS19, onConfig: true,
		title: "Ensure that the --rotate-certificates argument is not set to false (Automated)",
		field: "rotateCertificates",
		rule: func(s *state) outcome {
			if s.cfg.RotateCertificates {
				return pass()
			}
			return failWith(Fix{"rotateCertificates", true})
		}},
	{id: "4.2.11", section: SectionCIS, benchmarks: fromCIS19, onConfig: true,
		title: "Verify that the RotateKubeletServerCertificate argument is set to true (Manual)",
		field: "featureGates.RotateKubeletServerCertificate",
		rule: func(s *state) outcome {
			on := s.v.GateEnabled("RotateKubeletServerCertificate", s.cfg.FeatureGates)
			value := fmt.Sprintf("%t", on)
			if !on {
				return outcome{status: Fail, value: value, fixes: []Fix{{"featureGates", map[string]bool{"RotateKubeletServerCertificate": true}}},
					remedy: "remove RotateKubeletServerCertificate=false from featureGates (or --feature-gates) where the origin names it"}
			}
			if !s.cfg.ServerTLSBootstrap {
				return outcome{status: Warn, value: value, detail: "serverTLSBootstrap is false, so the gate rotates nothing: the serving certificate is not requested from the API server",
					remedy: s.advise("serverTLSBootstrap", "serverTLSBootstrap: true (with a CSR approver for kubelet serving certificates)", "")}
			}
			return outcome{status: Pass, value: value}
		}},
	{id: "4.2.12", section: SectionCIS, benchmarks: fromCIS19, onConfig: true,
		title: "Ensure that the Kubelet only makes use of Strong Cryptographic Ciphers (Manual)",
		field: "tlsCipherSuites",
		rule: func(s *state) outcome {
			got := s.cfg.TLSCipherSuites
			if len(got) == 0 {
				o := failWith(Fix{"tlsCipherSuites", s.b.ciphers})
				o.detail = "unset: Go's default suites, CBC ones included"
				return o
			}
			var weak []string
			for _, c := range got {
				if !slices.Contains(s.b.ciphers, c) {
					weak = append(weak, c)
				}
			}
			if len(weak) == 0 {
				return pass()
			}
			o := failWith(Fix{"tlsCipherSuites", keep(got, s.b.ciphers)})
			o.detail = fmt.Sprintf("not among %s's strong suites: %s", s.b.name, strings.Join(weak, ", "))
			return o
		}},
	{id: "4.2.13", section: SectionCIS, benchmarks: fromCIS19, onConfig: true,
		title: "Ensure that a limit is set on pod PIDs (Manual)",
		field: "podPidsLimit",
		rule: func(s *state) outcome {
			if l := s.cfg.PodPidsLimit; l != nil && *l > 0 {
				return pass()
			}
			return outcome{status: Fail, detail: "no limit",
				remedy: s.advise("podPidsLimit", "podPidsLimit to what the node's largest pod needs (e.g. 4096)", "")}
		}},
	{id: "4.2.14", section: SectionCIS, benchmarks: fromCIS111, onConfig: true,
		title: "Ensure that the --seccomp-default parameter is set to true (Manual)",
		field: "seccompDefault",
		rule: func(s *state) outcome {
			if b := s.cfg.SeccompDefault; b != nil && *b {
				return pass()
			}
			return failWith(Fix{"seccompDefault", true})
		}},
}

// keep returns the elements of got that are in allowed, or allowed if none.
func keep(got, allowed []string) []string {
	var out []string
	for _, c := range got {
		if slices.Contains(allowed, c) {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return allowed
	}
	return out
}

func orNil(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func orCommandLine(from string) string {
	if from == "" {
		return "the kubelet's command line"
	}
	return from
}

// flagOcc is a flag without a config field, as the command line has it.
type flagOcc struct {
	value, origin, from string
}

// flag finds the last occurrence of a flag that has no config field.
func (s *state) flag(name string) (flagOcc, bool) {
	if s.eff == nil {
		return flagOcc{}, false
	}
	return s.lastFlag(s.eff.Flags, name)
}

// lastFlag is the last occurrence of the flag among occs, with the line of
// the node's setup it was written on.
func (s *state) lastFlag(occs []flags.Occurrence, name string) (flagOcc, bool) {
	for i := len(occs) - 1; i >= 0; i-- {
		o := occs[i]
		if o.Flag.Name != name {
			continue
		}
		occ := flagOcc{value: o.Value, origin: "flag --" + name}
		if src := s.opts.Setup.Sources; o.Index >= 0 && o.Index < len(src) && src[o.Index] != "" {
			occ.from = src[o.Index]
			occ.origin += " (from " + occ.from + ")"
		}
		return occ, true
	}
	return flagOcc{}, false
}
