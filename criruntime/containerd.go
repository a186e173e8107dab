package criruntime

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"dario.cat/mergo"
	toml "github.com/pelletier/go-toml/v2"

	"github.com/kubeletcfg/kubeletcfg/nodefile"
)

// ContainerdConfigPath is where containerd reads its configuration when it
// is started without --config.
const ContainerdConfigPath = "/etc/containerd/config.toml"

// ContainerdConfigVersion is the newest configuration version the modelled
// containerd (2.4) reads; 2.0–2.2 read up to 3.
const ContainerdConfigVersion = 4

// maxContainerdFiles bounds how many files one configuration may pull in
// through imports (kubeletcfg's limit, not containerd's).
const maxContainerdFiles = 256

// ContainerdFile is the kind of file containerd's configuration is, for nodefile.
var ContainerdFile = nodefile.Kind{What: "containerd configuration file", Limit: 4 << 20}

// The plugins on the way to the answer.
const (
	pluginCRIRuntime = "io.containerd.cri.v1.runtime" // the CRI runtime settings (config version 3 and newer)
	pluginCRIGRPC    = "io.containerd.grpc.v1.cri"    // the CRI service; its settings before version 3
	runcV2           = "io.containerd.runc.v2"
)

// Host is what containerd's answer depends on outside its files. A nil
// field is a fact kubeletcfg cannot see (an offline image).
type Host struct {
	// SystemdRunning: the node booted with systemd (/run/systemd/system is
	// a directory), which containerd reports when no runc handler says.
	SystemdRunning *bool
	// CgroupV2: /sys/fs/cgroup is cgroup v2 (cgroup_writable needs it).
	CgroupV2 *bool
}

// ContainerdOptions say where containerd's configuration is and what the
// host is.
type ContainerdOptions struct {
	// Path is containerd's --config (ContainerdConfigPath when empty).
	Path string
	Host Host
}

// notStarting is a configuration containerd 2.4 does not start with (or
// starts without its CRI): an answer, not kubeletcfg's error.
type notStarting struct{ msg string }

func (e *notStarting) Error() string { return e.msg }

// Containerd reads containerd's configuration on the node under root, as
// containerd 2.4 loads it (the file, then what it imports, each migrated
// from its own version and merged), and decides what its CRI answers the
// kubelet's RuntimeConfig: the default runtime handler's runc SystemdCgroup,
// then the other handlers' in name order; with no runc options at all,
// whether systemd runs. The error is kubeletcfg's refusal (a file over its
// limit, not regular, a link out of the root, a configuration version newer
// than containerd 2.4 reads); what containerd itself refuses is an Answer
// with Fatal set.
func Containerd(root *nodefile.Root, o ContainerdOptions) (*Answer, error) {
	p := o.Path
	if p == "" {
		p = ContainerdConfigPath
	}
	a := &Answer{Source: "containerd " + p}
	files, err := loadContainerd(root, p, a)
	var ns *notStarting
	switch {
	case errors.As(err, &ns):
		a.Fatal = "containerd does not start: " + ns.msg
		return a, nil
	case err != nil:
		return nil, err
	}
	if files.missing {
		a.Notes = append(a.Notes, p+" is not there: containerd runs on its defaults")
	}
	cfg := files.merged
	for _, id := range []string{pluginCRIGRPC, pluginCRIRuntime} {
		if slices.Contains(cfg.DisabledPlugins, id) {
			a.Fatal = fmt.Sprintf("%s disables %s (disabled_plugins): containerd serves no CRI, and the kubelet cannot connect", files.where("disabled_plugins"), id)
			return a, nil
		}
	}
	rc, err := criRuntimeConfig(cfg.Plugins)
	if err != nil {
		// A plugin table that does not decode stops containerd itself.
		a.Fatal = fmt.Sprintf("containerd does not start: %v", err)
		return a, nil
	}
	if err := validateRuntimes(rc, o.Host, a); err != nil {
		a.Fatal = fmt.Sprintf("containerd's CRI plugin does not load (%v): the kubelet cannot connect", err)
		return a, nil
	}
	decide(rc, o.Host, files, a)
	if files.v3GRPCRuntimes {
		a.Notes = append(a.Notes, "a version 3 file sets runtimes under \""+pluginCRIGRPC+"\": containerd 2.3 and newer move them to \""+pluginCRIRuntime+"\", 2.0–2.2 ignore them")
	}
	return a, nil
}

// ctrdConfig is containerd's top-level configuration, as its server reads
// it: every field is declared with its type, since a value of the wrong type
// anywhere stops containerd.
type ctrdConfig struct {
	Version         int            `toml:"version"`
	Root            string         `toml:"root"`
	State           string         `toml:"state"`
	TempDir         string         `toml:"temp"`
	Debug           ctrdDebug      `toml:"debug"`
	DisabledPlugins []string       `toml:"disabled_plugins"`
	RequiredPlugins []string       `toml:"required_plugins"`
	Plugins         map[string]any `toml:"plugins"`
	OOMScore        int            `toml:"oom_score"`
	Cgroup          struct {
		Path string `toml:"path"`
	} `toml:"cgroup"`
	ProxyPlugins     map[string]ctrdProxy   `toml:"proxy_plugins"`
	Timeouts         map[string]string      `toml:"timeouts"`
	Imports          []string               `toml:"imports"`
	StreamProcessors map[string]ctrdStreams `toml:"stream_processors"`
	GRPC             ctrdGRPC               `toml:"grpc,omitempty"`
	TTRPC            ctrdAddress            `toml:"ttrpc,omitempty"`
	Metrics          ctrdMetrics            `toml:"metrics,omitempty"`
}

type ctrdDebug struct {
	Level      string `toml:"level"`
	Format     string `toml:"format"`
	LogTraceID bool   `toml:"log_trace_id"`
	Address    string `toml:"address,omitempty"`
	UID        int    `toml:"uid,omitempty"`
	GID        int    `toml:"gid,omitempty"`
}

type ctrdProxy struct {
	Type         string            `toml:"type"`
	Address      string            `toml:"address"`
	Platform     string            `toml:"platform"`
	Exports      map[string]string `toml:"exports"`
	Capabilities []string          `toml:"capabilities"`
}

type ctrdStreams struct {
	Accepts []string `toml:"accepts"`
	Returns string   `toml:"returns"`
	Path    string   `toml:"path"`
	Args    []string `toml:"args"`
	Env     []string `toml:"env"`
}

type ctrdGRPC struct {
	Address        string `toml:"address,omitempty"`
	TCPAddress     string `toml:"tcp_address,omitempty"`
	TCPTLSCA       string `toml:"tcp_tls_ca,omitempty"`
	TCPTLSCert     string `toml:"tcp_tls_cert,omitempty"`
	TCPTLSKey      string `toml:"tcp_tls_key,omitempty"`
	UID            int    `toml:"uid,omitempty"`
	GID            int    `toml:"gid,omitempty"`
	MaxRecvMsgSize int    `toml:"max_recv_message_size,omitempty"`
	MaxSendMsgSize int    `toml:"max_send_message_size,omitempty"`
	TCPTLSCName    string `toml:"tcp_tls_common_name,omitempty"`
}

type ctrdAddress struct {
	Address string `toml:"address,omitempty"`
	UID     int    `toml:"uid,omitempty"`
	GID     int    `toml:"gid,omitempty"`
}

type ctrdMetrics struct {
	Address       string `toml:"address,omitempty"`
	GRPCHistogram bool   `toml:"grpc_histogram,omitempty"`
}

// loaded is the configuration after every file is read.
type loaded struct {
	merged  *ctrdConfig
	missing bool     // the main file is not there: defaults
	files   []string // the files read, in order
	// sources: per file, its text's key positions, to say where a value
	// was written.
	sources []*tomlIndex
	// v3GRPCRuntimes: a version 3 file sets runtimes under the CRI service
	// plugin, which containerd 2.0–2.2 ignore and 2.3+ migrate.
	v3GRPCRuntimes bool
}

// where is file:line of the last file that sets keys, or the main file.
func (l *loaded) where(keys ...string) string {
	for i := len(l.sources) - 1; i >= 0; i-- {
		if line, ok := l.sources[i].find(keys); ok {
			return fmt.Sprintf("%s:%d", l.files[i], line)
		}
	}
	if len(l.files) > 0 {
		return l.files[0]
	}
	return "containerd's defaults"
}

func loadContainerd(root *nodefile.Root, main string, a *Answer) (*loaded, error) {
	l := &loaded{merged: &ctrdConfig{Version: ContainerdConfigVersion}}
	if _, _, err := root.Stat(main); errors.Is(err, fs.ErrNotExist) {
		l.missing = true
		return l, nil
	}
	seen := map[string]bool{}
	pending := []string{main}
	for len(pending) > 0 {
		p := pending[0]
		pending = pending[1:]
		if seen[p] {
			continue
		}
		if len(seen) == maxContainerdFiles {
			return nil, fmt.Errorf("%s: more than %d files through imports (kubeletcfg's limit)", main, maxContainerdFiles)
		}
		data, err := root.ReadFile(p, ContainerdFile)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, &notStarting{fmt.Sprintf("%s: %v", p, err)}
			}
			return nil, err
		}
		cfg, err := decodeContainerdFile(p, data, a)
		if err != nil {
			return nil, err
		}
		if cfg.Version > ContainerdConfigVersion {
			return nil, fmt.Errorf("%s: containerd configuration version %d: kubeletcfg models containerd 2.4, which reads versions 1 to %d (and refuses %d: \"expected containerd config version equal to or less than `%d`, got `%d`\")",
				p, cfg.Version, ContainerdConfigVersion, cfg.Version, ContainerdConfigVersion, cfg.Version)
		}
		if cfg.Version == 3 {
			if m, ok := cfg.Plugins[pluginCRIGRPC].(map[string]any); ok {
				if c, ok := m["containerd"].(map[string]any); ok && c["runtimes"] != nil {
					l.v3GRPCRuntimes = true
				}
			}
		}
		if cfg.Version < ContainerdConfigVersion {
			migrateContainerd(cfg)
		}
		if err := mergeContainerd(l.merged, cfg); err != nil {
			return nil, &notStarting{fmt.Sprintf("%s: %v", p, err)}
		}
		imports, err := resolveImports(root, p, cfg.Imports)
		if err != nil {
			return nil, &notStarting{fmt.Sprintf("%s: imports: %v", p, err)}
		}
		seen[p] = true
		l.files = append(l.files, p)
		l.sources = append(l.sources, indexTOML(data))
		pending = append(pending, imports...)
	}
	for _, list := range [][]string{l.merged.DisabledPlugins, l.merged.RequiredPlugins} {
		for _, id := range list {
			if !strings.Contains(id, ".") {
				return nil, &notStarting{fmt.Sprintf("failed to load TOML from %s: invalid plugin URI %q expect io.containerd.x.vx (a bare name is read only in a version 1 file)", main, id)}
			}
		}
	}
	return l, nil
}

// decodeContainerdFile decodes one file as containerd's server does: keys
// it does not know are warned about and ignored; a syntax or type error
// stops containerd.
func decodeContainerdFile(p string, data []byte, a *Answer) (*ctrdConfig, error) {
	cfg := &ctrdConfig{}
	dec := toml.NewDecoder(strings.NewReader(string(data))).DisallowUnknownFields()
	err := dec.Decode(cfg)
	var strict *toml.StrictMissingError
	if errors.As(err, &strict) {
		for _, e := range strict.Errors {
			row, col := e.Position()
			a.Notes = append(a.Notes, fmt.Sprintf("%s:%d:%d: containerd ignores the unknown key %q", p, row, col, strings.Join(e.Key(), ".")))
		}
		cfg = &ctrdConfig{}
		err = toml.Unmarshal(data, cfg)
	}
	if err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, col := de.Position()
			return nil, &notStarting{fmt.Sprintf("%s: failed to unmarshal TOML at row %d column %d: %v", p, row, col, err)}
		}
		return nil, &notStarting{fmt.Sprintf("%s: failed to unmarshal TOML: %v", p, err)}
	}
	return cfg, nil
}

// migrateContainerd brings one file to version 4 as containerd 2.4 does,
// one version at a time: version 1's bare plugin names become URIs (at 1 →
// 2), and at every step the CRI plugins' own migrations move the CRI
// service plugin's runtime settings to the runtime plugin, then strip the
// service plugin to its server settings.
func migrateContainerd(c *ctrdConfig) {
	if c.Plugins == nil {
		c.Plugins = map[string]any{}
	}
	for v := c.Version; v < ContainerdConfigVersion; v++ {
		if v == 1 {
			migrateV1PluginNames(c)
		}
		// The registry orders the runtime plugin before the CRI service
		// plugin (which requires it): its migration sees the service
		// plugin's settings before they are stripped.
		migrateCRIRuntime(c.Plugins)
		stripCRIService(c.Plugins)
	}
	c.Version = ContainerdConfigVersion
}

var v1CorePlugins = map[string]string{
	"cri": "io.containerd.grpc.v1.cri", "cgroups": "io.containerd.monitor.v1.cgroups",
	"linux": "io.containerd.runtime.v1.linux", "scheduler": "io.containerd.gc.v1.scheduler",
	"bolt": "io.containerd.metadata.v1.bolt", "task": "io.containerd.runtime.v2.task",
	"opt": "io.containerd.internal.v1.opt", "restart": "io.containerd.internal.v1.restart",
	"tracing": "io.containerd.internal.v1.tracing", "otlp": "io.containerd.tracing.processor.v1.otlp",
	"aufs": "io.containerd.snapshotter.v1.aufs", "btrfs": "io.containerd.snapshotter.v1.btrfs",
	"devmapper": "io.containerd.snapshotter.v1.devmapper", "native": "io.containerd.snapshotter.v1.native",
	"overlayfs": "io.containerd.snapshotter.v1.overlayfs", "zfs": "io.containerd.snapshotter.v1.zfs",
}

func v1PluginName(name string) string {
	if strings.Contains(name, ".") {
		return name
	}
	switch {
	case v1CorePlugins[name] != "":
		return v1CorePlugins[name]
	case strings.HasSuffix(name, "-service"):
		return "io.containerd.service.v1." + name
	case name == "windows" || name == "windows-lcow":
		return "io.containerd.snapshotter.v1." + name
	}
	return "io.containerd.grpc.v1." + name
}

func migrateV1PluginNames(c *ctrdConfig) {
	plugins := make(map[string]any, len(c.Plugins))
	for name, v := range c.Plugins {
		plugins[v1PluginName(name)] = v
	}
	c.Plugins = plugins
	for i, name := range c.DisabledPlugins {
		c.DisabledPlugins[i] = v1PluginName(name)
	}
	for i, name := range c.RequiredPlugins {
		c.RequiredPlugins[i] = v1PluginName(name)
	}
}

// migrateCRIRuntime copies, into the runtime plugin, the CRI service
// plugin's settings the runtime plugin does not set itself (keys as
// written: this works on the raw tables, before any case folding).
func migrateCRIRuntime(plugins map[string]any) {
	src, ok := plugins[pluginCRIGRPC].(map[string]any)
	if !ok {
		return
	}
	dst, ok := plugins[pluginCRIRuntime].(map[string]any)
	if !ok {
		dst = map[string]any{}
	}
	for k, v := range src {
		switch k {
		case "cni", "containerd", "sandbox_image", "registry", "image_decryption", "max_concurrent_downloads",
			"image_pull_progress_timeout", "image_pull_with_sync_fs", "stats_collect_period",
			"disable_tcp_service", "stream_server_address", "stream_server_port", "stream_idle_timeout",
			"enable_tls_streaming", "x509_key_pair_streaming", "enable_cdi":
			continue
		}
		if _, ok := dst[k]; !ok {
			dst[k] = v
		}
	}
	if cni, ok := src["cni"].(map[string]any); ok {
		out, ok := dst["cni"].(map[string]any)
		if !ok {
			out = map[string]any{}
		}
		for k, v := range cni {
			if k == "bin_dir" {
				if dirs, ok := out["bin_dirs"].([]string); !ok || len(dirs) == 0 {
					if s, ok := v.(string); ok {
						out["bin_dirs"] = []string{s}
					}
				}
				continue
			}
			if _, ok := out[k]; !ok {
				out[k] = v
			}
		}
		dst["cni"] = out
	}
	ctr, ok := src["containerd"].(map[string]any)
	if !ok {
		plugins[pluginCRIRuntime] = dst
		return
	}
	out, ok := dst["containerd"].(map[string]any)
	if !ok {
		out = map[string]any{}
	}
	for k, v := range ctr {
		switch k {
		case "snapshotter", "disable_snapshot_annotations", "discard_unpacked_layers":
			continue
		}
		if _, ok := out[k]; !ok {
			out[k] = v
		}
	}
	dst["containerd"] = out
	plugins[pluginCRIRuntime] = dst
	if rts, ok := out["runtimes"].(map[string]any); ok {
		for _, r := range rts {
			rt, ok := r.(map[string]any)
			if !ok {
				continue
			}
			if mode, ok := rt["sandbox_mode"]; ok {
				if _, ok := rt["sandboxer"]; !ok {
					rt["sandboxer"] = mode
					delete(rt, "sandbox_mode")
				}
			}
		}
	}
}

// stripCRIService keeps, of the CRI service plugin, its server settings
// (containerd's CRI service migration).
func stripCRIService(plugins map[string]any) {
	src, ok := plugins[pluginCRIGRPC].(map[string]any)
	if !ok {
		return
	}
	dst := map[string]any{}
	for _, k := range []string{"disable_tcp_service", "stream_server_address", "stream_server_port", "stream_idle_timeout", "enable_tls_streaming", "x509_key_pair_streaming"} {
		if v, ok := src[k]; ok {
			dst[k] = v
		}
	}
	plugins[pluginCRIGRPC] = dst
}

// mergeContainerd merges a file over what was read before as containerd
// does (mergo with override; slices appended without duplicates; nested
// plugin tables merged key by key).
func mergeContainerd(to, from *ctrdConfig) error {
	return mergo.Merge(to, from, mergo.WithOverride, mergo.WithTransformers(appendUnique{}))
}

// appendUnique appends the elements of a slice that the other lacks.
type appendUnique struct{}

func (appendUnique) Transformer(t reflect.Type) func(dst, src reflect.Value) error {
	if t.Kind() != reflect.Slice {
		return nil
	}
	return func(dst, src reflect.Value) error {
		if !dst.CanSet() {
			return nil
		}
		for i := 0; i < src.Len(); i++ {
			found := false
			for j := 0; j < dst.Len() && !found; j++ {
				found = reflect.DeepEqual(src.Index(i).Interface(), dst.Index(j).Interface())
			}
			if !found {
				dst.Set(reflect.Append(dst, src.Index(i)))
			}
		}
		return nil
	}
}

// resolveImports lists the files one file imports, as containerd resolves
// them: a relative path against the file's directory, a path with "*" as a
// glob (matched inside the root, in name order).
func resolveImports(root *nodefile.Root, parent string, imports []string) ([]string, error) {
	var out []string
	for _, p := range imports {
		p = path.Clean(p)
		if !path.IsAbs(p) {
			p = path.Join(path.Dir(parent), p)
		}
		if !strings.Contains(p, "*") {
			out = append(out, p)
			continue
		}
		m, err := globIn(root, p)
		if err != nil {
			return nil, err
		}
		out = append(out, m...)
		if len(out) > maxContainerdFiles {
			return nil, fmt.Errorf("%s matches more than %d files (kubeletcfg's limit)", p, maxContainerdFiles)
		}
	}
	return out, nil
}

// globIn is filepath.Glob on the node: names sorted, directories listed
// through the root, unreadable ones skipped as Glob skips them.
func globIn(root *nodefile.Root, pattern string) ([]string, error) {
	if _, err := path.Match(pattern, ""); err != nil {
		return nil, err
	}
	if !hasMeta(pattern) {
		if _, _, err := root.Stat(pattern); err != nil {
			return nil, nil
		}
		return []string{pattern}, nil
	}
	dir, file := path.Split(pattern)
	dir = path.Clean(dir)
	dirs := []string{dir}
	if hasMeta(dir) {
		var err error
		if dirs, err = globIn(root, dir); err != nil {
			return nil, err
		}
	}
	var out []string
	for _, d := range dirs {
		names, err := root.ReadDir(d)
		if err != nil {
			continue
		}
		for _, n := range names {
			if ok, _ := path.Match(file, n); ok {
				out = append(out, path.Join(d, n))
			}
		}
		if len(out) > maxContainerdFiles {
			break
		}
	}
	return out, nil
}

func hasMeta(p string) bool { return strings.ContainsAny(p, `*?[\`) }

// criRuntime is the CRI runtime plugin's configuration, declared with
// containerd 2.4's types (a value of the wrong type stops the plugin).
type criRuntime struct {
	Containerd                         criContainerd `toml:"containerd"`
	CNI                                criCNI        `toml:"cni"`
	EnableSelinux                      bool          `toml:"enable_selinux"`
	SelinuxCategoryRange               int           `toml:"selinux_category_range"`
	MaxContainerLogLineSize            int           `toml:"max_container_log_line_size"`
	DisableApparmor                    bool          `toml:"disable_apparmor"`
	RestrictOOMScoreAdj                bool          `toml:"restrict_oom_score_adj"`
	DisableProcMount                   bool          `toml:"disable_proc_mount"`
	UnsetSeccompProfile                string        `toml:"unset_seccomp_profile"`
	TolerateMissingHugetlbController   bool          `toml:"tolerate_missing_hugetlb_controller"`
	DisableHugetlbController           bool          `toml:"disable_hugetlb_controller"`
	DeviceOwnershipFromSecurityContext bool          `toml:"device_ownership_from_security_context"`
	IgnoreImageDefinedVolumes          bool          `toml:"ignore_image_defined_volumes"`
	NetNSMountsUnderStateDir           bool          `toml:"netns_mounts_under_state_dir"`
	EnableUnprivilegedPorts            bool          `toml:"enable_unprivileged_ports"`
	EnableUnprivilegedICMP             bool          `toml:"enable_unprivileged_icmp"`
	CDISpecDirs                        []string      `toml:"cdi_spec_dirs"`
	DrainExecSyncIOTimeout             string        `toml:"drain_exec_sync_io_timeout"`
	IgnoreDeprecationWarnings          []string      `toml:"ignore_deprecation_warnings"`
	StatsCollectPeriod                 string        `toml:"stats_collect_period"`
	StatsRetentionPeriod               string        `toml:"stats_retention_period"`
	EnableCRIU                         *bool         `toml:"enable_criu"`
}

type criContainerd struct {
	DefaultRuntimeName            string                `toml:"default_runtime_name"`
	Runtimes                      map[string]criHandler `toml:"runtimes"`
	IgnoreBlockIONotEnabledErrors bool                  `toml:"ignore_blockio_not_enabled_errors"`
	IgnoreRdtNotEnabledErrors     bool                  `toml:"ignore_rdt_not_enabled_errors"`
}

type criHandler struct {
	Type                                          string         `toml:"runtime_type"`
	Path                                          string         `toml:"runtime_path"`
	PodAnnotations                                []string       `toml:"pod_annotations"`
	ContainerAnnotations                          []string       `toml:"container_annotations"`
	Options                                       map[string]any `toml:"options"`
	PrivilegedWithoutHostDevices                  bool           `toml:"privileged_without_host_devices"`
	PrivilegedWithoutHostDevicesAllDevicesAllowed bool           `toml:"privileged_without_host_devices_all_devices_allowed"`
	CgroupWritable                                bool           `toml:"cgroup_writable"`
	BaseRuntimeSpec                               string         `toml:"base_runtime_spec"`
	NetworkPluginConfDir                          string         `toml:"cni_conf_dir"`
	NetworkPluginMaxConfNum                       int            `toml:"cni_max_conf_num"`
	Snapshotter                                   string         `toml:"snapshotter"`
	Sandboxer                                     string         `toml:"sandboxer"`
	DisablePauseImagePull                         bool           `toml:"disable_pause_image_pull"`
	IOType                                        string         `toml:"io_type"`
}

type criCNI struct {
	NetworkPluginBinDirs       []string `toml:"bin_dirs"`
	NetworkPluginConfDir       string   `toml:"conf_dir"`
	NetworkPluginMaxConfNum    int      `toml:"max_conf_num"`
	NetworkPluginSetupSerially bool     `toml:"setup_serially"`
	NetworkPluginConfTemplate  string   `toml:"conf_template"`
	IPPreference               string   `toml:"ip_pref"`
	UseInternalLoopback        bool     `toml:"use_internal_loopback"`
}

// runcOptions are the runc shim's options (containerd's runc Options
// message), as the CRI plugin decodes a runc handler's options table.
type runcOptions struct {
	NoPivotRoot    bool
	NoNewKeyring   bool
	ShimCgroup     string
	IoUid          uint32
	IoGid          uint32
	BinaryName     string
	Root           string
	SystemdCgroup  bool
	CriuImagePath  string
	CriuWorkPath   string
	TaskApiAddress string
	TaskApiVersion uint32
}

// defaultCRIRuntime is the runtime plugin's default configuration on Linux:
// one handler, runc, whose options say SystemdCgroup = false.
func defaultCRIRuntime() criRuntime {
	return criRuntime{
		Containerd: criContainerd{
			DefaultRuntimeName: "runc",
			Runtimes: map[string]criHandler{"runc": {
				Type: runcV2,
				Options: map[string]any{
					"NoNewKeyring": false, "ShimCgroup": "", "IoUid": int64(0), "IoGid": int64(0),
					"BinaryName": "", "Root": "", "SystemdCgroup": false, "CriuImagePath": "", "CriuWorkPath": "",
				},
				Sandboxer: "podsandbox",
			}},
		},
		CNI:                              criCNI{NetworkPluginBinDirs: []string{"/opt/cni/bin"}, NetworkPluginConfDir: "/etc/cni/net.d", NetworkPluginMaxConfNum: 1},
		SelinuxCategoryRange:             1024,
		MaxContainerLogLineSize:          16 * 1024,
		TolerateMissingHugetlbController: true,
		DisableHugetlbController:         true,
		CDISpecDirs:                      []string{"/etc/cdi", "/var/run/cdi"},
		DrainExecSyncIOTimeout:           "0s",
		EnableUnprivilegedPorts:          true,
		EnableUnprivilegedICMP:           true,
	}
}

// criRuntimeConfig decodes the runtime plugin's table over its defaults as
// containerd's plugin loader does (through TOML again; unknown keys
// ignored, a wrong type an error, which stops containerd).
func criRuntimeConfig(plugins map[string]any) (*criRuntime, error) {
	rc := defaultCRIRuntime()
	table, ok := plugins[pluginCRIRuntime]
	if !ok {
		return &rc, nil
	}
	b, err := toml.Marshal(table)
	if err != nil {
		return nil, err
	}
	if err := toml.Unmarshal(b, &rc); err != nil {
		return nil, fmt.Errorf("plugins.%q: %v", pluginCRIRuntime, err)
	}
	return &rc, nil
}

// validateRuntimes is the part of containerd's check of the runtime
// plugin's settings that concerns the handlers.
func validateRuntimes(rc *criRuntime, host Host, a *Answer) error {
	c := &rc.Containerd
	if c.DefaultRuntimeName == "" {
		return errors.New("`default_runtime_name` is empty")
	}
	if _, ok := c.Runtimes[c.DefaultRuntimeName]; !ok {
		return fmt.Errorf("no corresponding runtime configured in `containerd.runtimes` for `containerd` `default_runtime_name = \"%s\"", c.DefaultRuntimeName)
	}
	for _, name := range sortedHandlers(c.Runtimes, "") {
		r := c.Runtimes[name]
		if r.CgroupWritable {
			switch {
			case host.CgroupV2 == nil:
				a.Notes = append(a.Notes, fmt.Sprintf("runtime %s sets cgroup_writable: containerd's CRI loads only on a cgroup v2 host", name))
			case !*host.CgroupV2:
				return fmt.Errorf("runtime %s: `cgroup_writable` is only supported on cgroup v2", name)
			}
		}
		if !r.PrivilegedWithoutHostDevices && r.PrivilegedWithoutHostDevicesAllDevicesAllowed {
			return errors.New("`privileged_without_host_devices_all_devices_allowed` requires `privileged_without_host_devices` to be enabled")
		}
		if r.IOType != "" && r.IOType != "fifo" && r.IOType != "streaming" {
			return errors.New("`io_type` can only be `streaming` or `named_pipe`")
		}
	}
	for what, d := range map[string]string{"drain_exec_sync_io_timeout": rc.DrainExecSyncIOTimeout, "stats_collect_period": rc.StatsCollectPeriod, "stats_retention_period": rc.StatsRetentionPeriod} {
		if d != "" {
			if err := checkDuration(d); err != nil {
				return fmt.Errorf("invalid `%s`: %v", what, err)
			}
		}
	}
	return nil
}

// sortedHandlers is the order containerd walks the handlers in: the
// default first, the others by name.
func sortedHandlers(rts map[string]criHandler, def string) []string {
	names := make([]string, 0, len(rts))
	for n := range rts {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		if names[i] == def {
			return true
		}
		if names[j] == def {
			return false
		}
		return names[i] < names[j]
	})
	return names
}

// decide is containerd's getCgroupDriver: the first handler, default
// first, whose runc options decode says; else whether systemd runs.
func decide(rc *criRuntime, host Host, l *loaded, a *Answer) {
	def := rc.Containerd.DefaultRuntimeName
	var skipped []string
	for _, name := range sortedHandlers(rc.Containerd.Runtimes, def) {
		r := rc.Containerd.Runtimes[name]
		if r.Options == nil || r.Type != runcV2 {
			skipped = append(skipped, name)
			continue
		}
		b, err := toml.Marshal(r.Options)
		var opts runcOptions
		if err == nil {
			err = toml.Unmarshal(b, &opts)
		}
		if err != nil {
			a.Notes = append(a.Notes, fmt.Sprintf("runtime %s: containerd cannot read its runc options (%v) and skips it", name, err))
			skipped = append(skipped, name)
			continue
		}
		a.Driver = Cgroupfs
		if opts.SystemdCgroup {
			a.Driver = Systemd
		}
		role := "the default runtime"
		if name != def {
			role = fmt.Sprintf("runtime %s, the first in name order with runc options (the default, %s, has none)", name, def)
		}
		where := l.whereOption(name)
		if where == "" {
			a.Why = fmt.Sprintf("%s %s: SystemdCgroup = %t (containerd's default)", role, name, opts.SystemdCgroup)
		} else {
			a.Why = fmt.Sprintf("%s %s: SystemdCgroup = %t (%s)", role, name, opts.SystemdCgroup, where)
		}
		return
	}
	why := "no runtime handler has runc options"
	if len(skipped) > 0 {
		why = fmt.Sprintf("no runtime handler has runc options (%s): containerd reports systemd if the host runs systemd, else cgroupfs", strings.Join(skipped, ", "))
	}
	a.Why = why
	switch {
	case host.SystemdRunning == nil:
		a.Driver, a.Otherwise = Systemd, Cgroupfs
		a.Condition = "the node boots with systemd (/run/systemd/system is a directory)"
	case *host.SystemdRunning:
		a.Driver = Systemd
		a.Why += "; systemd runs"
	default:
		a.Driver = Cgroupfs
		a.Why += "; systemd does not run"
	}
}

// whereOption is file:line of the SystemdCgroup that decided, as written:
// under the runtime plugin or, before version 3, the CRI service plugin.
func (l *loaded) whereOption(handler string) string {
	for _, plugin := range []string{pluginCRIRuntime, pluginCRIGRPC, "cri"} {
		keys := []string{"plugins", plugin, "containerd", "runtimes", handler, "options", "SystemdCgroup"}
		for i := len(l.sources) - 1; i >= 0; i-- {
			if line, ok := l.sources[i].find(keys); ok {
				return fmt.Sprintf("%s:%d", l.files[i], line)
			}
		}
	}
	return ""
}

func checkDuration(s string) error {
	_, err := time.ParseDuration(s)
	return err
}
