package audit

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"

	"k8s.io/kubelet/config/v1beta1"

	"github.com/kubeletcfg/kubeletcfg/effective"
	"github.com/kubeletcfg/kubeletcfg/nodefile"
)

// benchmarkSTIG names the DISA Kubernetes STIG profile.
const benchmarkSTIG = "stig"

const stigNote = "DISA Kubernetes STIG, release of 2025-05-16: its rules on the kubelet and its files, judged as their check text words them: " +
	"where the text says so, the option on the kubelet's command line is itself a finding, and a value counts only when the config file sets it; " +
	"a value in a --config-dir drop-in counts as the config file's (the kubelet merges it into the file's)"

var onlySTIG = []string{benchmarkSTIG}

// stigTitle is a rule's title as the STIG words it, with its STIG ID and
// category.
func stigTitle(title, id, cat string) string {
	return fmt.Sprintf("%s (%s, CAT %s)", title, id, cat)
}

// kubeadmManifests are the static pods kubeadm writes on a control-plane
// node.
var kubeadmManifests = []string{"etcd.yaml", "kube-apiserver.yaml", "kube-controller-manager.yaml", "kube-scheduler.yaml"}

// pkiDir is where kubeadm keeps the cluster's certificates (the STIG's
// "component PKI"); a worker holds the cluster CA there.
const pkiDir = "/etc/kubernetes/pki"

var stigChecks = []*check{
	{id: "V-242387", section: SectionSTIG, benchmarks: onlySTIG, field: "readOnlyPort",
		title: stigTitle(`The Kubernetes Kubelet must have the "readOnlyPort" flag disabled.`, "CNTR-K8-000330", "I"),
		rule: func(s *state) outcome {
			return s.stigSetting(stigRule{flag: "read-only-port", field: "readOnlyPort", fix: 0, want: "readOnlyPort: 0 (or no readOnlyPort)",
				ok: func(c *v1beta1.KubeletConfiguration, st setting) (bool, string) {
					if c.ReadOnlyPort == 0 {
						return true, ""
					}
					return false, fmt.Sprintf("readOnlyPort %d (%s): the port answers without authentication", c.ReadOnlyPort, st.origin)
				}})
		}},
	{id: "V-242391", section: SectionSTIG, benchmarks: onlySTIG, field: "authentication.anonymous.enabled",
		title: stigTitle("The Kubernetes Kubelet must have anonymous authentication disabled.", "CNTR-K8-000370", "I"),
		rule: func(s *state) outcome {
			return s.stigSetting(stigRule{flag: "anonymous-auth", field: "authentication.anonymous.enabled", fix: false, want: "authentication.anonymous.enabled: false",
				ok: func(c *v1beta1.KubeletConfiguration, st setting) (bool, string) {
					if b := c.Authentication.Anonymous.Enabled; st.set && b != nil && !*b {
						return true, ""
					}
					return false, notFalse(st)
				}})
		}},
	{id: "V-242392", section: SectionSTIG, benchmarks: onlySTIG,
		title: stigTitle("The Kubernetes kubelet must enable explicit authorization.", "CNTR-K8-000380", "I"),
		rule:  (*state).stigAuthorizationFlag},
	{id: "V-242397", section: SectionSTIG, benchmarks: onlySTIG, field: "staticPodPath",
		title: stigTitle("The Kubernetes kubelet staticPodPath must not enable static pods.", "CNTR-K8-000440", "I"),
		rule:  (*state).stigStaticPods},
	{id: "V-242398", section: SectionSTIG, benchmarks: onlySTIG, field: "featureGates.DynamicAuditing",
		title: stigTitle("Kubernetes DynamicAuditing must not be enabled.", "CNTR-K8-000450", "II"),
		rule: func(s *state) outcome {
			return s.stigSetting(stigRule{flag: "feature-gates", field: "featureGates.DynamicAuditing", want: "no DynamicAuditing in featureGates",
				ok: func(c *v1beta1.KubeletConfiguration, st setting) (bool, string) {
					if c.FeatureGates["DynamicAuditing"] {
						return false, "featureGates sets DynamicAuditing to true (" + st.origin + ")"
					}
					return true, ""
				}})
		}},
	{id: "V-242399", section: SectionSTIG, benchmarks: onlySTIG,
		title: stigTitle("Kubernetes DynamicKubeletConfig must not be enabled.", "CNTR-K8-000460", "II"),
		rule: func(s *state) outcome {
			o := outcome{status: NotApplicable, value: "(not judged)", detail: "the check text applies the rule to Kubernetes 1.25 and older only"}
			if g, gone := s.v.RemovedGate("DynamicKubeletConfig"); gone {
				o.detail += fmt.Sprintf("; kubelet %s has no DynamicKubeletConfig gate (the last kubelet with it was %s)", s.v.Minor, g.LastIn)
			}
			return o
		}},
	{id: "V-242404", section: SectionSTIG, benchmarks: onlySTIG,
		title: stigTitle("Kubernetes Kubelet must deny hostname override.", "CNTR-K8-000850", "II"),
		rule: func(s *state) outcome {
			occ, ok := s.anyFlag("hostname-override")
			if !ok {
				return outcome{status: Pass, value: "(unset)", origin: "not on the command line"}
			}
			return outcome{status: Fail, value: occ.value, origin: occ.origin,
				remedy: fmt.Sprintf("remove --hostname-override from %s", orCommandLine(occ.from))}
		}},
	{id: "V-242406", section: SectionSTIG, benchmarks: onlySTIG,
		title: stigTitle("The Kubernetes KubeletConfiguration file must be owned by root.", "CNTR-K8-000880", "II"),
		rule:  func(s *state) outcome { return s.stigConfigFiles(fileRule{ownership: true}) }},
	{id: "V-242407", section: SectionSTIG, benchmarks: onlySTIG,
		title: stigTitle("The Kubernetes KubeletConfiguration files must have file permissions set to 644 or more restrictive.", "CNTR-K8-000890", "II"),
		rule:  func(s *state) outcome { return s.stigConfigFiles(fileRule{maxMode: 0o644}) }},
	{id: "V-242420", section: SectionSTIG, benchmarks: onlySTIG, field: "authentication.x509.clientCAFile",
		title: stigTitle("Kubernetes Kubelet must have the SSL Certificate Authority set.", "CNTR-K8-001420", "II"),
		rule: func(s *state) outcome {
			return s.stigSetting(stigRule{flag: "client-ca-file", field: "authentication.x509.clientCAFile", want: "authentication.x509.clientCAFile to the cluster's CA bundle (kubeadm: /etc/kubernetes/pki/ca.crt)",
				ok: func(c *v1beta1.KubeletConfiguration, st setting) (bool, string) {
					return nonEmpty(st, c.Authentication.X509.ClientCAFile)
				}})
		}},
	{id: "V-242424", section: SectionSTIG, benchmarks: onlySTIG, field: "tlsPrivateKeyFile",
		title: stigTitle("Kubernetes Kubelet must enable tlsPrivateKeyFile for client authentication to secure service.", "CNTR-K8-001460", "II"),
		rule: func(s *state) outcome {
			return s.stigSetting(stigRule{flag: "tls-private-key-file", field: "tlsPrivateKeyFile", want: "tlsPrivateKeyFile to the serving certificate's key",
				ok: func(c *v1beta1.KubeletConfiguration, st setting) (bool, string) {
					return nonEmpty(st, c.TLSPrivateKeyFile)
				}})
		}},
	{id: "V-242425", section: SectionSTIG, benchmarks: onlySTIG, field: "tlsCertFile",
		title: stigTitle("Kubernetes Kubelet must enable tlsCertFile for client authentication to secure service.", "CNTR-K8-001470", "II"),
		rule: func(s *state) outcome {
			return s.stigSetting(stigRule{flag: "tls-cert-file", field: "tlsCertFile", want: "tlsCertFile to a serving certificate signed by an approved CA",
				ok: func(c *v1beta1.KubeletConfiguration, st setting) (bool, string) {
					return nonEmpty(st, c.TLSCertFile)
				}})
		}},
	{id: "V-242434", section: SectionSTIG, benchmarks: onlySTIG, field: "protectKernelDefaults",
		title: stigTitle("Kubernetes Kubelet must enable kernel protection.", "CNTR-K8-001620", "I"),
		rule: func(s *state) outcome {
			o := s.stigSetting(stigRule{flag: "protect-kernel-defaults", field: "protectKernelDefaults", fix: true, want: "protectKernelDefaults: true",
				ok: func(c *v1beta1.KubeletConfiguration, st setting) (bool, string) {
					if st.set && c.ProtectKernelDefaults {
						return true, ""
					}
					return false, notTrue(st)
				}})
			if o.status == Fail {
				o.remedy += "; with it the kubelet exits at start unless the host's sysctls already hold its values (vm.overcommit_memory=1, vm.panic_on_oom=0, kernel.panic=10, kernel.panic_on_oops=1, kernel.keys.root_maxkeys=1000000, kernel.keys.root_maxbytes=25000000): set them first"
			}
			return o
		}},
	{id: "V-242449", section: SectionSTIG, benchmarks: onlySTIG,
		title: stigTitle("The Kubernetes Kubelet certificate authority file must have file permissions set to 644 or more restrictive.", "CNTR-K8-003160", "II"),
		rule:  func(s *state) outcome { return s.stigClientCA(fileRule{maxMode: s.b.caMode}) }},
	{id: "V-242450", section: SectionSTIG, benchmarks: onlySTIG,
		title: stigTitle("The Kubernetes Kubelet certificate authority must be owned by root.", "CNTR-K8-003170", "II"),
		rule:  func(s *state) outcome { return s.stigClientCA(fileRule{ownership: true}) }},
	{id: "V-242451", section: SectionSTIG, benchmarks: onlySTIG,
		title: stigTitle("The Kubernetes component PKI must be owned by root.", "CNTR-K8-003180", "II"),
		rule:  func(s *state) outcome { return s.stigPKI(func(string) bool { return true }, fileRule{ownership: true}) }},
	{id: "V-242452", section: SectionSTIG, benchmarks: onlySTIG,
		title: stigTitle("The Kubernetes kubelet KubeConfig must have file permissions set to 644 or more restrictive.", "CNTR-K8-003190", "II"),
		rule:  func(s *state) outcome { return s.stigKubeconfig(fileRule{maxMode: 0o644}) }},
	{id: "V-242453", section: SectionSTIG, benchmarks: onlySTIG,
		title: stigTitle("The Kubernetes kubelet KubeConfig file must be owned by root.", "CNTR-K8-003200", "II"),
		rule:  func(s *state) outcome { return s.stigKubeconfig(fileRule{ownership: true}) }},
	{id: "V-242454", section: SectionSTIG, benchmarks: onlySTIG,
		title: stigTitle("The Kubernetes kubeadm.conf must be owned by root.", "CNTR-K8-003210", "II"),
		rule:  func(s *state) outcome { return s.stigKubeadmConf(fileRule{ownership: true}) }},
	{id: "V-242455", section: SectionSTIG, benchmarks: onlySTIG,
		title: stigTitle("The Kubernetes kubeadm.conf must have file permissions set to 644 or more restrictive.", "CNTR-K8-003220", "II"),
		rule:  func(s *state) outcome { return s.stigKubeadmConf(fileRule{maxMode: 0o644}) }},
	{id: "V-242456", section: SectionSTIG, benchmarks: onlySTIG,
		title: stigTitle("The Kubernetes kubelet config must have file permissions set to 644 or more restrictive.", "CNTR-K8-003230", "II"),
		rule:  func(s *state) outcome { return s.stigKubeletConfig(fileRule{maxMode: 0o644}) }},
	{id: "V-242457", section: SectionSTIG, benchmarks: onlySTIG,
		title: stigTitle("The Kubernetes kubelet config must be owned by root.", "CNTR-K8-003240", "II"),
		rule:  func(s *state) outcome { return s.stigKubeletConfig(fileRule{ownership: true}) }},
	{id: "V-242466", section: SectionSTIG, benchmarks: onlySTIG,
		title: stigTitle("The Kubernetes PKI CRT must have file permissions set to 644 or more restrictive.", "CNTR-K8-003330", "II"),
		rule: func(s *state) outcome {
			return s.stigPKI(func(n string) bool { return path.Ext(n) == ".crt" }, fileRule{maxMode: 0o644})
		}},
	{id: "V-242467", section: SectionSTIG, benchmarks: onlySTIG,
		title: stigTitle("The Kubernetes PKI keys must have file permissions set to 600 or more restrictive.", "CNTR-K8-003340", "II"),
		rule: func(s *state) outcome {
			return s.stigPKI(func(n string) bool { return path.Ext(n) == ".key" }, fileRule{maxMode: 0o600})
		}},
	{id: "V-245541", section: SectionSTIG, benchmarks: onlySTIG, field: "streamingConnectionIdleTimeout",
		title: stigTitle("Kubernetes Kubelet must not disable timeouts.", "CNTR-K8-001300", "II"),
		rule: func(s *state) outcome {
			return s.stigSetting(stigRule{flag: "streaming-connection-idle-timeout", field: "streamingConnectionIdleTimeout", fix: "5m0s", want: `streamingConnectionIdleTimeout: 5m`,
				ok: func(c *v1beta1.KubeletConfiguration, st setting) (bool, string) {
					d := c.StreamingConnectionIdleTimeout.Duration
					switch {
					case !st.set:
						return false, "not set in the config file: the check text asks for it written out, 5m or more (the kubelet's default is 4h)"
					case d < 5*time.Minute:
						return false, fmt.Sprintf("%s (%s) is less than 5m", d, st.origin)
					}
					return true, ""
				}})
		}},
	{id: "V-254801", section: SectionSTIG, benchmarks: onlySTIG, field: "featureGates.PodSecurity",
		title: stigTitle("Kubernetes must enable PodSecurity admission controller on static pods and Kubelets.", "CNTR-K8-002001", "I"),
		rule:  (*state).stigPodSecurityGate},
}

// stigRule is a STIG rule on a kubelet setting: the option on the command
// line is a finding, and the config file's value (drop-ins counted in) must
// pass ok.
type stigRule struct {
	flag, field string
	// ok judges the config file's configuration; the reason says what is
	// wrong.
	ok func(c *v1beta1.KubeletConfiguration, st setting) (bool, string)
	// fix is the value that passes, for --fix-to (nil: none to write);
	// want words the change.
	fix  any
	want string
}

// setting is a field as the config file (with its drop-ins) has it.
type setting struct {
	set    bool // the config file or a drop-in writes it
	dropin string
	value  string // as the kubelet prints it
	origin string
}

func (st setting) shown() string {
	if !st.set {
		return "(not set in the config file)"
	}
	return st.value
}

// fileLayer is the layering of the --config file and its drop-ins alone,
// without the rest of the command line: the STIG's config file.
type fileLayer struct {
	res *effective.Result
	st  *state
	err error
}

// configFile layers the config file and its drop-ins alone (once).
func (s *state) configFile() (*fileLayer, error) {
	if s.fileOnly == nil {
		s.fileOnly = &fileLayer{}
		args := []string{} // not nil: the command line instead of the setup's
		for _, name := range []string{"config", "config-dir"} {
			if val, ok := s.cl.Value(name); ok {
				args = append(args, "--"+name+"="+val)
			}
		}
		s.fileOnly.res, s.fileOnly.err = effective.Compute(effective.Input{Setup: s.opts.Setup, Args: args})
		if s.fileOnly.err == nil {
			s.fileOnly.st, s.fileOnly.err = newState(s.v, s.b, s.fileOnly.res.Config)
		}
	}
	return s.fileOnly, s.fileOnly.err
}

// setting reads a field (or featureGates.NAME) as the config file has it.
func (fl *fileLayer) setting(field string) setting {
	var o effective.Origin
	var ok bool
	if gate, isGate := strings.CutPrefix(field, "featureGates."); isGate {
		o, ok = fl.res.KeyOrigins["featureGates"][gate]
	} else {
		o, ok = fl.res.Origins[field]
	}
	st := setting{value: fl.st.show(field)}
	if ok {
		st.origin = originString(o, fl.st.v)
		if o.Kind == "file" || o.Kind == "dropin" {
			st.set = true
		}
		if o.Kind == "dropin" {
			st.dropin = o.File
			st.origin += " (a drop-in: counted as the config file's)"
		}
	}
	if fl.res.ConfigFile == "" && !st.set {
		st.origin = "no --config file"
	}
	return st
}

// stigSetting judges a stigRule.
func (s *state) stigSetting(r stigRule) outcome {
	fl, err := s.configFile()
	if err != nil {
		return outcome{status: Manual, detail: "the config file and its drop-ins alone do not layer: " + err.Error()}
	}
	st := fl.setting(r.field)
	o := outcome{status: Pass, value: st.shown(), origin: st.origin}
	good, why := r.ok(fl.res.Config, st)
	var problems, fixes []string
	if occ, flagged := s.anyFlag(r.flag); flagged {
		problems = append(problems, fmt.Sprintf("--%s=%s on the command line (%s): the check text makes the option itself a finding", r.flag, occ.value, occ.origin))
		fixes = append(fixes, "remove --"+r.flag+" from "+orCommandLine(occ.from))
	}
	if !good {
		problems = append(problems, why)
		fixes = append(fixes, s.stigWhere(fl, st, r.want))
		if r.fix != nil {
			o.fixes = []Fix{{r.field, r.fix}}
		}
	}
	if len(problems) > 0 {
		o.status = Fail
		o.detail = strings.Join(problems, "; ")
		o.remedy = strings.Join(fixes, "; ")
	} else if st.dropin != "" {
		o.detail = "set in the --config-dir drop-in " + nodeName(s.opts, st.dropin) + ", which counts as the config file's"
	}
	return o
}

// stigWhere words where to write a setting the config file must hold.
func (s *state) stigWhere(fl *fileLayer, st setting, want string) string {
	switch {
	case st.dropin != "":
		return fmt.Sprintf("set %s in the drop-in %s, which overrides the config file (kubeletcfg apply --dropin %s=FILE)", want, nodeName(s.opts, st.dropin), path.Base(st.dropin))
	case fl.res.ConfigFile == "":
		return fmt.Sprintf("set %s in a --config file (kubeletcfg migrate --secure writes one)", want)
	}
	return fmt.Sprintf("set %s in %s (kubeletcfg audit --benchmark stig --fix-to FILE, then kubeletcfg apply -f FILE)", want, fl.res.ConfigFile)
}

func notFalse(st setting) string {
	if !st.set {
		return "not set in the config file: the check text asks for enabled: false written out"
	}
	return "set to " + st.value + " (" + st.origin + ")"
}

func notTrue(st setting) string {
	if !st.set {
		return "not set in the config file: the check text asks for true written out"
	}
	return "set to " + st.value + " (" + st.origin + ")"
}

func nonEmpty(st setting, val string) (bool, string) {
	if st.set && val != "" {
		return true, ""
	}
	if st.set {
		return false, "set to no value (" + st.origin + ")"
	}
	return false, "not set in the config file"
}

// anyFlag finds the last occurrence of a flag on the command line, config
// field or not, with where it was written.
func (s *state) anyFlag(name string) (flagOcc, bool) {
	return s.lastFlag(s.cl.Occurrences, name)
}

// stigAuthorizationFlag is V-242392, which, unlike the STIG's other kubelet
// rules, asks for the option on the command line: --authorization-mode,
// set to Webhook.
func (s *state) stigAuthorizationFlag() outcome {
	running := fmt.Sprintf("the kubelet runs with %s (%s)", s.cfg.Authorization.Mode, s.origin("authorization.mode"))
	occ, ok := s.anyFlag("authorization-mode")
	switch {
	case ok && occ.value == "Webhook":
		return outcome{status: Pass, value: occ.value, origin: occ.origin}
	case ok:
		return outcome{status: Fail, value: occ.value, origin: occ.origin, detail: running,
			remedy: "set --authorization-mode=Webhook in " + orCommandLine(occ.from)}
	}
	return outcome{status: Fail, value: "(no --authorization-mode)", origin: "not on the command line",
		detail: "the check text asks for the --authorization-mode option itself, set to Webhook; " + running,
		remedy: "add --authorization-mode=Webhook to the kubelet's command line (KUBELET_EXTRA_ARGS; the kubelet warns that the flag is deprecated in favour of the config file's authorization.mode)"}
}

// stigStaticPods is V-242397: no staticPodPath in the config file, no
// --pod-manifest-path; not applicable where the directory holds the
// control plane's static pods.
func (s *state) stigStaticPods() outcome {
	if p := s.cfg.StaticPodPath; p != "" {
		if found := s.controlPlanePods(p); len(found) > 0 {
			return outcome{status: NotApplicable, value: render(p), origin: s.origin("staticPodPath"),
				detail: fmt.Sprintf("%s holds the control plane's static pods (%s): the rule is for worker nodes", p, strings.Join(found, ", "))}
		}
	}
	o := s.stigSetting(stigRule{flag: "pod-manifest-path", field: "staticPodPath", fix: "", want: `no staticPodPath (or staticPodPath: "")`,
		ok: func(c *v1beta1.KubeletConfiguration, st setting) (bool, string) {
			if c.StaticPodPath == "" {
				return true, ""
			}
			return false, fmt.Sprintf("staticPodPath %s (%s): the kubelet runs every manifest put there, outside admission control", c.StaticPodPath, st.origin)
		}})
	if o.status == Fail && s.kubeadmNode() {
		o.remedy += "; on this kubeadm node kubeadm writes staticPodPath back into the config file from the kube-system/kubelet-config ConfigMap at every 'kubeadm upgrade node': keep the change with kubeletcfg apply -f FILE --persist=patch"
	}
	return o
}

// controlPlanePods names kubeadm's control-plane manifests in the static
// pod directory.
func (s *state) controlPlanePods(dir string) []string {
	names, err := nodefile.ReadDirIn(s.opts.Setup.Root, s.nodePath(dir))
	if err != nil {
		return nil
	}
	var found []string
	for _, n := range kubeadmManifests {
		if slices.Contains(names, n) {
			found = append(found, n)
		}
	}
	return found
}

// kubeadmDropins are the drop-ins of the kubelet unit kubeadm installs
// (10-kubeadm.conf).
func (s *state) kubeadmDropins() []string {
	var out []string
	for _, f := range s.opts.Setup.Files {
		if strings.HasSuffix(path.Dir(f), ".service.d") && strings.Contains(path.Base(f), "kubeadm") && path.Ext(f) == ".conf" {
			out = append(out, f)
		}
	}
	return out
}

// kubeadmNode says whether the kubelet is set up by kubeadm: its unit
// drop-in or its flags file.
func (s *state) kubeadmNode() bool {
	if len(s.kubeadmDropins()) > 0 {
		return true
	}
	for _, f := range s.opts.Setup.Files {
		if path.Base(f) == "kubeadm-flags.env" {
			return true
		}
	}
	return false
}

// stigPodSecurityGate is V-254801: featureGates in the config file with
// PodSecurity true, no --feature-gates. Kubelets without the gate refuse a
// config that names it: the rule then cannot be met as written.
func (s *state) stigPodSecurityGate() outcome {
	g, gone := s.v.RemovedGate("PodSecurity")
	if !gone {
		return s.stigSetting(stigRule{flag: "feature-gates", field: "featureGates.PodSecurity", fix: map[string]bool{"PodSecurity": true}, want: "PodSecurity: true in featureGates",
			ok: func(c *v1beta1.KubeletConfiguration, st setting) (bool, string) {
				if on, ok := c.FeatureGates["PodSecurity"]; ok && on && st.set {
					return true, ""
				}
				return false, "featureGates in the config file does not set PodSecurity to true"
			}})
	}
	o := outcome{status: Manual, value: "(no such gate)", origin: "kubelet " + s.v.Minor,
		detail: fmt.Sprintf("kubelet %s has no PodSecurity gate (the last kubelet with it was %s): setting it, as the check text asks, makes the kubelet refuse to start; Pod Security admission is the API server's (GA since 1.25)", s.v.Minor, g.LastIn)}
	if occ, ok := s.anyFlag("feature-gates"); ok {
		o.status = Fail
		o.value, o.origin = occ.value, occ.origin
		o.detail = "--feature-gates on the command line: the check text makes the option itself a finding; " + o.detail
		o.remedy = "move the gates of --feature-gates into featureGates in the config file and remove the option from " + orCommandLine(occ.from)
	}
	return o
}

// stigConfigFiles judges the kubelet's configuration files: the --config
// file and the .conf files of its --config-dir.
func (s *state) stigConfigFiles(r fileRule) outcome {
	if s.eff.ConfigFile == "" {
		return outcome{status: Pass, value: "(no --config file)", origin: "not on the command line"}
	}
	files := []nodeFile{s.look(s.nodePath(s.eff.ConfigFile))}
	var note string
	if dir := s.eff.ConfigDir; dir != "" {
		tree, err := s.trees.dropins(s.opts.Setup.Root, s.nodePath(dir))
		if err != nil {
			return outcome{status: Warn, value: dir, detail: err.Error()}
		}
		for _, f := range tree {
			if !f.dir && f.err == nil {
				files = append(files, f)
			}
		}
		note = "the --config-dir drop-ins are configuration files too"
	}
	o := s.judgeFiles(files, r, Fail)
	o.origin = "--config " + s.eff.ConfigFile
	if note != "" && o.detail == "" {
		o.detail = note
	}
	return o
}

// stigKubeletConfig judges the config file the check text names as kubeadm
// writes it (/var/lib/kubelet/config.yaml): the --config file.
func (s *state) stigKubeletConfig(r fileRule) outcome {
	o := s.configFileCheck(r)
	if s.eff.ConfigFile != "" && path.Clean(s.nodePath(s.eff.ConfigFile)) != "/var/lib/kubelet/config.yaml" {
		o.detail = strings.TrimPrefix(o.detail+"; the check text names /var/lib/kubelet/config.yaml (kubeadm's --config): judged on the --config file", "; ")
	}
	return o
}

// stigClientCA judges the client CA file; --client-ca-file on the command
// line is a finding.
func (s *state) stigClientCA(r fileRule) outcome {
	ca := s.cfg.Authentication.X509.ClientCAFile
	var o outcome
	if ca == "" {
		o = outcome{status: Fail, value: "(unset)", origin: s.origin("authentication.x509.clientCAFile"), detail: "no client CA file (see V-242420)",
			remedy: "set authentication.x509.clientCAFile in the config file to the cluster's CA bundle (V-242420), a file owned by root:root, 644 or more restrictive"}
	} else {
		o = s.judgeFiles([]nodeFile{s.look(s.nodePath(ca))}, r, Warn)
		o.origin = "authentication.x509.clientCAFile at " + s.origin("authentication.x509.clientCAFile")
	}
	if occ, ok := s.anyFlag("client-ca-file"); ok {
		o.status = Fail
		o.detail = strings.TrimSuffix("--client-ca-file on the command line ("+occ.origin+"): the check text makes the option itself a finding; "+o.detail, "; ")
		o.remedy = strings.TrimSuffix("remove --client-ca-file from "+orCommandLine(occ.from)+" and set authentication.x509.clientCAFile in the config file; "+o.remedy, "; ")
	}
	return o
}

// stigKubeconfig judges the kubelet's kubeconfig: --kubeconfig, else the
// path the check text names.
func (s *state) stigKubeconfig(r fileRule) outcome {
	const textPath = "/etc/kubernetes/kubelet.conf"
	occ, ok := s.flag("kubeconfig")
	if !ok {
		f := s.look(textPath)
		if errors.Is(f.err, fs.ErrNotExist) {
			return outcome{status: Pass, value: "(no --kubeconfig, no " + textPath + ")", origin: "not on the command line"}
		}
		o := s.judgeFiles([]nodeFile{f}, r, Warn)
		o.origin = "the check text's path (no --kubeconfig)"
		return o
	}
	o := s.judgeFiles([]nodeFile{s.look(s.nodePath(occ.value))}, r, Warn)
	if o.status == Warn {
		o.detail += " (the kubelet writes it from --bootstrap-kubeconfig on first start)"
	}
	o.origin = occ.origin
	return o
}

// stigKubeadmConf judges kubeadm's drop-in of the kubelet unit.
func (s *state) stigKubeadmConf(r fileRule) outcome {
	if len(s.opts.Setup.Files) == 0 {
		return outcome{status: Manual, value: "(no unit read)", detail: "the command line was given, not read from kubelet.service: check kubeadm's drop-in of the unit (10-kubeadm.conf)"}
	}
	dropins := s.kubeadmDropins()
	if len(dropins) == 0 {
		return outcome{status: NotApplicable, value: "(no kubeadm drop-in)", origin: s.opts.Setup.Unit,
			detail: "the kubelet unit has no drop-in of kubeadm's (10-kubeadm.conf): not a kubeadm node"}
	}
	var files []nodeFile
	for _, p := range dropins {
		files = append(files, s.look(p))
	}
	return s.judgeFiles(files, r, Warn)
}

// stigPKI judges the files of the component PKI directory keep takes
// (directories too, for ownership).
func (s *state) stigPKI(keep func(string) bool, r fileRule) outcome {
	tree, err := walkTree(s.opts.Setup.Root, pkiDir, keep)
	if err != nil {
		return outcome{status: Warn, value: pkiDir, detail: err.Error()}
	}
	if errors.Is(tree[0].err, fs.ErrNotExist) {
		return outcome{status: Pass, value: "(no " + pkiDir + ")", origin: "the node"}
	}
	var files []nodeFile
	for _, f := range tree {
		if r.ownership || (!f.dir && f.err == nil) {
			files = append(files, f)
		}
	}
	if len(files) == 0 {
		return outcome{status: Pass, value: "(none in " + pkiDir + ")", origin: "the node"}
	}
	return s.judgeFiles(files, r, Warn)
}
