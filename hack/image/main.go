// Command image packs the static kubeletcfg binary as an OCI image archive
// (make image): no registry, no container engine. Import it with
// `ctr -n k8s.io images import FILE`; publish it with
// `skopeo copy oci-archive:FILE docker://REGISTRY/kubeletcfg:TAG`.
package main

import (
	"debug/elf"
	"flag"
	"fmt"
	"os"
	"runtime"

	"github.com/kubeletcfg/kubeletcfg/internal/ociimage"
)

func main() {
	bin := flag.String("bin", "bin/kubeletcfg-static", "the static kubeletcfg binary (CGO_ENABLED=0)")
	name := flag.String("name", "ghcr.io/kubeletcfg/kubeletcfg:dev", "the image's reference")
	out := flag.String("o", "bin/kubeletcfg-image.tar", "the OCI archive to write")
	version := flag.String("version", "dev", "the version the image's labels say")
	flag.Parse()
	if err := run(*bin, *name, *out, *version); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func run(bin, name, out, version string) error {
	data, err := os.ReadFile(bin)
	if err != nil {
		return err
	}
	// The image has nothing but the binary: it must need no loader.
	if f, err := elf.Open(bin); err == nil {
		interp := f.Section(".interp")
		f.Close()
		if interp != nil {
			return fmt.Errorf("%s is dynamically linked: build it with CGO_ENABLED=0", bin)
		}
	}
	w, err := os.Create(out + ".tmp")
	if err != nil {
		return err
	}
	digest, err := ociimage.Pack(w, ociimage.Image{Name: name, Binary: data, Path: "kubeletcfg", Arch: runtime.GOARCH,
		Labels: map[string]string{
			"org.opencontainers.image.title":   "kubeletcfg",
			"org.opencontainers.image.version": version,
			"org.opencontainers.image.source":  "https://github.com/kubeletcfg/kubeletcfg",
		}})
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(out + ".tmp")
		return err
	}
	if err := os.Rename(out+".tmp", out); err != nil {
		return err
	}
	fmt.Printf("%s: %s (manifest %s)\n", out, name, digest)
	return nil
}
