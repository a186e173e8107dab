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
	"testing"
)

// The archive is an OCI image layout: index → manifest → config and one
// gzip layer with the binary at /kubeletcfg, every blob under its digest,
// the name where containerd's import looks; the same inputs give the same
// bytes.
func TestPackIsAnOCILayout(t *testing.T) {
	img := Image{Name: "registry.example/kubeletcfg:v1", Binary: []byte("\x7fELF static"), Path: "kubeletcfg", Labels: map[string]string{"org.opencontainers.image.version": "v1"}}
	var a, b bytes.Buffer
	d1, err := Pack(&a, img)
	if err != nil {
		t.Fatal(err)
	}
	if d2, _ := Pack(&b, img); d1 != d2 || !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Errorf("two packs differ: %s %s", d1, d2)
	}
	files := map[string][]byte{}
	tr := tar.NewReader(&a)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		files[h.Name] = data
	}
	for name, data := range files {
		if strings.HasPrefix(name, "blobs/sha256/") && !strings.HasSuffix(name, "/") {
			if got := fmt.Sprintf("%x", sha256.Sum256(data)); "blobs/sha256/"+got != name {
				t.Errorf("%s holds %s", name, got)
			}
		}
	}
	var index struct {
		Manifests []struct {
			Digest      string            `json:"digest"`
			Annotations map[string]string `json:"annotations"`
		} `json:"manifests"`
	}
	mustJSON(t, files["index.json"], &index)
	if len(index.Manifests) != 1 || index.Manifests[0].Annotations["io.containerd.image.name"] != img.Name || index.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != "v1" {
		t.Fatalf("index %+v", index)
	}
	if index.Manifests[0].Digest != d1 {
		t.Errorf("Pack says %s, the index %s", d1, index.Manifests[0].Digest)
	}
	var manifest struct {
		Config struct{ Digest string } `json:"config"`
		Layers []struct{ Digest, MediaType string }
	}
	mustJSON(t, files[blobName(d1)], &manifest)
	var config struct {
		Config struct {
			Entrypoint []string
			Labels     map[string]string
		} `json:"config"`
		RootFS struct {
			DiffIDs []string `json:"diff_ids"`
		} `json:"rootfs"`
	}
	mustJSON(t, files[blobName(manifest.Config.Digest)], &config)
	if strings.Join(config.Config.Entrypoint, " ") != "/kubeletcfg" || config.Config.Labels["org.opencontainers.image.version"] != "v1" {
		t.Errorf("config %+v", config)
	}
	zr, err := gzip.NewReader(bytes.NewReader(files[blobName(manifest.Layers[0].Digest)]))
	if err != nil {
		t.Fatal(err)
	}
	layer, _ := io.ReadAll(zr)
	if got := fmt.Sprintf("sha256:%x", sha256.Sum256(layer)); len(config.RootFS.DiffIDs) != 1 || config.RootFS.DiffIDs[0] != got {
		t.Errorf("diff_ids %v, layer %s", config.RootFS.DiffIDs, got)
	}
	lr := tar.NewReader(bytes.NewReader(layer))
	found := false
	for {
		h, err := lr.Next()
		if err != nil {
			break
		}
		if h.Name == "kubeletcfg" {
			data, _ := io.ReadAll(lr)
			found = bytes.Equal(data, img.Binary) && h.Mode == 0o755
		}
	}
	if !found {
		t.Error("the layer has no /kubeletcfg 0755 with the binary")
	}
	for _, bad := range []Image{{Name: "noTag", Path: "x"}, {Name: "a:b", Path: "x/y"}} {
		if _, err := Pack(io.Discard, bad); err == nil {
			t.Errorf("%+v packed", bad)
		}
	}
}

func blobName(digest string) string { return "blobs/sha256/" + strings.TrimPrefix(digest, "sha256:") }

func mustJSON(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
}
