//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package filecache

import (
	"errors"
	"os"
	"syscall"
)

// errLocked is a lock taken without waiting that another process holds.
var errLocked = errors.New("file is locked")

func supported() error { return nil }

// lock takes flock(2) on f, as PHP's flock does: exclusive or shared, waiting or not.
func lock(f *os.File, exclusive, noWait bool) error {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	if noWait {
		how |= syscall.LOCK_NB
	}
	for {
		err := syscall.Flock(int(f.Fd()), how)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return errLocked
		}
		return err
	}
}
