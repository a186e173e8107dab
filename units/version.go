package units

import (
	"path"
	"strconv"
	"strings"
)

// sharedLibraryGlobs are where distributions install
// libsystemd-shared-<version>.so, whose name tells systemd's version.
var sharedLibraryGlobs = []string{
	"/usr/lib/systemd/libsystemd-shared-*.so",
	"/usr/lib64/systemd/libsystemd-shared-*.so",
	"/usr/lib/*/systemd/libsystemd-shared-*.so",
	"/lib/systemd/libsystemd-shared-*.so",
	"/lib64/systemd/libsystemd-shared-*.so",
	"/lib/*/systemd/libsystemd-shared-*.so",
}

// SystemdVersion returns the major version of the systemd installed on
// the node under root ("" or "/" for the running node), or 0 if it cannot
// tell (systemd older than 231 has no libsystemd-shared).
func SystemdVersion(root string) int {
	n, err := openNode(root)
	if err != nil {
		return 0
	}
	defer n.Close()
	return n.systemdVersion()
}

func (n *nodeFS) systemdVersion() int {
	best := 0
	for _, g := range sharedLibraryGlobs {
		files, err := n.glob(g)
		if err != nil {
			continue
		}
		for _, f := range files {
			best = max(best, sharedLibraryVersion(path.Base(f)))
		}
	}
	return best
}

// sharedLibraryVersion reads the version from a name like
// "libsystemd-shared-252.so" or "libsystemd-shared-256.11-1.fc41.so".
func sharedLibraryVersion(name string) int {
	v := strings.TrimPrefix(name, "libsystemd-shared-")
	end := 0
	for end < len(v) && v[end] >= '0' && v[end] <= '9' {
		end++
	}
	n, err := strconv.Atoi(v[:end])
	if err != nil {
		return 0
	}
	return n
}
