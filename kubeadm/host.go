package kubeadm

import (
	"context"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	sddbus "github.com/coreos/go-systemd/v22/dbus"

	"github.com/kubeletcfg/kubeletcfg/nodefile"
)

// ResolvedActive asks the running node whether systemd-resolved is active, as
// kubeadm does (`systemctl is-active systemd-resolved`: active or
// activating), over systemd's D-Bus API. A node without systemd is No, as
// kubeadm finds no init system there; a D-Bus that does not answer, Unknown.
func ResolvedActive(ctx context.Context) Tristate {
	if _, err := os.Stat("/run/systemd/system"); err != nil {
		return No
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := sddbus.NewSystemConnectionContext(ctx)
	if err != nil {
		return Unknown
	}
	defer conn.Close()
	p, err := conn.GetUnitPropertyContext(ctx, "systemd-resolved.service", "ActiveState")
	if err != nil {
		return Unknown
	}
	switch strings.Trim(p.Value.String(), `"`) {
	case "active", "activating":
		return Yes
	}
	return No
}

// ResolvedInImage is what an offline image says about systemd-resolved: it
// cannot say whether the service will be active, only whether it is
// enabled. Render takes Unknown either way; this is for the message.
func ResolvedInImage(root *nodefile.Root) bool {
	for _, p := range []string{
		"/etc/systemd/system/multi-user.target.wants/systemd-resolved.service",
		"/etc/systemd/system/sysinit.target.wants/systemd-resolved.service",
		"/etc/systemd/system/dbus-org.freedesktop.resolve1.service",
	} {
		if _, _, err := root.Stat(p); err == nil {
			return true
		}
	}
	return false
}

// DetectCRISocket is kubeadm 1.37's detection on a node without
// instance-config.yaml: the known sockets that accept a connection; exactly
// one is the answer, none or several fall back to kubeadm's default (several
// with a warning in kubeadm's log).
func DetectCRISocket(ctx context.Context) (socket string, found []string) {
	for _, s := range KnownCRISockets {
		u, err := url.Parse(s)
		if err != nil {
			continue
		}
		d := net.Dialer{Timeout: time.Second}
		c, err := d.DialContext(ctx, u.Scheme, u.Path)
		if err == nil {
			c.Close()
			found = append(found, s)
		}
	}
	if len(found) == 1 {
		return found[0], found
	}
	return DefaultCRISocket, found
}
