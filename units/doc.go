// Package units computes how systemd starts the kubelet on a node: the
// command line the kubelet process receives and its environment.
//
// Every distribution hides kubelet flags somewhere in systemd configuration:
// kubeadm in a drop-in that reads /var/lib/kubelet/kubeadm-flags.env and
// /etc/default/kubelet (or /etc/sysconfig/kubelet), kops in
// /etc/sysconfig/kubelet, EKS in drop-ins, kubespray in
// /etc/kubernetes/kubelet.env. This package reads the unit, its drop-ins and
// its environment files the way systemd does and expands ExecStart= exactly
// as systemd would, so callers see the real flags.
//
// The node is either the live root "/" or an offline node image under a
// root directory. All file access stays inside the root: symbolic links,
// absolute ones included, are resolved as if the root were "/".
//
// The rules followed are those of systemd.unit(5), systemd.service(5),
// systemd.exec(5) and systemd.syntax(7), checked against systemd's own
// sources. Where systemd only logs a problem and goes on, the package does
// the same and records a warning (warning.SystemdIgnored); where systemd
// refuses to start the unit, the package returns an *Error naming the file
// and line.
package units
