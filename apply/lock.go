package apply

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Lock is held while a change is applied to a node. It is an flock on a
// file in kubeletcfg's state directory, so the kernel releases it when the
// holder dies, even by kill -9; the file says who holds it and since when.
type Lock struct{ f *os.File }

// ErrLocked is returned when another change holds the lock.
var ErrLocked = errors.New("another kubeletcfg apply holds the lock")

const lockName = "lock"

// Acquire takes the lock of the state directory dir without waiting. When
// it is held, the error names the holder and since when. A lock file that
// is a symlink, or not kubeletcfg's own, is refused: it is never followed.
func Acquire(dir, holder string, now time.Time) (*Lock, error) {
	path := filepath.Join(dir, lockName)
	f, err := openOwned(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		info := make([]byte, 512)
		n, _ := f.ReadAt(info, 0)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w (%s): %s", ErrLocked, path, strings.TrimSpace(string(info[:n])))
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	info := fmt.Sprintf("%s, pid %d, since %s\n", holder, os.Getpid(), now.UTC().Format(time.RFC3339))
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(info), 0)
	}
	return &Lock{f: f}, nil
}

// Release gives the lock up.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	return err
}
