package why

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/schema"
	"github.com/kubeletcfg/kubeletcfg/startup"
)

// Ending is how the kubelet's last run ended, before it is explained: its
// fatal words, what systemd recorded, or neither.
type Ending struct {
	Fatal *Fatal
	// Healthz is the error of its healthz server, when it could not start
	// one (it runs on, never healthy).
	Healthz string
	// LastError is its last error line, for when nothing else says.
	LastError string
	// Exit is systemd's record of how the process ended ("exited,
	// status=1/FAILURE"); Signal the signal when it was killed; OOM and
	// Stopped what systemd says of the unit.
	Exit    string
	Code    string // exited, killed, dumped
	Status  string
	OOM     bool
	Stopped bool
	// Running: no record of its end (it may still run).
	Running bool
	// Unit is the kubelet's systemd unit, when it runs as one.
	Unit string
}

// Explain explains an ending of kubelet v on the setup src: it classifies
// the kubelet's words with the start-up table and ties the class to the
// field or flag, its effective value and origin, and the fix.
func ExplainEnding(v *schema.Version, end Ending, src node.Source) *Explanation {
	x := &explainer{v: v, src: src, unit: end.Unit, e: &Explanation{Version: ShapeVersion, KubeletVersion: v.Minor}}
	x.explain(end)
	return x.e
}

// ExplainLines explains what one kubelet process wrote (apply's restarted
// kubelet: its lines since the restart) on layers already read (apply's
// planned configuration); end adds what is known of how it ended (exit,
// signal), its Fatal and Healthz are read from the lines.
func ExplainLines(l *Layers, lines []string, end Ending) *Explanation {
	r := newRun(exitMessages())
	for _, line := range lines {
		r.line(line)
	}
	r.end()
	read := endingOf(r, nil)
	end.Fatal, end.Healthz, end.LastError = read.Fatal, read.Healthz, read.LastError
	if end.Fatal != nil {
		end.Running = false
	}
	e := explainOn(l, end)
	e.Process = &Process{PID: r.pid, Lines: r.lines, PanicLines: r.panicLines, Exit: end.Exit}
	confirm(e, r.effective)
	return e
}

// ExplainWords explains an error in the kubelet's words (a refusal
// kubeletcfg's layering met, in the kubelet's words) on layers already
// read.
func ExplainWords(l *Layers, words string) *Explanation {
	x := &explainer{v: l.Version, l: l, values: map[string]string{"version": l.Version.Minor},
		e: &Explanation{Version: ShapeVersion, KubeletVersion: l.Version.Minor}}
	x.explain(Ending{Fatal: &Fatal{How: "command-failed", Message: "command failed", Words: words}})
	return x.e
}

// Summary says an explanation in one line: the class, the field or flag
// with its value and origin, the fix (apply's rollback cause).
func (e *Explanation) Summary() string {
	s := e.Title
	if e.Class == "unknown" || e.Class == "none" {
		if e.Words != "" {
			return s + ": " + e.Words
		}
		return s
	}
	subject := e.Field
	if e.Flag != "" {
		subject = "--" + e.Flag
	}
	if subject != "" {
		s += ": " + subject
		if e.Value != "" {
			s += "=" + e.Value
		}
		if e.Origin != nil {
			s += " from " + e.Origin.Text
		}
	}
	if e.Fix != "" {
		s += "; fix: " + e.Fix
	}
	return s
}

type explainer struct {
	v    *schema.Version
	unit string
	src  node.Source
	e    *Explanation
	l    *Layers
	// values fill the class's fix wording.
	values map[string]string
}

func (x *explainer) explain(end Ending) {
	e := x.e
	switch {
	case end.Stopped:
		x.setClass("stopped")
		e.Notes = append(e.Notes, "systemd stopped the unit (a stop job ran): not the kubelet's configuration")
		x.layers(nil)
		x.finish()
		return
	case end.Code == "killed" || end.Code == "dumped" || end.OOM:
		if end.OOM {
			x.setClass("killed-oom")
		} else {
			x.setClass("killed-signal")
			e.Notes = append(e.Notes, fmt.Sprintf("the kubelet's process was killed by signal %s: not the kubelet's configuration", end.Status))
		}
		x.layers(nil)
		x.finish()
		return
	}
	if end.Fatal != nil {
		x.fatal(end.Fatal)
		x.finish()
		return
	}
	if end.Healthz != "" {
		e.Words = end.Healthz
		x.classify("Failed to start healthz server: " + end.Healthz)
		x.finish()
		return
	}
	x.layers(nil)
	switch {
	case end.Code == "exited" && end.Status != "0" && !strings.HasPrefix(end.Status, "0/"):
		e.Class, e.Kind = "unknown", "unknown"
		e.Title = "exited with status " + end.Status + " without a fatal error in its log"
		e.Words = end.LastError
		e.Fix = "read the kubelet's log; kubeletcfg does not guess"
	case end.Running:
		e.Class, e.Kind = "none", "none"
		e.Title = "no failure since the kubelet's last start: it logged no fatal error and no end"
		e.Fix = "nothing to fix in the configuration"
	default:
		e.Class, e.Kind = "none", "none"
		e.Title = "no fatal error in the kubelet's last run"
		e.Words = end.LastError
		e.Fix = "nothing kubeletcfg can tie to the configuration"
	}
	x.finish()
}

// setClass sets a class of the table.
func (x *explainer) setClass(id string) startup.Class {
	c, _ := startup.ByID(id)
	x.e.Class, x.e.Kind, x.e.Title = c.ID, string(c.Kind), c.Title
	return c
}

func (x *explainer) fatal(f *Fatal) {
	words := f.Words
	if f.How == "exit" {
		words = f.Message + ": " + f.Words
	}
	x.e.Words = words
	x.classify(words)
}

func (x *explainer) classify(words string) {
	e := x.e
	t, err := startup.For(x.v)
	if err != nil {
		e.Notes = append(e.Notes, err.Error())
	}
	var m *startup.Match
	if t != nil {
		m = t.Classify(words)
	}
	if m != nil {
		x.layers(gatesOf(m, words))
		x.setClass(m.Class.ID)
		e.Format, e.Source, e.Stages = m.Format, m.Source, m.Stages
		x.byClass(m, words)
		return
	}
	x.layers(nil)
	if c, ok := x.byGoError(words); ok {
		x.setClass(c.ID)
		if t != nil {
			e.Stages = t.Stage(words)
		}
		return
	}
	e.Class, e.Kind = "unknown", "unknown"
	e.Title = "an error the start-up table does not know"
	e.Fix = "read the kubelet's words; kubeletcfg does not guess"
	if t != nil {
		e.Stages = t.Stage(words)
	}
}

// gatesOf are the gates a match names (to leave out of the layering):
// every occurrence of its words (the kubelet joins one error per gate).
func gatesOf(m *startup.Match, words string) []string {
	if !strings.HasPrefix(m.Class.ID, "gate-") {
		return nil
	}
	var out []string
	for _, one := range append(m.All(words), m.Captures) {
		if g := one["gate"]; g != "" {
			out = append(out, g)
		}
		out = append(out, strings.Fields(strings.Trim(one["deps"], "[]"))...)
	}
	return out
}

// layers reads the node's setup once.
func (x *explainer) layers(dropGates []string) {
	if x.l != nil {
		return
	}
	l, err := ReadLayers(x.src, x.v, dropGates)
	if err != nil {
		x.e.Notes = append(x.e.Notes, "the node's setup: "+err.Error())
		l = &Layers{Version: x.v, Setup: &node.Setup{Version: x.v, Root: x.src.Root}}
	} else if l.Err != nil {
		x.e.Notes = append(x.e.Notes, "kubeletcfg's layering of the node's setup now: "+l.Err.Error())
	}
	x.l = l
	x.values = map[string]string{"version": x.v.Minor}
}

// byClass ties a matched class to its field or flag.
func (x *explainer) byClass(m *startup.Match, words string) {
	e, l := x.e, x.l
	for k, v := range m.Captures {
		x.values[k] = v
	}
	field := firstOf(m.Probe.Field, m.Class.Field)
	flag := firstOf(m.Probe.Flag, m.Class.Flag)
	switch m.Class.ID {
	case "flag-unknown":
		x.unknownFlag(normFlag(m.Captures["flag"]))
		return
	case "flag-invalid":
		x.flag(normFlag(m.Captures["flag"]))
		if v := m.Captures["value"]; v != "" {
			e.Value = v
		}
	case "unknown-command":
		arg := m.Captures["arg"]
		e.Value = arg
		if i := l.argIndex(arg); i >= 0 {
			o := l.argOrigin(i, "")
			o.Kind = "argument"
			o.Text = "the word " + strconv.Quote(arg) + strings.TrimPrefix(o.Text, "flag --")
			e.Origin = &o
		}
	case "gate-unknown", "gate-locked":
		x.gate(m.Captures["gate"], m)
	case "gate-dependency":
		x.gateDependency(m.Captures["gate"], m.Captures["deps"])
	case "config-invalid", "logging-invalid", "value-unparsable":
		x.invalid(field, words)
	case "reserved-beyond-capacity":
		x.reserved(m, words)
	case "kernel-defaults":
		x.field(field)
		var sysctls []string
		for _, one := range m.All(words) {
			sysctls = append(sysctls, fmt.Sprintf("%s=%s (now %s)", one["sysctl"], one["expected"], one["actual"]))
		}
		x.values["sysctls"] = strings.Join(sysctls, ", ")
	case "port-in-use", "healthz-port-in-use":
		x.port(m.Class, words)
	case "dropin-invalid":
		e.Flag = "config-dir"
		if p := m.Captures["path"]; p != "" {
			e.Value = p
			o := Origin{Kind: "dropin", File: p}
			o.Text = originText(o)
			e.Origin = &o
		}
		if o, _, ok := l.flagOrigin("config-dir"); ok && e.Origin == nil {
			e.Origin = &o
		}
	case "cpu-manager-state", "memory-manager-state":
		x.field(field)
		if v := m.Captures["value"]; v != "" {
			x.values["value"] = v
		}
		x.values["path"] = m.Captures["path"]
	case "client-ca-missing", "tls-pair-missing", "kubeconfig-missing", "credential-provider", "config-unreadable", "config-not-kubeletconfiguration", "lock-file":
		x.files(m.Class, field, flag, m.Captures["path"], words)
	default:
		switch {
		case flag != "" && field == "":
			x.flag(flag)
		default:
			x.field(field)
		}
	}
	if m.Class.ID == "cgroup-driver-systemd" && l.Result != nil && x.v.GateEnabled("KubeletCgroupDriverFromCRI", l.Result.Config.FeatureGates) {
		x.values["criDriver"] = fmt.Sprintf("; kubelet %s takes the driver from the container runtime when it answers RuntimeConfig (containerd 2: SystemdCgroup of its runc options), so set the runtime's driver to cgroupfs as well", x.v.Minor)
	}
}

// byGoError recognizes what Go itself says in the kubelet's words, for the
// classes whose words are not the kubelet's own: a file the configuration
// names that cannot be opened, a port in use.
func (x *explainer) byGoError(words string) (startup.Class, bool) {
	if m := addrInUse().FindStringSubmatch(words); m != nil {
		for _, c := range startup.Classes {
			for _, f := range c.Ports {
				if x.l.fieldValue(f) == m[2] {
					x.port(c, words)
					return c, true
				}
			}
		}
	}
	for _, m := range pathError().FindAllStringSubmatch(words, 20) {
		// Under --root kubeletcfg's own reading names the image's path.
		path := x.l.nodePath(m[2])
		for _, c := range startup.Classes {
			for name, val := range x.l.pathFields(c.Files) {
				if samePath(val, path) {
					field, flag := name, ""
					if strings.HasPrefix(name, "--") {
						field, flag = "", strings.TrimPrefix(name, "--")
					}
					x.files(c, field, flag, path, words)
					return c, true
				}
			}
		}
	}
	return startup.Class{}, false
}

// Go's words: net's "listen tcp ADDR:PORT: bind: address already in use"
// and os's "open PATH: no such file or directory". Compiled when first
// used (why's own work), not at the start of every command.
var (
	addrInUse = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`listen (?:tcp[46]?|unix) (\S*?):?(\d*): bind: address already in use`)
	})
	pathError = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\b(open|stat|lstat|read|readlink|mkdir) (/[^:\s]*|[^:\s]+\.[a-z]+): (no such file or directory|permission denied|is a directory|not a directory|too many levels of symbolic links|no such device or address)`)
	})
)

// field sets the explanation's field, its value and origin.
func (x *explainer) field(path string) {
	e := x.e
	if path == "" {
		return
	}
	e.Field = path
	e.Value = x.l.fieldValue(path)
	if o, ok := x.l.fieldOrigin(path); ok {
		e.Origin = &o
	}
}

// flag sets the explanation's flag (a flag with a field: the field too).
func (x *explainer) flag(name string) {
	e := x.e
	e.Flag = name
	if f, ok := x.v.Flag(name); ok && f.Field != "" {
		e.Field = f.Field
	}
	if o, val, ok := x.l.flagOrigin(name); ok {
		e.Origin, e.Value = &o, val
	}
}

func (x *explainer) unknownFlag(name string) {
	e := x.e
	x.flag(name)
	if e.Origin == nil {
		// Not found on the command line kubeletcfg read now.
		e.Notes = append(e.Notes, "--"+name+" is not on the kubelet's command line as kubeletcfg reads it now (was it changed since?)")
	}
	removed := schema.FlagRemovedIn(name)
	legacy, isLegacy := schema.Legacy(name)
	if removed == "" && !isLegacy {
		return
	}
	x.setClass("flag-removed")
	repl := ""
	if removed != "" {
		x.values["removedIn"] = removed
		for _, old := range schema.Versions() {
			if f, ok := old.Flag(name); ok && f.Field != "" {
				if _, has := x.v.Field(f.Field); has {
					repl = fmt.Sprintf("; its setting belongs in the config file as %s", f.Field)
				}
			}
		}
	} else {
		x.values["removedIn"] = "after " + legacy.LastIn
		if legacy.Deprecated != "" {
			repl = " (" + legacy.Deprecated + ")"
		}
	}
	x.values["replacement"] = repl
}

func (x *explainer) gate(name string, m *startup.Match) {
	e := x.e
	e.Field = "featureGates." + name
	x.values["gate"] = name
	if o, ok := x.l.gateOrigin(name); ok {
		e.Origin = &o
	}
	if m.Class.ID == "gate-locked" {
		e.Value = m.Captures["value"]
	}
	if m.Class.ID == "gate-unknown" {
		if g, ok := x.v.RemovedGate(name); ok {
			x.values["removedGate"] = fmt.Sprintf(" (the last kubelet with it was %s)", g.LastIn)
		}
	}
}

func (x *explainer) gateDependency(gate, deps string) {
	e := x.e
	e.Field = "featureGates." + gate
	x.values["gate"] = gate
	e.Value = "true"
	if o, ok := x.l.gateOrigin(gate); ok {
		e.Origin = &o
	} else {
		o := Origin{Kind: "default", Version: x.v.Minor}
		o.Text = originText(o)
		e.Origin = &o
	}
	p := Problem{Field: e.Field, Value: "true", Origin: e.Origin, Message: gate + " is enabled"}
	e.Problems = append(e.Problems, p)
	for _, d := range strings.Fields(strings.Trim(deps, "[]")) {
		p := Problem{Field: "featureGates." + d, Value: "false", Message: d + " is disabled"}
		if o, ok := x.l.gateOrigin(d); ok {
			p.Origin = &o
		} else {
			o := Origin{Kind: "default", Version: x.v.Minor}
			o.Text = originText(o)
			p.Origin = &o
		}
		e.Problems = append(e.Problems, p)
	}
	// The gate the node set is the one to change.
	for _, p := range e.Problems {
		if p.Origin != nil && p.Origin.Kind != "default" {
			e.Field, e.Value, e.Origin = p.Field, p.Value, p.Origin
			break
		}
	}
}

// invalid ties validation (or start-up parsing) errors to their fields:
// each error kubeletcfg's model of the kubelet's checks finds for the
// effective configuration, whose message is in the kubelet's words.
func (x *explainer) invalid(field, words string) {
	e := x.e
	seen := map[string]bool{}
	for _, pe := range x.l.problems() {
		if seen[pe.Message] || !strings.Contains(words, pe.Message) {
			continue
		}
		seen[pe.Message] = true
		p := Problem{Field: pe.Field, Message: pe.Message}
		if pe.Field != "" {
			p.Value = x.l.fieldValue(pe.Field)
			if o, ok := x.l.fieldOrigin(pe.Field); ok {
				p.Origin = &o
			}
		}
		e.Problems = append(e.Problems, p)
	}
	sort.SliceStable(e.Problems, func(i, j int) bool { return e.Problems[i].Field < e.Problems[j].Field })
	if len(e.Problems) > 0 && e.Problems[0].Field != "" {
		x.field(e.Problems[0].Field)
		return
	}
	x.field(field)
	if len(e.Problems) == 0 {
		e.Notes = append(e.Notes, "kubeletcfg's checks do not find this error in the node's configuration as it is now: it may have changed since the kubelet failed; the kubelet's words say what it refused")
	}
}

// reserved lists what adds up to a resource's reservation: kubeReserved,
// systemReserved and the hard eviction threshold of that resource.
func (x *explainer) reserved(m *startup.Match, words string) {
	e := x.e
	res := m.Captures["resource"]
	x.values["resource"] = res
	total := quantityText(m.Captures["value"])
	capacity := quantityText(m.Captures["capacity"])
	if capacity == "" && m.Captures["shortfall"] != "" {
		capacity = "the reservation " + quantityText(m.Captures["shortfall"]) // 1.28–1.29 print capacity minus reservation
		e.Notes = append(e.Notes, fmt.Sprintf("kubelet %s words the capacity minus the reservation as \"capacity\" (%s) and the reservation as \"allocatable\" (%s)", x.v.Minor, quantityText(m.Captures["shortfall"]), total))
	}
	x.values["capacity"] = capacity
	e.Value = total
	fields := []string{"kubeReserved." + res, "systemReserved." + res}
	switch res {
	case "memory":
		fields = append(fields, "evictionHard.memory.available")
	case "ephemeral-storage":
		fields = append(fields, "evictionHard.nodefs.available")
	}
	var parts []string
	for _, f := range fields {
		v := x.l.fieldValue(f)
		if v == "" {
			continue
		}
		p := Problem{Field: f, Value: v}
		if o, ok := x.l.fieldOrigin(f); ok {
			p.Origin = &o
			parts = append(parts, fmt.Sprintf("%s %s at %s", f, v, o.Text))
		}
		e.Problems = append(e.Problems, p)
	}
	x.values["reservations"] = strings.Join(parts, ", ")
	// The largest one set by the node is the field to change.
	for _, p := range e.Problems {
		if p.Origin != nil && p.Origin.Kind != "default" && p.Origin.Kind != "flags-default" {
			e.Field, e.Origin = p.Field, p.Origin
			break
		}
	}
	if e.Field == "" && len(e.Problems) > 0 {
		e.Field, e.Origin = e.Problems[0].Field, e.Problems[0].Origin
	}
	if e.Value == "" {
		// The kubelet's words do not give the total: the field's own.
		for _, p := range e.Problems {
			if p.Field == e.Field {
				e.Value = p.Value
			}
		}
	}
}

// quantityText reads a resource quantity printed with %v: the struct
// {{int scale} {<nil>} cached format}, or already a quantity.
func quantityText(s string) string {
	m := quantityStruct().FindStringSubmatch(s)
	if m == nil {
		return s
	}
	if m[4] != "" {
		return m[4]
	}
	if m[3] != "<nil>" {
		// An inf.Dec quantity (a sum that left int64): %v prints its
		// pointer, not its value.
		return ""
	}
	n, err1 := strconv.ParseInt(m[1], 10, 64)
	scale, err2 := strconv.Atoi(m[2])
	if err1 != nil || err2 != nil {
		return s
	}
	q := resource.NewScaledQuantity(n, resource.Scale(scale))
	if scale == 0 && n%1024 == 0 {
		q = resource.NewQuantity(n, resource.BinarySI)
	}
	return q.String()
}

var quantityStruct = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\{\{(-?\d+) (-?\d+)\} \{([^}]*)\} (\S*) ?\w*\}$`)
})

// port finds which port of the class is in use.
func (x *explainer) port(c startup.Class, words string) {
	e := x.e
	m := addrInUse().FindStringSubmatch(words)
	if m == nil {
		x.field(c.Field)
		return
	}
	x.values["address"] = strings.TrimSuffix(m[1], ":") + ":" + m[2]
	if m[1] == "" {
		x.values["address"] = m[2]
	}
	for _, f := range c.Ports {
		if x.l.fieldValue(f) == m[2] {
			x.field(f)
			return
		}
	}
	x.field(c.Field)
	e.Value = m[2]
}

// files ties a file the kubelet could not use to the field or flag naming it.
func (x *explainer) files(c startup.Class, field, flag, path, words string) {
	e := x.e
	if path == "" {
		if m := pathError().FindStringSubmatch(words); m != nil {
			path = m[2]
		}
	}
	// The field or flag whose value is that path.
	if path != "" {
		for name, val := range x.l.pathFields(c.Files) {
			if samePath(val, path) {
				if strings.HasPrefix(name, "--") {
					field, flag = "", strings.TrimPrefix(name, "--")
				} else {
					field, flag = name, ""
				}
			}
		}
	}
	x.values["detail"] = words
	switch {
	case field != "":
		x.field(field)
	case flag != "":
		x.flag(flag)
	}
	if path != "" {
		e.Value = path
	}
	// Every file of the class the node names: they go together (a
	// certificate and its key, a provider's config and binaries).
	named := x.l.pathFields(c.Files)
	if len(named) < 2 {
		return
	}
	for _, name := range c.Files {
		val, ok := named[name]
		if !ok {
			continue
		}
		p := Problem{Value: val}
		if strings.HasPrefix(name, "--") {
			p.Flag = strings.TrimPrefix(name, "--")
			if o, _, ok := x.l.flagOrigin(p.Flag); ok {
				p.Origin = &o
			}
		} else {
			p.Field = name
			if o, ok := x.l.fieldOrigin(name); ok {
				p.Origin = &o
			}
		}
		e.Problems = append(e.Problems, p)
	}
}

// finish fills in the fix and the version-dependent notes.
func (x *explainer) finish() {
	e := x.e
	c, ok := startup.ByID(e.Class)
	if x.values == nil {
		x.values = map[string]string{"version": x.v.Minor}
	}
	if e.Field != "" {
		x.values["field"] = e.Field
	}
	if e.Flag != "" {
		x.values["flag"] = "--" + e.Flag
	}
	if _, set := x.values["value"]; !set || e.Value != "" {
		x.values["value"] = e.Value
	}
	if e.Origin != nil {
		x.values["origin"] = e.Origin.Place()
		if e.Origin.Kind == "default" || e.Origin.Kind == "flags-default" {
			x.values["where"] = " in the config file"
			if note := defaultHistory(x.v, e.Field); note != "" {
				e.Notes = append(e.Notes, note)
			}
		} else {
			x.values["where"] = " at " + e.Origin.Text
		}
	} else {
		x.values["origin"] = "the kubelet's setup"
	}
	x.values["unit"] = firstOf(x.unit, "kubelet.service")
	if ok && e.Fix == "" {
		e.Fix = startup.Fill(c.Fix, x.values)
	}
	if e.Class == "config-invalid" || e.Class == "value-unparsable" || e.Class == "logging-invalid" {
		var fixes []string
		for _, p := range e.Problems {
			where := "the configuration"
			if p.Origin != nil {
				where = p.Origin.Text
			}
			fixes = append(fixes, fmt.Sprintf("%s at %s: %s", firstOf(p.Field, "(no field)"), where, p.Message))
		}
		if len(fixes) > 0 {
			e.Fix = "correct " + strings.Join(fixes, "; ")
		}
	}
}

// defaultHistory says when a field's default became what it is, when it
// differs between the supported versions ("failCgroupV1 is true by default
// from kubelet 1.35; false before").
func defaultHistory(v *schema.Version, path string) string {
	if path == "" {
		return ""
	}
	cur, ok := defaultOf(v, path)
	if !ok {
		return ""
	}
	var since, before string
	for _, old := range schema.Versions() {
		if !v.AtLeast(old.Minor) {
			break
		}
		d, ok := defaultOf(old, path)
		if !ok {
			continue
		}
		if d != cur {
			since, before = "", d
			continue
		}
		if since == "" {
			since = old.Minor
		}
	}
	if before == "" || since == "" {
		return ""
	}
	return fmt.Sprintf("%s is %s by default from kubelet %s (%s before): the value comes from kubelet %s's default", path, cur, since, before, v.Minor)
}

func firstOf(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// normFlag turns a flag as pflag names it ("--max-pods", "-v, --v", "x")
// into its name.
func normFlag(s string) string {
	if i := strings.LastIndex(s, "--"); i >= 0 {
		s = s[i+2:]
	}
	return strings.TrimLeft(strings.TrimSpace(s), "-")
}
