package criruntime

import (
	"strings"
	"testing"

	"github.com/kubeletcfg/kubeletcfg/schema"
)

func minor(t *testing.T, m string) *schema.Version {
	for _, v := range schema.Versions() {
		if v.Minor == m {
			return v
		}
	}
	t.Fatalf("no %s", m)
	return nil
}

func TestDecide(t *testing.T) {
	systemd := &Answer{Source: "containerd /etc/containerd/config.toml", Driver: Systemd, Why: "the default runtime runc: SystemdCgroup = true"}
	for _, tc := range []struct {
		name                 string
		v                    string
		gates                map[string]bool
		a                    *Answer
		runs, configz, fatal string
		mismatch             bool
	}{
		{"1.37 follows the runtime", "1.37", nil, systemd, Systemd, Systemd, "", false},
		{"1.34 runs it, /configz keeps the file", "1.34", nil, systemd, Systemd, Cgroupfs, "", false},
		{"1.33 gate on", "1.33", nil, systemd, Systemd, Cgroupfs, "", false},
		{"1.33 gate off", "1.33", map[string]bool{"KubeletCgroupDriverFromCRI": false}, systemd, Cgroupfs, Cgroupfs, "", true},
		{"1.30 alpha gate", "1.30", nil, systemd, Cgroupfs, Cgroupfs, "", true},
		{"containerd 1.x", "1.37", nil, &Answer{Source: "CRI x", Unsupported: true}, Cgroupfs, Cgroupfs, "", false},
		{"no linux part", "1.37", nil, &Answer{Source: "CRI x"}, Cgroupfs, Cgroupfs, "", false},
		{"runtime makes it exit", "1.37", nil, &Answer{Source: "CRI x", ConfigFatal: "runtime returned an unknown cgroup driver 7"}, "", "", "unknown cgroup driver", false},
		{"not known", "1.37", nil, nil, Cgroupfs, Cgroupfs, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(minor(t, tc.v), tc.gates, Cgroupfs, tc.a)
			if d.Runs != tc.runs || d.Configz != tc.configz || !strings.Contains(d.Fatal, tc.fatal) || (d.Mismatch != "") != tc.mismatch {
				t.Fatalf("%+v", d)
			}
		})
	}
	cond := &Answer{Source: "containerd c", Driver: Systemd, Otherwise: Cgroupfs, Condition: "the node boots with systemd"}
	if d := Decide(minor(t, "1.37"), nil, Cgroupfs, cond); d.Condition == "" || d.Runs != Systemd || d.Otherwise != Cgroupfs {
		t.Fatalf("condition: %+v", d)
	}
}
