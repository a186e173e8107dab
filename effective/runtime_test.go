package effective

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubeletcfg/kubeletcfg/criruntime"
	"github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

func runtimeSetup(t *testing.T, minor, config string, a *criruntime.Answer, err error) (*Result, []string) {
	t.Helper()
	v, rerr := schema.Resolve(minor)
	if rerr != nil {
		t.Fatal(rerr)
	}
	f := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(f, []byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"+config), 0o644); err != nil {
		t.Fatal(err)
	}
	var asked []string
	s := &node.Setup{Version: v, Kubelet: node.Kubelet{Args: []string{"--config=" + f}}}
	s.Runtime = func(ep string) (*criruntime.Answer, error) { asked = append(asked, ep); return a, err }
	res, cerr := Compute(Input{Setup: s})
	if cerr != nil {
		t.Fatal(cerr)
	}
	return res, asked
}

func entry(t *testing.T, res *Result, path string) Entry {
	t.Helper()
	es, err := res.Entries()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if e.Path == path {
			return e
		}
	}
	t.Fatalf("no entry %s", path)
	return Entry{}
}

func TestRuntimeDecidesTheCgroupDriver(t *testing.T) {
	systemd := &criruntime.Answer{Source: "containerd /etc/containerd/config.toml", Driver: "systemd", Why: "the default runtime runc: SystemdCgroup = true (/etc/containerd/config.toml:3)"}
	// 1.37: the kubelet runs the runtime's driver and serves it on /configz.
	res, asked := runtimeSetup(t, "1.37", "cgroupDriver: cgroupfs\ncontainerRuntimeEndpoint: unix:///run/k/c.sock\n", systemd, nil)
	if len(asked) != 1 || asked[0] != "unix:///run/k/c.sock" {
		t.Fatalf("asked %v", asked)
	}
	if res.Config.CgroupDriver != "cgroupfs" || res.Running().CgroupDriver != "systemd" || res.Runs().CgroupDriver != "systemd" {
		t.Fatalf("config %s running %s", res.Config.CgroupDriver, res.Running().CgroupDriver)
	}
	e := entry(t, res, "cgroupDriver")
	if e.Value != "systemd" || e.Origin.String() != "runtime: containerd /etc/containerd/config.toml" {
		t.Fatalf("entry %v %s", e.Value, e.Origin)
	}
	if !strings.Contains(warningText(res), "cgroupDriver: cgroupfs has no effect") {
		t.Errorf("warnings %v", res.Warnings)
	}
	// 1.34: it runs the runtime's driver, /configz shows the file's.
	res, _ = runtimeSetup(t, "1.34", "cgroupDriver: cgroupfs\n", systemd, nil)
	if res.Running().CgroupDriver != "cgroupfs" || res.Runs().CgroupDriver != "systemd" {
		t.Fatalf("1.34: running %s runs %s", res.Running().CgroupDriver, res.Runs().CgroupDriver)
	}
	if e := entry(t, res, "cgroupDriver"); !strings.Contains(e.Origin.String(), "/configz shows cgroupfs") {
		t.Errorf("1.34 origin %s", e.Origin)
	}
	// 1.30: the gate is off: the file's driver, and a mismatch said.
	res, _ = runtimeSetup(t, "1.30", "cgroupDriver: cgroupfs\n", systemd, nil)
	if res.Running().CgroupDriver != "cgroupfs" || res.Runs().CgroupDriver != "cgroupfs" || !strings.Contains(warningText(res), "pods' cgroups and the kubelet's disagree") {
		t.Fatalf("1.30: %s %q", res.Running().CgroupDriver, res.Warnings)
	}
	// containerd 1.x: no RuntimeConfig, the file's driver.
	res, _ = runtimeSetup(t, "1.37", "cgroupDriver: systemd\n", &criruntime.Answer{Source: "CRI x", Unsupported: true}, nil)
	if res.Running().CgroupDriver != "systemd" || entry(t, res, "cgroupDriver").Origin.Kind != "file" {
		t.Fatalf("unsupported: %s", res.Running().CgroupDriver)
	}
	// An answer that cannot be read is a warning, and the file's driver.
	res, _ = runtimeSetup(t, "1.37", "cgroupDriver: systemd\n", nil, errors.New("no answer within 5s"))
	if res.Running().CgroupDriver != "systemd" || !strings.Contains(warningText(res), "no answer within 5s") {
		t.Fatalf("error: %s %q", res.Running().CgroupDriver, res.Warnings)
	}
	// Without a runtime reader nothing changes.
	v, _ := schema.Resolve("1.37")
	plain, err := Compute(Input{Setup: node.Given(v), ConfigFile: "", ConfigDir: ""})
	if err != nil || plain.CgroupDriver != nil {
		t.Fatalf("plain: %v %v", plain.CgroupDriver, err)
	}
}

func TestReservedCPUsOnConfigz(t *testing.T) {
	res, _ := runtimeSetup(t, "1.37", "reservedSystemCPUs: 0-1,3\nsystemReserved:\n  memory: 100Mi\nkubeReserved:\n  cpu: 200m\n  memory: 50Mi\n", nil, nil)
	run := res.Running()
	if run.SystemReserved["cpu"] != "3" || run.SystemReserved["memory"] != "100Mi" {
		t.Errorf("systemReserved %v", run.SystemReserved)
	}
	if _, ok := run.KubeReserved["cpu"]; ok || run.KubeReserved["memory"] != "50Mi" {
		t.Errorf("kubeReserved %v", run.KubeReserved)
	}
	if res.Config.SystemReserved["cpu"] != "" || res.Config.KubeReserved["cpu"] != "200m" {
		t.Errorf("the configuration itself changed: %v %v", res.Config.SystemReserved, res.Config.KubeReserved)
	}
	// A systemReserved the kubelet makes itself is not the map /configz serves.
	res, _ = runtimeSetup(t, "1.37", "reservedSystemCPUs: \"0\"\n", nil, nil)
	if res.Running().SystemReserved != nil {
		t.Errorf("systemReserved %v", res.Running().SystemReserved)
	}
	for in, want := range map[string]int{"0": 1, "0-3": 4, "0-1,1-2,7": 4} {
		if n, err := cpusetSize(in); err != nil || n != want {
			t.Errorf("%s: %d %v", in, n, err)
		}
	}
	for _, bad := range []string{"a", "3-1", "0-99999999"} {
		if _, err := cpusetSize(bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func warningText(res *Result) string {
	var b strings.Builder
	for _, w := range res.Warnings {
		b.WriteString(w.String() + "\n")
	}
	return b.String()
}
