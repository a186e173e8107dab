package node

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/kubeletcfg/kubeletcfg/nodefile"
)

// ErrNoHostname means an image says no host name: give the node's name.
var ErrNoHostname = errors.New("the node's name is not known: the image has no /etc/hostname (give --hostname-override to the kubelet, or the name with --node)")

// Hostname is the node's host name: the kernel's on the running node (root
// ""), the first name in the image's /etc/hostname, read inside the root and
// bounded, otherwise.
func Hostname(root string) (string, error) {
	if root == "" {
		return os.Hostname()
	}
	r, err := nodefile.OpenRoot(root)
	if err != nil {
		return "", err
	}
	defer r.Close()
	data, err := r.ReadFile("/etc/hostname", nodefile.Hostname)
	if errors.Is(err, fs.ErrNotExist) {
		return "", ErrNoHostname
	}
	if err != nil {
		return "", err
	}
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			return l, nil
		}
	}
	return "", fmt.Errorf("%w (its /etc/hostname names none)", ErrNoHostname)
}
