package units

import (
	"fmt"
	"os"
	"path"
	"runtime"
	"strings"

	"github.com/kubeletcfg/kubeletcfg/nodefile"
)

// specifiers resolves the %-specifiers of systemd.unit(5) for one unit of
// the system service manager.
type specifiers struct {
	unit     string  // unit name, e.g. "kubelet.service"
	fragment string  // node path of the unit file, "" if unknown
	node     *nodeFS // nil: specifiers that need the node's files fail
}

// expand replaces the specifiers in s. "%%" is "%"; an unknown specifier
// letter or digit is an error; "%" before anything else, or at the end,
// stays as it is.
func (sp *specifiers) expand(s string) (string, error) {
	if !strings.Contains(s, "%") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 == len(s) {
			b.WriteByte('%')
			break
		}
		i++
		v, err := sp.lookup(s[i])
		if err != nil {
			return "", err
		}
		b.WriteString(v)
	}
	return b.String(), nil
}

// fixedSpecifiers are those whose value is the same for every system
// service.
var fixedSpecifiers = map[byte]string{
	'%': "%",
	'C': "/var/cache",
	'D': "/usr/share",
	'E': "/etc",
	'L': "/var/log",
	'S': "/var/lib",
	'T': "/tmp",
	'V': "/var/tmp",
	't': "/run",
	'h': "/root",
	'u': "root",
	'U': "0",
	'g': "root",
	'G': "0",
}

// osReleaseFields maps specifiers to os-release(5) fields.
var osReleaseFields = map[byte]string{
	'o': "ID",
	'w': "VERSION_ID",
	'W': "VARIANT_ID",
	'A': "IMAGE_VERSION",
	'B': "BUILD_ID",
	'M': "IMAGE_ID",
}

func (sp *specifiers) lookup(c byte) (string, error) {
	if v, ok := fixedSpecifiers[c]; ok {
		return v, nil
	}
	if v, ok, err := sp.nameSpecifier(c); ok || err != nil {
		return v, err
	}
	if field, ok := osReleaseFields[c]; ok {
		return sp.osRelease(c, field)
	}
	switch c {
	case 'd':
		return "/run/credentials/" + sp.unit, nil
	case 's':
		return sp.rootShell(), nil
	case 'y', 'Y':
		return sp.fragmentSpecifier(c)
	case 'H', 'l', 'q', 'm', 'b', 'v', 'a':
		return sp.hostSpecifier(c)
	}
	if isAlnum(c) {
		return "", fmt.Errorf("unknown specifier %%%c", c)
	}
	return "%" + string(c), nil
}

func isAlnum(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

// nameSpecifier resolves the specifiers derived from the unit name.
func (sp *specifiers) nameSpecifier(c byte) (string, bool, error) {
	prefix, instance, stem := splitUnitName(sp.unit)
	last := prefix[strings.LastIndexByte(prefix, '-')+1:]
	var v string
	var err error
	switch c {
	case 'n':
		v = sp.unit
	case 'N':
		v = stem
	case 'p':
		v = prefix
	case 'P':
		v, err = unitNameUnescape(prefix)
	case 'i':
		v = instance
	case 'I':
		v, err = unitNameUnescape(instance)
	case 'j':
		v = last
	case 'J':
		v, err = unitNameUnescape(last)
	case 'f':
		v, err = unitNameToPath(prefix, instance)
	default:
		return "", false, nil
	}
	if err != nil {
		return "", true, fmt.Errorf("specifier %%%c: %w", c, err)
	}
	return v, true, nil
}

// splitUnitName splits "prefix@instance.type" into its prefix, its instance
// ("" when it has none) and the name without the type suffix.
func splitUnitName(name string) (prefix, instance, stem string) {
	stem = name
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		stem = name[:i]
	}
	prefix, instance, _ = strings.Cut(stem, "@")
	return prefix, instance, stem
}

// unitNameUnescape undoes unit name escaping: "-" is "/", "\xNN" a byte.
func unitNameUnescape(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '-':
			b.WriteByte('/')
		case '\\':
			v, ok := uint32(0), false
			if i+1 < len(s) && s[i+1] == 'x' {
				v, ok = parseDigits(s[i+2:], 2, 16)
			}
			if !ok {
				return "", fmt.Errorf("invalid escape in unit name part %q", s)
			}
			b.WriteByte(byte(v))
			i += 3
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String(), nil
}

// unitNameToPath is the %f specifier: the unescaped instance, or else the
// unescaped prefix, as an absolute path.
func unitNameToPath(prefix, instance string) (string, error) {
	s := prefix
	if instance != "" {
		s = instance
	}
	if s == "-" {
		return "/", nil
	}
	p, err := unitNameUnescape(s)
	if err != nil {
		return "", err
	}
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return p, nil
}

// defaultUserShell is systemd's build-time default shell for root, upstream
// and on the major distributions.
const defaultUserShell = "/bin/bash"

// rootShell is %s for the system manager: the default shell if the node
// has it, else /bin/sh.
func (sp *specifiers) rootShell() string {
	if sp.node != nil {
		if _, fi, err := sp.node.Stat(defaultUserShell); err != nil || fi.IsDir() {
			return "/bin/sh"
		}
	}
	return defaultUserShell
}

func (sp *specifiers) fragmentSpecifier(c byte) (string, error) {
	if sp.fragment == "" {
		return "", fmt.Errorf("specifier %%%c: the unit file is not known", c)
	}
	if c == 'Y' {
		return path.Dir(sp.fragment), nil
	}
	return sp.fragment, nil
}

// needNode fails for a specifier that needs the node's files.
func (sp *specifiers) needNode(c byte, what string) error {
	if sp.node == nil {
		return fmt.Errorf("specifier %%%c (%s) needs the node's files", c, what)
	}
	return nil
}

// needLive fails for a specifier only the running node can answer.
func (sp *specifiers) needLive(c byte, what string) error {
	if sp.node == nil || !sp.node.Live {
		return fmt.Errorf("specifier %%%c (%s) is only known on the running node", c, what)
	}
	return nil
}

func (sp *specifiers) hostSpecifier(c byte) (string, error) {
	switch c {
	case 'H':
		return sp.hostname()
	case 'l':
		h, err := sp.hostname()
		h, _, _ = strings.Cut(h, ".")
		return h, err
	case 'q':
		return sp.prettyHostname()
	case 'm':
		return sp.machineID()
	case 'b':
		return sp.liveFile(c, "boot ID", "/proc/sys/kernel/random/boot_id", func(s string) string {
			return strings.ReplaceAll(s, "-", "")
		})
	case 'v':
		return sp.liveFile(c, "kernel release", "/proc/sys/kernel/osrelease", nil)
	default: // 'a'
		return sp.architecture()
	}
}

// hostname is the kernel's host name on the running node, and what
// /etc/hostname says on an image.
func (sp *specifiers) hostname() (string, error) {
	if err := sp.needNode('H', "host name"); err != nil {
		return "", err
	}
	if sp.node.Live {
		return os.Hostname()
	}
	data, err := sp.node.ReadFile("/etc/hostname", nodefile.Hostname)
	if err != nil {
		return "", fmt.Errorf("specifier %%H: %w", err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			return l, nil
		}
	}
	return "", fmt.Errorf("specifier %%H: /etc/hostname names no host")
}

func (sp *specifiers) prettyHostname() (string, error) {
	if err := sp.needNode('q', "pretty host name"); err != nil {
		return "", err
	}
	if data, err := sp.node.ReadFile("/etc/machine-info", nodefile.EnvFile); err == nil {
		if lines, err := parseEnvFile("/etc/machine-info", data); err == nil {
			if v := envMap(lines)["PRETTY_HOSTNAME"]; v != "" {
				return v, nil
			}
		}
	}
	h, err := sp.hostname()
	h, _, _ = strings.Cut(h, ".")
	return h, err
}

func (sp *specifiers) machineID() (string, error) {
	if err := sp.needNode('m', "machine ID"); err != nil {
		return "", err
	}
	data, err := sp.node.ReadFile("/etc/machine-id", nodefile.Hostname)
	if err != nil {
		return "", fmt.Errorf("specifier %%m: %w", err)
	}
	id := strings.TrimSpace(string(data))
	if len(id) != 32 || strings.Trim(id, "0123456789abcdef") != "" {
		return "", fmt.Errorf("specifier %%m: /etc/machine-id holds no machine ID")
	}
	return id, nil
}

// liveFile reads a one-line kernel file of the running node.
func (sp *specifiers) liveFile(c byte, what, file string, edit func(string) string) (string, error) {
	if err := sp.needLive(c, what); err != nil {
		return "", err
	}
	data, err := sp.node.ReadFile(file, nodefile.Hostname)
	if err != nil {
		return "", fmt.Errorf("specifier %%%c: %w", c, err)
	}
	v := strings.TrimSpace(string(data))
	if edit != nil {
		v = edit(v)
	}
	return v, nil
}

// systemdArch maps Go's architecture names to systemd's (%a).
var systemdArch = map[string]string{
	"amd64": "x86-64", "386": "x86", "arm64": "arm64", "arm": "arm",
	"ppc64le": "ppc64-le", "ppc64": "ppc64", "s390x": "s390x",
	"riscv64": "riscv64", "loong64": "loongarch64", "mips64le": "mips64-le",
}

func (sp *specifiers) architecture() (string, error) {
	if err := sp.needLive('a', "architecture"); err != nil {
		return "", err
	}
	if a, ok := systemdArch[runtime.GOARCH]; ok {
		return a, nil
	}
	return "", fmt.Errorf("specifier %%a: unknown architecture %s", runtime.GOARCH)
}

// osRelease reads a field of the node's os-release(5); an unset field is "".
func (sp *specifiers) osRelease(c byte, field string) (string, error) {
	if err := sp.needNode(c, "os-release "+field); err != nil {
		return "", err
	}
	for _, f := range []string{"/etc/os-release", "/usr/lib/os-release"} {
		data, err := sp.node.ReadFile(f, nodefile.EnvFile)
		if err != nil {
			continue
		}
		lines, err := parseEnvFile(f, data)
		if err != nil {
			return "", fmt.Errorf("specifier %%%c: %w", c, err)
		}
		return envMap(lines)[field], nil
	}
	return "", fmt.Errorf("specifier %%%c: the node has no os-release file", c)
}
