package units

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"
	"syscall"

	"github.com/kubeletcfg/kubeletcfg/nodefile"
	"github.com/kubeletcfg/kubeletcfg/warning"
)

// Service is how systemd starts the kubelet's service: its command line,
// environment and the files they come from.
type Service struct {
	Unit     string            // path of the main unit file (as seen on the node, e.g. /usr/lib/systemd/system/kubelet.service)
	Dropins  []string          // drop-ins applied, in order (node paths)
	Exec     []string          // the ExecStart command line after expansion: Exec[0] is the binary (argv[0]; with the "@" prefix see Path)
	Env      map[string]string // the kubelet process's environment from Environment= and EnvironmentFile=
	EnvFiles []string          // environment files read (node paths), in order; missing optional ones left out
	Sources  []Source          // for each word of Exec[1:], where it came from

	UnitName       string            // the unit's name, e.g. "kubelet.service"
	SystemdVersion int               // the node's systemd version, 0 if unknown; some rules depend on it
	UnitTarget     string            // the file actually read when Unit is a symbolic link, else ""
	Masked         []string          // drop-ins masked (linked to /dev/null or empty): they hide same-named ones in lower-priority directories
	Type           string            // the service's Type=, "" for the default
	Path           string            // the executable run; differs from Exec[0] with the "@" prefix, or when ExecStart= names a bare file name
	Prefix         string            // prefix characters of the ExecStart= command ("-", "+", "@", ":", "!", "!!")
	ExecStart      Source            // where the ExecStart= command in force was written
	EnvSources     map[string]Source // for each variable of Env, where it was set
	Warnings       []warning.Warning // what systemd would log and then ignore
}

// Source says where a word of the command line came from.
type Source struct {
	File string // unit, drop-in or environment file (node path)
	Line int
	Var  string // the variable it was expanded from, "" when written literally
}

// kubeletUnit is the unit Discover looks for.
const kubeletUnit = "kubelet.service"

// unitSearchPath is the system service manager's unit search path, highest
// priority first (systemd.unit(5)). /lib/systemd/system only differs from
// /usr/lib/systemd/system on systems without a merged /usr; there, systemd
// builds for split /usr (Debian's up to systemd 254) search it before
// /usr/lib/systemd/system, while upstream puts it after.
var unitSearchPath = []string{
	"/etc/systemd/system.control",
	"/run/systemd/system.control",
	"/run/systemd/transient",
	"/run/systemd/generator.early",
	"/etc/systemd/system",
	"/etc/systemd/system.attached",
	"/run/systemd/system",
	"/run/systemd/system.attached",
	"/run/systemd/generator",
	"/usr/local/lib/systemd/system",
	"/usr/lib/systemd/system",
	"/lib/systemd/system",
	"/run/systemd/generator.late",
}

// defaultExecSearchPath is where systemd looks for an ExecStart= executable
// given as a bare name.
var defaultExecSearchPath = []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"}

// Discover finds kubelet.service on the node under root ("" or "/" for the
// running node) and computes how systemd starts it.
func Discover(root string) (*Service, error) {
	n, err := openNode(root)
	if err != nil {
		return nil, err
	}
	defer n.Close()
	unit, err := n.findUnit(kubeletUnit)
	if err != nil {
		return nil, err
	}
	return n.load(kubeletUnit, unit)
}

// FromUnit computes how systemd starts the service of the given unit file,
// a node path under root, with its drop-ins found as in Discover for the
// unit's file name.
func FromUnit(root, unitPath string) (*Service, error) {
	name := path.Base(unitPath)
	if !strings.HasSuffix(name, ".service") || name == ".service" {
		return nil, &Error{File: unitPath, Msg: "not a service unit: the file name must end in .service"}
	}
	n, err := openNode(root)
	if err != nil {
		return nil, err
	}
	defer n.Close()
	p := path.Join("/", unitPath)
	if err := n.checkUnitFile(p); err != nil {
		var ue *Error
		if !errors.As(err, &ue) {
			err = &Error{File: p, Msg: "reading unit file", Err: err}
		}
		return nil, err
	}
	return n.load(name, p)
}

// findUnit returns the node path of the unit file that systemd uses for
// the named unit: the first in the search path.
func (n *nodeFS) findUnit(name string) (string, error) {
	for _, dir := range unitSearchPath {
		p := path.Join(dir, name)
		err := n.checkUnitFile(p)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errIsDir) {
			continue
		}
		return p, err
	}
	return "", &Error{Msg: fmt.Sprintf("%s not found in %s", name, strings.Join(unitSearchPath, ", ")), Err: fs.ErrNotExist}
}

var errIsDir = errors.New("is a directory")

// checkUnitFile checks that p is a unit file systemd would load: it exists
// and is not masked.
func (n *nodeFS) checkUnitFile(p string) error {
	res, fi, err := n.Stat(p)
	switch {
	case res == devNull:
		return &Error{File: p, Msg: "the unit is masked (linked to /dev/null); systemd will not start it"}
	case err != nil:
		return err
	case fi.IsDir():
		return &fs.PathError{Op: "read", Path: p, Err: errIsDir}
	case fi.Mode().IsRegular() && fi.Size() == 0:
		return &Error{File: p, Msg: "the unit is masked (empty file); systemd will not start it"}
	}
	return nil
}

// load reads the unit at node path unit, its drop-ins and environment
// files, and computes the Service.
func (n *nodeFS) load(name, unit string) (*Service, error) {
	n.systemd = n.systemdVersion()
	s := &Service{UnitName: name, Unit: unit, SystemdVersion: n.systemd}
	if res, err := n.Resolve(unit); err == nil && res != unit {
		s.UnitTarget = res
	}
	s.Dropins, s.Masked, s.Warnings = n.findDropins(unitNames(name, s.UnitTarget))
	cfg, err := n.readConfig(name, unit, s.Dropins)
	if err != nil {
		return nil, err
	}
	s.Warnings = append(s.Warnings, cfg.Warnings...)
	cmd, err := cfg.mainCommand(name, unit)
	if err != nil {
		return nil, err
	}
	env, err := n.environment(cfg, s)
	if err != nil {
		return nil, err
	}
	return s, n.fillCommand(s, cfg, cmd, env)
}

// unitNames are the names whose drop-ins apply: the unit's, and that of
// the file a symbolic link makes it an alias of.
func unitNames(name, target string) []string {
	names := []string{name}
	if t := path.Base(target); target != "" && t != name && strings.HasSuffix(t, ".service") {
		names = append(names, t)
	}
	return names
}

// readConfig parses the unit file and the drop-ins and applies them.
func (n *nodeFS) readConfig(name, unit string, dropins []string) (*serviceConfig, error) {
	sp := &specifiers{unit: name, fragment: unit, node: n}
	cfg := newServiceConfig()
	for _, f := range append([]string{unit}, dropins...) {
		data, err := n.ReadFile(f, nodefile.Unit)
		if err != nil {
			return nil, &Error{File: f, Msg: "reading unit file", Err: err}
		}
		assigns, warns, err := parseUnitFile(f, data)
		if err != nil {
			return nil, err
		}
		cfg.Warnings = append(cfg.Warnings, warns...)
		for _, a := range assigns {
			if err := cfg.apply(a, sp); err != nil {
				return nil, err
			}
		}
	}
	return cfg, nil
}

// findDropins returns the drop-ins of the named units in the order systemd
// applies them, and the masked ones. Files named *.conf are gathered from
// "<name>.d/" (and template and dashed-prefix variants) and "service.d/" in
// every search path directory; of files with the same name, the one in the
// higher-priority directory wins; they apply sorted by file name.
// Directories that exist but cannot be read are warned about.
func (n *nodeFS) findDropins(names []string) (applied, masked []string, warnings []warning.Warning) {
	var dirs []string
	for _, name := range names {
		for _, base := range unitSearchPath {
			for _, v := range dropinNameVariants(name) {
				dirs = append(dirs, path.Join(base, v+".d"))
			}
		}
	}
	for _, base := range unitSearchPath {
		dirs = append(dirs, path.Join(base, "service.d"))
	}
	byName := map[string]string{}
	for _, d := range dirs {
		files, err := n.dropinFiles(d)
		if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			warnings = append(warnings, warnAt(d, 0, "drop-in directory not read: %v", err))
		}
		for _, f := range files {
			if _, ok := byName[f]; !ok {
				byName[f] = path.Join(d, f)
			}
		}
	}
	for _, f := range slices.Sorted(maps.Keys(byName)) {
		if p := byName[f]; n.masked(p) {
			masked = append(masked, p)
		} else {
			applied = append(applied, p)
		}
	}
	return applied, masked, warnings
}

// dropinFiles lists the drop-in file names in directory d: "*.conf", not
// hidden, regular files or symbolic links.
func (n *nodeFS) dropinFiles(d string) ([]string, error) {
	names, err := n.ReadDir(d)
	if err != nil {
		return nil, err
	}
	res, err := n.Resolve(d)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range names {
		if !strings.HasSuffix(f, ".conf") || strings.HasPrefix(f, ".") {
			continue
		}
		fi, err := n.Lstat(path.Join(res, f))
		if err != nil || !(fi.Mode().IsRegular() || fi.Mode()&fs.ModeSymlink != 0) {
			continue
		}
		out = append(out, f)
	}
	return out, nil
}

// dropinNameVariants returns the unit names whose drop-in directories
// apply to a unit, most specific first: the name, its template for an
// instance ("foo@.service" for "foo@bar.service"), and the prefixes up to
// each dash ("foo-bar-.service", "foo-.service" for "foo-bar-baz.service").
func dropinNameVariants(name string) []string {
	out := []string{name}
	prefix, instance, _ := splitUnitName(name)
	suffix := name[strings.LastIndexByte(name, '.'):]
	if instance != "" {
		out = append(out, prefix+"@"+suffix)
	}
	p := strings.TrimSuffix(prefix, "-")
	for {
		i := strings.LastIndexByte(p, '-')
		if i <= 0 {
			return out
		}
		out = append(out, p[:i+1]+suffix)
		p = p[:i]
	}
}

// environment computes the service's environment: Environment=, then the
// environment files, which override it, then UnsetEnvironment=.
func (n *nodeFS) environment(cfg *serviceConfig, s *Service) (map[string]envVar, error) {
	env := maps.Clone(cfg.Env)
	for _, ref := range cfg.EnvFiles {
		if err := n.readEnvFiles(ref, env, s); err != nil {
			return nil, err
		}
	}
	unsetEnv(env, cfg.Unset)
	if len(cfg.PassEnv) > 0 {
		s.Warnings = append(s.Warnings, warning.At(warning.Unknowable, s.Unit, 0,
			"PassEnvironment= passes %s from the service manager's environment, which is not known here",
			strings.Join(cfg.PassEnv, " ")))
	}
	s.Env = map[string]string{}
	s.EnvSources = map[string]Source{}
	for k, v := range env {
		s.Env[k] = v.Value
		s.EnvSources[k] = v.Src
	}
	return env, nil
}

// readEnvFiles reads the files of one EnvironmentFile= entry into env.
func (n *nodeFS) readEnvFiles(ref envFileRef, env map[string]envVar, s *Service) error {
	files, err := n.glob(ref.Pattern)
	if err == nil && len(files) == 0 {
		err = &fs.PathError{Op: "open", Path: ref.Pattern, Err: fs.ErrNotExist}
	}
	if err != nil {
		return n.envFileFailed(ref, err, s)
	}
	for _, f := range files {
		lines, err := n.readEnvFile(f)
		if err != nil {
			if err := n.envFileFailed(ref, err, s); err != nil {
				return err
			}
			continue
		}
		s.EnvFiles = append(s.EnvFiles, f)
		for _, l := range lines {
			if l.Ignored != "" {
				s.Warnings = append(s.Warnings, warnAt(f, l.Line, "%s, ignoring", l.Ignored))
				continue
			}
			env[l.Key] = envVar{Value: l.Value, Src: Source{File: f, Line: l.Line}}
		}
	}
	return nil
}

func (n *nodeFS) readEnvFile(f string) ([]EnvLine, error) {
	data, err := n.ReadFile(f, nodefile.EnvFile)
	if err != nil {
		return nil, err
	}
	return parseEnvFileVersion(f, data, n.systemd)
}

// envFileFailed handles a missing or unreadable environment file: systemd
// skips it for an optional ("-") entry, else refuses to start the service.
func (n *nodeFS) envFileFailed(ref envFileRef, err error, s *Service) error {
	if ref.Optional {
		if !errors.Is(err, fs.ErrNotExist) {
			s.Warnings = append(s.Warnings, warning.At(warning.NotFound, ref.File, ref.Line, "EnvironmentFile=-%s skipped: %v", ref.Pattern, err))
		}
		return nil
	}
	return &Error{File: ref.File, Line: ref.Line,
		Msg: fmt.Sprintf("EnvironmentFile=%s: systemd will not start the service", ref.Pattern), Err: err}
}

// fillCommand expands the command line and fills the command fields of s.
func (n *nodeFS) fillCommand(s *Service, cfg *serviceConfig, cmd command, env map[string]envVar) error {
	s.Type = cfg.Type
	s.Prefix = cmd.Prefix
	s.ExecStart = Source{File: cmd.File, Line: cmd.Line}
	x := cmd.expand(env)
	for _, note := range x.Notes {
		s.Warnings = append(s.Warnings, warnAt(cmd.File, cmd.Line, "ExecStart=: %s", note))
	}
	if len(x.Argv) == 0 {
		return errorAt(cmd.File, cmd.Line, "ExecStart= command line is empty after variable expansion")
	}
	s.Exec = x.Argv
	s.Sources = x.Sources[1:]
	s.Path = n.findExecutable(cmd, cfg.SearchPath, s)
	return nil
}

// findExecutable returns the node path of the command's executable,
// searching for a bare name as systemd does, and warns if it is missing.
func (n *nodeFS) findExecutable(cmd command, searchPath []string, s *Service) string {
	if strings.HasPrefix(cmd.Path, "/") {
		if _, fi, err := n.Stat(cmd.Path); err != nil || fi.IsDir() {
			s.Warnings = append(s.Warnings, warning.At(warning.NotFound, cmd.File, cmd.Line, "executable %s not found on the node", cmd.Path))
		}
		return cmd.Path
	}
	if len(searchPath) == 0 {
		searchPath = defaultExecSearchPath
	}
	for _, d := range searchPath {
		p := path.Join(d, cmd.Path)
		if _, fi, err := n.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
	}
	s.Warnings = append(s.Warnings, warning.At(warning.NotFound, cmd.File, cmd.Line, "executable %s not found in %s on the node", cmd.Path, strings.Join(searchPath, ":")))
	return cmd.Path
}
