// Package preflight says whether a kubelet version will start with its
// configuration on this host: each start-up refusal of the table (package
// startup) that depends on the host, checked against the host (or, for an
// offline image, reported as the condition under which the kubelet would
// refuse), with the host fact, the field and where it was set, and what to
// do. What the kubelet survives (it starts, degraded) is a warning.
package preflight

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/cpuset"

	"github.com/kubeletcfg/kubeletcfg/criruntime"
	"github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/nodefile"
	"github.com/kubeletcfg/kubeletcfg/startup"
	"github.com/kubeletcfg/kubeletcfg/why"
)

// ShapeVersion is the version of the JSON shape of a Result.
const ShapeVersion = 1

// Status of a finding.
const (
	// Refused: the kubelet will not start.
	Refused = "refused"
	// Degraded: it starts, degraded.
	Degraded = "degraded"
	// Condition: an image cannot tell; the kubelet refuses on a host where
	// the condition holds.
	Condition = "condition"
	// OK: checked, fine.
	OK = "ok"
)

// Finding is one check of the table against the host.
type Finding struct {
	Class  string `json:"class"`
	Status string `json:"status"`
	Title  string `json:"title"`
	// Fact is the host fact (or, for a condition, the host it refuses).
	Fact   string      `json:"fact"`
	Field  string      `json:"field,omitempty"`
	Flag   string      `json:"flag,omitempty"`
	Value  string      `json:"value,omitempty"`
	Origin *why.Origin `json:"origin,omitempty"`
	Fix    string      `json:"fix,omitempty"`
}

// Skip is a class of the table preflight does not check, and why.
type Skip struct {
	Class string `json:"class"`
	Why   string `json:"why"`
}

// Result is preflight's verdict.
type Result struct {
	Version        int       `json:"version"`
	KubeletVersion string    `json:"kubeletVersion"`
	Live           bool      `json:"live"`
	Starts         bool      `json:"starts"`
	Findings       []Finding `json:"findings"`
	NotChecked     []Skip    `json:"notChecked,omitempty"`
	Notes          []string  `json:"notes,omitempty"`
}

// Refused tells whether the kubelet will not start.
func (r *Result) Refused() bool { return !r.Starts }

// Warned tells whether something degrades it, or an image leaves a
// condition.
func (r *Result) Warned() bool {
	for _, f := range r.Findings {
		if f.Status == Degraded || f.Status == Condition {
			return true
		}
	}
	return false
}

// Options say what to check.
type Options struct {
	// Setup is the node's kubelet setup, read as effective reads it.
	Setup node.Source
	// Host is the machine (nil: the live host, or the image at
	// Setup.Root).
	Host Host
	// Runtime answers what the container runtime decides (nil: nothing is
	// asked of it).
	Runtime Runtime
	// PIDFile names the running kubelet's process ID on the live host: the
	// ports that process holds are the kubelet's own (its restart frees
	// them), whatever its binary is called.
	PIDFile string
}

// Runtime is what the container runtime decides for the kubelet: the seam
// where kubeletcfg's model of the CRI and containerd plugs in (CRI).
type Runtime interface {
	// Answer is what the runtime at endpoint answers the kubelet's
	// RuntimeConfig at start-up (nil and no error: not to be read); which
	// driver the kubelet then runs is the version's (criruntime.Decide).
	Answer(ctx context.Context, endpoint string) (*criruntime.Answer, error)
	// CredentialProvider validates the credential provider configuration
	// as the kubelet version does; nil when it takes it.
	CredentialProvider(l *why.Layers, config, binDir string) error
}

// Run checks the node's setup against the host.
func Run(ctx context.Context, opts Options) (*Result, error) {
	v, err := node.ResolveVersion(opts.Setup)
	if err != nil {
		return nil, err
	}
	src := opts.Setup
	src.Notes = nil
	l, err := why.ReadLayers(src, v, nil)
	if err != nil {
		return nil, err
	}
	h := opts.Host
	if h == nil && opts.PIDFile != "" && src.Root == "" {
		pid, err := readPID(opts.PIDFile)
		if err != nil {
			return nil, err
		}
		h = KubeletHost(pid)
	}
	return Check(ctx, l, h, opts.Runtime, nil)
}

// readPID reads a process ID file (a line of digits).
func readPID(path string) (int, error) {
	b, err := nodefile.ReadFile(path, nodefile.Kind{What: "pid file", Limit: 64})
	if err != nil {
		return 0, fmt.Errorf("--pid-file: %w", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("--pid-file %s: no process ID in %q", path, strings.TrimSpace(string(b)))
	}
	return pid, nil
}

// Check checks layers (a setup and its effective configuration) against
// the host (nil: the live host, or the image at the setup's root).
// removed are files a change removes before the kubelet starts (a manager
// checkpoint apply deletes is not stale).
func Check(ctx context.Context, l *why.Layers, h Host, rt Runtime, removed []string) (*Result, error) {
	v := l.Version
	if h == nil {
		h = NewHost(l.Setup.Root)
	}
	t, err := startup.For(v)
	if err != nil {
		return nil, err
	}
	c := &checker{ctx: ctx, l: l, h: h, t: t, rt: rt, removed: removed, res: &Result{Version: ShapeVersion, KubeletVersion: v.Minor, Live: h.Live(), Findings: []Finding{}}}
	c.configuration()
	if l.Result != nil {
		for _, check := range []func(){
			c.cgroupV1, c.swap, c.cgroupDriver, c.ports, c.files, c.kubeconfig, c.credentialProvider,
			c.reserved, c.reservedCPUs, c.managerState, c.runtime, c.staticPods, c.logind,
		} {
			check()
		}
	}
	for _, id := range []string{"kernel-defaults", "lock-file", "podresources-socket"} {
		c.res.NotChecked = append(c.res.NotChecked, Skip{Class: id, Why: "not modelled by preflight"})
	}
	c.res.Starts = true
	for _, f := range c.res.Findings {
		if f.Status == Refused {
			c.res.Starts = false
		}
	}
	return c.res, nil
}

type checker struct {
	ctx     context.Context
	l       *why.Layers
	h       Host
	t       *startup.Table
	rt      Runtime
	removed []string
	res     *Result
}

// add records a finding of class id about a field (or --flag).
func (c *checker) add(id, status, fact, subject string, fixValues map[string]string) {
	cls, _ := startup.ByID(id)
	f := Finding{Class: id, Status: status, Title: cls.Title, Fact: fact}
	if strings.HasPrefix(subject, "--") {
		f.Flag = strings.TrimPrefix(subject, "--")
		if v, o, ok := c.l.FlagValue(f.Flag); ok {
			f.Value, f.Origin = v, &o
		}
	} else if subject != "" {
		f.Field = subject
		f.Value = c.l.FieldValue(subject)
		if o, ok := c.l.FieldOrigin(subject); ok {
			f.Origin = &o
		}
	}
	values := map[string]string{"version": c.l.Version.Minor, "field": f.Field, "value": f.Value, "origin": "the kubelet's setup"}
	if f.Flag != "" {
		values["flag"] = "--" + f.Flag
	}
	if f.Origin != nil {
		values["origin"] = f.Origin.Place()
		if f.Origin.Kind == "default" || f.Origin.Kind == "flags-default" {
			values["where"] = " in the config file"
		} else {
			values["where"] = " at " + f.Origin.Text
		}
	}
	for k, v := range fixValues {
		values[k] = v
	}
	if status != OK {
		f.Fix = startup.Fill(cls.Fix, values)
	}
	c.res.Findings = append(c.res.Findings, f)
}

// has tells whether this kubelet version has the class.
func (c *checker) has(id string) bool {
	if c.t.Has(id) {
		return true
	}
	for _, d := range startup.Degradations {
		if d.ID == id {
			return true
		}
	}
	return false
}

func (c *checker) value(path string) string { return c.l.FieldValue(path) }

// configuration: the kubelet's refusal of the configuration itself, on any
// host (its layering, validation and start-up parsing).
func (c *checker) configuration() {
	if c.l.Err != nil {
		x := why.ExplainWords(c.l, why.KubeletWords(c.l.Err))
		f := Finding{Class: x.Class, Status: Refused, Title: x.Title, Fact: "the configuration (on any host): " + c.l.Err.Error(),
			Field: x.Field, Flag: x.Flag, Value: x.Value, Origin: x.Origin, Fix: x.Fix}
		c.res.Findings = append(c.res.Findings, f)
		return
	}
	id, errs := c.l.Refusal()
	cls, _ := startup.ByID(id)
	for _, e := range errs {
		f := Finding{Class: id, Status: Refused, Title: cls.Title, Fact: "the configuration (on any host): " + e.Message, Field: e.Field}
		where := "the configuration"
		if e.Field != "" {
			f.Value = c.l.FieldValue(e.Field)
			if o, ok := c.l.FieldOrigin(e.Field); ok {
				f.Origin, where = &o, o.Place()
			}
		}
		f.Fix = fmt.Sprintf("correct %s at %s", firstOf(e.Field, "the configuration"), where)
		c.res.Findings = append(c.res.Findings, f)
	}
}

func (c *checker) cgroupV1() {
	if !c.has("cgroup-v1") || c.value("failCgroupV1") != "true" {
		return
	}
	v1, ok := c.h.CgroupV1()
	switch {
	case !ok:
		c.add("cgroup-v1", Condition, "refused on a cgroup v1 host (failCgroupV1 is true)", "failCgroupV1", nil)
	case v1:
		c.add("cgroup-v1", Refused, "the host is cgroup v1 (/sys/fs/cgroup is not a cgroup2 mount)", "failCgroupV1", nil)
	default:
		c.add("cgroup-v1", OK, "the host is cgroup v2", "failCgroupV1", nil)
	}
}

func (c *checker) swap() {
	if c.value("failSwapOn") == "true" {
		swaps, ok := c.h.Swaps()
		switch {
		case !ok:
			c.add("swap-on", Condition, "refused on a host with swap on (failSwapOn is true)", "failSwapOn", nil)
		case len(swaps) > 0:
			c.add("swap-on", Refused, "swap is on: /proc/swaps lists "+strings.Join(swaps, ", "), "failSwapOn", nil)
		default:
			c.add("swap-on", OK, "no swap in /proc/swaps", "failSwapOn", nil)
		}
	}
	if c.has("swap-limited-cgroup-v1") && c.value("memorySwap.swapBehavior") == "LimitedSwap" && c.l.Version.GateEnabled("NodeSwap", c.l.Result.Config.FeatureGates) {
		if v1, ok := c.h.CgroupV1(); !ok {
			c.add("swap-limited-cgroup-v1", Condition, "refused on a cgroup v1 host", "memorySwap.swapBehavior", nil)
		} else if v1 {
			c.add("swap-limited-cgroup-v1", Refused, "the host is cgroup v1", "memorySwap.swapBehavior", nil)
		}
	}
}

// cgroupDriver: the systemd driver needs systemd as PID 1. Where the
// kubelet's version takes the driver from the container runtime, the
// runtime's answer is the driver (criruntime.Decide, from the schema's
// traits); a runtime that serves no CRI, or answers what makes a kubelet
// that asks exit, stops it.
func (c *checker) cgroupDriver() {
	configured := c.value("cgroupDriver")
	driver, fact := configured, "cgroupDriver is "+configured
	var d criruntime.Decision
	if c.rt != nil {
		a, err := c.rt.Answer(c.ctx, c.value("containerRuntimeEndpoint"))
		if err != nil {
			c.res.Notes = append(c.res.Notes, "the container runtime's answer (RuntimeConfig) is not known: "+err.Error())
		}
		d = criruntime.Decide(c.l.Version, c.l.Result.Config.FeatureGates, configured, a)
		switch {
		case d.Fatal != "":
			c.add("runtime-unavailable", Refused, d.Source+": "+d.Fatal, "containerRuntimeEndpoint", nil)
			return
		case d.FromRuntime && d.Condition != "" && d.Runs == criruntime.Systemd && d.Otherwise == criruntime.Cgroupfs:
			// containerd reports systemd exactly where systemd runs.
			c.res.Notes = append(c.res.Notes, fmt.Sprintf("cgroupDriver: kubelet %s runs its runtime's driver, %s if %s, else %s (%s)", c.l.Version.Minor, d.Runs, d.Condition, d.Otherwise, d.Source))
			return
		case d.FromRuntime:
			driver = d.Runs
			fact = "the container runtime answers RuntimeConfig with the " + d.Runs + " driver: " + d.Source
			if configured != driver {
				c.res.Notes = append(c.res.Notes, fmt.Sprintf("cgroupDriver %s has no effect: %s", configured, d.Why))
			}
		}
	}
	if driver != criruntime.Systemd {
		return
	}
	running, ok := c.h.Systemd()
	switch {
	case !ok:
		c.add("cgroup-driver-systemd", Condition, "refused on a host without systemd as PID 1 ("+fact+")", "cgroupDriver", nil)
	case !running:
		c.add("cgroup-driver-systemd", Refused, "systemd is not running on this host ("+fact+")", "cgroupDriver", nil)
	default:
		c.add("cgroup-driver-systemd", OK, "systemd runs ("+fact+")", "cgroupDriver", nil)
	}
	if d.FromRuntime {
		// The file's value has no effect: the runtime's is the one to fix.
		f := &c.res.Findings[len(c.res.Findings)-1]
		f.Value, f.Origin = driver, &why.Origin{Kind: "runtime", Text: d.Source}
		if f.Status != OK {
			f.Fix = fmt.Sprintf("set the container runtime's cgroup driver to cgroupfs (containerd: SystemdCgroup = false in its runc options; %s), or run the node with systemd as PID 1: kubelet %s takes the driver from its runtime", d.Why, c.l.Version.Minor)
		}
	}
}

func (c *checker) ports() {
	for _, p := range []struct{ class, field, addrField string }{
		{"port-in-use", "port", "address"},
		{"port-in-use", "readOnlyPort", "address"},
		{"healthz-port-in-use", "healthzPort", "healthzBindAddress"},
	} {
		port, err := strconv.Atoi(c.value(p.field))
		if err != nil || port <= 0 {
			continue
		}
		status := Refused
		if p.class == "healthz-port-in-use" {
			status = Degraded
		}
		addr := map[string]string{"address": c.value(p.addrField) + ":" + strconv.Itoa(port)}
		who, self, ok := c.h.Listener(port)
		switch {
		case !ok:
			c.add(p.class, Condition, fmt.Sprintf("refused where port %d is taken", port), p.field, addr)
		case who == "":
			c.add(p.class, OK, fmt.Sprintf("port %d is free", port), p.field, addr)
		case self:
			c.add(p.class, OK, fmt.Sprintf("port %d is the running kubelet's, %s, which its restart frees", port, who), p.field, addr)
		default:
			c.add(p.class, status, fmt.Sprintf("port %d is taken by %s", port, who), p.field, addr)
		}
	}
}

// exists tells whether a path the kubelet names is there.
func (c *checker) exists(p string) (bool, string) {
	if p == "" {
		return true, ""
	}
	if _, err := c.h.Stat(p); err != nil {
		return false, err.Error()
	}
	return true, ""
}

func (c *checker) files() {
	cfg := c.l.Result.Config
	if ca := cfg.Authentication.X509.ClientCAFile; ca != "" {
		c.file("client-ca-missing", "authentication.x509.clientCAFile", ca)
	}
	bootstrapsServing := cfg.ServerTLSBootstrap && c.l.Version.GateEnabled("RotateKubeletServerCertificate", cfg.FeatureGates)
	if cfg.TLSCertFile != "" && cfg.TLSPrivateKeyFile != "" && !bootstrapsServing {
		c.file("tls-pair-missing", "tlsCertFile", cfg.TLSCertFile)
		c.file("tls-pair-missing", "tlsPrivateKeyFile", cfg.TLSPrivateKeyFile)
	}
}

// file checks one file a field names.
func (c *checker) file(id, field, path string) {
	if ok, why := c.exists(path); !ok {
		c.add(id, Refused, why, field, nil)
		return
	}
	c.add(id, OK, path+" is there", field, nil)
}

// kubeconfig: with --bootstrap-kubeconfig a missing --kubeconfig is
// written at the first start; without, it must be there.
func (c *checker) kubeconfig() {
	kc, _, hasKC := c.l.FlagValue("kubeconfig")
	if !hasKC || kc == "" {
		return
	}
	bootstrap, _, hasBootstrap := c.l.FlagValue("bootstrap-kubeconfig")
	if ok, _ := c.exists(kc); ok {
		c.add("kubeconfig-missing", OK, kc+" is there", "--kubeconfig", nil)
		return
	}
	if hasBootstrap && bootstrap != "" {
		if ok, why := c.exists(bootstrap); !ok {
			c.add("kubeconfig-missing", Refused, fmt.Sprintf("neither the kubeconfig %s nor the bootstrap kubeconfig is there: %s", kc, why), "--bootstrap-kubeconfig", nil)
		} else {
			c.add("kubeconfig-missing", OK, fmt.Sprintf("%s is not there yet; the kubelet writes it from the bootstrap kubeconfig %s", kc, bootstrap), "--kubeconfig", nil)
		}
		return
	}
	_, why := c.exists(kc)
	c.add("kubeconfig-missing", Refused, why, "--kubeconfig", nil)
}

// credentialProvider: its config and binary directory must be there, and
// the runtime's model validates the config as the kubelet does.
func (c *checker) credentialProvider() {
	cfgPath, _, _ := c.l.FlagValue("image-credential-provider-config")
	binDir, _, _ := c.l.FlagValue("image-credential-provider-bin-dir")
	if cfgPath == "" && binDir == "" {
		return
	}
	for _, f := range []struct{ flag, path string }{{"--image-credential-provider-config", cfgPath}, {"--image-credential-provider-bin-dir", binDir}} {
		if ok, why := c.exists(f.path); !ok {
			c.add("credential-provider", Refused, why, f.flag, map[string]string{"detail": why})
			return
		}
	}
	if c.rt != nil {
		if err := c.rt.CredentialProvider(c.l, cfgPath, binDir); err != nil {
			c.add("credential-provider", Refused, err.Error(), "--image-credential-provider-config", map[string]string{"detail": err.Error()})
			return
		}
		c.add("credential-provider", OK, "the credential provider configuration is valid", "--image-credential-provider-config", nil)
		return
	}
	c.res.NotChecked = append(c.res.NotChecked, Skip{Class: "credential-provider", Why: "the configuration's content is not validated here (its files are there)"})
}

// reserved: kubeReserved + systemReserved + the hard eviction threshold
// of a resource must fit in the node's capacity (memory, cpu).
func (c *checker) reserved() {
	cfg := c.l.Result.Config
	type res struct {
		name     string
		capacity int64
		ok       bool
		unit     func(int64) string
		evict    string
	}
	mem, memOK := c.h.Memory()
	cpus, cpuOK := c.h.CPUs()
	for _, r := range []res{
		{name: "memory", capacity: mem, ok: memOK, unit: func(n int64) string { return resource.NewQuantity(n, resource.BinarySI).String() }, evict: "memory.available"},
		{name: "cpu", capacity: int64(cpus) * 1000, ok: cpuOK, unit: func(n int64) string { return resource.NewMilliQuantity(n, resource.DecimalSI).String() }},
	} {
		var total int64
		var parts []string
		set := false
		for _, m := range []struct {
			field  string
			values map[string]string
		}{{"kubeReserved", cfg.KubeReserved}, {"systemReserved", cfg.SystemReserved}} {
			if q, err := resource.ParseQuantity(m.values[r.name]); err == nil && m.values[r.name] != "" {
				n := q.Value()
				if r.name == "cpu" {
					n = q.MilliValue()
				}
				total += n
				set = true
				parts = append(parts, fmt.Sprintf("%s.%s %s", m.field, r.name, m.values[r.name]))
			}
		}
		if r.name == "cpu" && cfg.ReservedSystemCPUs != "" {
			continue // reserved CPUs replace the cpu reservations
		}
		if !set {
			continue
		}
		if r.evict != "" {
			if t := cfg.EvictionHard[r.evict]; t != "" {
				if strings.HasSuffix(t, "%") {
					if p, err := strconv.ParseFloat(strings.TrimSuffix(t, "%"), 64); err == nil && r.ok {
						total += int64(p / 100 * float64(r.capacity))
						parts = append(parts, "evictionHard."+r.evict+" "+t)
					}
				} else if q, err := resource.ParseQuantity(t); err == nil {
					total += q.Value()
					parts = append(parts, "evictionHard."+r.evict+" "+t)
				}
			}
		}
		subject := "kubeReserved." + r.name
		if cfg.KubeReserved[r.name] == "" {
			subject = "systemReserved." + r.name
		}
		values := map[string]string{"resource": r.name, "reservations": strings.Join(parts, ", ")}
		switch {
		case !r.ok:
			values["capacity"] = "(the host's)"
			c.add("reserved-beyond-capacity", Condition, fmt.Sprintf("refused on a host with less than %s of %s", r.unit(total), r.name), subject, values)
		case total > r.capacity:
			values["capacity"] = r.unit(r.capacity)
			c.add("reserved-beyond-capacity", Refused, fmt.Sprintf("%s reserved (%s), the host has %s", r.unit(total), strings.Join(parts, " + "), r.unit(r.capacity)), subject, values)
		default:
			c.add("reserved-beyond-capacity", OK, fmt.Sprintf("%s reserved of the host's %s", r.unit(total), r.unit(r.capacity)), subject, values)
		}
	}
}

func (c *checker) reservedCPUs() {
	want := c.l.Result.Config.ReservedSystemCPUs
	if want == "" {
		return
	}
	set, err := cpuset.Parse(want)
	if err != nil {
		return // the configuration check reports it
	}
	data, err := c.h.Read("/sys/devices/system/cpu/online")
	if err != nil || !c.h.Live() {
		c.add("reserved-cpus-offline", Condition, "refused on a host whose online CPUs do not include "+want, "reservedSystemCPUs", nil)
		return
	}
	online, err := cpuset.Parse(strings.TrimSpace(string(data)))
	if err != nil {
		return
	}
	if !set.IsSubsetOf(online) {
		c.add("reserved-cpus-offline", Refused, "the host's online CPUs are "+online.String(), "reservedSystemCPUs", map[string]string{"online": online.String()})
		return
	}
	c.add("reserved-cpus-offline", OK, "online CPUs "+online.String(), "reservedSystemCPUs", nil)
}

// managerState: a CPU or memory manager checkpoint of another policy than
// the configured one makes the kubelet exit.
func (c *checker) managerState() {
	rootDir := firstOf(flagOr(c.l, "root-dir"), "/var/lib/kubelet")
	for _, m := range []struct{ class, field, file string }{
		{"cpu-manager-state", "cpuManagerPolicy", "cpu_manager_state"},
		{"memory-manager-state", "memoryManagerPolicy", "memory_manager_state"},
	} {
		path := filepath.Join(rootDir, m.file)
		if slices.ContainsFunc(c.removed, func(r string) bool { return strings.HasSuffix(r, path) }) {
			continue // the change removes it before the start
		}
		data, err := c.h.Read(path)
		if err != nil {
			continue
		}
		var cp struct {
			PolicyName string `json:"policyName"`
		}
		if json.Unmarshal(data, &cp) != nil || cp.PolicyName == "" {
			continue
		}
		policy := c.value(m.field)
		values := map[string]string{"path": path, "old": cp.PolicyName}
		if !strings.EqualFold(cp.PolicyName, policy) {
			c.add(m.class, Refused, fmt.Sprintf("%s holds the policy %s", path, cp.PolicyName), m.field, values)
		} else {
			c.add(m.class, OK, fmt.Sprintf("%s holds the same policy", path), m.field, values)
		}
	}
}

// runtime: the container runtime's socket must be there (the kubelet
// gives up when it cannot connect).
func (c *checker) runtime() {
	ep := c.value("containerRuntimeEndpoint")
	u, err := url.Parse(ep)
	if err != nil || u.Scheme != "unix" {
		return
	}
	fi, err := c.h.Stat(u.Path)
	switch {
	case !c.h.Live():
		c.add("runtime-unavailable", Condition, "refused where the container runtime does not listen on "+ep, "containerRuntimeEndpoint", nil)
	case err != nil:
		c.add("runtime-unavailable", Refused, err.Error(), "containerRuntimeEndpoint", nil)
	case fi.Mode()&fs.ModeSocket == 0:
		c.add("runtime-unavailable", Refused, u.Path+" is not a socket", "containerRuntimeEndpoint", nil)
	default:
		c.add("runtime-unavailable", OK, u.Path+" is there", "containerRuntimeEndpoint", nil)
	}
}

func (c *checker) staticPods() {
	p := c.value("staticPodPath")
	if p == "" {
		return
	}
	if ok, why := c.exists(p); !ok {
		c.add("static-pod-path-missing", Degraded, why+": the kubelet starts without static pods and looks again later", "staticPodPath", nil)
	}
}

// logind: graceful node shutdown needs logind to delay the shutdown by
// shutdownGracePeriod; the kubelet tries to raise InhibitDelayMaxSec and
// starts without graceful shutdown when it cannot.
func (c *checker) logind() {
	grace := c.l.Result.Config.ShutdownGracePeriod.Duration
	if grace <= 0 {
		return
	}
	if running, ok := c.h.Systemd(); ok && !running {
		c.add("logind-inhibit-delay", Degraded, "no systemd on this host: no logind to delay the shutdown", "shutdownGracePeriod", map[string]string{"value": grace.String()})
		return
	}
	delay, from := readLogind(c.h)
	if delay >= grace {
		c.add("logind-inhibit-delay", OK, fmt.Sprintf("InhibitDelayMaxSec %s (%s)", delay, from), "shutdownGracePeriod", nil)
		return
	}
	c.add("logind-inhibit-delay", Degraded, fmt.Sprintf("logind's InhibitDelayMaxSec is %s (%s), below shutdownGracePeriod %s: the kubelet tries to raise it; if logind keeps it, pods get %s to stop", delay, from, grace, delay), "shutdownGracePeriod", map[string]string{"value": strconv.Itoa(int(grace.Seconds()))})
}

func flagOr(l *why.Layers, name string) string {
	v, _, _ := l.FlagValue(name)
	return v
}

func firstOf(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
