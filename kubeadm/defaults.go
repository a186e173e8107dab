package kubeadm

import (
	"fmt"
	"path"

	"k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"
)

// defaulted is one value kubeadm's component-config defaulting set, and why.
type defaulted struct {
	field, why string
	line       int // of the ClusterConfiguration value it came from, if any
}

// recommended is a value kubeadm keeps but warns about.
type recommended struct {
	field       string
	want, have  string
	fromCluster bool
}

// applyDefaults is componentconfigs/kubelet.go Default, the same in 1.28–1.37
// (read in each release): it fills what is unset from the cluster's
// ClusterConfiguration and kubeadm's constants, forces rotateCertificates,
// and warns where a set value differs from its recommendation.
func applyDefaults(kc *v1beta1.KubeletConfiguration, c *Cluster) ([]defaulted, []recommended) {
	var set []defaulted
	var warn []recommended
	if kc.FeatureGates == nil {
		kc.FeatureGates = map[string]bool{}
	}
	if kc.StaticPodPath == "" {
		kc.StaticPodPath = DefaultManifestsDir
		set = append(set, defaulted{field: "staticPodPath", why: "kubeadm's manifests directory"})
	} else if kc.StaticPodPath != DefaultManifestsDir {
		warn = append(warn, recommended{field: "staticPodPath", want: DefaultManifestsDir, have: kc.StaticPodPath})
	}
	dns, why := c.clusterDNS()
	if kc.ClusterDNS == nil {
		kc.ClusterDNS = []string{dns}
		set = append(set, defaulted{field: "clusterDNS", why: why + " (ClusterConfiguration networking.serviceSubnet)", line: c.Lines["serviceSubnet"]})
	} else if len(kc.ClusterDNS) != 1 || kc.ClusterDNS[0] != dns {
		warn = append(warn, recommended{field: "clusterDNS", want: fmt.Sprint([]string{dns}), have: fmt.Sprint(kc.ClusterDNS), fromCluster: true})
	}
	if kc.ClusterDomain == "" {
		kc.ClusterDomain = c.DNSDomain
		set = append(set, defaulted{field: "clusterDomain", why: "ClusterConfiguration networking.dnsDomain", line: c.Lines["dnsDomain"]})
	} else if c.DNSDomain != "" && kc.ClusterDomain != c.DNSDomain {
		warn = append(warn, recommended{field: "clusterDomain", want: c.DNSDomain, have: kc.ClusterDomain, fromCluster: true})
	}
	ca := path.Join(c.CertificatesDir, "ca.crt")
	if kc.Authentication.X509.ClientCAFile == "" {
		kc.Authentication.X509.ClientCAFile = ca
		set = append(set, defaulted{field: "authentication.x509.clientCAFile", why: "ca.crt in ClusterConfiguration certificatesDir", line: c.Lines["certificatesDir"]})
	} else if kc.Authentication.X509.ClientCAFile != ca {
		warn = append(warn, recommended{field: "authentication.x509.clientCAFile", want: ca, have: kc.Authentication.X509.ClientCAFile, fromCluster: true})
	}
	if kc.Authentication.Anonymous.Enabled == nil {
		kc.Authentication.Anonymous.Enabled = ptr.To(false)
		set = append(set, defaulted{field: "authentication.anonymous.enabled", why: "kubeadm disables anonymous access"})
	} else if *kc.Authentication.Anonymous.Enabled {
		warn = append(warn, recommended{field: "authentication.anonymous.enabled", want: "false", have: "true"})
	}
	if kc.Authorization.Mode == "" {
		kc.Authorization.Mode = v1beta1.KubeletAuthorizationModeWebhook
		set = append(set, defaulted{field: "authorization.mode", why: "kubeadm authorizes through the API server"})
	} else if kc.Authorization.Mode != v1beta1.KubeletAuthorizationModeWebhook {
		warn = append(warn, recommended{field: "authorization.mode", want: "Webhook", have: string(kc.Authorization.Mode)})
	}
	if kc.Authentication.Webhook.Enabled == nil {
		kc.Authentication.Webhook.Enabled = ptr.To(true)
		set = append(set, defaulted{field: "authentication.webhook.enabled", why: "kubeadm enables token authentication"})
	} else if !*kc.Authentication.Webhook.Enabled {
		warn = append(warn, recommended{field: "authentication.webhook.enabled", want: "true", have: "false"})
	}
	if kc.HealthzBindAddress == "" {
		kc.HealthzBindAddress = "127.0.0.1"
		set = append(set, defaulted{field: "healthzBindAddress", why: "kubeadm's health checks use 127.0.0.1:10248"})
	} else if kc.HealthzBindAddress != "127.0.0.1" {
		warn = append(warn, recommended{field: "healthzBindAddress", want: "127.0.0.1", have: kc.HealthzBindAddress})
	}
	if kc.HealthzPort == nil {
		kc.HealthzPort = ptr.To[int32](10248)
		set = append(set, defaulted{field: "healthzPort", why: "kubeadm's health checks use 127.0.0.1:10248"})
	} else if *kc.HealthzPort != 10248 {
		warn = append(warn, recommended{field: "healthzPort", want: "10248", have: fmt.Sprint(*kc.HealthzPort)})
	}
	if kc.ReadOnlyPort != 0 {
		warn = append(warn, recommended{field: "readOnlyPort", want: "0", have: fmt.Sprint(kc.ReadOnlyPort)})
	}
	kc.RotateCertificates = true
	set = append(set, defaulted{field: "rotateCertificates", why: "kubeadm forces it (the field is not a pointer, so kubeadm cannot tell false from unset)"})
	if kc.CgroupDriver == "" {
		kc.CgroupDriver = "systemd"
		set = append(set, defaulted{field: "cgroupDriver", why: "kubeadm sets systemd when the ConfigMap leaves it empty"})
	}
	return set, warn
}

// mutateResolvConf is the systemd-resolved step (componentconfigs Default in
// 1.28–1.30, Mutate from 1.31): when the service is active, an unset
// resolvConf becomes systemd-resolved's file; a set one is kept with a
// warning.
func mutateResolvConf(kc *v1beta1.KubeletConfiguration, active bool) (set bool, warn *recommended) {
	if !active {
		return false, nil
	}
	if kc.ResolverConfig == nil {
		kc.ResolverConfig = ptr.To(SystemdResolvConf)
		return true, nil
	}
	if *kc.ResolverConfig != SystemdResolvConf {
		return false, &recommended{field: "resolvConf", want: SystemdResolvConf, have: *kc.ResolverConfig}
	}
	return false, nil
}
