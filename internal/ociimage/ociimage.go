// Package ociimage packs a static binary as a one-layer OCI image archive
// (the image layout of the OCI image spec, in a tar): what `make image`
// writes for kubeletcfg, importable with `ctr -n k8s.io images import`,
// `podman load` or `skopeo copy oci-archive:FILE docker://REGISTRY/NAME`,
// without a registry or a container engine. The same inputs give the same
// bytes (fixed times, sorted entries): its digest is reproducible.
package ociimage

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// Media types of the OCI image spec.
const (
	mediaIndex    = "application/vnd.oci.image.index.v1+json"
	mediaManifest = "application/vnd.oci.image.manifest.v1+json"
	mediaConfig   = "application/vnd.oci.image.config.v1+json"
	mediaLayer    = "application/vnd.oci.image.layer.v1.tar+gzip"
)

// Image is what to pack.
type Image struct {
	// Name is the image's full reference (registry/repository:tag), the
	// name containerd gives it on import.
	Name string
	// Binary is the program, at /Path in the image (its entrypoint).
	Binary []byte
	Path   string
	// Labels are the config's labels (org.opencontainers.image.*).
	Labels map[string]string
	// Arch is GOARCH ("amd64").
	Arch string
	// Created is the time the config says (zero: the epoch), for
	// reproducible digests.
	Created time.Time
}

type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Platform    *platform         `json:"platform,omitempty"`
}

type platform struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
}

// Pack writes the image as an OCI layout tar to w and returns the
// manifest's digest.
func Pack(w io.Writer, img Image) (string, error) {
	if img.Name == "" || !strings.Contains(img.Name, ":") {
		return "", fmt.Errorf("image name %q: give registry/repository:tag", img.Name)
	}
	if img.Path == "" || strings.Contains(img.Path, "/") {
		return "", fmt.Errorf("image path %q: a file name at the image's root", img.Path)
	}
	if img.Arch == "" {
		img.Arch = "amd64"
	}
	layerTar, err := layer(img)
	if err != nil {
		return "", err
	}
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	zw.ModTime = time.Unix(0, 0)
	if _, err := zw.Write(layerTar); err != nil {
		return "", err
	}
	if err := zw.Close(); err != nil {
		return "", err
	}
	created := img.Created.UTC()
	if img.Created.IsZero() {
		created = time.Unix(0, 0).UTC()
	}
	config, err := json.Marshal(map[string]any{
		"created":      created.Format(time.RFC3339),
		"architecture": img.Arch,
		"os":           "linux",
		"config": map[string]any{
			"Entrypoint": []string{"/" + img.Path},
			"Env":        []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
			"WorkingDir": "/",
			"Labels":     img.Labels,
		},
		"rootfs":  map[string]any{"type": "layers", "diff_ids": []string{digest(layerTar)}},
		"history": []map[string]any{{"created": created.Format(time.RFC3339), "created_by": "kubeletcfg hack/image: the static binary"}},
	})
	if err != nil {
		return "", err
	}
	manifest, err := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     mediaManifest,
		"config":        descriptor{MediaType: mediaConfig, Digest: digest(config), Size: int64(len(config))},
		"layers":        []descriptor{{MediaType: mediaLayer, Digest: digest(gz.Bytes()), Size: int64(gz.Len())}},
		"annotations":   map[string]string{"org.opencontainers.image.created": created.Format(time.RFC3339)},
	})
	if err != nil {
		return "", err
	}
	tag := img.Name[strings.LastIndexByte(img.Name, ':')+1:]
	index, err := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     mediaIndex,
		"manifests": []descriptor{{MediaType: mediaManifest, Digest: digest(manifest), Size: int64(len(manifest)),
			Platform: &platform{Architecture: img.Arch, OS: "linux"},
			Annotations: map[string]string{
				// containerd names the image by the first, the OCI spec by
				// the second (the tag).
				"io.containerd.image.name":          img.Name,
				"org.opencontainers.image.ref.name": tag,
			}}},
	})
	if err != nil {
		return "", err
	}
	tw := tar.NewWriter(w)
	files := []struct {
		name string
		data []byte
	}{
		{"oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)},
		{"index.json", index},
		{blob(config), config},
		{blob(gz.Bytes()), gz.Bytes()},
		{blob(manifest), manifest},
	}
	if err := writeDir(tw, "blobs/"); err != nil {
		return "", err
	}
	if err := writeDir(tw, "blobs/sha256/"); err != nil {
		return "", err
	}
	for _, f := range files {
		if err := writeFile(tw, f.name, 0o644, f.data); err != nil {
			return "", err
		}
	}
	return digest(manifest), tw.Close()
}

// layer is the image's one layer: the binary and an empty /tmp.
func layer(img Image) ([]byte, error) {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	if err := tw.WriteHeader(&tar.Header{Name: "tmp/", Mode: 0o1777, Typeflag: tar.TypeDir, ModTime: time.Unix(0, 0), Format: tar.FormatPAX}); err != nil {
		return nil, err
	}
	if err := writeFile(tw, img.Path, 0o755, img.Binary); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func writeDir(tw *tar.Writer, name string) error {
	return tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Typeflag: tar.TypeDir, ModTime: time.Unix(0, 0), Format: tar.FormatPAX})
}

func writeFile(tw *tar.Writer, name string, mode int64, data []byte) error {
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: mode, Size: int64(len(data)), Typeflag: tar.TypeReg, ModTime: time.Unix(0, 0), Format: tar.FormatPAX}); err != nil {
		return err
	}
	_, err := tw.Write(data)
	return err
}

func digest(b []byte) string { return fmt.Sprintf("sha256:%x", sha256.Sum256(b)) }

func blob(b []byte) string { return fmt.Sprintf("blobs/sha256/%x", sha256.Sum256(b)) }
