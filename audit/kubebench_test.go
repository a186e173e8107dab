package audit

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"k8s.io/client-go/util/jsonpath"
	"sigs.k8s.io/yaml"

	"github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

// The kubelet checks of kube-bench's cfg/cis-2.0/node.yaml (sections 4.1 and
// 4.2), transcribed: numbering, wording, and each check's tests as kube-bench
// runs them (check/test.go: a test item's "set" is true unless written
// false; the items of a check are and-ed unless bin_op is or).
type kbItem struct {
	flag, path string
	unset      bool // set: false
	op, value  string
}

type kbCheck struct {
	id, text string
	// file is the node file a 4.1 check stats (kube-bench's $kubeletsvc,
	// $kubeletkubeconfig, $kubeletcafile, $kubeletconf as they resolve on
	// the test's node); "" for a 4.2 check, run on the command line, then
	// on the config file.
	file string
	// owner: the audit prints %U:%G rather than permissions=%a.
	owner bool
	// noConfig: the check has no audit_config, only the command line.
	noConfig bool
	or       bool
	items    []kbItem
}

const (
	kbService    = "/etc/systemd/system/kubelet.service"
	kbKubeconfig = "/etc/kubernetes/kubelet.conf"
	kbCA         = "/etc/kubernetes/pki/ca.crt"
	kbConfig     = "/var/lib/kubelet/config.yaml"
	kbCiphers    = "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305,TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305,TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"
)

var cis20 = []kbCheck{
	{id: "4.1.1", text: "Ensure that the kubelet service file permissions are set to 600 or more restrictive (Automated)", file: kbService,
		items: []kbItem{{flag: "permissions", op: "bitmask", value: "600"}}},
	{id: "4.1.2", text: "Ensure that the kubelet service file ownership is set to root:root (Automated)", file: kbService, owner: true, or: true,
		items: []kbItem{{flag: "root:root"}}},
	{id: "4.1.5", text: "Ensure that the --kubeconfig kubelet.conf file permissions are set to 600 or more restrictive (Automated)", file: kbKubeconfig,
		items: []kbItem{{flag: "permissions", op: "bitmask", value: "600"}}},
	{id: "4.1.6", text: "Ensure that the --kubeconfig kubelet.conf file ownership is set to root:root (Automated)", file: kbKubeconfig, owner: true,
		items: []kbItem{{flag: "root:root"}}},
	{id: "4.1.7", text: "Ensure that the certificate authorities file permissions are set to 644 or more restrictive (Manual)", file: kbCA,
		items: []kbItem{{flag: "permissions", op: "bitmask", value: "644"}}},
	{id: "4.1.8", text: "Ensure that the client certificate authorities file ownership is set to root:root (Manual)", file: kbCA, owner: true,
		items: []kbItem{{flag: "root:root", op: "eq", value: "root:root"}}},
	{id: "4.1.9", text: "If the kubelet config.yaml configuration file is being used validate permissions set to 600 or more restrictive (Automated)", file: kbConfig,
		items: []kbItem{{flag: "permissions", op: "bitmask", value: "600"}}},
	{id: "4.1.10", text: "If the kubelet config.yaml configuration file is being used validate file ownership is set to root:root (Automated)", file: kbConfig, owner: true,
		items: []kbItem{{flag: "root:root"}}},
	{id: "4.2.1", text: "Ensure that the --anonymous-auth argument is set to false (Automated)",
		items: []kbItem{{flag: "--anonymous-auth", path: "{.authentication.anonymous.enabled}", op: "eq", value: "false"}}},
	{id: "4.2.2", text: "Ensure that the --authorization-mode argument is not set to AlwaysAllow (Automated)",
		items: []kbItem{{flag: "--authorization-mode", path: "{.authorization.mode}", op: "nothave", value: "AlwaysAllow"}}},
	{id: "4.2.3", text: "Ensure that the --client-ca-file argument is set as appropriate (Automated)",
		items: []kbItem{{flag: "--client-ca-file", path: "{.authentication.x509.clientCAFile}"}}},
	{id: "4.2.4", text: "Verify that if defined, the --read-only-port argument is set to 0 (Manual)", or: true,
		items: []kbItem{{flag: "--read-only-port", path: "{.readOnlyPort}", op: "eq", value: "0"}, {flag: "--read-only-port", path: "{.readOnlyPort}", unset: true}}},
	{id: "4.2.5", text: "Ensure that the --streaming-connection-idle-timeout argument is not set to 0 (Manual)", or: true,
		items: []kbItem{{flag: "--streaming-connection-idle-timeout", path: "{.streamingConnectionIdleTimeout}", op: "noteq", value: "0"},
			{flag: "--streaming-connection-idle-timeout", path: "{.streamingConnectionIdleTimeout}", unset: true}}},
	{id: "4.2.6", text: "Ensure that the --make-iptables-util-chains argument is set to true (Automated)", or: true,
		items: []kbItem{{flag: "--make-iptables-util-chains", path: "{.makeIPTablesUtilChains}", op: "eq", value: "true"},
			{flag: "--make-iptables-util-chains", path: "{.makeIPTablesUtilChains}", unset: true}}},
	{id: "4.2.7", text: "Ensure that the --hostname-override argument is not set (Manual)", noConfig: true,
		items: []kbItem{{flag: "--hostname-override", unset: true}}},
	{id: "4.2.8", text: "Ensure that the eventRecordQPS argument is set to a level which ensures appropriate event capture (Manual)", or: true,
		items: []kbItem{{flag: "--event-qps", path: "{.eventRecordQPS}", op: "gte", value: "0"}, {flag: "--event-qps", path: "{.eventRecordQPS}", unset: true}}},
	{id: "4.2.9", text: "Ensure that the --tls-cert-file and --tls-private-key-file arguments are set as appropriate (Manual)",
		items: []kbItem{{flag: "--tls-cert-file", path: "{.tlsCertFile}"}, {flag: "--tls-private-key-file", path: "{.tlsPrivateKeyFile}"}}},
	{id: "4.2.10", text: "Ensure that the --rotate-certificates argument is not set to false (Automated)", or: true,
		items: []kbItem{{flag: "--rotate-certificates", path: "{.rotateCertificates}", op: "eq", value: "true"},
			{flag: "--rotate-certificates", path: "{.rotateCertificates}", unset: true}}},
	{id: "4.2.11", text: "Verify that the RotateKubeletServerCertificate argument is set to true (Manual)", or: true,
		items: []kbItem{{flag: "RotateKubeletServerCertificate", path: "{.featureGates.RotateKubeletServerCertificate}", op: "nothave", value: "false"},
			{flag: "RotateKubeletServerCertificate", path: "{.featureGates.RotateKubeletServerCertificate}", unset: true}}},
	{id: "4.2.12", text: "Ensure that the Kubelet only makes use of Strong Cryptographic Ciphers (Manual)",
		items: []kbItem{{flag: "--tls-cipher-suites", path: "{range .tlsCipherSuites[:]}{}{','}{end}", op: "valid_elements", value: kbCiphers}}},
	{id: "4.2.13", text: "Ensure that a limit is set on pod PIDs (Manual)",
		items: []kbItem{{flag: "--pod-max-pids", path: "{.podPidsLimit}"}}},
	{id: "4.2.14", text: "Ensure that the --seccomp-default parameter is set to true (Manual)",
		items: []kbItem{{flag: "--seccomp-default", path: "{.seccompDefault}"}}},
}

// kubeBench runs a check as kube-bench does on the node under root: a 4.1
// check on its file's stat line; a 4.2 check on the kubelet's command line
// (ps), and only when that fails on the config file.
func kubeBench(t *testing.T, c kbCheck, root, cmdline string) bool {
	t.Helper()
	if c.file != "" {
		fi, err := os.Stat(filepath.Join(root, c.file))
		if err != nil {
			return false // stat prints nothing: no test item matches
		}
		out := fmt.Sprintf("permissions=%o", fi.Mode().Perm())
		if c.owner {
			st := fi.Sys().(*syscall.Stat_t)
			out = fmt.Sprintf("%s:%s", name(st.Uid), name(st.Gid))
		}
		return c.run(t, func(it kbItem) (bool, string) { return kbFind(it.flag, out) })
	}
	if onCmd := c.run(t, func(it kbItem) (bool, string) { return kbFind(it.flag, cmdline) }); onCmd || c.noConfig {
		return onCmd
	}
	raw, err := os.ReadFile(filepath.Join(root, kbConfig))
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	return c.run(t, func(it kbItem) (bool, string) {
		j := jsonpath.New("kb")
		j.AllowMissingKeys(true)
		if err := j.Parse(it.path); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		if err := j.Execute(&b, doc); err != nil {
			t.Fatal(err)
		}
		return b.String() != "", b.String()
	})
}

func name(id uint32) string {
	if id == 0 {
		return "root"
	}
	return strconv.Itoa(int(id))
}

// kbFind finds a flag in an audit's output as kube-bench does: the flag
// anywhere in it, its value after = or : (a bare --flag is true).
func kbFind(flag, out string) (bool, string) {
	if !strings.Contains(out, flag) {
		return false, ""
	}
	m := regexp.MustCompile(`(` + flag + `)(=|: *)*([^\s]*) *`).FindStringSubmatch(out)
	switch {
	case m[3] != "":
		return true, m[3]
	case strings.HasPrefix(flag, "--"):
		return true, "true"
	}
	return true, m[1]
}

func (c kbCheck) run(t *testing.T, find func(kbItem) (bool, string)) bool {
	any, all := false, true
	for _, it := range c.items {
		match, val := find(it)
		var ok bool
		switch {
		case it.unset:
			ok = !match
		case match && it.op != "":
			ok = compare(t, it.op, val, it.value)
		default:
			ok = match
		}
		any, all = any || ok, all && ok
	}
	if c.or {
		return any
	}
	return all
}

func compare(t *testing.T, op, got, want string) bool {
	switch op {
	case "eq":
		if l := strings.ToLower(got); l == "true" || l == "false" {
			return l == want
		}
		return got == want
	case "noteq":
		if l := strings.ToLower(got); l == "true" || l == "false" {
			return l != want
		}
		return got != want
	case "gte":
		a, err1 := strconv.Atoi(strings.TrimSpace(got))
		b, err2 := strconv.Atoi(want)
		return err1 == nil && err2 == nil && a >= b
	case "nothave":
		return !strings.Contains(got, want)
	case "valid_elements":
		split := func(s string) []string {
			s = strings.TrimRight(strings.TrimSpace(s), ",")
			if s == "" {
				return nil
			}
			return strings.Split(s, ",")
		}
		have, allowed := split(got), split(want)
		if len(have) == 0 || len(allowed) == 0 {
			return len(have) == len(allowed)
		}
		for _, h := range have {
			if !contains(allowed, strings.TrimSpace(h)) {
				return false
			}
		}
		return true
	case "bitmask":
		g, err1 := strconv.ParseInt(strings.TrimPrefix(got, "permissions="), 8, 64)
		w, err2 := strconv.ParseInt(want, 8, 64)
		return err1 == nil && err2 == nil && w&g == g
	}
	t.Fatalf("op %s not transcribed", op)
	return false
}

// cis-2.0 has kube-bench's numbering and wording for every kubelet check, and
// only the kube-proxy checks (4.1.3, 4.1.4; 4.3.1) are left out.
func TestCIS20WordingIsKubeBenchs(t *testing.T) {
	b, _, err := pickBenchmark("cis-2.0", schema.Newest())
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]*check{}
	for _, c := range checks {
		if c.section == SectionCIS && c.in(b) {
			byID[c.id] = c
		}
	}
	for _, kb := range cis20 {
		c, ok := byID[kb.id]
		if !ok {
			t.Errorf("%s: not in cis-2.0", kb.id)
			continue
		}
		if got := c.titleFor(b); got != kb.text {
			t.Errorf("%s: %q, kube-bench words it %q", kb.id, got, kb.text)
		}
		delete(byID, kb.id)
	}
	for id := range byID {
		if !strings.HasSuffix(id, "d") { // 4.1.9d, 4.1.10d: kubeletcfg's own, for --config-dir
			t.Errorf("%s: in cis-2.0, not in kube-bench's", id)
		}
	}
	if !slicesEqual(b.ciphers, strings.Split(kbCiphers, ",")) {
		t.Errorf("4.2.12 suites %v, kube-bench's %s", b.ciphers, kbCiphers)
	}
}

func slicesEqual(a, b []string) bool {
	return strings.Join(a, ",") == strings.Join(b, ",")
}

// kbCase changes the secure node; each check kube-bench has is then judged
// by kube-bench's tests and by kubeletcfg's audit, which must agree, except
// where disagree says why they do not (and then they must differ).
type kbCase struct {
	name     string
	node     func(t *testing.T, n nodeTree) nodeTree
	root     bool // needs root (file owners)
	disagree map[string]string
}

func mode(p string, m os.FileMode) func(t *testing.T, n nodeTree) nodeTree {
	return func(t *testing.T, n nodeTree) nodeTree {
		f := n[p]
		f.mode = m
		return n.with(p, f)
	}
}

func owner(p string) func(t *testing.T, n nodeTree) nodeTree {
	return func(t *testing.T, n nodeTree) nodeTree {
		f := n[p]
		f.uid = 1000
		return n.with(p, f)
	}
}

func setConfig(old, new string) func(t *testing.T, n nodeTree) nodeTree {
	return func(t *testing.T, n nodeTree) nodeTree { return n.config(t, old, new) }
}

func extraArgs(args string) func(t *testing.T, n nodeTree) nodeTree {
	return func(t *testing.T, n nodeTree) nodeTree {
		return n.with("/etc/default/kubelet", file{data: "KUBELET_EXTRA_ARGS=" + args + "\n"})
	}
}

// The secure node has no serving certificate files: serverTLSBootstrap
// gets one signed through the API server.
const kbServing = "4.2.9: kube-bench asks for tlsCertFile and tlsPrivateKeyFile; with serverTLSBootstrap the kubelet's serving certificate is signed through the API server, which kubeletcfg accepts"

var kbCases = []kbCase{
	{name: "secure node", disagree: map[string]string{"4.2.9": kbServing}},
	{name: "serving certificate files", node: setConfig("serverTLSBootstrap: true", "serverTLSBootstrap: true\ntlsCertFile: /var/lib/kubelet/pki/kubelet.crt\ntlsPrivateKeyFile: /var/lib/kubelet/pki/kubelet.key")},
	{name: "service file 0644", node: mode(kbService, 0o644), disagree: map[string]string{"4.2.9": kbServing}},
	{name: "service file owner", root: true, node: owner(kbService), disagree: map[string]string{"4.2.9": kbServing}},
	{name: "kubeconfig 0640", node: mode(kbKubeconfig, 0o640), disagree: map[string]string{"4.2.9": kbServing}},
	{name: "kubeconfig owner", root: true, node: owner(kbKubeconfig), disagree: map[string]string{"4.2.9": kbServing}},
	{name: "client CA 0664", node: mode(kbCA, 0o664), disagree: map[string]string{"4.2.9": kbServing}},
	{name: "client CA 0600", node: mode(kbCA, 0o600), disagree: map[string]string{"4.2.9": kbServing}},
	{name: "client CA owner", root: true, node: owner(kbCA), disagree: map[string]string{"4.2.9": kbServing}},
	{name: "config 0644", node: mode(kbConfig, 0o644), disagree: map[string]string{"4.2.9": kbServing}},
	{name: "config owner", root: true, node: owner(kbConfig), disagree: map[string]string{"4.2.9": kbServing}},
	{name: "anonymous auth on", node: setConfig("enabled: false", "enabled: true"), disagree: map[string]string{"4.2.9": kbServing}},
	{name: "anonymous auth off by flag over the file", node: func(t *testing.T, n nodeTree) nodeTree {
		return extraArgs("--anonymous-auth=false")(t, n.config(t, "enabled: false", "enabled: true"))
	}, disagree: map[string]string{"4.2.9": kbServing}},
	{name: "anonymous auth on by flag over the file", node: extraArgs("--anonymous-auth=true"), disagree: map[string]string{
		"4.2.9": kbServing,
		"4.2.1": "the flag fails kube-bench's test, so it judges the file, which says false; the kubelet runs with the flag",
	}},
	{name: "AlwaysAllow", node: setConfig("mode: Webhook", "mode: AlwaysAllow"), disagree: map[string]string{"4.2.9": kbServing}},
	{name: "no client CA", node: setConfig("    clientCAFile: /etc/kubernetes/pki/ca.crt\n", ""), disagree: map[string]string{
		"4.2.9": kbServing,
		"4.1.7": "without --client-ca-file on the command line kube-bench stats its default, /etc/kubernetes/pki/ca.crt, which the kubelet does not use",
		"4.1.8": "without --client-ca-file on the command line kube-bench stats its default, /etc/kubernetes/pki/ca.crt, which the kubelet does not use",
	}},
	{name: "read-only port open", node: setConfig("readOnlyPort: 0", "readOnlyPort: 10255"), disagree: map[string]string{
		"4.2.9": kbServing,
		"4.2.4": "kube-bench passes a --read-only-port absent from the command line without reading the file",
	}},
	// The kubelet defaults a zero timeout in the file to 4h: only the flag
	// disables it.
	{name: "streaming timeout 0s in the file", node: setConfig("readOnlyPort: 0", "readOnlyPort: 0\nstreamingConnectionIdleTimeout: 0s"), disagree: map[string]string{"4.2.9": kbServing}},
	{name: "streaming timeout 0 by flag", node: extraArgs("--streaming-connection-idle-timeout=0"), disagree: map[string]string{
		"4.2.9": kbServing,
		"4.2.5": "the flag fails kube-bench's test, so it judges the file, which does not set it; the kubelet runs with the flag's 0",
	}},
	{name: "no iptables util chains", node: setConfig("readOnlyPort: 0", "readOnlyPort: 0\nmakeIPTablesUtilChains: false"), disagree: map[string]string{
		"4.2.9": kbServing,
		"4.2.6": "kube-bench passes a flag absent from the command line without reading the file",
	}},
	{name: "hostname override", node: extraArgs("--hostname-override=node-a"), disagree: map[string]string{"4.2.9": kbServing}},
	{name: "no certificate rotation", node: setConfig("rotateCertificates: true", "rotateCertificates: false"), disagree: map[string]string{
		"4.2.9":  kbServing,
		"4.2.10": "kube-bench passes a flag absent from the command line without reading the file",
	}},
	{name: "server certificate rotation gate off", node: setConfig("readOnlyPort: 0", "readOnlyPort: 0\nfeatureGates:\n  RotateKubeletServerCertificate: false"), disagree: map[string]string{
		"4.2.9":  kbServing,
		"4.2.11": "kube-bench passes a gate absent from the command line without reading the file",
	}},
	{name: "an RSA key exchange suite", node: setConfig("- TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "- TLS_RSA_WITH_AES_128_GCM_SHA256"), disagree: map[string]string{"4.2.9": kbServing}},
	{name: "no cipher suites", node: setConfig("tlsCipherSuites:\n- TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256\n- TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384\n", ""), disagree: map[string]string{"4.2.9": kbServing}},
	{name: "no pid limit", node: setConfig("podPidsLimit: 4096\n", ""), disagree: map[string]string{"4.2.9": kbServing}},
	{name: "pid limit -1", node: setConfig("podPidsLimit: 4096", "podPidsLimit: -1"), disagree: map[string]string{
		"4.2.9":  kbServing,
		"4.2.13": "kube-bench only asks that podPidsLimit be set; -1 is no limit",
	}},
	{name: "seccomp default off", node: setConfig("seccompDefault: true", "seccompDefault: false"), disagree: map[string]string{
		"4.2.9":  kbServing,
		"4.2.14": "kube-bench only asks that seccompDefault be set; false is the kubelet's default",
	}},
}

func TestCIS20AgainstKubeBench(t *testing.T) {
	v, err := schema.Resolve("1.34")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range kbCases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.root && !isRoot() {
				t.Skip("needs root to own files")
			}
			n := secureNode()
			if tc.node != nil {
				n = tc.node(t, n)
			}
			root := n.write(t)
			setup, err := node.ReadSetupAs(v, node.Source{Root: root})
			if err != nil {
				t.Fatal(err)
			}
			rep, err := Run(Options{Setup: setup, Benchmark: "auto", Sections: []string{SectionCIS}})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Benchmark != "cis-2.0" {
				t.Fatalf("kubelet 1.34 audited against %s", rep.Benchmark)
			}
			cmdline := "/usr/bin/kubelet " + strings.Join(setup.Args, " ")
			for _, kb := range cis20 {
				if kb.owner && !isRoot() {
					continue
				}
				theirs := kubeBench(t, kb, root, cmdline)
				r := result(t, rep, kb.id)
				ours := r.Status == Pass
				why, differ := tc.disagree[kb.id]
				switch {
				case differ && ours == theirs:
					t.Errorf("%s: both %t, but the case says they disagree: %s", kb.id, ours, why)
				case !differ && ours != theirs:
					t.Errorf("%s: kube-bench passes: %t, kubeletcfg: %s (%s; %s %s)", kb.id, theirs, r.Status, r.Value, r.Origin, r.Detail)
				}
			}
		})
	}
}
