package audit

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"k8s.io/kubelet/config/v1beta1"

	"github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

// file is one file of a node tree.
type file struct {
	data string
	mode fs.FileMode // 0: 0600
	uid  int         // owner and group; 0 is root
	link string      // a symbolic link to this target instead
	dir  bool
}

// nodeTree is a node's files by node path.
type nodeTree map[string]file

const secureConfig = `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: /etc/kubernetes/pki/ca.crt
authorization:
  mode: Webhook
readOnlyPort: 0
rotateCertificates: true
serverTLSBootstrap: true
tlsCipherSuites:
- TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256
- TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384
podPidsLimit: 4096
seccompDefault: true
kubeReserved:
  memory: 256Mi
shutdownGracePeriod: 30s
shutdownGracePeriodCriticalPods: 10s
cgroupDriver: systemd
containerRuntimeEndpoint: unix:///run/containerd/containerd.sock
`

const unit = `[Unit]
Description=kubelet
[Service]
Environment=KUBELET_CONFIG_DROPIN_DIR_ALPHA=on
EnvironmentFile=-/etc/default/kubelet
ExecStart=/usr/bin/kubelet --config=/var/lib/kubelet/config.yaml --config-dir=/etc/kubernetes/kubelet.conf.d --kubeconfig=/etc/kubernetes/kubelet.conf $KUBELET_EXTRA_ARGS
`

const containerdSystemd = `version = 2
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
  SystemdCgroup = true
`

// secureNode passes every check (with kubelet 1.29 or newer: see
// secureNode128).
func secureNode() nodeTree {
	return nodeTree{
		"/etc/systemd/system/kubelet.service":                  {data: unit},
		"/etc/default/kubelet":                                 {data: "KUBELET_EXTRA_ARGS=\n"},
		"/var/lib/kubelet/config.yaml":                         {data: secureConfig},
		"/etc/kubernetes/kubelet.conf.d":                       {dir: true, mode: 0o755},
		"/etc/kubernetes/kubelet.conf.d/10-pods.conf":          {data: "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: 110\n"},
		"/etc/kubernetes/kubelet.conf":                         {data: "apiVersion: v1\nkind: Config\n"},
		"/etc/kubernetes/pki/ca.crt":                           {data: "-----BEGIN CERTIFICATE-----\n", mode: 0o644},
		"/etc/containerd/config.toml":                          {data: containerdSystemd, mode: 0o644},
		"/etc/kubernetes/kubelet.conf.d/ignored.yaml":          {data: "not read: only .conf files are\n", mode: 0o666},
		"/var/lib/kubelet/pki/kubelet-server-current.pem.keep": {data: "x"},
	}
}

// secureNode128 passes every check with kubelet 1.28, whose drop-ins reset
// what they do not set to the defaults (each is loaded as a whole config
// file), and under cis-1.10, which allows 600 on the client CA file.
func secureNode128() nodeTree {
	return secureNode().
		with("/etc/kubernetes/kubelet.conf.d/10-pods.conf", file{data: secureConfig + "maxPods: 110\n"}).
		with("/etc/kubernetes/pki/ca.crt", file{data: "x", mode: 0o600})
}

func secureFor(version string) nodeTree {
	if version == "1.28" {
		return secureNode128()
	}
	return secureNode()
}

func (n nodeTree) with(p string, f file) nodeTree { n[p] = f; return n }

// config replaces old by new in the config file.
func (n nodeTree) config(t *testing.T, old, new string) nodeTree {
	t.Helper()
	f := n["/var/lib/kubelet/config.yaml"]
	if !strings.Contains(f.data, old) {
		t.Fatalf("config lacks %q", old)
	}
	f.data = strings.Replace(f.data, old, new, 1)
	n["/var/lib/kubelet/config.yaml"] = f
	return n
}

func isRoot() bool { return os.Getuid() == 0 }

// write lays the tree out under a new root; directories are made 0755.
func (n nodeTree) write(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for p, f := range n {
		host := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(host), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := f.mode
		if mode == 0 {
			mode = 0o600
		}
		switch {
		case f.link != "":
			if err := os.Symlink(f.link, host); err != nil {
				t.Fatal(err)
			}
			continue
		case f.dir:
			if err := os.MkdirAll(host, mode); err != nil {
				t.Fatal(err)
			}
		default:
			if err := os.WriteFile(host, []byte(f.data), mode); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chmod(host, mode); err != nil {
			t.Fatal(err)
		}
		if isRoot() {
			if err := os.Lchown(host, f.uid, f.uid); err != nil {
				t.Fatal(err)
			}
		}
	}
	return root
}

// run audits a node tree as `kubeletcfg audit --root` does: the command line
// from its kubelet.service, or args when given.
func run(t *testing.T, n nodeTree, version string, args []string, podCIDR string) (*Report, string) {
	t.Helper()
	root := n.write(t)
	rep, err := runAt(t, root, version, args, podCIDR)
	if err != nil {
		t.Fatal(err)
	}
	return rep, root
}

func runAt(t *testing.T, root, version string, args []string, podCIDR string) (*Report, error) {
	t.Helper()
	v, err := schema.Resolve(version)
	if err != nil {
		t.Fatal(err)
	}
	setup, err := node.ReadSetupAs(v, node.Source{Root: root, Args: args, Dashed: args != nil})
	if err != nil {
		t.Fatal(err)
	}
	return Run(Options{Setup: setup, PodCIDR: podCIDR})
}

func result(t *testing.T, rep *Report, id string) Result {
	t.Helper()
	for _, r := range rep.Results {
		if r.ID == id {
			return r
		}
	}
	t.Fatalf("no result %s in %+v", id, rep.Results)
	return Result{}
}

// ownership lists the checks of file owners: files a test writes are root's
// only when it runs as root.
var ownership = []string{"4.1.2", "4.1.6", "4.1.8", "4.1.10", "4.1.10d"}

func TestSecureNodePassesEveryCheck(t *testing.T) {
	for _, version := range []string{"1.28", "1.31", "1.33", "1.37"} {
		t.Run(version, func(t *testing.T) {
			rep, _ := run(t, secureFor(version), version, nil, "10.244.3.0/24")
			if len(rep.Results) < 30 {
				t.Fatalf("%d results, want every check", len(rep.Results))
			}
			for _, r := range rep.Results {
				if !isRoot() && contains(ownership, r.ID) {
					continue
				}
				if r.Status != Pass {
					t.Errorf("%s %s: %s, value %s (%s) %s", r.ID, r.Title, r.Status, r.Value, r.Origin, r.Detail)
				}
				if r.Remediation != "" {
					t.Errorf("%s passes with a remediation %q", r.ID, r.Remediation)
				}
			}
		})
	}
}

// A case mutates the secure node so that one check does not pass.
type failCase struct {
	name    string
	version string // default 1.33
	node    func(t *testing.T, n nodeTree) nodeTree
	args    []string // the command line instead of the unit's
	podCIDR string
	id      string
	status  Status
	// value, origin and fix are substrings of the result's fields.
	value, origin, fix string
	root               bool // needs root (file ownership)
}

var failCases = []failCase{
	// 4.1: modes and owners on the node tree.
	{name: "service file mode", id: "4.1.1", status: Fail, value: "/etc/systemd/system/kubelet.service 0644",
		fix: "chmod 600 /etc/systemd/system/kubelet.service", node: func(t *testing.T, n nodeTree) nodeTree {
			f := n["/etc/systemd/system/kubelet.service"]
			f.mode = 0o644
			return n.with("/etc/systemd/system/kubelet.service", f)
		}},
	{name: "environment file mode", id: "4.1.1", status: Fail, fix: "chmod 600 /etc/default/kubelet", node: func(t *testing.T, n nodeTree) nodeTree {
		return n.with("/etc/default/kubelet", file{data: "KUBELET_EXTRA_ARGS=\n", mode: 0o640})
	}},
	{name: "service file owner", id: "4.1.2", status: Fail, root: true, value: "1000:1000", fix: "chown root:root /etc/systemd/system/kubelet.service",
		node: func(t *testing.T, n nodeTree) nodeTree {
			return n.with("/etc/systemd/system/kubelet.service", file{data: unit, uid: 1000})
		}},
	{name: "command line given: no unit", id: "4.1.1", status: Manual, args: []string{"--config=/var/lib/kubelet/config.yaml"}},
	{name: "kubeconfig mode", id: "4.1.5", status: Fail, origin: "flag --kubeconfig (from /etc/systemd/system/kubelet.service:6)",
		fix: "chmod 600 /etc/kubernetes/kubelet.conf", node: func(t *testing.T, n nodeTree) nodeTree {
			return n.with("/etc/kubernetes/kubelet.conf", file{data: "x", mode: 0o644})
		}},
	{name: "kubeconfig not there yet", id: "4.1.5", status: Warn, value: "/etc/kubernetes/kubelet.conf (missing)", node: func(t *testing.T, n nodeTree) nodeTree {
		delete(n, "/etc/kubernetes/kubelet.conf")
		return n
	}},
	{name: "kubeconfig owner", id: "4.1.6", status: Fail, root: true, node: func(t *testing.T, n nodeTree) nodeTree {
		return n.with("/etc/kubernetes/kubelet.conf", file{data: "x", uid: 1000})
	}},
	{name: "client CA mode", id: "4.1.7", status: Fail, value: "/etc/kubernetes/pki/ca.crt 0664", fix: "chmod 644 /etc/kubernetes/pki/ca.crt",
		node: func(t *testing.T, n nodeTree) nodeTree {
			return n.with("/etc/kubernetes/pki/ca.crt", file{data: "x", mode: 0o664})
		}},
	// cis-1.10 (kubelet 1.28) allows 600 on the CA file, cis-1.11 644.
	{name: "client CA 644 under cis-1.10", version: "1.28", id: "4.1.7", status: Fail, fix: "chmod 600 /etc/kubernetes/pki/ca.crt",
		node: func(t *testing.T, n nodeTree) nodeTree {
			return n.with("/etc/kubernetes/pki/ca.crt", file{data: "x", mode: 0o644})
		}},
	{name: "client CA behind a link in the root", id: "4.1.7", status: Fail, value: "/etc/kubernetes/pki/ca.crt -> /srv/pki/ca.pem 0666",
		node: func(t *testing.T, n nodeTree) nodeTree {
			n["/srv/pki/ca.pem"] = file{data: "x", mode: 0o666}
			return n.with("/etc/kubernetes/pki/ca.crt", file{link: "/srv/pki/ca.pem"})
		}},
	{name: "client CA owner", id: "4.1.8", status: Fail, root: true, node: func(t *testing.T, n nodeTree) nodeTree {
		return n.with("/etc/kubernetes/pki/ca.crt", file{data: "x", mode: 0o644, uid: 1000})
	}},
	{name: "config file mode", id: "4.1.9", status: Fail, value: "/var/lib/kubelet/config.yaml 0644", node: func(t *testing.T, n nodeTree) nodeTree {
		f := n["/var/lib/kubelet/config.yaml"]
		f.mode = 0o644
		return n.with("/var/lib/kubelet/config.yaml", f)
	}},
	// kube-bench stats /var/lib/kubelet/config.yaml; the kubelet reads the
	// file --config names.
	{name: "config at a non-default path", id: "4.1.9", status: Fail, value: "/etc/kubelet/custom.yaml 0640",
		args: []string{"--config=/etc/kubelet/custom.yaml"}, node: func(t *testing.T, n nodeTree) nodeTree {
			return n.with("/etc/kubelet/custom.yaml", file{data: secureConfig, mode: 0o640})
		}},
	// A systemd service runs in /: a relative --config is a path under /.
	{name: "relative config", id: "4.1.9", status: Fail, value: "/etc/kubelet/relative.yaml 0604", origin: "--config etc/kubelet/relative.yaml",
		args: []string{"--config=etc/kubelet/relative.yaml"}, node: func(t *testing.T, n nodeTree) nodeTree {
			return n.with("/etc/kubelet/relative.yaml", file{data: secureConfig, mode: 0o604})
		}},
	{name: "config file owner", id: "4.1.10", status: Fail, root: true, node: func(t *testing.T, n nodeTree) nodeTree {
		f := n["/var/lib/kubelet/config.yaml"]
		f.uid = 1000
		return n.with("/var/lib/kubelet/config.yaml", f)
	}},
	{name: "drop-in directory writable by all", id: "4.1.9d", status: Fail, value: "/etc/kubernetes/kubelet.conf.d 0777", node: func(t *testing.T, n nodeTree) nodeTree {
		return n.with("/etc/kubernetes/kubelet.conf.d", file{dir: true, mode: 0o777})
	}},
	{name: "drop-in in a subdirectory readable by all", id: "4.1.9d", status: Fail, fix: "/etc/kubernetes/kubelet.conf.d/sub/20-x.conf", node: func(t *testing.T, n nodeTree) nodeTree {
		n["/etc/kubernetes/kubelet.conf.d/sub"] = file{dir: true, mode: 0o755}
		return n.with("/etc/kubernetes/kubelet.conf.d/sub/20-x.conf", file{data: "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n", mode: 0o644})
	}},
	{name: "drop-in owner", id: "4.1.10d", status: Fail, root: true, fix: "chown root:root /etc/kubernetes/kubelet.conf.d/10-pods.conf", node: func(t *testing.T, n nodeTree) nodeTree {
		f := n["/etc/kubernetes/kubelet.conf.d/10-pods.conf"]
		f.uid = 1000
		return n.with("/etc/kubernetes/kubelet.conf.d/10-pods.conf", f)
	}},

	// 4.2: settings, wherever the effective value comes from.
	{name: "anonymous auth in the config file", id: "4.2.1", status: Fail, value: "true", origin: "/var/lib/kubelet/config.yaml:5",
		fix: "set authentication.anonymous.enabled: false in /var/lib/kubelet/config.yaml", node: func(t *testing.T, n nodeTree) nodeTree {
			return n.config(t, "    enabled: false", "    enabled: true")
		}},
	{name: "anonymous auth set only in a drop-in", id: "4.2.1", status: Fail, value: "true", origin: "kubelet.conf.d/50-debug.conf:5",
		fix: "in the drop-in /etc/kubernetes/kubelet.conf.d/50-debug.conf", node: func(t *testing.T, n nodeTree) nodeTree {
			return n.with("/etc/kubernetes/kubelet.conf.d/50-debug.conf", file{data: "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nauthentication:\n  anonymous:\n    enabled: true\n"})
		}},
	{name: "anonymous auth by a flag in /etc/default/kubelet", id: "4.2.1", status: Fail, value: "true",
		origin: "flag --anonymous-auth (from /etc/default/kubelet:1 ($KUBELET_EXTRA_ARGS))", fix: "remove --anonymous-auth from /etc/default/kubelet:1",
		node: func(t *testing.T, n nodeTree) nodeTree {
			return n.with("/etc/default/kubelet", file{data: "KUBELET_EXTRA_ARGS=--anonymous-auth=true\n"})
		}},
	// A kubelet without --config runs on the flags' defaults.
	{name: "legacy node: anonymous auth", id: "4.2.1", status: Fail, value: "true", origin: "flags-only default", fix: "kubeletcfg migrate --secure",
		args: []string{"--kubeconfig=/etc/kubernetes/kubelet.conf"}},
	{name: "legacy node: AlwaysAllow", id: "4.2.2", status: Fail, value: `"AlwaysAllow"`, origin: "flags-only default",
		fix: `set authorization.mode: "Webhook" in a --config file`, args: []string{"--kubeconfig=/etc/kubernetes/kubelet.conf"}},
	{name: "legacy node: read-only port", id: "4.2.4", status: Fail, value: "10255", origin: "flags-only default",
		args: []string{"--kubeconfig=/etc/kubernetes/kubelet.conf"}},
	{name: "AlwaysAllow in the config file", id: "4.2.2", status: Fail, origin: "config.yaml:11", node: func(t *testing.T, n nodeTree) nodeTree {
		return n.config(t, "mode: Webhook", "mode: AlwaysAllow")
	}},
	{name: "no client CA", id: "4.2.3", status: Fail, value: "(unset)", fix: "authentication.x509.clientCAFile", node: func(t *testing.T, n nodeTree) nodeTree {
		return n.config(t, "    clientCAFile: /etc/kubernetes/pki/ca.crt\n", "")
	}},
	{name: "client CA missing on the node", id: "4.2.3", status: Warn, node: func(t *testing.T, n nodeTree) nodeTree {
		delete(n, "/etc/kubernetes/pki/ca.crt")
		return n
	}},
	{name: "read-only port", id: "4.2.4", status: Fail, value: "10255", fix: "set readOnlyPort: 0", node: func(t *testing.T, n nodeTree) nodeTree {
		return n.config(t, "readOnlyPort: 0", "readOnlyPort: 10255")
	}},
	// A 0s in a config file is defaulted to 4h; only a flag sets 0.
	{name: "streaming idle timeout 0", id: "4.2.5", status: Fail, value: `"0s"`, origin: "flag --streaming-connection-idle-timeout", node: func(t *testing.T, n nodeTree) nodeTree {
		return n.with("/etc/default/kubelet", file{data: "KUBELET_EXTRA_ARGS=--streaming-connection-idle-timeout=0\n"})
	}},
	{name: "iptables util chains off", id: "4.2.6", status: Fail, value: "false", node: func(t *testing.T, n nodeTree) nodeTree {
		return n.config(t, "podPidsLimit: 4096", "podPidsLimit: 4096\nmakeIPTablesUtilChains: false")
	}},
	{name: "hostname override", id: "4.2.7", status: Fail, value: "worker-1", origin: "/etc/default/kubelet:1", fix: "remove --hostname-override from /etc/default/kubelet:1",
		node: func(t *testing.T, n nodeTree) nodeTree {
			return n.with("/etc/default/kubelet", file{data: "KUBELET_EXTRA_ARGS=--hostname-override=worker-1\n"})
		}},
	{name: "negative event QPS", id: "4.2.8", status: Fail, value: "-1", node: func(t *testing.T, n nodeTree) nodeTree {
		return n.config(t, "podPidsLimit: 4096", "podPidsLimit: 4096\neventRecordQPS: -1")
	}},
	{name: "self-signed serving certificate", id: "4.2.9", status: Fail, node: func(t *testing.T, n nodeTree) nodeTree {
		return n.config(t, "serverTLSBootstrap: true", "serverTLSBootstrap: false")
	}},
	{name: "certificate rotation off by default", id: "4.2.10", status: Fail, value: "false", origin: "default (1.33)", node: func(t *testing.T, n nodeTree) nodeTree {
		return n.config(t, "rotateCertificates: true\n", "")
	}},
	{name: "server certificate gate off", id: "4.2.11", status: Fail, value: "false", origin: "/etc/default/kubelet:1", node: func(t *testing.T, n nodeTree) nodeTree {
		return n.with("/etc/default/kubelet", file{data: "KUBELET_EXTRA_ARGS=--feature-gates=RotateKubeletServerCertificate=false\n"})
	}},
	{name: "server certificate not bootstrapped", id: "4.2.11", status: Warn, node: func(t *testing.T, n nodeTree) nodeTree {
		return n.config(t, "serverTLSBootstrap: true", "serverTLSBootstrap: false\ntlsCertFile: /a\ntlsPrivateKeyFile: /b")
	}},
	{name: "weak cipher", id: "4.2.12", status: Fail, fix: "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", node: func(t *testing.T, n nodeTree) nodeTree {
		return n.config(t, "- TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "- TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA")
	}},
	// cis-1.12 (kubelets 1.32+) drops the RSA key exchange suites.
	{name: "RSA key exchange under cis-1.12", id: "4.2.12", status: Fail, node: func(t *testing.T, n nodeTree) nodeTree {
		return n.config(t, "- TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "- TLS_RSA_WITH_AES_128_GCM_SHA256")
	}},
	{name: "ciphers unset", id: "4.2.12", status: Fail, value: "(unset)", node: func(t *testing.T, n nodeTree) nodeTree {
		return n.config(t, "- TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256\n- TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384\n", "").config(t, "tlsCipherSuites:\n", "")
	}},
	// A 1.28 drop-in is loaded as a whole config file: what it does not
	// set goes back to the default over the config file's value.
	{name: "1.28 drop-in resets the config file's limit", version: "1.28", id: "4.2.13", status: Fail, value: "-1", origin: "kubelet.conf.d/10-pods.conf",
		fix: "in the drop-in /etc/kubernetes/kubelet.conf.d/10-pods.conf", node: func(t *testing.T, n nodeTree) nodeTree {
			return n.with("/etc/kubernetes/kubelet.conf.d/10-pods.conf", file{data: strings.Replace(secureConfig, "podPidsLimit: 4096\n", "", 1)})
		}},
	{name: "no pod PID limit", id: "4.2.13", status: Fail, value: "-1", origin: "default (1.33)", node: func(t *testing.T, n nodeTree) nodeTree {
		return n.config(t, "podPidsLimit: 4096\n", "")
	}},
	{name: "seccomp default off", id: "4.2.14", status: Fail, value: "false", node: func(t *testing.T, n nodeTree) nodeTree {
		return n.config(t, "seccompDefault: true", "seccompDefault: false")
	}},

	// Operational rules.
	{name: "heartbeat beyond the grace period", id: "ops.heartbeat", status: Fail, node: func(t *testing.T, n nodeTree) nodeTree {
		return n.config(t, "podPidsLimit: 4096", "podPidsLimit: 4096\nnodeLeaseDurationSeconds: 240\nnodeStatusUpdateFrequency: 1m")
	}},
	// The node controller's grace period is 40s up to 1.31, 50s from 1.32:
	// a heartbeat every 15s fits three times only in the latter.
	{name: "heartbeat with 1.31's grace period", version: "1.31", id: "ops.heartbeat", status: Warn, node: func(t *testing.T, n nodeTree) nodeTree {
		return n.config(t, "podPidsLimit: 4096", "podPidsLimit: 4096\nnodeLeaseDurationSeconds: 60\nnodeStatusUpdateFrequency: 20s")
	}},
	{name: "eviction off", id: "ops.eviction", status: Fail, node: func(t *testing.T, n nodeTree) nodeTree {
		return n.config(t, "podPidsLimit: 4096", "podPidsLimit: 4096\nevictionHard: {}")
	}},
	{name: "no memory threshold", id: "ops.eviction", status: Fail, origin: "/etc/default/kubelet:1", node: func(t *testing.T, n nodeTree) nodeTree {
		return n.with("/etc/default/kubelet", file{data: "KUBELET_EXTRA_ARGS=--eviction-hard=nodefs.available<10%\n"})
	}},
	{name: "nothing reserved", id: "ops.eviction", status: Warn, node: func(t *testing.T, n nodeTree) nodeTree {
		return n.config(t, "kubeReserved:\n  memory: 256Mi\n", "")
	}},
	{name: "maxPods beyond the pod CIDR", id: "ops.maxpods", status: Fail, podCIDR: "10.244.3.0/26", value: "110", fix: "set maxPods: 62"},
	{name: "pod CIDR unknown", id: "ops.maxpods", status: Manual, podCIDR: ""},
	{name: "image GC thresholds inverted", id: "ops.imagegc", status: Fail, node: func(t *testing.T, n nodeTree) nodeTree {
		return n.config(t, "podPidsLimit: 4096", "podPidsLimit: 4096\nimageGCHighThresholdPercent: 70\nimageGCLowThresholdPercent: 75")
	}},
	{name: "image GC never starts", id: "ops.imagegc", status: Warn, node: func(t *testing.T, n nodeTree) nodeTree {
		return n.config(t, "podPidsLimit: 4096", "podPidsLimit: 4096\nimageGCHighThresholdPercent: 100")
	}},
	// KubeletCgroupDriverFromCRI is off by default up to 1.30: there the
	// config's driver is the one used.
	{name: "cgroup driver differs from containerd's (1.30)", version: "1.30", id: "ops.cgroupdriver", status: Fail, fix: `set cgroupDriver: "cgroupfs"`,
		node: func(t *testing.T, n nodeTree) nodeTree {
			return n.with("/etc/containerd/config.toml", file{data: strings.Replace(containerdSystemd, "true", "false", 1)})
		}},
	{name: "cgroup driver differs from containerd 2's (1.33)", id: "ops.cgroupdriver", status: Warn, node: func(t *testing.T, n nodeTree) nodeTree {
		return n.with("/etc/containerd/config.toml", file{data: "version = 3\n[plugins.'io.containerd.cri.v1.runtime'.containerd]\n  default_runtime_name = 'runc'\n"})
	}},
	// Without a config.toml containerd runs its defaults: cgroupfs.
	{name: "no containerd config", id: "ops.cgroupdriver", status: Warn, node: func(t *testing.T, n nodeTree) nodeTree {
		delete(n, "/etc/containerd/config.toml")
		return n
	}},
	{name: "containerd does not start", id: "ops.cgroupdriver", status: Fail, node: func(t *testing.T, n nodeTree) nodeTree {
		return n.with("/etc/containerd/config.toml", file{data: "version = 2\ndisabled_plugins = ['cri']\n"})
	}},
	{name: "another runtime", id: "ops.cgroupdriver", status: Manual, node: func(t *testing.T, n nodeTree) nodeTree {
		return n.config(t, "containerRuntimeEndpoint: unix:///run/containerd/containerd.sock", "containerRuntimeEndpoint: unix:///var/run/crio/crio.sock")
	}},
	{name: "limited swap", id: "ops.swap", status: Warn, node: func(t *testing.T, n nodeTree) nodeTree {
		return n.config(t, "podPidsLimit: 4096", "podPidsLimit: 4096\nfailSwapOn: false\nmemorySwap:\n  swapBehavior: LimitedSwap")
	}},
	{name: "no graceful shutdown", id: "ops.shutdown", status: Fail, value: `"0s"`, node: func(t *testing.T, n nodeTree) nodeTree {
		return n.config(t, "shutdownGracePeriod: 30s\nshutdownGracePeriodCriticalPods: 10s\n", "")
	}},
}

func TestEachCheckFails(t *testing.T) {
	for _, tc := range failCases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.root && !isRoot() {
				t.Skip("needs root to own files")
			}
			version := tc.version
			if version == "" {
				version = "1.33"
			}
			n := secureFor(version)
			if tc.node != nil {
				n = tc.node(t, n)
			}
			cidr := tc.podCIDR
			if cidr == "" && tc.id != "ops.maxpods" {
				cidr = "10.244.3.0/24"
			}
			rep, _ := run(t, n, version, tc.args, cidr)
			r := result(t, rep, tc.id)
			if r.Status != tc.status {
				t.Fatalf("%s: %s, want %s\n%+v", tc.id, r.Status, tc.status, r)
			}
			for what, want := range map[string][2]string{"value": {r.Value, tc.value}, "origin": {r.Origin, tc.origin}, "fix": {r.Remediation, tc.fix}} {
				if !strings.Contains(want[0], want[1]) {
					t.Errorf("%s %q lacks %q", what, want[0], want[1])
				}
			}
			if r.Status == Fail && r.Remediation == "" {
				t.Errorf("%s fails without a remediation", tc.id)
			}
			if !isRoot() || (tc.args != nil && !strings.HasPrefix(tc.args[0], "--config")) {
				return // a legacy node fails much more
			}
			// Everything else still passes: the case fails only its check
			// (and what follows from the same value).
			for _, other := range rep.Results {
				if other.ID != tc.id && other.Status != Pass && !related(tc.id, other.ID) {
					t.Errorf("also %s: %s %s %s", other.ID, other.Status, other.Value, other.Detail)
				}
			}
		})
	}
}

// related lists checks that judge the same value or file.
func related(a, b string) bool {
	groups := [][]string{
		{"4.1.1", "4.1.2", "4.2.1", "4.2.2", "4.2.4", "4.1.9", "4.1.10", "4.1.9d", "4.1.10d", "4.2.11", "ops.eviction", "ops.maxpods"},
		{"4.1.5", "4.1.6"}, {"4.1.7", "4.1.8", "4.2.3"}, {"4.2.9", "4.2.11"},
	}
	for _, g := range groups {
		if contains(g, a) && contains(g, b) {
			return true
		}
	}
	return false
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// The benchmark follows the kubelet version; its checks and wording with it.
func TestBenchmarkByVersion(t *testing.T) {
	for version, want := range map[string]string{"1.28": "cis-1.10", "1.29": "cis-1.11", "1.31": "cis-1.11", "1.32": "cis-1.12", "1.33": "cis-1.12",
		"1.34": "cis-2.0", "1.35": "cis-2.0", "1.36": "cis-2.0", "1.37": "cis-2.0"} {
		v, _ := schema.Resolve(version)
		b, note, err := pickBenchmark("auto", v)
		if err != nil || b.name != want {
			t.Errorf("kubelet %s: %v %v, want %s", version, b, err, want)
		}
		// Kubelets newer than the newest benchmark are told so.
		if newer := version == "1.36" || version == "1.37"; (note != "") != newer || (newer && !strings.Contains(note, "cis-2.0 was written for kubelets 1.34-1.35")) {
			t.Errorf("kubelet %s: note %q", version, note)
		}
	}
	// auto never picks the STIG.
	for _, v := range schema.Versions() {
		if b, _, _ := pickBenchmark("auto", v); b.name == benchmarkSTIG {
			t.Errorf("kubelet %s: auto picked the STIG", v.Minor)
		}
	}
	v, _ := schema.Resolve("1.31")
	if _, _, err := pickBenchmark("cis-9.9", v); err == nil || !strings.Contains(err.Error(), "cis-1.12") {
		t.Errorf("unknown benchmark: %v", err)
	}
	if !isRoot() {
		return
	}
	rep, _ := run(t, secureNode(), "1.28", nil, "")
	for _, r := range rep.Results {
		if r.ID == "4.2.14" {
			t.Errorf("cis-1.10 has no 4.2.14")
		}
		if r.ID == "4.2.4" && strings.Contains(r.Title, "if defined") {
			t.Errorf("cis-1.10 words 4.2.4 %q", r.Title)
		}
	}
	rep, _ = run(t, secureNode(), "1.31", nil, "")
	if r := result(t, rep, "4.2.4"); !strings.Contains(r.Title, "Verify that if defined") {
		t.Errorf("cis-1.11 words 4.2.4 %q", r.Title)
	}
	// cis-1.11 still accepts the RSA key exchange suites.
	rep, _ = run(t, secureNode().config(t, "- TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "- TLS_RSA_WITH_AES_128_GCM_SHA256"), "1.31", nil, "")
	if r := result(t, rep, "4.2.12"); r.Status != Pass {
		t.Errorf("cis-1.11 4.2.12: %+v", r)
	}
	rep, _ = run(t, secureNode().config(t, "mode: Webhook", "mode: AlwaysAllow"), "1.33", nil, "")
	if r := result(t, rep, "4.2.2"); !contains(fixFields(r.Fixes), "authorization.mode") {
		t.Errorf("4.2.2 fixes %+v", r.Fixes)
	}
}

func fixFields(f []Fix) []string {
	var out []string
	for _, x := range f {
		out = append(out, x.Field)
	}
	return out
}

// Node files are hostile: under --root a link leads nowhere out of the root
// (the config file's is resolved inside it; a drop-in reached through one is
// refused), and no file too large or other than a regular file is read.
func TestConfinedReads(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "host-config.yaml")
	if err := os.WriteFile(outside, []byte(secureConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		node func(root string)
		want string
	}{
		"config linked out of the root": {func(root string) {
			p := filepath.Join(root, "var/lib/kubelet/config.yaml")
			os.Remove(p)
			os.Symlink(outside, p)
		}, "no such file"},
		"drop-in linked out of the root": {func(root string) {
			os.Symlink(outside, filepath.Join(root, "etc/kubernetes/kubelet.conf.d/90-host.conf"))
		}, "symbolic link"},
		"config too large": {func(root string) {
			os.Truncate(filepath.Join(root, "var/lib/kubelet/config.yaml"), 64<<20)
		}, "reads at most"},
		"drop-in linked inside the root": {func(root string) {
			os.Symlink("/var/lib/kubelet/config.yaml", filepath.Join(root, "etc/kubernetes/kubelet.conf.d/90-again.conf"))
		}, "symbolic link"},
		"config a FIFO": {func(root string) {
			p := filepath.Join(root, "var/lib/kubelet/config.yaml")
			os.Remove(p)
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Skip(err)
			}
		}, "not a regular file"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			root := secureNode().write(t)
			tc.node(root)
			_, err := runAt(t, root, "1.33", nil, "")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
		})
	}
	// A link to a path in the root names the root's file, never the host's.
	n := secureNode()
	n["/etc/kubernetes/pki/ca.crt"] = file{link: "/etc/passwd"}
	n["/etc/passwd"] = file{data: "root:x:0:0::/root:/bin/sh\n", mode: 0o666}
	rep, _ := run(t, n, "1.33", nil, "")
	if r := result(t, rep, "4.1.7"); r.Status != Fail || !strings.Contains(r.Value, "-> /etc/passwd 0666") {
		t.Errorf("4.1.7 %+v", r)
	}
}

// audit --fix-to: the fixed config, laid back on the node, passes what it
// fixes; values a flag sets are noted, not silently shadowed.
func TestFixedConfig(t *testing.T) {
	n := secureNode().
		config(t, "    enabled: false", "    enabled: true").
		config(t, "readOnlyPort: 0", "readOnlyPort: 10255").
		config(t, "seccompDefault: true", "seccompDefault: false").
		config(t, "- TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "- TLS_RSA_WITH_AES_128_CBC_SHA").
		with("/etc/default/kubelet", file{data: "KUBELET_EXTRA_ARGS=--make-iptables-util-chains=false\n"})
	rep, root := run(t, n, "1.33", nil, "")
	for _, id := range []string{"4.2.1", "4.2.4", "4.2.6", "4.2.12", "4.2.14"} {
		if r := result(t, rep, id); r.Status != Fail {
			t.Fatalf("before: %s %s", id, r.Status)
		}
	}
	data, notes, err := rep.FixedConfig()
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "flag --make-iptables-util-chains overrides the file") {
		t.Errorf("notes %q", notes)
	}
	if err := os.WriteFile(filepath.Join(root, "var/lib/kubelet/config.yaml"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "etc/default/kubelet"), []byte("KUBELET_EXTRA_ARGS=\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	after, err := runAt(t, root, "1.33", nil, "10.244.3.0/24")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"4.2.1", "4.2.4", "4.2.6", "4.2.12", "4.2.14"} {
		if r := result(t, after, id); r.Status != Pass {
			t.Errorf("after: %s %s %s", id, r.Status, r.Value)
		}
	}
	if !strings.Contains(string(data), "clientCAFile: /etc/kubernetes/pki/ca.crt") {
		t.Errorf("the fixed config lost the file's own settings:\n%s", data)
	}

	legacy, _ := run(t, secureNode(), "1.33", []string{"--kubeconfig=/etc/kubernetes/kubelet.conf"}, "")
	if _, _, err := legacy.FixedConfig(); err == nil || !strings.Contains(err.Error(), "migrate --secure") {
		t.Errorf("flags-only node: %v", err)
	}
}

// 4.2.8 words eventRecordQPS 0 for the kubelet's version: no limit from
// 1.37, client-go's 5 per second before.
func TestEventRecordQPSZeroByVersion(t *testing.T) {
	for minor, want := range map[string]Status{"1.36": Warn, "1.37": Pass, "1.31": Warn} {
		v, err := schema.Resolve(minor)
		if err != nil {
			t.Fatal(err)
		}
		zero := int32(0)
		for _, c := range checks {
			if c.id != "4.2.8" {
				continue
			}
			o := c.rule(&state{v: v, cfg: &v1beta1.KubeletConfiguration{EventRecordQPS: &zero}})
			if o.status != want {
				t.Errorf("kubelet %s: %s (%s), want %s", minor, o.status, o.detail, want)
			}
		}
	}
}
