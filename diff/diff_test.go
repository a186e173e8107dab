package diff

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/kubelet/config/v1beta1"

	"github.com/kubeletcfg/kubeletcfg/config"
	"github.com/kubeletcfg/kubeletcfg/schema"
)

func defaulted(t *testing.T, v *schema.Version, body string) *v1beta1.KubeletConfiguration {
	t.Helper()
	doc, err := config.Decode([]byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"+body), config.DecodeOptions{Version: v})
	if err != nil {
		t.Fatal(err)
	}
	return config.Default(doc.Config, v)
}

func TestCompute(t *testing.T) {
	v := schema.Newest()
	cases := []struct {
		name     string
		old, new string
		want     []Change
	}{
		{name: "explicit default is no change", old: "", new: "maxPods: 110\nsyncFrequency: 1m\nevictionHard:\n  memory.available: 100Mi\n  nodefs.available: 10%\n  imagefs.available: 15%\n  nodefs.inodesFree: 5%\n  imagefs.inodesFree: 5%\n"},
		{name: "durations compare by value", old: "syncFrequency: 60s\n", new: "syncFrequency: 1m0s\n"},
		{name: "restart only", old: "", new: "maxPods: 50\n",
			want: []Change{{Path: "maxPods", Old: float64(110), New: float64(50), Classes: []Class{Restart}}}},
		{name: "cpu manager needs a drain", old: "", new: "cpuManagerPolicy: static\n",
			want: []Change{{Path: "cpuManagerPolicy", Old: "none", New: "static", Classes: []Class{DrainState}, StateFile: "cpu_manager_state"}}},
		{name: "security", old: "", new: "authentication:\n  anonymous:\n    enabled: true\n",
			want: []Change{{Path: "authentication.anonymous.enabled", Old: false, New: true, Classes: []Class{Security}}}},
		{name: "runtime", old: "", new: "cgroupDriver: systemd\n",
			want: []Change{{Path: "cgroupDriver", Old: "cgroupfs", New: "systemd", Classes: []Class{Runtime}}}},
		{name: "registration", old: "", new: "registerWithTaints:\n- key: a\n  effect: NoSchedule\n",
			want: []Change{{Path: "registerWithTaints", Old: nil, New: []any{map[string]any{"key": "a", "effect": "NoSchedule"}}, Classes: []Class{Registration}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Compute(defaulted(t, v, tc.old), defaulted(t, v, tc.new), v)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
