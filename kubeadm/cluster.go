package kubeadm

import (
	"fmt"
	"net"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// kubeadm's API defaults (apis/kubeadm/v1beta4/defaults.go; the same in
// v1beta3 and v1) and component-config constants.
const (
	DefaultServiceSubnet   = "10.96.0.0/12"
	DefaultDNSDomain       = "cluster.local"
	DefaultCertificatesDir = "/etc/kubernetes/pki"
	DefaultClusterDNSIP    = "10.96.0.10"
	DefaultManifestsDir    = "/etc/kubernetes/manifests"
	DefaultCRISocket       = "unix:///var/run/containerd/containerd.sock"
	SystemdResolvConf      = "/run/systemd/resolve/resolv.conf"
	kubeadmGroup           = "kubeadm.k8s.io"
)

// KnownCRISockets are the sockets kubeadm's DetectCRISocket tries, in order.
var KnownCRISockets = []string{DefaultCRISocket, "unix:///var/run/crio/crio.sock", "unix:///var/run/cri-dockerd.sock"}

// Cluster is what kubeadm's kubelet defaulting reads of the cluster's
// ClusterConfiguration (the kubeadm-config ConfigMap), after kubeadm's API
// defaults.
type Cluster struct {
	ServiceSubnet   string          `json:"serviceSubnet"`
	DNSDomain       string          `json:"dnsDomain"`
	CertificatesDir string          `json:"certificatesDir"`
	FeatureGates    map[string]bool `json:"featureGates,omitempty"`
	// File names where it was read, "" for kubeadm's defaults alone.
	File string `json:"file,omitempty"`
	// Lines of the fields set in File (serviceSubnet, dnsDomain,
	// certificatesDir, featureGates.NAME).
	Lines map[string]int `json:"-"`
}

// DefaultCluster is the ClusterConfiguration of a cluster made with kubeadm's
// defaults.
func DefaultCluster() *Cluster {
	return &Cluster{ServiceSubnet: DefaultServiceSubnet, DNSDomain: DefaultDNSDomain, CertificatesDir: DefaultCertificatesDir, Lines: map[string]int{}}
}

// ParseCluster reads a ClusterConfiguration as kubeadm r decodes the
// kubeadm-config ConfigMap's value: a kubeadm.k8s.io version r reads, kind
// ClusterConfiguration, then kubeadm's API defaults.
func ParseCluster(t Text, r *Release) (*Cluster, error) {
	docs, metas, err := configDocs(t)
	if err != nil {
		return nil, err
	}
	for i, d := range docs {
		g, ver := metas[i].group()
		if g != kubeadmGroup || metas[i].Kind != "ClusterConfiguration" {
			continue
		}
		line := t.Offset + d.Line
		if !slices.Contains(r.ClusterAPIs, ver) {
			return nil, fmt.Errorf("%s:%d: kubeadm %s cannot decode %s (it reads %s/%s)", t.File, line, r.Minor, metas[i].APIVersion,
				kubeadmGroup, strings.Join(r.ClusterAPIs, ", "+kubeadmGroup+"/"))
		}
		var raw struct {
			Networking struct {
				ServiceSubnet string `json:"serviceSubnet"`
				DNSDomain     string `json:"dnsDomain"`
			} `json:"networking"`
			CertificatesDir string          `json:"certificatesDir"`
			FeatureGates    map[string]bool `json:"featureGates"`
		}
		if err := yaml.Unmarshal(d.Data, &raw); err != nil {
			return nil, fmt.Errorf("%s:%d: kubeadm %s fails to decode the ClusterConfiguration: %v", t.File, line, r.Minor, err)
		}
		c := DefaultCluster()
		c.File = t.File
		c.FeatureGates = raw.FeatureGates
		pos := keyLines(d.Data)
		at := func(k string) int {
			if l, ok := pos[k]; ok {
				return l + t.Offset + d.Line - 1
			}
			return 0
		}
		if raw.Networking.ServiceSubnet != "" {
			c.ServiceSubnet, c.Lines["serviceSubnet"] = raw.Networking.ServiceSubnet, at("networking.serviceSubnet")
		}
		if raw.Networking.DNSDomain != "" {
			c.DNSDomain, c.Lines["dnsDomain"] = raw.Networking.DNSDomain, at("networking.dnsDomain")
		}
		if raw.CertificatesDir != "" {
			c.CertificatesDir, c.Lines["certificatesDir"] = raw.CertificatesDir, at("certificatesDir")
		}
		for g := range raw.FeatureGates {
			c.Lines["featureGates."+g] = at("featureGates." + g)
		}
		return c, nil
	}
	return nil, fmt.Errorf("%s: no %s ClusterConfiguration in it (the kubeadm-config ConfigMap's %s value)", t.File, kubeadmGroup, ClusterConfigKey)
}

// clusterDNS is the address kubeadm puts in clusterDNS: the tenth of the first
// service subnet, or 10.96.0.10 when that cannot be computed.
func (c *Cluster) clusterDNS() (string, string) {
	first := strings.TrimSpace(strings.Split(c.ServiceSubnet, ",")[0])
	_, n, err := net.ParseCIDR(first)
	if err != nil {
		return DefaultClusterDNSIP, fmt.Sprintf("serviceSubnet %q does not parse: kubeadm falls back to %s", c.ServiceSubnet, DefaultClusterDNSIP)
	}
	ip := indexedIP(n, 10)
	if ip == nil {
		return DefaultClusterDNSIP, fmt.Sprintf("serviceSubnet %q has no tenth address: kubeadm falls back to %s", c.ServiceSubnet, DefaultClusterDNSIP)
	}
	return ip.String(), fmt.Sprintf("the tenth address of serviceSubnet %s", first)
}

// indexedIP is netutils.GetIndexedIP: the network address plus index, nil
// when that leaves the network.
func indexedIP(n *net.IPNet, index int) net.IP {
	ip := make(net.IP, len(n.IP))
	copy(ip, n.IP)
	carry := index
	for i := len(ip) - 1; i >= 0 && carry > 0; i-- {
		sum := int(ip[i]) + carry
		ip[i] = byte(sum)
		carry = sum >> 8
	}
	if carry > 0 || !n.Contains(ip) {
		return nil
	}
	if v4 := ip.To4(); v4 != nil {
		return v4
	}
	return ip
}
