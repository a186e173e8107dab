package kubeadm

import (
	"strconv"
	"syscall"

	"github.com/kubeletcfg/kubeletcfg/schema"
)

func syscallMkfifo(p string) error { return syscall.Mkfifo(p, 0o644) }

func itoa(i int) string { return strconv.Itoa(i) }

func schemaVersion(m string) (*schema.Version, error) { return schema.Resolve(m) }
