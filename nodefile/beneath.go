package nodefile

import (
	"io"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The walk looks at every component of a path with system calls of its own;
// openat2 with RESOLVE_IN_ROOT resolves a whole path in one, by the walk's
// rules: the root's directory stands for "/", an absolute link target starts
// there and ".." stops there. It answers first, on raw descriptors; what it
// does not answer for sure (a kernel or a filter without openat2, no /proc to
// name what was opened, a file that is not a regular one, any error but a
// missing name) the walk answers, so every refusal is the walk's own.

// noBeneath is set once openat2 is found missing or filtered.
var noBeneath atomic.Bool

// beneathOff turns the fast path off (tests of the walk alone).
var beneathOff bool

// inRoot resolves as the walk does.
const inRoot = unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS

// beneath opens node path p from the root with flags, resolved as the walk
// does.
func (n *Root) beneath(p string, flags uint64) (int, error) {
	return n.openat2(p, flags, inRoot)
}

func (n *Root) openat2(p string, flags, resolve uint64) (int, error) {
	if beneathOff || noBeneath.Load() {
		return -1, unix.ENOSYS
	}
	if n.fd < 0 {
		// A root opened while the fast path was off: its directory by its
		// path, as OpenRoot opens it.
		fd, err := unix.Open(n.abs, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, unix.ENOSYS
		}
		n.fd = fd
	}
	how := unix.OpenHow{Flags: flags | unix.O_CLOEXEC, Resolve: resolve}
	for {
		fd, err := unix.Openat2(n.fd, rel(p), &how)
		if err == unix.EINTR {
			continue
		}
		if err == unix.ENOSYS || err == unix.EPERM {
			noBeneath.Store(true)
		}
		return fd, err
	}
}

// resolved is the node path of descriptor fd, as /proc names it on the host.
func (n *Root) resolved(fd int) (string, bool) {
	if n.host == "" {
		h, ok := procPath(n.fd)
		if !ok {
			return "", false
		}
		n.host = h
	}
	host, ok := procPath(fd)
	switch {
	case !ok || strings.HasSuffix(host, " (deleted)"):
		return "", false
	case n.host == "/":
		return host, true
	case strings.HasPrefix(host, n.host+"/"):
		return host[len(n.host):], true
	}
	// The root itself, or a path /proc does not name under it.
	return "", false
}

func procPath(fd int) (string, bool) {
	var buf [4096]byte
	k, err := unix.Readlink("/proc/self/fd/"+strconv.Itoa(fd), buf[:])
	if err != nil || k <= 0 || k >= len(buf) || buf[0] != '/' {
		return "", false
	}
	return string(buf[:k]), true
}

// locate opens node path p with O_PATH and flags and says the node path it
// resolves to. A path through no link, whose ".." never climbs above the
// root, resolves to itself cleaned; any other, /proc names. ok is false
// when the kernel or /proc could not say; err is openat2's, with res the
// path cleaned when a name is missing before any link.
func (n *Root) locate(p string, flags uint64) (fd int, res string, err error, ok bool) {
	fd, err = n.openat2(p, unix.O_PATH|flags, unix.RESOLVE_BENEATH|unix.RESOLVE_NO_SYMLINKS)
	switch err {
	case nil:
		return fd, path.Clean("/" + p), nil, true
	case unix.ENOENT:
		// Missing before any link: missing through the links too, and the
		// path resolves to itself as far as it goes.
		return -1, path.Clean("/" + p), err, true
	}
	if fd, err = n.beneath(p, unix.O_PATH|flags); err != nil {
		return -1, "", err, err != unix.ENOSYS
	}
	if res, ok = n.resolved(fd); !ok {
		unix.Close(fd)
		return -1, "", nil, false
	}
	return fd, res, nil, true
}

// statBeneath is Stat's fast path: the resolved node path and what it
// names, or, for a name missing from a directory that is there, the walk's
// error and path.
func (n *Root) statBeneath(p string) (string, fs.FileInfo, error, bool) {
	fd, res, err, ok := n.locate(p, 0)
	if !ok {
		return "", nil, nil, false
	}
	if err == unix.ENOENT && res != "" {
		// Missing where no link was passed: the walk stops there too.
		return res, nil, &fs.PathError{Op: "stat", Path: p, Err: syscall.ENOENT}, true
	}
	if err == unix.ENOENT {
		// The walk's answer when only the last name is missing: the
		// directory's resolved path and the name.
		dir, name := path.Split(p)
		if name == "" || name == "." || name == ".." || strings.Trim(dir, "/") == "" {
			return "", nil, nil, false
		}
		dfd, dres, err, ok := n.locate(dir, unix.O_DIRECTORY)
		if !ok || err != nil {
			return "", nil, nil, false
		}
		defer unix.Close(dfd)
		// Not there at all: a link whose target is missing resolves
		// to the target's path.
		var st unix.Stat_t
		if dres == "/" || unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != unix.ENOENT {
			return "", nil, nil, false
		}
		return dres + "/" + name, nil, &fs.PathError{Op: "stat", Path: p, Err: syscall.ENOENT}, true
	}
	if err != nil {
		return "", nil, nil, false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if res == "/" || unix.Fstat(fd, &st) != nil {
		return "", nil, nil, false
	}
	return res, newInfo(path.Base(res), &st), nil, true
}

// openBeneath is Open's fast path for a regular file.
func (n *Root) openBeneath(p string, k Kind) (io.ReadCloser, error, bool) {
	// The file is looked at through a descriptor that cannot read before
	// it is opened: opening a device node can do something.
	fd, err := n.beneath(p, unix.O_PATH)
	if err == unix.ENOENT {
		return nil, &fs.PathError{Op: "stat", Path: p, Err: syscall.ENOENT}, true
	}
	if err != nil {
		return nil, nil, false
	}
	var st unix.Stat_t
	err = unix.Fstat(fd, &st)
	unix.Close(fd)
	if err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, nil, false
	}
	if fd, err = n.beneath(p, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY); err != nil {
		return nil, nil, false
	}
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, nil, false
	}
	f := rawFile(fd)
	return &limited{f: f, r: io.LimitReader(f, k.Limit+1), path: p, kind: k, size: st.Size}, nil, true
}

// dirBeneath is ReadDir's fast path: the names in directory p, unsorted.
func (n *Root) dirBeneath(p string) ([]string, error, bool) {
	fd, err := n.beneath(p, unix.O_RDONLY|unix.O_DIRECTORY)
	if err == unix.ENOENT {
		return nil, &fs.PathError{Op: "stat", Path: p, Err: syscall.ENOENT}, true
	}
	if err != nil {
		return nil, nil, false
	}
	defer unix.Close(fd)
	var names []string
	buf := make([]byte, 8192)
	for {
		k, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, nil, false
		}
		if k <= 0 {
			return names, nil, true
		}
		_, _, names = unix.ParseDirent(buf[:k], -1, names)
	}
}

// rawFile reads a regular file's descriptor with plain system calls (a
// regular file never blocks, O_NONBLOCK or not).
type rawFile int

func (f rawFile) Read(p []byte) (int, error) {
	for {
		k, err := unix.Read(int(f), p)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, err
		}
		if k == 0 && len(p) > 0 {
			return 0, io.EOF
		}
		return k, nil
	}
}

func (f rawFile) Close() error { return unix.Close(int(f)) }

// info is what fstat said of a file, as os's FileInfo says it.
type info struct {
	name string
	st   syscall.Stat_t
}

func newInfo(name string, st *unix.Stat_t) *info {
	i := &info{name: name}
	i.st = syscall.Stat_t{Dev: st.Dev, Ino: st.Ino, Nlink: st.Nlink, Mode: st.Mode, Uid: st.Uid, Gid: st.Gid,
		Rdev: st.Rdev, Size: st.Size, Blksize: st.Blksize, Blocks: st.Blocks,
		Atim: syscall.Timespec(st.Atim), Mtim: syscall.Timespec(st.Mtim), Ctim: syscall.Timespec(st.Ctim)}
	return i
}

func (i *info) Name() string       { return i.name }
func (i *info) Size() int64        { return i.st.Size }
func (i *info) ModTime() time.Time { return time.Unix(i.st.Mtim.Unix()) }
func (i *info) IsDir() bool        { return i.Mode().IsDir() }
func (i *info) Sys() any           { return &i.st }

// Mode is os's reading of st_mode.
func (i *info) Mode() fs.FileMode {
	m := fs.FileMode(i.st.Mode & 0o777)
	switch i.st.Mode & syscall.S_IFMT {
	case syscall.S_IFBLK:
		m |= fs.ModeDevice
	case syscall.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFDIR:
		m |= fs.ModeDir
	case syscall.S_IFIFO:
		m |= fs.ModeNamedPipe
	case syscall.S_IFLNK:
		m |= fs.ModeSymlink
	case syscall.S_IFSOCK:
		m |= fs.ModeSocket
	}
	if i.st.Mode&syscall.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if i.st.Mode&syscall.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if i.st.Mode&syscall.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}
