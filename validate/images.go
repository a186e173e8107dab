package validate

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// The imagePullCredentialsVerificationPolicy values.
const (
	neverVerify                  = "NeverVerify"
	neverVerifyPreloadedImages   = "NeverVerifyPreloadedImages"
	neverVerifyAllowlistedImages = "NeverVerifyAllowlistedImages"
	alwaysVerify                 = "AlwaysVerify"
)

// checkImagePullCredentials (1.33+): the policy and its allowlist need the
// KubeletEnsureSecretPulledImages gate; the allowlist only goes with
// NeverVerifyAllowlistedImages and holds image names or "registry/path/*".
func checkImagePullCredentials(c *checker) {
	policy := string(c.cfg.ImagePullCredentialsVerificationPolicy)
	allowlist := c.cfg.PreloadedImagesVerificationAllowlist
	if !c.enabled(gateEnsureSecretPulledImages) {
		if policy != "" {
			c.invalid("imagePullCredentialsVerificationPolicy", "`imagePullCredentialsVerificationPolicy` must not be set if KubeletEnsureSecretPulledImages feature gate is not enabled")
		}
		if len(allowlist) > 0 {
			c.invalid("preloadedImagesVerificationAllowlist", "`preloadedImagesVerificationAllowlist` must not be set if KubeletEnsureSecretPulledImages feature gate is not enabled")
		}
		return
	}
	switch policy {
	case neverVerify, neverVerifyPreloadedImages, neverVerifyAllowlistedImages, alwaysVerify:
	default:
		c.invalid("imagePullCredentialsVerificationPolicy", "option %q specified for imagePullCredentialsVerificationPolicy. Valid options are %q, %q, %q or %q",
			policy, neverVerify, neverVerifyPreloadedImages, neverVerifyAllowlistedImages, alwaysVerify)
	}
	if len(allowlist) > 0 && policy != neverVerifyAllowlistedImages {
		c.invalid("preloadedImagesVerificationAllowlist", "can't set `preloadedImagesVerificationAllowlist` if `imagePullCredentialsVertificationPolicy` is not \"NeverVerifyAllowlistedImages\"")
		return
	}
	for i, pattern := range allowlist {
		if err := allowlistPatternError(c, pattern); err != nil {
			c.invalid(fmt.Sprintf("preloadedImagesVerificationAllowlist[%d]", i), "invalid image pattern in `preloadedImagesVerificationAllowlist`: %v", err)
			return // the kubelet stops at the first bad pattern
		}
	}
}

// allowlistPatternError checks one allowlist entry: an image name without tag
// or digest, or a prefix ending in "/*".
func allowlistPatternError(c *checker, pattern string) error {
	if pattern != strings.TrimSpace(pattern) {
		return fmt.Errorf("leading/trailing spaces are not allowed: %s", pattern)
	}
	trimmed, wildcard := pattern, strings.HasSuffix(pattern, "/*")
	if wildcard {
		trimmed = strings.TrimSuffix(trimmed, "*")
	}
	if trimmed == "" {
		return fmt.Errorf("the supplied pattern is too short: %s", pattern)
	}
	if strings.ContainsRune(trimmed, '*') {
		return fmt.Errorf("not a valid wildcard pattern, only patterns ending with '/*' are allowed: %s", pattern)
	}
	if wildcard {
		if len(trimmed) == 1 {
			return fmt.Errorf("at least registry hostname is required")
		}
		return nil
	}
	name, err := imageNameOf(c, trimmed)
	if err != nil {
		return fmt.Errorf("failed to parse as an image name: %w", err)
	}
	if trimmed != name {
		return fmt.Errorf("neither tag nor digest is accepted in an image reference: %s", pattern)
	}
	return nil
}

// imageNameOf strips tag and digest from an image reference. Up to 1.35 the
// kubelet normalizes the name on the way ("nginx" becomes
// "docker.io/library/nginx"); from 1.36 on it keeps it as written.
func imageNameOf(c *checker, image string) (string, error) {
	if has(c.v, imageNameAsWritten) {
		ref, err := parseImageRef(image)
		if err != nil {
			return "", err
		}
		return ref.name(), nil
	}
	ref, err := parseNormalizedImageRef(image)
	if err != nil {
		return "", err
	}
	return ref.name(), nil
}

// The image reference grammar of github.com/distribution/reference:
//
//	reference  := name [ ":" tag ] [ "@" digest ]
//	name       := [domain '/'] remote-name
//	domain     := host [':' port-number]
//	remote-name:= path-component ['/' path-component]*
var (
	refPathComponent = `[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*`
	refDomainPart    = `(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])`
	refHost          = `(?:` + refDomainPart + `(?:\.` + refDomainPart + `)*|\[(?:[a-fA-F0-9:]+)\])`
	refDomain        = refHost + `(?::[0-9]+)?`
	refRemoteName    = refPathComponent + `(?:/` + refPathComponent + `)*`
	refTag           = `[\w][\w.-]{0,127}`
	refDigest        = `[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][[:xdigit:]]{32,}`

	// Compiled on first use: most configurations have no allowlist, and
	// every command's start-up would pay for them.
	referenceRe  = lazyRegexp(`^((?:` + refDomain + `/)?` + refRemoteName + `)(?::(` + refTag + `))?(?:@(` + refDigest + `))?$`)
	refNameRe    = lazyRegexp(`^(?:(` + refDomain + `)/)?(` + refRemoteName + `)$`)
	hexIDRe      = lazyRegexp(`^[a-f0-9]{64}$`)
	digestLikeRe = lazyRegexp(`^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-zA-Z0-9=_-]+$`)
)

func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

const refNameMaxLength = 255

// imageRef is a parsed image reference.
type imageRef struct {
	domain, path, tag, digest string
}

func (r imageRef) name() string {
	if r.domain == "" {
		return r.path
	}
	return r.domain + "/" + r.path
}

// parseImageRef parses a reference as written, with the errors of
// distribution/reference's Parse.
func parseImageRef(s string) (imageRef, error) {
	m := referenceRe().FindStringSubmatch(s)
	if m == nil {
		switch {
		case s == "":
			return imageRef{}, errors.New("repository name must have at least one component")
		case referenceRe().MatchString(strings.ToLower(s)):
			return imageRef{}, errors.New("repository name must be lowercase")
		}
		return imageRef{}, errors.New("invalid reference format")
	}
	ref := imageRef{path: m[1], tag: m[2], digest: m[3]}
	if n := refNameRe().FindStringSubmatch(m[1]); n != nil {
		ref.domain, ref.path = n[1], n[2]
	}
	if len(ref.path) > refNameMaxLength {
		return imageRef{}, fmt.Errorf("repository name must not be more than %d characters", refNameMaxLength)
	}
	if ref.digest != "" {
		if err := digestError(ref.digest); err != nil {
			return imageRef{}, err
		}
	}
	return ref, nil
}

// digestError is go-digest's Digest.Validate for the algorithms the kubelet
// links (sha256, sha384, sha512).
func digestError(d string) error {
	errFormat := errors.New("invalid checksum digest format")
	i := strings.Index(d, ":")
	if i <= 0 || i+1 == len(d) {
		return errFormat
	}
	sizes := map[string]int{"sha256": 32, "sha384": 48, "sha512": 64}
	algorithm, encoded := d[:i], d[i+1:]
	size, ok := sizes[algorithm]
	if !ok {
		if !digestLikeRe().MatchString(d) {
			return errFormat
		}
		return errors.New("unsupported digest algorithm")
	}
	if len(encoded) != 2*size {
		return errors.New("invalid checksum digest length")
	}
	if strings.Trim(encoded, "0123456789abcdef") != "" {
		return errFormat
	}
	return nil
}

// parseNormalizedImageRef is distribution/reference's ParseNormalizedNamed:
// Docker Hub names get their "docker.io/" and "library/" prefixes.
func parseNormalizedImageRef(s string) (imageRef, error) {
	if hexIDRe().MatchString(s) {
		return imageRef{}, fmt.Errorf("invalid repository name (%s), cannot specify 64-byte hexadecimal strings", s)
	}
	domain, remainder := splitDockerDomain(s)
	remote := remainder
	if i := strings.IndexRune(remainder, ':'); i >= 0 {
		remote = remainder[:i]
	}
	if strings.ToLower(remote) != remote {
		return imageRef{}, fmt.Errorf("invalid reference format: repository name (%s) must be lowercase", remote)
	}
	return parseImageRef(domain + "/" + remainder)
}

// splitDockerDomain tells the registry part of a name from the path, the way
// Docker does: the first component is a registry when it is "localhost" or
// contains "." or ":" or an upper-case letter; otherwise the registry is
// docker.io, where single-component names live under "library/".
func splitDockerDomain(name string) (domain, remainder string) {
	first, rest, ok := strings.Cut(name, "/")
	switch {
	case !ok:
		return "docker.io", "library/" + name
	case first == "localhost":
		domain, remainder = first, rest
	case first == "index.docker.io":
		domain, remainder = "docker.io", rest
	case strings.ContainsAny(first, ".:"), strings.ToLower(first) != first:
		domain, remainder = first, rest
	default:
		domain, remainder = "docker.io", name
	}
	if domain == "docker.io" && !strings.ContainsRune(remainder, '/') {
		remainder = "library/" + remainder
	}
	return domain, remainder
}
