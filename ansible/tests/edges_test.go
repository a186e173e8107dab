//go:build ansible

package tests

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kubeletcfg/kubeletcfg/ansible/tests/harness"
)

// edgesPlaybook is one play over one stand-in node: a task per edge of the
// module that an operator hits (each ignore_errors, judged by the test from
// its recorded result), in an order where the tasks that change the node
// come last. One ansible-playbook run for all of them keeps the suite fast.
const edgesPlaybook = `
- name: Edges of kubelet_config
  hosts: edge-1
  gather_facts: false
  module_defaults: &node
    kubeletcfg.kubelet.kubelet_config:
      root: "{{ kubelet_root }}"
      kubelet_version: "1.31"
      restart_command: "{{ kubelet_restart_command }}"
      pid_file: "{{ kubelet_pid_file }}"
      kubelet_log: "{{ kubelet_log }}"
      stable_for: 1
      health_timeout: 10
      kubeletcfg_binary: "{{ kubeletcfg_binary }}"
      force_unmanaged: "{{ kubelet_force_unmanaged | default(false) }}"
  tasks:
    - name: required one of
      kubeletcfg.kubelet.kubelet_config: {}
      check_mode: true
      ignore_errors: true

    - name: migrate false next to config
      kubeletcfg.kubelet.kubelet_config:
        config: "{{ changed }}"
        migrate: false
      check_mode: true
      ignore_errors: true

    - name: src and content
      kubeletcfg.kubelet.kubelet_config:
        src: edge-config.yaml
        content: "{{ changed | to_yaml }}"
      check_mode: true
      ignore_errors: true

    - name: remote_src no
      kubeletcfg.kubelet.kubelet_config:
        src: edge-config.yaml
        remote_src: "no"
      check_mode: true
      ignore_errors: true

    - name: dropin name with a slash
      kubeletcfg.kubelet.kubelet_config:
        dropins:
          ../evil.conf: {maxPods: 100}
      check_mode: true
      ignore_errors: true

    - name: src a directory on the controller
      kubeletcfg.kubelet.kubelet_config:
        src: "{{ playbook_dir }}/files"
      check_mode: true
      ignore_errors: true

    - name: src a directory on the node
      kubeletcfg.kubelet.kubelet_config:
        src: "{{ playbook_dir }}/files"
        remote_src: true
      check_mode: true
      ignore_errors: true

    - name: restart_command without pid_file
      kubeletcfg.kubelet.kubelet_config:
        pid_file: "{{ omit }}"
        config: "{{ changed }}"
      check_mode: true
      ignore_errors: true

    - name: force without drain
      kubeletcfg.kubelet.kubelet_config:
        config: "{{ changed }}"
        force: true
      check_mode: true
      ignore_errors: true

    - name: dropins next to config
      kubeletcfg.kubelet.kubelet_config:
        config: "{{ changed }}"
        dropins:
          50-pods.conf: {maxPods: 100}
      check_mode: true
      ignore_errors: true

    - name: a flag the kubelet version removed
      kubeletcfg.kubelet.kubelet_config:
        kubelet_version: "1.35"
        config: "{{ changed }}"
      check_mode: true
      ignore_errors: true

    - name: no kubelet_version under root
      kubeletcfg.kubelet.kubelet_config:
        kubelet_version: "{{ omit }}"
        config: "{{ changed }}"
      check_mode: true
      ignore_errors: true

    - name: kubeletcfg crashes
      kubeletcfg.kubelet.kubelet_config:
        config: "{{ changed }}"
        kubeletcfg_binary: "{{ fakes }}/crash"
      check_mode: true
      ignore_errors: true

    - name: kubeletcfg killed by a signal
      kubeletcfg.kubelet.kubelet_config:
        config: "{{ changed }}"
        kubeletcfg_binary: "{{ fakes }}/killed"
      check_mode: true
      ignore_errors: true

    - name: kubeletcfg prints no JSON
      kubeletcfg.kubelet.kubelet_config:
        config: "{{ changed }}"
        kubeletcfg_binary: "{{ fakes }}/garbage"
      check_mode: true
      ignore_errors: true

    - name: kubeletcfg too old
      kubeletcfg.kubelet.kubelet_config:
        config: "{{ changed }}"
        kubeletcfg_binary: "{{ fakes }}/old"
      check_mode: true
      ignore_errors: true

    - name: kubeletcfg missing
      kubeletcfg.kubelet.kubelet_config:
        config: "{{ changed }}"
        kubeletcfg_binary: "{{ fakes }}/none"
      check_mode: true
      ignore_errors: true

    - name: src missing on the controller
      kubeletcfg.kubelet.kubelet_config:
        src: no-such-config.yaml
      check_mode: true
      ignore_errors: true

    - name: errors in a config dict
      kubeletcfg.kubelet.kubelet_config:
        config: "{{ unknown_fields }}"
      check_mode: true
      ignore_errors: true

    - name: errors in a src file
      kubeletcfg.kubelet.kubelet_config:
        src: edge-bad.yaml
      check_mode: true
      ignore_errors: true

    - name: migrate in diff mode
      kubeletcfg.kubelet.kubelet_config:
        migrate: true
      check_mode: true
      diff: true
      ignore_errors: true

    - name: a change that breaks a CIS check
      kubeletcfg.kubelet.kubelet_config:
        config: "{{ insecure }}"
      ignore_errors: true

    - name: config_patch
      kubeletcfg.kubelet.kubelet_config:
        config_patch:
          containerLogMaxSize: 30Mi
          shutdownGracePeriodCriticalPods: null
      diff: true
      ignore_errors: true

    - name: file after config_patch
      ansible.builtin.slurp:
        src: "{{ kubelet_root }}/var/lib/kubelet/config.yaml"

    - name: config_patch again
      kubeletcfg.kubelet.kubelet_config:
        config_patch:
          containerLogMaxSize: 30Mi
          shutdownGracePeriodCriticalPods: null
      ignore_errors: true

    - name: config_patch with an invalid result
      kubeletcfg.kubelet.kubelet_config:
        config_patch:
          imageGCHighThresholdPercent: 200
      ignore_errors: true

    - name: a file value a flag masks
      kubeletcfg.kubelet.kubelet_config:
        config_patch: {maxPods: 120}
      ignore_errors: true

    - name: file after the masked change
      ansible.builtin.slurp:
        src: "{{ kubelet_root }}/var/lib/kubelet/config.yaml"

    - name: a file value a flag masks, again
      kubeletcfg.kubelet.kubelet_config:
        config_patch: {maxPods: 120}
      ignore_errors: true

    - name: async
      kubeletcfg.kubelet.kubelet_config:
        config: "{{ changed | combine({'containerLogMaxSize': '31Mi'}) }}"
      async: 60
      poll: 1
      ignore_errors: true

    - name: backups 1
      kubeletcfg.kubelet.kubelet_config:
        config: "{{ changed | combine({'containerLogMaxSize': '32Mi'}) }}"
        keep_backups: 1
      ignore_errors: true

    - name: backups 2
      kubeletcfg.kubelet.kubelet_config:
        config: "{{ changed | combine({'containerLogMaxSize': '33Mi'}) }}"
        keep_backups: 1
      ignore_errors: true

    - name: backups 3
      kubeletcfg.kubelet.kubelet_config:
        config: "{{ changed | combine({'containerLogMaxSize': '34Mi'}) }}"
        keep_backups: 1
      ignore_errors: true

    - name: not root
      kubeletcfg.kubelet.kubelet_config:
        config: "{{ changed | combine({'containerLogMaxSize': '35Mi'}) }}"
      become: true
      become_user: nobody
      become_flags: -s /bin/sh
      vars:
        ansible_pipelining: true
        ansible_remote_tmp: /tmp
      ignore_errors: true

    - name: kubeadm refuses what its upgrade reverts
      kubeletcfg.kubelet.kubelet_config:
        config_patch: {containerLogMaxSize: 37Mi}
        force_unmanaged: false
      ignore_errors: true

    - name: kubeadm from_kubeadm without the ConfigMap
      kubeletcfg.kubelet.kubelet_config:
        from_kubeadm: true
      check_mode: true
      ignore_errors: true

    - name: kubeadm persist patch
      kubeletcfg.kubelet.kubelet_config:
        config_patch: {containerLogMaxSize: 38Mi}
        force_unmanaged: false
        persist: patch

    - name: Break the stand-in kubelet for good
      ansible.builtin.file:
        path: "{{ kubelet_root }}/broken"
        state: touch
        mode: "0644"

    - name: a rollback the old configuration does not bring up either
      kubeletcfg.kubelet.kubelet_config:
        config: "{{ changed | combine({'containerLogMaxSize': '36Mi'}) }}"
      ignore_errors: true

    - name: Mend the stand-in kubelet
      ansible.builtin.file:
        path: "{{ kubelet_root }}/broken"
        state: absent

- name: The install role
  hosts: edge-1
  gather_facts: false
  module_defaults: *node
  tasks:
    - name: Install in check mode on a fresh node
      ansible.builtin.import_role:
        name: kubeletcfg.kubelet.install
      vars:
        kubeletcfg_src: "{{ kubeletcfg_binary }}"
        kubeletcfg_dest: "{{ fakes }}/fresh/kubeletcfg"
      check_mode: true
      ignore_errors: true

    - name: Install
      ansible.builtin.import_role:
        name: kubeletcfg.kubelet.install
      vars:
        kubeletcfg_src: "{{ kubeletcfg_binary }}"
        kubeletcfg_dest: "{{ fakes }}/installed/kubeletcfg"

    - name: installed
      kubeletcfg.kubelet.kubelet_config:
        config: "{{ changed }}"
        kubeletcfg_binary: "{{ fakes }}/installed/kubeletcfg"
      check_mode: true
      ignore_errors: true
`

// TestEdges: each edge of the module an operator hits, one task each, in one
// ansible-playbook run over one stand-in node.
func TestEdges(t *testing.T) {
	e := env
	sample, err := os.ReadFile(filepath.Join(repo, "testdata/nodes/kubeadm-1.31/var/lib/kubelet/config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	base := strings.Replace(string(sample), "cgroupDriver: systemd", "cgroupDriver: cgroupfs", 1)
	vars := e.StandIn(t, "edge-1", base)
	root := vars["kubelet_root"].(string)
	configFile := filepath.Join(root, "var/lib/kubelet/config.yaml")

	dir := filepath.Join(e.Dir, "edges")
	fakes := filepath.Join(dir, "fakes")
	for name, script := range map[string]string{
		// A Go panic half-way through the JSON.
		"crash": "#!/bin/sh\nprintf '{\"changes\": [' \necho 'panic: runtime error: index out of range [3] with length 3' >&2\necho 'goroutine 1 [running]:' >&2\nexit 2\n",
		// Killed (the OOM killer, an operator) after its first progress line.
		"killed":  "#!/bin/sh\necho 'note: the kubelet restarted (0.31s)' >&2\nkill -9 $$\n",
		"garbage": "#!/bin/sh\necho 'this is not JSON'\n",
		// A kubeletcfg from before apply spoke JSON: cobra refuses the flag.
		"old": "#!/bin/sh\necho \"Error: unknown shorthand flag: 'o' in -o\" >&2\nexit 2\n",
	} {
		harness.WriteFile(t, filepath.Join(fakes, name), script)
		if err := os.Chmod(filepath.Join(fakes, name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	toMap := func(yamlText string) map[string]any {
		raw, err := yaml.YAMLToJSON([]byte(yamlText))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	changed := base + "containerLogMaxSize: 20Mi\n"
	harness.WriteFile(t, filepath.Join(dir, "files", "edge-config.yaml"), changed)
	harness.WriteFile(t, filepath.Join(dir, "files", "edge-bad.yaml"), "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPod: 5\nsyncFrequncy: 1s\n")
	play := filepath.Join(dir, "edges.yml")
	harness.WriteFile(t, play, edgesPlaybook)
	inv := e.Inventory(t, []harness.Host{{Name: "edge-1", Vars: vars}})
	r := e.Playbook(t, inv, play, map[string]any{
		"fakes":          fakes,
		"changed":        toMap(changed),
		"insecure":       toMap(strings.Replace(changed, "anonymous:\n    enabled: false", "anonymous:\n    enabled: true", 1)),
		"unknown_fields": toMap(changed + "maxPod: 5\nsyncFrequncy: 1s\n"),
	})
	t.Logf("edges playbook: %s", r.Took)
	ev := func(t *testing.T, task string) harness.Event { t.Helper(); return r.Task(t, "edge-1", task) }
	failed := func(t *testing.T, task string, want ...string) harness.Event {
		t.Helper()
		e := ev(t, task)
		if e.Status != "failed" {
			t.Errorf("want failed:\n%s", e)
		}
		for _, w := range want {
			if !strings.Contains(e.Msg(), w) {
				t.Errorf("msg lacks %q:\n%s", w, e)
			}
		}
		if _, ok := e.Result["exception"]; ok || strings.Contains(e.String(), "Traceback") {
			t.Errorf("a Python traceback:\n%s", e)
		}
		return e
	}
	ok := func(t *testing.T, task string, wantChanged bool) harness.Event {
		t.Helper()
		e := ev(t, task)
		if e.Status != "ok" || e.Changed() != wantChanged {
			t.Errorf("want ok and changed=%v:\n%s", wantChanged, e)
		}
		return e
	}
	notHas := func(t *testing.T, e harness.Event, s string) {
		t.Helper()
		if strings.Contains(e.Msg(), s) {
			t.Errorf("msg has %q:\n%s", s, e)
		}
	}

	// Argument checks: every combination the real run would refuse is
	// refused in check mode too, by the module, naming its options.
	t.Run("required_one_of is not defeated by migrate's default", func(t *testing.T) {
		failed(t, "required one of", "one of the following is required", "config_patch")
	})
	t.Run("migrate: false next to config is no conflict", func(t *testing.T) {
		ok(t, "migrate false next to config", true)
	})
	t.Run("src with content is refused, not content dropped", func(t *testing.T) {
		failed(t, "src and content", "src", "content", "mutually exclusive")
	})
	t.Run(`remote_src: "no" is false`, func(t *testing.T) {
		ok(t, "remote_src no", true)
	})
	t.Run("a drop-in name with a slash is refused without a traceback", func(t *testing.T) {
		failed(t, "dropin name with a slash", "../evil.conf")
	})
	t.Run("src a directory is refused without a traceback", func(t *testing.T) {
		failed(t, "src a directory on the controller", "directory")
		failed(t, "src a directory on the node", "directory")
	})
	t.Run("restart_command needs pid_file, in check mode too", func(t *testing.T) {
		failed(t, "restart_command without pid_file", "pid_file")
	})
	t.Run("force needs drain, in check mode too", func(t *testing.T) {
		failed(t, "force without drain", "force", "drain")
	})
	t.Run("dropins next to config is refused by the module, as kubeletcfg would", func(t *testing.T) {
		failed(t, "dropins next to config", "dropins", "config")
	})

	// kubeletcfg's answers, honestly reported.
	t.Run("an unknown kubelet flag is not a kubeletcfg too old", func(t *testing.T) {
		e := failed(t, "a flag the kubelet version removed", "--pod-infra-container-image", "1.35")
		notHas(t, e, "too old")
	})
	t.Run("the version assumed without kubelet_version is said", func(t *testing.T) {
		e := failed(t, "no kubelet_version under root", "--pod-infra-container-image")
		notHas(t, e, "too old")
		if w, _ := json.Marshal(e.Result["warnings"]); !strings.Contains(string(w), "kubelet_version") || !strings.Contains(string(w), "1.37") {
			t.Errorf("no warning naming the version assumed and kubelet_version:\n%s", e)
		}
	})
	t.Run("a crash keeps cmd, rc and stderr", func(t *testing.T) {
		e := failed(t, "kubeletcfg crashes", "panic: runtime error")
		if e.Result["rc"] != 2.0 || !strings.Contains(e.String(), `"cmd":["`) || !strings.Contains(e.String(), "goroutine 1") {
			t.Errorf("want rc 2, cmd and stderr:\n%s", e)
		}
	})
	t.Run("a kubeletcfg killed by a signal is said so", func(t *testing.T) {
		e := failed(t, "kubeletcfg killed by a signal", "signal", "SIGKILL", "kubeletcfg recover")
		if e.Result["rc"] != -9.0 || !strings.Contains(e.String(), `"cmd":["`) || !strings.Contains(e.String(), "restarted (0.31s)") {
			t.Errorf("want rc -9, cmd and stderr:\n%s", e)
		}
	})
	t.Run("no JSON keeps cmd, rc and stderr", func(t *testing.T) {
		e := failed(t, "kubeletcfg prints no JSON", "no JSON", "this is not JSON")
		if e.Result["rc"] != 0.0 || !strings.Contains(e.String(), `"cmd":["`) {
			t.Errorf("want rc 0 and cmd:\n%s", e)
		}
	})
	t.Run("too old and missing say how to install", func(t *testing.T) {
		e := failed(t, "kubeletcfg too old", "too old for this collection", "kubeletcfg.kubelet.install")
		if e.Result["rc"] != 2.0 || !strings.Contains(e.String(), `"cmd":["`) {
			t.Errorf("want rc 2 and cmd:\n%s", e)
		}
		failed(t, "kubeletcfg missing", "is not an executable file", "kubeletcfg.kubelet.install")
		failed(t, "src missing on the controller", "src no-such-config.yaml: ")
	})
	t.Run("errors name the operator's input, not the module's temporary file, and all of them", func(t *testing.T) {
		e := failed(t, "errors in a config dict", "config: maxPod: unknown field", "syncFrequncy")
		notHas(t, e, "kubeletcfg-")
		e = failed(t, "errors in a src file", "edge-bad.yaml:3:1: maxPod: unknown field", "edge-bad.yaml:4:1: syncFrequncy")
		notHas(t, e, "kubeletcfg-")
	})
	t.Run("migrate in diff mode shows the files it would write", func(t *testing.T) {
		e := ok(t, "migrate in diff mode", true)
		d, _ := json.Marshal(e.Result["diff"])
		for _, want := range []string{"etc/default/kubelet", "kubeadm-flags.env", "--max-pods=150", "maxPods: 150"} {
			if !strings.Contains(string(d), want) {
				t.Errorf("the diff lacks %q:\n%s", want, d)
			}
		}
	})
	t.Run("a refused change writes nothing, and says so in module options", func(t *testing.T) {
		e := failed(t, "a change that breaks a CIS check", "allow_insecure")
		notHas(t, e, "--allow-insecure")
		if w, _ := e.Result["writes"].([]any); len(w) != 0 || e.Changed() {
			t.Errorf("a refused change: want writes [] and unchanged:\n%s", e)
		}
	})

	// config_patch: only the fields named change, null removes one, the
	// result is validated whole, and the second run changes nothing.
	t.Run("config_patch", func(t *testing.T) {
		e := ok(t, "config_patch", true)
		// As RETURN's sample names it.
		if b, _ := e.Result["backup_file"].(string); !regexp.MustCompile(`/config\.yaml\.bak\.\d{8}T\d{6}\.\d{9}Z$`).MatchString(b) {
			t.Errorf("backup_file %q is not named as RETURN's sample", b)
		}
		if _, ok := e.Result["restart_to_healthy_s"].(float64); !ok {
			t.Errorf("no restart_to_healthy_s after a healthy change:\n%s", e)
		}
		b := slurped(t, r.Task(t, "edge-1", "file after config_patch"))
		got := toMap(b)
		if got["containerLogMaxSize"] != "30Mi" || got["shutdownGracePeriodCriticalPods"] != nil || got["shutdownGracePeriod"] != "30s" || got["maxPods"] != 110.0 {
			t.Errorf("the file after the patch:\n%s", b)
		}
		d, _ := e.Result["diff"].(map[string]any)
		if b, _ := d["before"].(string); !strings.Contains(b, "shutdownGracePeriodCriticalPods: 10s") {
			t.Errorf("the diff's before is not the effective configuration:\n%s", e)
		}
		if a, _ := d["after"].(string); !strings.Contains(a, "containerLogMaxSize: 30Mi") || !strings.Contains(a, "shutdownGracePeriodCriticalPods: 0s") {
			t.Errorf("the diff's after is not the effective configuration:\n%s", e)
		}
		ok(t, "config_patch again", false)
		failed(t, "config_patch with an invalid result", "imageGCHighThresholdPercent")
	})
	t.Run("a file value a flag masks is written once, with a warning", func(t *testing.T) {
		e := ok(t, "a file value a flag masks", true)
		if w, _ := json.Marshal(e.Result["warnings"]); !strings.Contains(string(w), "--max-pods") {
			t.Errorf("no warning naming the flag that masks the value:\n%s", e)
		}
		if b := slurped(t, r.Task(t, "edge-1", "file after the masked change")); !strings.Contains(b, "maxPods: 120") {
			t.Errorf("the file after the masked change:\n%s", b)
		}
		ok(t, "a file value a flag masks, again", false)
	})
	t.Run("async", func(t *testing.T) {
		ok(t, "async", true)
	})
	t.Run("backup names sort as they age, pruning or not", func(t *testing.T) {
		last := ok(t, "backups 3", true)
		names, _ := filepath.Glob(configFile + ".bak.*")
		sort.Strings(names)
		if !slices.Contains(names, last.Result["backup_file"].(string)) {
			t.Errorf("the last backup %v is not among %v", last.Result["backup_file"], names)
		}
		var mtimes []int64
		for _, n := range names {
			st, err := os.Stat(n)
			if err != nil {
				t.Fatal(err)
			}
			mtimes = append(mtimes, st.ModTime().UnixNano())
		}
		if !sort.SliceIsSorted(mtimes, func(i, j int) bool { return mtimes[i] < mtimes[j] }) {
			t.Errorf("backup names are not in age order: %v", names)
		}
	})
	t.Run("not root: the message says to become root", func(t *testing.T) {
		failed(t, "not root", "become")
	})
	t.Run("a rollback the old configuration does not bring up either is said so", func(t *testing.T) {
		e := failed(t, "a rollback the old configuration does not bring up either", "not healthy on it either")
		if e.Result["rolled_back"] != true || e.Result["rc"] != 2.0 {
			t.Errorf("want rolled_back and rc 2 (RETURN: rc):\n%s", e)
		}
		// Words the start-up table does not know: shown verbatim, said
		// to be unknown, never guessed.
		if x, _ := e.Result["explanation"].(map[string]any); x["class"] != "unknown" || !strings.Contains(e.Msg(), "the stand-in is broken") {
			t.Errorf("want the kubelet's unknown words verbatim (RETURN: explanation):\n%s", e)
		}
		if _, ok := e.Result["restart_to_healthy_s"]; ok {
			t.Errorf("restart_to_healthy_s on a rollback (RETURN: only when the kubelet stayed healthy):\n%s", e)
		}
	})

	t.Run("the install role in check mode on a fresh node", func(t *testing.T) {
		for _, e := range r.Of("edge-1", "") {
			if strings.HasPrefix(e.Task, "Install") || strings.HasPrefix(e.Task, "Check that kubeletcfg runs") {
				if e.Status == "failed" {
					t.Errorf("the install role failed:\n%s", e)
				}
			}
		}
		ok(t, "installed", true)
	})

	// Every key RETURN documents as returned always is in every result of
	// the module, success or failure, except a refusal of Ansible's own
	// argument checks (or of the action plugin, on the controller); and
	// every result where kubeletcfg ran has the command, its exit code
	// and its stderr.
	t.Run("kubeadm: a change its next upgrade reverts is refused, or kept in a kubeadm patch", func(t *testing.T) {
		failed(t, "kubeadm refuses what its upgrade reverts", "kubeadm: the next kubeadm upgrade node reverts the change", "containerLogMaxSize", "persist")
		failed(t, "kubeadm from_kubeadm without the ConfigMap", "from_kubeadm: true needs kubeadm's ConfigMap")
		e := ok(t, "kubeadm persist patch", true)
		k, _ := e.Result["kubeadm"].(map[string]any)
		patch := "/etc/kubernetes/patches/kubeletconfigurationzz-kubeletcfg+merge.yaml"
		if k["patchFile"] != patch {
			t.Fatalf("kubeadm result %v", e)
		}
		if b, err := os.ReadFile(filepath.Join(root, patch)); err != nil || !strings.Contains(string(b), "containerLogMaxSize: 38Mi") {
			t.Errorf("the kubeadm patch in the tree: %q %v", b, err)
		}
		if !strings.Contains(e.String(), "--patches /etc/kubernetes/patches") {
			t.Errorf("no warning that kubeadm upgrade needs --patches:\n%s", e)
		}
	})
	t.Run("RETURN's always keys are always there", func(t *testing.T) {
		always := returnedAlways(t)
		if len(always) < 5 {
			t.Fatalf("RETURN documents only %v as always returned", always)
		}
		argChecks := map[string]bool{"required one of": true, "src and content": true, "src a directory on the controller": true,
			"src missing on the controller": true, "restart_command without pid_file": true, "dropins next to config": true}
		ran := map[string]bool{"kubeletcfg crashes": true, "kubeletcfg killed by a signal": true, "kubeletcfg prints no JSON": true,
			"kubeletcfg too old": true, "a flag the kubelet version removed": true, "errors in a config dict": true,
			"a change that breaks a CIS check": true, "config_patch": true, "a rollback the old configuration does not bring up either": true}
		n := 0
		for _, e := range r.Of("edge-1", "") {
			if !strings.Contains(e.String(), `"kubeletcfg_binary":`) || argChecks[e.Task] {
				continue // not this module's result, or Ansible's refusal
			}
			n++
			for _, k := range always {
				if _, ok := e.Result[k]; !ok {
					t.Errorf("%s: no %s (RETURN: returned always)\n%s", e.Task, k, e)
				}
			}
			if ran[e.Task] {
				_, cmd := e.Result["cmd"]
				_, stderr := e.Result["stderr"]
				_, rc := e.Result["rc"]
				if !cmd || !stderr || (e.Status == "failed" && !rc) {
					t.Errorf("%s: kubeletcfg ran, and cmd, stderr or rc is missing:\n%s", e.Task, e)
				}
			}
		}
		if n < 20 {
			t.Errorf("only %d results of the module checked", n)
		}
	})
	if t.Failed() {
		t.Logf("playbook output:\n%s", r.Output)
	}
}

// slurped is the file content a slurp task read.
func slurped(t *testing.T, ev harness.Event) string {
	t.Helper()
	s, _ := ev.Result["content"].(string)
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || ev.Status != "ok" {
		t.Fatalf("slurp: %v\n%s", err, ev)
	}
	return string(b)
}

// returnedAlways is the RETURN keys of kubelet_config whose returned is
// "always", from ansible-doc.
func returnedAlways(t *testing.T) []string {
	t.Helper()
	cmd := exec.Command("ansible-doc", "--json", "kubeletcfg.kubelet.kubelet_config")
	cmd.Env = env.Environ(filepath.Join(env.Dir, "record-doc"))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ansible-doc --json: %v", err)
	}
	var doc map[string]struct {
		Return map[string]struct {
			Returned string `json:"returned"`
		} `json:"return"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k, v := range doc["kubeletcfg.kubelet.kubelet_config"].Return {
		if v.Returned == "always" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}
