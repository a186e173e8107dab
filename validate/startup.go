package validate

import (
	"crypto/tls"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/cpuset"

	"github.com/kubeletcfg/kubeletcfg/schema"
)

// Startup returns the problems a configuration that passed Config still runs
// into while kubelet v starts (cmd/kubelet/app run(), InitializeTLS,
// NewMainKubelet): settings only parsed there, which make the kubelet exit
// within a second on any host. The kubelet stops at the first of them; this
// reports every one.
func Startup(cfg *v1beta1.KubeletConfiguration, v *schema.Version) []Error {
	s := &startup{cfg: cfg, v: v}
	s.tls()
	s.reserved()
	s.eviction()
	s.qosReserved()
	s.topologyManagerPolicyOptions()
	s.kubeletSettings()
	return s.errs
}

type startup struct {
	cfg  *v1beta1.KubeletConfiguration
	v    *schema.Version
	errs []Error
}

func (s *startup) add(fieldPath, format string, args ...any) {
	s.errs = append(s.errs, Error{Field: fieldPath, Message: fmt.Sprintf(format, args...)})
}

// tls is what InitializeTLS parses with component-base's cli/flag helpers.
func (s *startup) tls() {
	ciphers := cipherSuiteNames()
	for i, name := range s.cfg.TLSCipherSuites {
		if !ciphers[name] {
			s.add(fmt.Sprintf("tlsCipherSuites[%d]", i), "Cipher suite %s not supported or doesn't exist", name)
		}
	}
	switch s.cfg.TLSMinVersion {
	case "", "VersionTLS10", "VersionTLS11", "VersionTLS12", "VersionTLS13":
	default:
		s.add("tlsMinVersion", "unknown tls version %q", s.cfg.TLSMinVersion)
	}
	if !has(s.v, tlsCurvePreferences) {
		return
	}
	seen := map[int32]bool{}
	for i, id := range s.cfg.TLSCurvePreferences {
		fieldPath := fmt.Sprintf("tlsCurvePreferences[%d]", i)
		switch {
		case id <= 0 || id > math.MaxUint16:
			s.add(fieldPath, "curve preference %d is out of range (must be 1-%d)", id, math.MaxUint16)
		case seen[id]:
			s.add(fieldPath, "duplicate curve preference %d", id)
		case strings.HasPrefix(tls.CurveID(id).String(), "CurveID("):
			s.add(fieldPath, "curve preference %d is not supported by the current Go version", id)
		}
		seen[id] = true
	}
}

// cipherSuiteNames are the names cli/flag TLSCipherSuites accepts: Go's
// secure and insecure suites plus two legacy spellings.
func cipherSuiteNames() map[string]bool {
	names := map[string]bool{
		"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305":   true,
		"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305": true,
	}
	for _, suite := range append(tls.CipherSuites(), tls.InsecureCipherSuites()...) {
		names[suite.Name] = true
	}
	return names
}

// reserved is run()'s parseResourceList of kubeReserved and systemReserved.
// With reservedSystemCPUs set, the kubelet drops their "cpu" entries first.
func (s *startup) reserved() {
	dropCPU := false
	if cpus := s.cfg.ReservedSystemCPUs; cpus != "" {
		set, err := cpuset.Parse(cpus)
		dropCPU = err == nil && set.Size() > 0
	}
	for _, r := range []struct {
		field, flag string
		values      map[string]string
	}{
		{"kubeReserved", "--kube-reserved", s.cfg.KubeReserved},
		{"systemReserved", "--system-reserved", s.cfg.SystemReserved},
	} {
		for _, name := range slices.Sorted(maps.Keys(r.values)) {
			if dropCPU && name == "cpu" {
				continue
			}
			if err := reservedQuantityError(name, r.values[name]); err != nil {
				s.add(r.field+"."+name, "%s value failed to parse: %v", r.flag, err)
			}
		}
	}
}

func reservedQuantityError(name, value string) error {
	switch name {
	case "cpu", "memory", "ephemeral-storage", "pid":
	default:
		return fmt.Errorf("cannot reserve %q resource", name)
	}
	q, err := resource.ParseQuantity(value)
	if err != nil {
		return fmt.Errorf("failed to parse quantity %q for %q resource: %w", value, name, err)
	}
	if q.Sign() == -1 {
		return fmt.Errorf("resource quantity for %q cannot be negative: %v", name, value)
	}
	return nil
}

// evictionSignals are the signals pkg/kubelet/eviction knows.
func evictionSignals(v *schema.Version) map[string]bool {
	signals := map[string]bool{
		"memory.available": true, "allocatableMemory.available": true,
		"nodefs.available": true, "nodefs.inodesFree": true,
		"imagefs.available": true, "imagefs.inodesFree": true,
		"pid.available": true,
	}
	if has(v, containerfsSignals) {
		signals["containerfs.available"] = true
		signals["containerfs.inodesFree"] = true
	}
	return signals
}

// eviction is eviction.ParseThresholdConfig over the four eviction maps.
func (s *startup) eviction() {
	signals := evictionSignals(s.v)
	unsupported := func(fieldPath, signal string) bool {
		if !signals[signal] {
			s.add(fieldPath, "unsupported eviction signal %v", signal)
			return true
		}
		return false
	}
	for _, m := range []struct {
		field  string
		values map[string]string
	}{{"evictionHard", s.cfg.EvictionHard}, {"evictionSoft", s.cfg.EvictionSoft}} {
		for _, signal := range slices.Sorted(maps.Keys(m.values)) {
			fieldPath := m.field + "." + signal
			if unsupported(fieldPath, signal) {
				continue
			}
			if err := thresholdError(signal, m.values[signal]); err != nil {
				s.add(fieldPath, "%v", err)
				continue
			}
			if m.field == "evictionSoft" && !thresholdIgnored(m.values[signal]) {
				if _, ok := s.cfg.EvictionSoftGracePeriod[signal]; !ok {
					s.add(fieldPath, "grace period must be specified for the soft eviction threshold %v", signal)
				}
			}
		}
	}
	for _, signal := range slices.Sorted(maps.Keys(s.cfg.EvictionSoftGracePeriod)) {
		fieldPath := "evictionSoftGracePeriod." + signal
		if unsupported(fieldPath, signal) {
			continue
		}
		value := s.cfg.EvictionSoftGracePeriod[signal]
		period, err := time.ParseDuration(value)
		switch {
		case err != nil:
			s.add(fieldPath, "%v", err)
		case period < 0:
			s.add(fieldPath, "invalid eviction grace period specified: %v, must be a positive value", value)
		}
	}
	for _, signal := range slices.Sorted(maps.Keys(s.cfg.EvictionMinimumReclaim)) {
		fieldPath := "evictionMinimumReclaim." + signal
		if unsupported(fieldPath, signal) {
			continue
		}
		if err := minimumReclaimError(signal, s.cfg.EvictionMinimumReclaim[signal]); err != nil {
			s.add(fieldPath, "%v", err)
		}
	}
}

// thresholdIgnored: the kubelet drops thresholds of 0% and 100%.
func thresholdIgnored(value string) bool { return value == "0%" || value == "100%" }

func thresholdError(signal, value string) error {
	if strings.HasSuffix(value, "%") {
		if thresholdIgnored(value) {
			return nil
		}
		p, err := evictionPercentage(value)
		switch {
		case err != nil:
			return err
		case p < 0:
			return fmt.Errorf("eviction percentage threshold %v must be >= 0%%: %s", signal, value)
		case p > 1:
			return fmt.Errorf("eviction percentage threshold %v must be <= 100%%: %s", signal, value)
		}
		return nil
	}
	q, err := resource.ParseQuantity(value)
	if err != nil {
		return err
	}
	if q.Sign() < 0 || q.IsZero() {
		return fmt.Errorf("eviction threshold %v must be positive: %s", signal, &q)
	}
	return nil
}

func minimumReclaimError(signal, value string) error {
	if strings.HasSuffix(value, "%") {
		p, err := evictionPercentage(value)
		switch {
		case err != nil:
			return err
		case p <= 0:
			return fmt.Errorf("eviction percentage minimum reclaim %v must be positive: %s", signal, value)
		}
		return nil
	}
	q, err := resource.ParseQuantity(value)
	if err != nil {
		return err
	}
	if q.Sign() < 0 {
		return fmt.Errorf("negative eviction minimum reclaim specified for %v", signal)
	}
	return nil
}

// evictionPercentage parses "12.5%" as 0.125, in float32 as the kubelet does.
func evictionPercentage(value string) (float32, error) {
	f, err := strconv.ParseFloat(strings.TrimRight(value, "%"), 32)
	if err != nil {
		return 0, err
	}
	return float32(f) / 100, nil
}

// qosReserved is cm.ParseQOSReserved: memory only, as a whole percentage.
func (s *startup) qosReserved() {
	for _, name := range slices.Sorted(maps.Keys(s.cfg.QOSReserved)) {
		value := s.cfg.QOSReserved[name]
		var err error
		if name != "memory" {
			err = fmt.Errorf("cannot reserve %q resource", name)
		} else if perr := qosPercentageError(value); perr != nil {
			err = fmt.Errorf("failed to parse percentage %q for %q resource: %w", value, name, perr)
		}
		if err != nil {
			s.add("qosReserved."+name, "--qos-reserved value failed to parse: %v", err)
		}
	}
}

func qosPercentageError(value string) error {
	if !strings.HasSuffix(value, "%") {
		return fmt.Errorf("percentage expected, got '%s'", value)
	}
	p, err := strconv.ParseInt(strings.TrimRight(value, "%"), 10, 0)
	if err != nil {
		return fmt.Errorf("invalid number in percentage '%s'", value)
	}
	if p < 0 || p > 100 {
		return fmt.Errorf("percentage must be between 0 and 100")
	}
	return nil
}

// topologyManagerPolicyOptions need their feature gate (run()).
func (s *startup) topologyManagerPolicyOptions() {
	const gate = "TopologyManagerPolicyOptions"
	opts := s.cfg.TopologyManagerPolicyOptions
	if opts == nil {
		return
	}
	g, errs := newGates(s.v, s.cfg.FeatureGates)
	if len(errs) > 0 || g.enabled(gate) {
		return
	}
	s.add("topologyManagerPolicyOptions", "topology manager policy options %v require feature gates %q enabled", opts, gate)
}

// kubeletSettings are the checks of NewMainKubelet and the container log
// manager it creates.
func (s *startup) kubeletSettings() {
	if d := s.cfg.SyncFrequency.Duration; d <= 0 {
		s.add("syncFrequency", "invalid sync frequency %d (%v: it must be positive)", d, d)
	}
	switch s.cfg.ConfigMapAndSecretChangeDetectionStrategy {
	case v1beta1.WatchChangeDetectionStrategy, v1beta1.TTLCacheChangeDetectionStrategy, v1beta1.GetChangeDetectionStrategy:
	default:
		s.add("configMapAndSecretChangeDetectionStrategy", "unknown configmap and secret manager mode: %v", s.cfg.ConfigMapAndSecretChangeDetectionStrategy)
	}
	if files := i32(s.cfg.ContainerLogMaxFiles); files <= 1 && !has(s.v, containerLogMaxFilesOne) {
		s.add("containerLogMaxFiles", "invalid MaxFiles %d, must be > 1", files)
	}
	if size := s.cfg.ContainerLogMaxSize; size != "" {
		q, err := resource.ParseQuantity(size)
		if err == nil {
			if _, ok := q.AsInt64(); !ok {
				err = fmt.Errorf("invalid max log size")
			}
		}
		if err != nil {
			s.add("containerLogMaxSize", "failed to parse container log max size %q: %v", size, err)
		}
	}
}
