// Package nodefile reads the files kubeletcfg does not control — configs,
// units, environment files, an image's package database — with a size limit
// per kind of file enforced while reading, and only if they are regular
// files: a device, FIFO or socket is refused before it is opened.
package nodefile

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// Kind is a kind of file and the most kubeletcfg reads of one.
type Kind struct {
	What  string // "kubelet configuration file"
	Limit int64  // bytes
}

// MaxConfigSize is the limit of a KubeletConfiguration file (a constant for
// those who check data already read).
const MaxConfigSize = 4 << 20

// The kinds of file kubeletcfg reads. Real files are far smaller: the limits
// bound what a hostile file costs, not what a kubelet accepts.
var (
	Config     = Kind{"kubelet configuration file", MaxConfigSize}
	Unit       = Kind{"systemd unit file", 4 << 20}
	EnvFile    = Kind{"environment file", 4 << 20}
	DpkgStatus = Kind{"dpkg status database", 64 << 20}
	Hostname   = Kind{"hostname file", 64 << 10}
	PEM        = Kind{"certificate file", 1 << 20}
	Kubeconfig = Kind{"kubeconfig", 4 << 20}
)

// LimitError is a file larger than kubeletcfg reads of its kind (in an
// *fs.PathError naming the file). It is kubeletcfg's refusal, not the kubelet's.
type LimitError struct {
	Kind Kind
	Size int64 // the file's size, 0 when it is not known (it grew)
}

func (e *LimitError) Error() string {
	is := "larger than " + size(e.Kind.Limit)
	if e.Size > 0 {
		is = size(e.Size)
	}
	return fmt.Sprintf("the file is %s; kubeletcfg reads at most %s of a %s (kubeletcfg's limit, not the kubelet's)",
		is, size(e.Kind.Limit), e.Kind.What)
}

// NotRegularError is a path that names something other than a regular file
// (in an *fs.PathError naming it).
type NotRegularError struct {
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	what := "not a regular file"
	switch t := e.Mode.Type(); {
	case t&fs.ModeNamedPipe != 0:
		what = "a FIFO, not a regular file (reading it would block until something writes to it)"
	case t&fs.ModeCharDevice != 0:
		what = "a character device, not a regular file"
	case t&fs.ModeDevice != 0:
		what = "a block device, not a regular file"
	case t&fs.ModeSocket != 0:
		what = "a socket, not a regular file"
	case t&fs.ModeDir != 0:
		what = "a directory, not a file"
	}
	return what + "; kubeletcfg reads only regular files"
}

// Is lets errors.Is(err, syscall.EISDIR) hold for a directory.
func (e *NotRegularError) Is(target error) bool {
	return target == syscall.EISDIR && e.Mode.IsDir()
}

// refused is how a file kubeletcfg will not read is reported.
func refused(path string, err error) error {
	return &fs.PathError{Op: "read", Path: path, Err: err}
}

// size says a byte count the way people read it.
func size(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// ReadFile reads the file at a host path, as Open does.
func ReadFile(path string, k Kind) ([]byte, error) {
	f, err := Open(path, k)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// Check reads the file at a host path as ReadFile does, for one that another
// library will read: it refuses what ReadFile refuses, before that library
// blocks on a FIFO or reads without end.
func Check(path string, k Kind) error {
	f, err := Open(path, k)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(io.Discard, f)
	return err
}

// Open opens the regular file at a host path for reading. Reading past the
// kind's limit fails with a *LimitError.
func Open(path string, k Kind) (io.ReadCloser, error) {
	return open(path, k, os.Stat, func(flag int) (*os.File, error) { return os.OpenFile(path, flag, 0) })
}

// openIn is Open for a name relative to an os.Root; path names it in errors.
func openIn(r *os.Root, name, path string, k Kind) (io.ReadCloser, error) {
	return open(path, k,
		func(string) (fs.FileInfo, error) { return r.Stat(name) },
		func(flag int) (*os.File, error) { return r.OpenFile(name, flag, 0) })
}

func open(path string, k Kind, stat func(string) (fs.FileInfo, error), openFile func(int) (*os.File, error)) (io.ReadCloser, error) {
	// Stat first: a FIFO is not even opened. Then open without blocking and
	// check again, in case the path changed in between.
	fi, err := stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, refused(path, &NotRegularError{Mode: fi.Mode()})
	}
	f, err := openFile(os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_NOCTTY)
	if err != nil {
		return nil, err
	}
	if fi, err = f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = refused(path, &NotRegularError{Mode: fi.Mode()})
		}
		return nil, err
	}
	return &limited{f: f, r: io.LimitReader(f, k.Limit+1), path: path, kind: k, size: fi.Size()}, nil
}

// limited reads at most its kind's limit and fails beyond it.
type limited struct {
	f    io.Closer
	r    io.Reader
	n    int64
	path string
	kind Kind
	size int64
}

func (l *limited) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	l.n += int64(n)
	if l.n > l.kind.Limit {
		e := &LimitError{Kind: l.kind}
		if l.size > l.kind.Limit {
			e.Size = l.size
		}
		return 0, refused(l.path, e)
	}
	return n, err
}

func (l *limited) Close() error { return l.f.Close() }
