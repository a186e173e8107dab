package units

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
)

// The trees under testdata/nodes are node images as the distributions lay
// them out; these tests pin the exact command line and environment.

func TestNodeKubeadmDeb(t *testing.T) {
	s := discoverNode(t, "kubeadm-deb")
	const dropin = "/etc/systemd/system/kubelet.service.d/10-kubeadm.conf"
	checkService(t, s, &Service{
		Unit:    "/usr/lib/systemd/system/kubelet.service",
		Dropins: []string{dropin},
		Exec: []string{
			"/usr/bin/kubelet",
			"--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf",
			"--kubeconfig=/etc/kubernetes/kubelet.conf",
			"--config=/var/lib/kubelet/config.yaml",
			"--container-runtime-endpoint=unix:///var/run/containerd/containerd.sock",
			"--pod-infra-container-image=registry.k8s.io/pause:3.9",
			"--node-ip=10.0.0.5",
			"--max-pods=110",
		},
		Env: map[string]string{
			"KUBELET_KUBECONFIG_ARGS": "--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf --kubeconfig=/etc/kubernetes/kubelet.conf",
			"KUBELET_CONFIG_ARGS":     "--config=/var/lib/kubelet/config.yaml",
			"KUBELET_KUBEADM_ARGS":    "--container-runtime-endpoint=unix:///var/run/containerd/containerd.sock --pod-infra-container-image=registry.k8s.io/pause:3.9",
			"KUBELET_EXTRA_ARGS":      "--node-ip=10.0.0.5 --max-pods=110",
		},
		EnvFiles: []string{"/var/lib/kubelet/kubeadm-flags.env", "/etc/default/kubelet"},
	})
	wantSources := []Source{
		{File: dropin, Line: 3, Var: "KUBELET_KUBECONFIG_ARGS"},
		{File: dropin, Line: 3, Var: "KUBELET_KUBECONFIG_ARGS"},
		{File: dropin, Line: 4, Var: "KUBELET_CONFIG_ARGS"},
		{File: "/var/lib/kubelet/kubeadm-flags.env", Line: 1, Var: "KUBELET_KUBEADM_ARGS"},
		{File: "/var/lib/kubelet/kubeadm-flags.env", Line: 1, Var: "KUBELET_KUBEADM_ARGS"},
		{File: "/etc/default/kubelet", Line: 1, Var: "KUBELET_EXTRA_ARGS"},
		{File: "/etc/default/kubelet", Line: 1, Var: "KUBELET_EXTRA_ARGS"},
	}
	if !slices.Equal(s.Sources, wantSources) {
		t.Errorf("Sources\n got %+v\nwant %+v", s.Sources, wantSources)
	}
	if s.ExecStart != (Source{File: dropin, Line: 11}) || s.Path != "/usr/bin/kubelet" {
		t.Errorf("ExecStart %+v Path %s", s.ExecStart, s.Path)
	}
	checkWarnings(t, s)
}

func TestNodeKubeadmRPM(t *testing.T) {
	s := discoverNode(t, "kubeadm-rpm")
	checkService(t, s, &Service{
		Unit:    "/usr/lib/systemd/system/kubelet.service",
		Dropins: []string{"/usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf"},
		Exec: []string{
			"/usr/bin/kubelet",
			"--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf",
			"--kubeconfig=/etc/kubernetes/kubelet.conf",
			"--config=/var/lib/kubelet/config.yaml",
			"--node-labels=node.kubernetes.io/role=worker,topology.kubernetes.io/zone=a",
			"--v=4",
		},
		Env: map[string]string{
			"KUBELET_KUBECONFIG_ARGS": "--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf --kubeconfig=/etc/kubernetes/kubelet.conf",
			"KUBELET_CONFIG_ARGS":     "--config=/var/lib/kubelet/config.yaml",
			// The backslash-newline inside the quotes is dropped, the
			// blanks around it are kept.
			"KUBELET_EXTRA_ARGS": "--node-labels=node.kubernetes.io/role=worker,topology.kubernetes.io/zone=a   --v=4",
		},
		// kubeadm-flags.env is optional and missing: the node has not joined.
		EnvFiles: []string{"/etc/sysconfig/kubelet"},
	})
	if s.EnvSources["KUBELET_EXTRA_ARGS"] != (Source{File: "/etc/sysconfig/kubelet", Line: 2}) {
		t.Errorf("EnvSources %+v", s.EnvSources)
	}
	checkWarnings(t, s, "KUBELET_KUBEADM_ARGS is not set")
}

func TestNodeKubeadmOverride(t *testing.T) {
	s := discoverNode(t, "kubeadm-override")
	checkService(t, s, &Service{
		Unit: "/usr/lib/systemd/system/kubelet.service",
		// /etc/…/10-kubeadm.conf hides /usr/lib/…/10-kubeadm.conf; the
		// /run drop-in still applies, after it by name.
		Dropins: []string{
			"/etc/systemd/system/kubelet.service.d/10-kubeadm.conf",
			"/run/systemd/system/kubelet.service.d/20-extra.conf",
		},
		Exec: []string{
			"/usr/bin/kubelet",
			"--kubeconfig=/etc/kubernetes/kubelet.conf",
			"--config=/etc/kubernetes/kubelet-config.yaml",
			"--container-runtime-endpoint=unix:///run/containerd/containerd.sock",
			"--from-env-file", // /etc/default/kubelet beats the later drop-in's Environment=
			"--v=6",           // the later drop-in's Environment= beats the earlier one
		},
		Env: map[string]string{
			"KUBELET_KUBECONFIG_ARGS": "--kubeconfig=/etc/kubernetes/kubelet.conf",
			"KUBELET_CONFIG_ARGS":     "--config=/etc/kubernetes/kubelet-config.yaml",
			"KUBELET_LOG_ARGS":        "--v=6",
			"KUBELET_KUBEADM_ARGS":    "--container-runtime-endpoint=unix:///run/containerd/containerd.sock",
			"KUBELET_EXTRA_ARGS":      "--from-env-file",
		},
		EnvFiles: []string{"/var/lib/kubelet/kubeadm-flags.env", "/etc/default/kubelet"},
	})
	if want := []string{"/etc/systemd/system/kubelet.service.d/05-legacy.conf"}; !slices.Equal(s.Masked, want) {
		t.Errorf("Masked %q, want %q", s.Masked, want)
	}
	checkWarnings(t, s, "KUBELET_LEGACY is not set")
}

func TestNodeKops(t *testing.T) {
	s := discoverNode(t, "kops")
	daemonArgs := "--anonymous-auth=false --authentication-token-webhook=true --authorization-mode=Webhook " +
		"--cgroup-driver=systemd --cgroup-root=/ --client-ca-file=/srv/kubernetes/ca.crt --cloud-provider=external " +
		"--cluster-dns=100.64.0.10 --cluster-domain=cluster.local " +
		"--container-runtime-endpoint=unix:///run/containerd/containerd.sock --enable-debugging-handlers=true " +
		"--eviction-hard=memory.available<100Mi,nodefs.available<10%,nodefs.inodesFree<5%,imagefs.available<10%,imagefs.inodesFree<5% " +
		"--feature-gates=InTreePluginAWSUnregister=true --hostname-override=i-0123456789abcdef0 " +
		"--kubeconfig=/var/lib/kubelet/kubeconfig " +
		"--node-labels=kops.k8s.io/instancegroup=nodes-us-east-1a,node-role.kubernetes.io/node= " +
		"--pod-infra-container-image=registry.k8s.io/pause:3.9 --pod-manifest-path=/etc/kubernetes/manifests " +
		"--protect-kernel-defaults=true --register-schedulable=true " +
		"--volume-plugin-dir=/usr/libexec/kubernetes/kubelet-plugins/volume/exec/ " +
		"--client-ca-file=/srv/kubernetes/ca.crt --tls-cert-file=/srv/kubelet-server/server.crt " +
		"--tls-private-key-file=/srv/kubelet-server/server.key --config=/var/lib/kubelet/kubelet.conf"
	// ExecStart=/usr/local/bin/kubelet "$DAEMON_ARGS": the quotes go when
	// the unit is loaded, so $DAEMON_ARGS is a whole word and is split.
	checkService(t, s, &Service{
		Unit:     "/lib/systemd/system/kubelet.service",
		Exec:     append([]string{"/usr/local/bin/kubelet"}, strings.Fields(daemonArgs)...),
		Env:      map[string]string{"DAEMON_ARGS": daemonArgs, "HOME": "/root"},
		EnvFiles: []string{"/etc/sysconfig/kubelet"},
	})
	if len(s.Exec) != 26 {
		t.Errorf("%d words, want 26", len(s.Exec))
	}
	checkWarnings(t, s)
}

func TestNodeEKS(t *testing.T) {
	s := discoverNode(t, "eks")
	const d = "/etc/systemd/system/kubelet.service.d/"
	kubeletArgs := `--node-ip=192.168.12.34 --v=2 --hostname-override=ip-192-168-12-34.us-west-2.compute.internal ` +
		`--cloud-provider=external "--node-labels=team=a b"`
	extraArgs := "--node-labels=eks.amazonaws.com/nodegroup-image=ami-0123456789abcdef0," +
		"eks.amazonaws.com/capacityType=ON_DEMAND,eks.amazonaws.com/nodegroup=ng-1 --max-pods=29"
	checkService(t, s, &Service{
		Unit:    "/etc/systemd/system/kubelet.service",
		Dropins: []string{d + "10-kubelet-args.conf", d + "20-nodeadm-ip.conf", d + "30-kubelet-extra-args.conf"},
		Exec: []string{
			"/usr/bin/kubelet",
			"--config", "/etc/kubernetes/kubelet/kubelet-config.json",
			"--kubeconfig", "/var/lib/kubelet/kubeconfig",
			"--container-runtime-endpoint", "unix:///run/containerd/containerd.sock",
			"--image-credential-provider-config", "/etc/eks/image-credential-provider/config.json",
			"--image-credential-provider-bin-dir", "/etc/eks/image-credential-provider",
			"--node-ip=192.168.12.34",
			"--v=2",
			"--hostname-override=ip-192-168-12-34.us-west-2.compute.internal",
			"--cloud-provider=external",
			"--node-labels=team=a b", // quoted inside the variable's value
			"--node-labels=eks.amazonaws.com/nodegroup-image=ami-0123456789abcdef0,eks.amazonaws.com/capacityType=ON_DEMAND,eks.amazonaws.com/nodegroup=ng-1",
			"--max-pods=29",
		},
		Env: map[string]string{"KUBELET_ARGS": kubeletArgs, "KUBELET_EXTRA_ARGS": extraArgs},
	})
	// The literal words come from the continued ExecStart= on line 10.
	if s.Sources[0] != (Source{File: "/etc/systemd/system/kubelet.service", Line: 10}) {
		t.Errorf("Sources[0] = %+v", s.Sources[0])
	}
	if s.Sources[10] != (Source{File: d + "20-nodeadm-ip.conf", Line: 3, Var: "KUBELET_ARGS"}) {
		t.Errorf("Sources[10] = %+v", s.Sources[10])
	}
	if s.Sources[16] != (Source{File: d + "30-kubelet-extra-args.conf", Line: 2, Var: "KUBELET_EXTRA_ARGS"}) {
		t.Errorf("Sources[16] = %+v", s.Sources[16])
	}
	checkWarnings(t, s)
}

func TestNodeKubespray(t *testing.T) {
	s := discoverNode(t, "kubespray")
	checkService(t, s, &Service{
		Unit: "/etc/systemd/system/kubelet.service",
		Exec: []string{
			"/usr/local/bin/kubelet",
			"--logtostderr=true",
			"--v=2",
			"--node-ip=10.10.1.11",
			"--hostname-override=node1",
			"--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf",
			"--config=/etc/kubernetes/kubelet-config.yaml",
			"--kubeconfig=/etc/kubernetes/kubelet.conf",
			"--container-runtime-endpoint=unix:///var/run/containerd/containerd.sock",
			"--runtime-cgroups=/system.slice/containerd.service",
			"--network-plugin=cni",
			"--cni-conf-dir=/etc/cni/net.d",
			"--cni-bin-dir=/opt/cni/bin",
			"--volume-plugin-dir=/usr/local/libexec/kubernetes/kubelet-plugins/volume/exec",
		},
		Env: map[string]string{
			"KUBE_LOGTOSTDERR": "--logtostderr=true",
			"KUBE_LOG_LEVEL":   "--v=2",
			"KUBELET_ADDRESS":  "--node-ip=10.10.1.11",
			"KUBELET_HOSTNAME": "--hostname-override=node1",
			"KUBELET_ARGS": "--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf " +
				"--config=/etc/kubernetes/kubelet-config.yaml --kubeconfig=/etc/kubernetes/kubelet.conf " +
				"--container-runtime-endpoint=unix:///var/run/containerd/containerd.sock " +
				"--runtime-cgroups=/system.slice/containerd.service  ",
			"KUBELET_NETWORK_PLUGIN": "--network-plugin=cni --cni-conf-dir=/etc/cni/net.d --cni-bin-dir=/opt/cni/bin",
			"KUBELET_VOLUME_PLUGIN":  "--volume-plugin-dir=/usr/local/libexec/kubernetes/kubelet-plugins/volume/exec",
			"KUBELET_CLOUDPROVIDER":  "",
			"PATH":                   "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		},
		EnvFiles: []string{"/etc/kubernetes/kubelet.env"},
	})
	checkWarnings(t, s, "KUBELET_API_SERVER is not set", "KUBELET_PORT is not set", "DOCKER_SOCKET is not set")
}

func TestNodeMasked(t *testing.T) {
	_, err := Discover("testdata/nodes/masked")
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v, want an *Error", err)
	}
	if e.File != "/etc/systemd/system/kubelet.service" || !strings.Contains(e.Msg, "masked") {
		t.Errorf("error %q, want /etc/systemd/system/kubelet.service masked", err)
	}
}

func discoverNode(t *testing.T, name string) *Service {
	t.Helper()
	s, err := Discover("testdata/nodes/" + name)
	if err != nil {
		t.Fatalf("Discover(%s): %v", name, err)
	}
	return s
}

// checkService compares the fields of the brief's API.
func checkService(t *testing.T, got, want *Service) {
	t.Helper()
	if got.Unit != want.Unit {
		t.Errorf("Unit %s, want %s", got.Unit, want.Unit)
	}
	if !slices.Equal(got.Dropins, want.Dropins) {
		t.Errorf("Dropins\n got %q\nwant %q", got.Dropins, want.Dropins)
	}
	if !slices.Equal(got.Exec, want.Exec) {
		t.Errorf("Exec\n got %q\nwant %q", got.Exec, want.Exec)
	}
	if !maps.Equal(got.Env, want.Env) {
		t.Errorf("Env\n got %q\nwant %q", got.Env, want.Env)
	}
	if !slices.Equal(got.EnvFiles, want.EnvFiles) {
		t.Errorf("EnvFiles %q, want %q", got.EnvFiles, want.EnvFiles)
	}
	if len(got.Sources) != len(got.Exec)-1 {
		t.Errorf("%d sources for %d words", len(got.Sources), len(got.Exec))
	}
}

// checkWarnings checks that the warnings are exactly the wanted ones, in
// order, each given by a part of its message.
func checkWarnings(t *testing.T, s *Service, want ...string) {
	t.Helper()
	ok := len(s.Warnings) == len(want)
	for i := 0; ok && i < len(want); i++ {
		ok = strings.Contains(s.Warnings[i].Message, want[i])
	}
	if !ok {
		t.Errorf("warnings %v, want %q", s.Warnings, want)
	}
}
